from casekit import exact


def out(t: int) -> bytes:
    data = bytes([t])  # top
    data += b"\x11" if t & 2 else b""  # inner.first
    data += b"\x22" if t & 1 else b""  # inner.second
    data += b"\x30" if t & 8 else b""  # stack[0]
    data += b"\x32" if t & 4 else b""  # stack[2]
    data += b"\xb0\xb0" if t & 16 else b""  # u.b
    data += b"\x1a\x57" if t & 32 else b""  # last
    return data


VALUES = [0, 1, 2, 3, 0x0C, 0x3F, 0x30]
INPUT = [(0, bytes([t]) + b"p") for t in VALUES]
EXPECTED = {1: [exact(out(t) + b"p") for t in VALUES]}
