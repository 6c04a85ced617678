from casekit import bits, exact

PREFIXES = [(0x0A000000, 8), (0x0A010100, 24), (0x0A010000, 16), (0, 0), (0x0A010101, 32)]
RANGES = [(1024, 2047, 1), (0, 1023, 2), (1500, 3000, 3), (80, 80, 4)]


def lpm(addr: int) -> int:
    lengths = [n for p, n in PREFIXES if n == 0 or addr >> (32 - n) == p >> (32 - n)]
    return max(lengths)  # the /0 route always matches, so the default is never used


def rng(port: int) -> int:
    return next((v for lo, hi, v in RANGES if lo <= port <= hi), 0xEE)


KEYS = [(0x0A010101, 80), (0x0A010102, 1500), (0x0A01FF01, 2500), (0x0AFF0000, 0), (0x0B000000, 3001),
        (0x0A010100, 1023), (0xFFFFFFFF, 65535)]  # fmt: skip
INPUT = [(0, bits((32, a), (16, p))) for a, p in KEYS]
EXPECTED = {1: [exact(bits((8, lpm(a)), (8, rng(p)), (32, a), (16, p))) for a, p in KEYS]}
