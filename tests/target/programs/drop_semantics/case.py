from casekit import exact

MODES = [0, 1, 2, 3, 4, 5, 6, 0]
INPUT = [(0, bytes([mode]) + b"d") for mode in MODES]
# 0: port 1; 1: dropped; 2: overridden to port 2; 3: dropped (511); 4: dropped (mcast_grp cleared);
# 5: multicast to ports 3 and 4; 6: dropped in egress
EXPECTED = {
    1: [exact(bytes([0]) + b"d"), exact(bytes([0]) + b"d")],
    2: [exact(bytes([2]) + b"d")],
    3: [exact(bytes([5]) + b"d")],
    4: [exact(bytes([5]) + b"d")],
}
