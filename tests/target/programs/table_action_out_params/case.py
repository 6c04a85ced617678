from casekit import exact, u

# (k, a, b, c, tail) in; out per the action the entry for k runs (none for k=4: NoAction)
PACKETS = [(1, 0xA0, 0xB0, 0xC0, 7), (2, 0xA0, 0xFE, 0xC0, 7), (3, 0xA0, 0xB0, 0xC0, 7), (4, 0xA0, 0xB0, 0xC0, 7)]


def expected(k: int, a: int, b: int, c: int, tail: int) -> bytes:
    if k == 1:
        a = 0x11  # the out parameter bound to hdr.h.a
    elif k == 2:
        b = u(8, b + 3)  # inout: copied in, incremented, copied back (wraps)
    elif k == 3:
        return bytes([k, a, b, 0x33, tail])  # written, then exit: copied back, tail untouched
    return bytes([k, a, b, c, u(8, tail + 1)])


INPUT = [(0, bytes(p)) for p in PACKETS]
EXPECTED = {1: [exact(expected(*p)) for p in PACKETS]}
