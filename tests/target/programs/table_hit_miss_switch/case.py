from casekit import bits, exact

ENTRIES = {1: 1, 2: 2, 3: 3, 4: 9}  # key -> action code (9 is dflt, also the default action)


def out(a: int) -> bytes:
    hit = a in ENTRIES  # an entry whose action is the default action is still a hit (key 4)
    act = ENTRIES.get(a, 9)
    sw = {1: 12, 2: 12, 3: 3}.get(act, 0xDD)
    return bits((8, int(hit)), (8, int(not hit)), (8, sw), (8, act), (8, a))


KEYS = [1, 2, 3, 4, 5, 0]
INPUT = [(0, bits((8, a))) for a in KEYS]
EXPECTED = {1: [exact(out(a)) for a in KEYS]}
