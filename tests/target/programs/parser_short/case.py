from casekit import exact

# (input, output): the output is o (err, peek), then k, then whatever the parser did not consume
CASES = [
    (bytes([1, 0xAB, 0xCD]), bytes([0, 0xAB, 0xCD, 1, 0xAB, 0xCD])),  # lookahead of 16 bits fits
    (bytes([1, 0xAB]), bytes([1, 0, 0, 1, 0xAB])),  # only 8 bits left: PacketTooShort, peek stays 0
    (bytes([2, 1, 2, 3, 4]), bytes([0, 0, 0, 2])),  # advance(32) fits; the skipped bytes are not emitted
    (bytes([2, 1, 2, 3]), bytes([1, 0, 0, 2, 1, 2, 3])),  # 24 bits left: PacketTooShort, nothing skipped
]
INPUT = [(0, data) for data, _ in CASES]
EXPECTED = {1: [exact(out) for _, out in CASES]}
