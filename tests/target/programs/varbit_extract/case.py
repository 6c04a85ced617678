from casekit import exact


def expected(packet: bytes) -> bytes:
    """tail, var, len, then the unparsed rest: len is 1 byte, var takes nbits / 8 bytes (not its 4-byte maximum),
    tail 1 byte."""
    n = packet[0] // 8
    length, var, tail, rest = packet[:1], packet[1:1 + n], packet[1 + n:2 + n], packet[2 + n:]
    return tail + var + length + rest


PACKETS = [
    bytes([16, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE]),  # 16 of 32 bits: the rest of the packet stays payload
    bytes([32, 1, 2, 3, 4, 5, 6]),  # the full width
    bytes([8, 0xAA, 0xBB, 0xCC]),
    bytes([0, 0xAA, 0xBB]),  # a zero-width varbit: valid, emits nothing
]
INPUT = [(0, p) for p in PACKETS]
EXPECTED = {1: [exact(expected(p)) for p in PACKETS]}
