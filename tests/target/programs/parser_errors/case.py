from casekit import exact

# Every output is the error code followed by the input unchanged: headers parsed before an error are emitted as
# they were read and the unparsed rest follows as payload.
CASES = [
    (bytes.fromhex("5a04 11223344") + b"p", 0),  # NoError
    (bytes.fromhex("5a00") + b"tail", 0),  # NoError, no body
    (bytes.fromhex("5a04 1122"), 1),  # PacketTooShort in body: hd stays valid, 1122 is payload
    (bytes.fromhex("5a"), 1),  # PacketTooShort in hd
    (bytes.fromhex("5a05") + b"zz", 2),  # NoMatch: no case for len 5 and no default
    (bytes.fromhex("7704 11223344"), 3),  # verify failed after hd was extracted
]
INPUT = [(0, data) for data, _ in CASES]
EXPECTED = {1: [exact(bytes([err]) + data) for data, err in CASES]}
