"""Header h_t is tag(8) + row(e 8, t 16, l 4, r 4) = 5 bytes on the wire, in declaration order (P4_16 7.2.2).
Ingress compares a copy of h with h (eq.same = 1), adds 1 to row.t, copies row.r into row.l, compares again
(eq.differs = 1) and appends a copy of h (tag 0xAA) or a freshly validated, all-zero h_t. Port 2 when row.e == 1, else 1."""

from casekit import bits, exact


def h(tag: int, e: int, t: int, l: int, r: int) -> bytes:  # noqa: E741
    return bits((8, tag), (8, e), (16, t), (4, l), (4, r))


def out(tag: int, e: int, t: int, l: int, r: int) -> bytes:  # noqa: E741
    new = h(tag, e, (t + 1) % 65536, r, r)
    fresh = new if tag == 0xAA else bytes(5)
    return new + fresh + bytes([1, 1])


PAY = b"\x99\x98"
CASES = [(0xAA, 0x01, 0x1234, 0x3, 0xC), (0x10, 0x07, 0xFFFF, 0xF, 0x0), (0x10, 0x01, 0x0000, 0x1, 0x2)]
INPUT = [(0, h(*c) + PAY) for c in CASES]
EXPECTED = {
    2: [exact(out(*c) + PAY) for c in CASES if c[1] == 0x01],
    1: [exact(out(*c) + PAY) for c in CASES if c[1] != 0x01],
}
