from casekit import bits, csum16, exact

SRC, DST, PROTO = 0x0A000001, 0x0A000002, 17


def checksum(sport: int, dport: int, payload: bytes) -> int:
    length = 8 + len(payload)
    data = bits((32, SRC), (32, DST), (8, 0), (8, PROTO), (16, length), (16, sport), (16, dport), (16, length))
    return csum16(data + payload)  # an odd payload is padded with one zero byte for the sum


def packet(sport: int, dport: int, payload: bytes, csum: int) -> bytes:
    return bits((32, SRC), (32, DST), (8, PROTO), (16, sport), (16, dport), (16, 8 + len(payload)), (16, csum)) + payload


CASES = [(1000, 53, b"even payload"), (7, 9, b"odd"), (0xFFFF, 1, b"")]
INPUT = []
EXPECTED: dict[int, list] = {1: []}
for i, (sport, dport, payload) in enumerate(CASES):
    good = checksum(sport, dport, payload)
    sent = good if i != 1 else good ^ 0x0101  # the odd one arrives with a wrong checksum
    INPUT.append((0, packet(sport, dport, payload, sent)))
    new_sport = (sport + 1) & 0xFFFF
    out = packet(new_sport, dport, payload, checksum(new_sport, dport, payload))
    EXPECTED[1].append(exact(bytes([int(sent == good)]) + out))
