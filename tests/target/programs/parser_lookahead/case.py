from casekit import exact

CASES = [
    # AA: the first two bytes are skipped by advance(16), a = 01 02
    (bytes.fromhex("aabb 0102") + b"p", bytes.fromhex("aa aabb bb 01") + bytes.fromhex("0102") + b"p"),
    # otherwise a is the first two bytes
    (bytes.fromhex("1234") + b"pay", bytes.fromhex("12 1234 34 02") + bytes.fromhex("1234") + b"pay"),
]
INPUT = [(0, i) for i, _ in CASES]
EXPECTED = {1: [exact(o) for _, o in CASES]}
