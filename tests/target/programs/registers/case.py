from casekit import bits, exact, u

PACKETS = [(0, 5), (1, 7), (0, 10), (7, 0xFFFFFFFF), (7, 2), (0, 0xFFFFFFF0), (3, 1)]

acc = [0] * 8  # registers start at zero
visits = [0] * 8
last = 0
INPUT = []
OUT = []
for idx, add in PACKETS:
    before = acc[idx]
    acc[idx] = u(32, before + add)
    visits[idx] = u(8, visits[idx] + 1)
    OUT.append(exact(bits((32, before), (32, acc[idx]), (8, visits[idx]), (16, last), (8, idx), (32, add))))
    last = add & 0xFFFF
    INPUT.append((0, bits((8, idx), (32, add))))
P4INFO_NAMES = ["register:I.acc", "register:I.visits", "register:I.last_add"]
EXPECTED = {1: OUT}
