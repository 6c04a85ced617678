from casekit import bits, exact

OUT = bits(
    (8, 100 // 7), (8, 100 % 7), (16, (1 << 12) + 0x10), (12, 0xABC), (4, 0), (8, 0x7F), (8, 0b10100101), (8, 0o17),
    (8, 127), (8, (250 + 10) % 256),
)  # fmt: skip
PAYLOADS = [b"", b"x", b"hello world"]

INPUT = [(0, p) for p in PAYLOADS]
EXPECTED = {4: [exact(OUT + p) for p in PAYLOADS]}
