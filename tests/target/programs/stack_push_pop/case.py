from casekit import exact

ELEMS = [0xA0, 0xA1, 0xA2]


def out(op: int) -> bytes:
    stack: list[int | None] = [*ELEMS, None]  # three parsed, the fourth invalid
    if op == 1:
        stack = [None, None, *stack[:2]]
    elif op == 2:
        stack = [*stack[2:], None, None]
    elif op == 3:
        stack = [None, None, None, stack[0]]
    mask = sum(1 << i for i, e in enumerate(stack) if e is not None)
    return bytes([mask, op]) + bytes(e for e in stack if e is not None)


OPS = [0, 1, 2, 3]
INPUT = [(0, bytes([op, *ELEMS]) + b"!") for op in OPS]
EXPECTED = {1: [exact(out(op) + b"!") for op in OPS]}
