from casekit import bits, exact


def steps(mode: int) -> int:
    s = 1  # the action always starts
    if mode != 1:
        s |= 2  # return in the action only skips the rest of the action
    if mode == 2:
        return s  # exit in ingress
    s |= 4 | 0x10  # Sub runs
    if mode == 3:
        return s  # exit inside Sub ends ingress too
    if mode != 4:
        s |= 0x20  # return in Sub ends only Sub
    s |= 8
    if mode == 5:
        return s
    return s | 0x40


MODES = [0, 1, 2, 3, 4, 5]
INPUT = [(0, bits((8, mode))) for mode in MODES]
EXPECTED = {1: [exact(bits((8, steps(mode)), (8, 1), (8, mode))) for mode in MODES]}
