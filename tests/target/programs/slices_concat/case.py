from casekit import bits, exact

VALUES = [(0xABCD, 0xEF), (0x0000, 0x00), (0xFFFF, 0xFF), (0x1234, 0x5A)]


def field(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def packet_out(w: int, b: int) -> bytes:
    patched = (field(w, 3, 0) << 4) | (b & 0x0E)
    return bits(
        (8, field(w, 15, 8)), (4, field(w, 9, 6)), (4, b & 0xF), (24, (w << 8) | b), (8, patched),
        (12, (0xA << 8) | b), (4, 0),
    ) + b"tail"  # fmt: skip


INPUT = [(0, bits((16, w), (8, b)) + b"tail") for w, b in VALUES]
EXPECTED = {3: [exact(packet_out(w, b)) for w, b in VALUES]}
