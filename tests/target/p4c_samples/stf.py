"""A reader for p4c's .stf packet tests (the subset these samples use).

p4c's `backends/bmv2/run-bmv2-test.py` feeds each `packet PORT HEX` to simple_switch and compares what leaves each
port with the `expect PORT HEX` lines of that port, in order; `*` in an expected nibble matches any nibble, and an
expectation matches only a packet of the same length. Hex may be split by spaces anywhere. `#` starts a comment.
Lines this reader does not know (`add`, `setdefault`, `wait`, ...) are an error, so a sample that needs table
entries cannot pass by accident.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Expectation:
    """An expected packet: hex nibbles, `*` for any nibble."""

    nibbles: str

    def matches(self, data: bytes) -> bool:
        got = data.hex()
        return len(got) == len(self.nibbles) and all(w in ("*", g) for w, g in zip(self.nibbles, got, strict=True))


@dataclass
class StfTest:
    packets: list[tuple[int, bytes]] = field(default_factory=list)
    expects: dict[int, list[Expectation]] = field(default_factory=dict)


def _hex(words: list[str], line_no: int) -> str:
    text = "".join(words).lower()
    if len(text) % 2 or any(c not in "0123456789abcdef*" for c in text):
        raise ValueError(f"line {line_no}: bad packet data {text!r}")
    return text


def parse_stf(text: str) -> StfTest:
    test = StfTest()
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        kind = words[0].lower()
        if kind in ("packet", "expect") and len(words) >= 2:
            port = int(words[1])
            data = _hex(words[2:], line_no)
            if kind == "packet":
                if "*" in data:
                    raise ValueError(f"line {line_no}: wildcard in an input packet")
                test.packets.append((port, bytes.fromhex(data)))
            else:
                test.expects.setdefault(port, []).append(Expectation(data))
        else:
            raise ValueError(f"line {line_no}: unsupported stf command {words[0]!r}")
    return test


def read_stf(path: Path) -> StfTest:
    return parse_stf(path.read_text())
