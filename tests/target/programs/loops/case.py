"""Each mode's result computed from the loops' P4_16 semantics in plain Python (not from the switch)."""

from casekit import bits, exact


def sum_to_n(n: int) -> tuple[int, int]:
    ks = range(1, n + 1)
    return sum(ks), len(ks)


def odd_until_seven(n: int) -> tuple[int, int]:
    ks = [k for k in range(min(n, 7)) if k % 2 == 1]
    return sum(ks), len(ks)


def nested(n: int) -> tuple[int, int]:
    return n, sum(1 for x in range(n) for y in range(n) if y <= x)


def meet(n: int) -> tuple[int, int]:
    steps, last_hi, lo, hi = 0, 0, 0, n
    while lo < hi:
        steps, last_hi = steps + 1, hi
        lo, hi = lo + 1, hi - 1
    return steps, last_hi


def range_sum(n: int) -> tuple[int, int]:
    a = b = 0
    for k in range(2, n + 1):
        if k == 9:
            return a, b  # return leaves the action: the +100 after the loop is skipped
        a, b = a + k, b + 1
    return a, b + 100


MODELS = [sum_to_n, odd_until_seven, nested, meet, range_sum]
CASES = [(mode, n) for mode in range(len(MODELS)) for n in (0, 1, 2, 5, 8, 9, 12)]


INPUT = [(0, bits((8, mode), (8, n))) for mode, n in CASES]
EXPECTED = {1: [exact(bits((8, mode), (8, n), (32, MODELS[mode](n)[0]), (32, MODELS[mode](n)[1])))
                for mode, n in CASES]}
