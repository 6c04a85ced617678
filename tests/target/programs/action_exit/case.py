from casekit import exact

INPUT = [(0, bytes([1, 0xFF])), (0, bytes([2, 0xFF]))]
EXPECTED = {
    1: [exact(bytes([1, 1]))],  # stop() exited: trace 1, still on port 1
    2: [exact(bytes([2, 2 | 4]))],  # go() then the rest of apply: port 2
}
