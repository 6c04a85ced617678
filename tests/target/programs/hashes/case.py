from casekit import bits, crc16, crc32, csum16, exact, xor16

# casekit's CRC/checksum functions agree with real BMv2 on tests/conformance/cases/hash_csum.
VALUES = [(0x1234, 0xDEADBEEF, 0x11), (0, 0, 0), (0xFFFF, 0xFFFFFFFF, 0xFF), (0x0800, 0x0A000001, 6)]


def out(a: int, b: int, c: int) -> bytes:
    abc = bits((16, a), (32, b), (8, c))
    ab = bits((16, a), (32, b))
    return bits(
        (16, crc16(abc)), (32, crc32(abc)), (16, csum16(ab)), (16, xor16(ab)), (32, b),
        (16, 1000 + crc32(bits((32, b), (8, c))) % 50), (16, 77),
    ) + abc  # fmt: skip


INPUT = [(0, bits((16, a), (32, b), (8, c))) for a, b, c in VALUES]
EXPECTED = {1: [exact(out(*v)) for v in VALUES]}
