from casekit import bits, exact


def path(a: int, b: int) -> int:
    """The first matching case of the select, in order."""
    if a == 0x0800:
        return 1
    if a & 0xFF00 == 0x8600 and b == 1:
        return 2
    if 0x1000 <= a <= 0x1FFF:
        return 3
    if b & 0xF0 == 0xF0:
        return 4
    return 5


def sub(b: int) -> int:
    low = b & 0xF
    return 10 if low == 0 else 20 if low <= 7 else 0  # user metadata starts zeroed


VALUES = [
    (0x0800, 0xF0), (0x86DD, 1), (0x86DD, 2), (0x1000, 0xFF), (0x1FFF, 0x13), (0x2000, 0xF8), (0x2000, 0x0F),
    (0x0800, 0x05), (0x8600, 1),
]  # fmt: skip
INPUT = [(0, bits((16, a), (8, b)) + b"..") for a, b in VALUES]
EXPECTED = {1: [exact(bits((8, path(a, b)), (8, sub(b)), (16, a), (8, b)) + b"..") for a, b in VALUES]}
