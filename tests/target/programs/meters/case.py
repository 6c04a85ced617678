from casekit import bits, dont_care, exact

GREEN, YELLOW, RED = 0, 1, 2


class TrTcm:
    """RFC 2698 in packets, both buckets full at the start, no refill within the test."""

    def __init__(self, cbs: int, pbs: int) -> None:
        self.tc, self.tp = cbs, pbs

    def color(self) -> int:
        if self.tp < 1:
            return RED
        if self.tc < 1:
            self.tp -= 1
            return YELLOW
        self.tp -= 1
        self.tc -= 1
        return GREEN


meter0 = TrTcm(cbs=2, pbs=3)
IDX = [0, 1, 0, 0, 1, 0, 0, 2]
INPUT = [(0, bits((8, i))) for i in IDX]
OUT = []
for i in IDX:
    direct = GREEN if i in (0, 1) else 0xFF  # the direct meter only runs for hits
    if i == 2:  # out of range: v1model leaves the color unspecified
        OUT.append(dont_care(bits((8, 0), (8, direct), (8, i)), [0]))
        continue
    color = meter0.color() if i == 0 else GREEN  # index 1 is not configured: always green
    OUT.append(exact(bits((8, color), (8, direct), (8, i))))
P4INFO_NAMES = ["meter:I.policer", "direct_meter:I.per_entry"]
EXPECTED = {1: OUT}
