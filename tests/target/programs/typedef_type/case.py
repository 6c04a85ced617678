from casekit import bits, exact, u

VALUES = [(0x001122334455, 0x0A000001), (0xFFFFFFFFFFFF, 0), (0, 0xFFFFFFFF)]
INPUT = [(0, bits((48, mac), (32, ip))) for mac, ip in VALUES]
EXPECTED = {
    1: [
        exact(bits((48, mac ^ 0xFFFF), (32, u(32, ip + 1)), (8, int(ip == 0)), (48, mac), (32, 0x01020304)))
        for mac, ip in VALUES
    ]
}
