from casekit import exact

VALUES = [(0x55, 0x66), (0xFF, 0x00)]


def out(x: int, y: int) -> bytes:
    alias = 2  # p copied out first (1), then q (2)
    copied = x  # the action's `in` parameter keeps the value from the call
    first, second = 11, 12  # arguments evaluated left to right
    o = bytes([alias, copied, first, second, 12, 300 % 256])
    k = bytes([0, y])  # keep() zeroed x
    return o + k + k  # k emitted twice


INPUT = [(0, bytes([x, y])) for x, y in VALUES]
EXPECTED = {1: [exact(out(x, y)) for x, y in VALUES]}
