from casekit import exact

PAY = b"PAY"
# (input, output): flag byte, then a, then b, then the payload
CASES = [
    (b"\x01\xbb" + PAY, b"\x03" + b"\x01\xbb" + PAY),  # a and b parsed
    (b"\x00" + PAY, b"\x01" + b"\x00" + PAY),  # only a
    (b"\x02" + PAY, b"\x01" + PAY),  # a removed in ingress
    (b"\x03" + PAY, b"\x01" + b"\x03\x33" + PAY),  # b added in ingress
    (b"\x04" + PAY, b"\x04" + PAY),  # the flag header itself removed again
]
INPUT = [(0, i) for i, _ in CASES]
EXPECTED = {1: [exact(o) for _, o in CASES]}
