from casekit import bits, exact


def out(a: int, b: int) -> bytes:
    sw = {1: 12, 2: 12, 3: 3}.get(a, 0xDD)
    calls = 0
    cond = 0

    def bump(result: bool) -> bool:
        nonlocal calls
        calls += 1
        return result

    if b == 0 or bump(True):  # Python's `or`/`and` short-circuit like P4's || and &&
        cond |= 1
    if b == 0 and bump(True):
        cond |= 2
    if bump(b > 5) or bump(False):
        cond |= 4
    if bump(True) if b == 7 else bump(False):
        cond |= 8
    return bits((8, sw), (8, calls), (8, cond), (8, a), (8, b))


VALUES = [(1, 0), (2, 7), (3, 9), (4, 1), (0, 6)]
INPUT = [(0, bits((8, a), (8, b))) for a, b in VALUES]
EXPECTED = {1: [exact(out(a, b)) for a, b in VALUES]}
