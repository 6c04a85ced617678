from casekit import bits, exact

# (value, mask) per key; None is a wildcard
BY_ORDER = [((0x10, 0xF0), None, 1), ((0x12, 0xFF), (0x34, 0xFF), 2), (None, (0x30, 0xF0), 3), (None, None, 4)]
BY_PRIORITY = [(10, (0x00, 0x00)), (30, (0x12, 0xFF)), (20, (0x10, 0xF0))]


def hit(key: int, spec: tuple[int, int] | None) -> bool:
    return spec is None or key & spec[1] == spec[0] & spec[1]


def first(a: int, b: int) -> int:
    return next(v for ka, kb, v in BY_ORDER if hit(a, ka) and hit(b, kb))


def prio(a: int) -> int:
    return max(p for p, spec in BY_PRIORITY if hit(a, spec))


KEYS = [(0x12, 0x34), (0x12, 0x00), (0x20, 0x3F), (0x20, 0x00), (0x1F, 0x34), (0xFF, 0xFF)]
INPUT = [(0, bits((8, a), (8, b))) for a, b in KEYS]
EXPECTED = {1: [exact(bits((8, first(a, b)), (8, prio(a)), (8, a), (8, b))) for a, b in KEYS]}
