from casekit import exact

INPUT = [(0, bytes([mode, 0xEE]) + b"c") for mode in (0, 1, 2)]
EXPECTED = {
    1: [exact(bytes([0, 0]) + b"c")],  # mode 0 only; modes 1 and 2 drop their original
    3: [exact(bytes([1, 1]) + b"c"), exact(bytes([2, 2]) + b"c")],  # the I2E and E2E copies
}
