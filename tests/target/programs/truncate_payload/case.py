from casekit import exact

BODY = bytes(range(1, 40))
LENGTHS = [0, 5, 1, 20, 200]  # 200 is longer than the packet: nothing is cut
INPUT = [(0, bytes([n]) + BODY) for n in LENGTHS]
EXPECTED = {1: [exact((bytes([n]) + BODY)[: n or None]) for n in LENGTHS]}
