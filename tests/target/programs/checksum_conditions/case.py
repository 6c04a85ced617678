from casekit import bits, csum16, exact

CASES = [  # (check, a, b, csum as sent, port)
    (1, 0x12, 0x34, csum16(bytes([0x12, 0x34])), 1),  # right checksum, checked and recomputed
    (1, 0x12, 0x34, 0xBEEF, 1),  # wrong checksum, checked: flagged, then recomputed
    (0, 0x12, 0x34, 0xBEEF, 2),  # not checked: no flag, left as it was
    (0, 0x01, 0x02, 0x0000, 9),  # port 9 has no interface: lost
]
INPUT = [(0, bits((8, c), (8, a), (8, b), (16, s), (8, p))) for c, a, b, s, p in CASES]
EXPECTED: dict[int, list] = {}
for check, a, b, sent, port in CASES:
    if port == 9:
        continue
    ok = int(not check or sent == csum16(bytes([a, b])))
    new_a = (a + 1) & 0xFF
    new_csum = csum16(bytes([new_a, b])) if check else sent
    EXPECTED.setdefault(port, []).append(exact(bits((8, ok), (8, check), (8, new_a), (8, b), (16, new_csum), (8, port))))
