from casekit import exact

GREEN, YELLOW, RED = 0, 1, 2


def colors(sizes: list[int], cbs: int, pbs: int) -> list[int]:
    """RFC 2698 color-blind mode in bytes, buckets full at the start and not refilled."""
    tc, tp = cbs, pbs
    result = []
    for size in sizes:
        if tp < size:
            result.append(RED)
        elif tc < size:
            tp -= size
            result.append(YELLOW)
        else:
            tp -= size
            tc -= size
            result.append(GREEN)
    return result


SIZES = [40, 40, 40, 40, 20, 5]
PACKETS = [bytes([i]) * n for i, n in enumerate(SIZES)]
INPUT = [(0, p) for p in PACKETS]
EXPECTED = {1: [exact(bytes([c]) + p) for c, p in zip(colors(SIZES, 100, 150), PACKETS, strict=True)]}
