from casekit import exact, u

# b = what ingress wrote into r[a] (a + 1, wrapped to 8 bits); each packet uses its own cell, so the result does not
# depend on how the switch interleaves one packet's egress with the next packet's ingress
A_VALUES = [5, 9, 255]
INPUT = [(0, bytes([a, 0])) for a in A_VALUES]
EXPECTED = {1: [exact(bytes([a, u(8, a + 1)])) for a in A_VALUES]}
P4INFO_NAMES = ["register:r"]
