from casekit import exact

PAY = b"\xfe\xed"
CASES = [
    # n=1: one element parsed; push_front moves it to [1] and a new [0] = 0xAA is made valid
    (bytes([1, 0x10]), bytes([0b011, 3, 1, 0xAA, 0x10])),
    # n=2: two parsed; pop_front drops [0]
    (bytes([2, 0x20, 0x21]), bytes([0b001, 3, 2, 0x21])),
    # n=3: full stack; [2] = [0] + [1]
    (bytes([3, 0x30, 0x31, 0x32]), bytes([0b111, 3, 3, 0x30, 0x31, 0x61])),
    # n=0: empty stack
    (bytes([0]), bytes([0, 3, 0])),
]
INPUT = [(0, i + PAY) for i, _ in CASES]
EXPECTED = {1: [exact(o + PAY) for _, o in CASES]}
