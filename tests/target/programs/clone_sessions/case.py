from casekit import bits, exact

PAY = b"clone-me"
NORMAL, I2E, E2E = 0, 1, 2


def out(itype: int, port: int, keep: int, lost: int, mode: int, mark: int) -> bytes:
    return bits((8, itype), (8, port), (8, keep), (8, lost), (8, mode), (8, mark)) + PAY


INPUT = [(0, bits((8, mode), (8, 0x00)) + PAY) for mode in (0, 1, 2, 3)]
EXPECTED = {
    # every original leaves on port 1 with the ingress change (mark = AA) and its metadata
    1: [exact(out(NORMAL, 1, 0x11, 0x22, mode, 0xAA)) for mode in (0, 1, 2, 3)],
    # I2E copies: the packet as received (mark 00), metadata reset; mode 2 keeps field list 1 (keep)
    2: [exact(out(I2E, 2, 0x00, 0x00, 1, 0x00)), exact(out(I2E, 2, 0x11, 0x00, 2, 0x00))],
    # E2E copy of mode 3: headers as egress left them (mark AA), metadata reset, egress run again
    3: [exact(out(E2E, 3, 0x00, 0x00, 3, 0xAA))],
}
