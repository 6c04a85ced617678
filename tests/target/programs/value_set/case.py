from casekit import bits, exact

IN_SET = {0x1234, 0x5678}
VALUES = [0x1234, 0x0001, 0x5678, 0x9999, 0x0000]


def path(a: int) -> int:
    return 1 if a == 1 else 2 if a in IN_SET else 0


P4INFO_NAMES = ["value_set:P.vs"]
INPUT = [(0, bits((16, a))) for a in VALUES]
EXPECTED = {1: [exact(bits((8, path(a)), (16, a))) for a in VALUES]}
