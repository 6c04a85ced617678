from casekit import exact

V4 = bytes.fromhex("c0a80001")
V6 = bytes.fromhex("20010db800000001")
CASES = [
    (b"\x04" + V4, b"\x84" + b"\x04" + V4),
    (b"\x06" + V6, b"\x86" + b"\x06" + V6),
    (b"\x05", b"\x00" + b"\x05"),
    # kind 7: nothing parsed into the union; ingress makes v4 valid
    (b"\x07", b"\x00" + b"\x07" + bytes.fromhex("0a000001")),
]
INPUT = [(0, i + b"!") for i, _ in CASES]
EXPECTED = {2: [exact(o + b"!") for _, o in CASES]}
# kind 8: v6 parsed, then v4 made valid in ingress, which invalidates v6
CASES.append((b"\x08" + V6, b"\x86" + b"\x08" + bytes.fromhex("0a000001")))
INPUT = [(0, i + b"!") for i, _ in CASES]
EXPECTED = {2: [exact(o + b"!") for _, o in CASES]}
