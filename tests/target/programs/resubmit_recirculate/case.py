from casekit import bits, exact

PAY = b"rr"
RESUBMIT, RECIRCULATE = 6, 4

INPUT = [(0, bits((8, mode), (8, 10)) + PAY) for mode in (0, 1, 2)]
EXPECTED = {
    1: [
        # mode 0: one pass
        exact(bits((8, 0), (8, 11), (8, 0), (8, 0), (8, 0)) + PAY),
        # mode 1: resubmitted; the original packet (passes 10) goes through ingress again; keep survives
        exact(bits((8, 1), (8, 11), (8, RESUBMIT), (8, 0x33), (8, 0)) + PAY),
        # mode 2: recirculated after egress: the deparsed packet (k, o) is parsed again; its old o bytes are now
        # payload; the second ingress pass writes a new o
        exact(bits((8, 2), (8, 12), (8, RECIRCULATE), (8, 0x55), (8, 0)) + bits((8, 0), (8, 0), (8, 0)) + PAY),
    ]
}
