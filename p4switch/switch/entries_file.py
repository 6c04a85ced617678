"""`--entries FILE`: install a P4Runtime `WriteRequest` (protobuf text format) before any packet flows.

The same format the conformance corpus uses (`tests/conformance/cases/*/entries.txtpb`); validation is the
P4Runtime server's (`p4switch.runtime.entries`), so a bad entry fails exactly as a P4Runtime Write would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2

from p4switch.exceptions import P4SwitchError


class EntriesFileError(P4SwitchError):
    """The entries file is unreadable, not a WriteRequest, or one of its updates is invalid."""


def read_write_request(path: str | Path) -> p4runtime_pb2.WriteRequest:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise EntriesFileError(f"cannot read entries file {path}: {exc.strerror}") from None
    request = p4runtime_pb2.WriteRequest()
    try:
        text_format.Parse(text, request)
    except text_format.ParseError as exc:
        raise EntriesFileError(f"{path}: not a P4Runtime WriteRequest in text format: {exc}") from None
    return request


def apply_write_request(state: Any, request: p4runtime_pb2.WriteRequest, *, source: str = "entries") -> int:
    """Apply every update in order; stops at the first invalid one with its index and reason."""
    from p4switch.runtime.entries import EntityCodec

    codec = EntityCodec(state)
    for i, update in enumerate(request.updates):
        try:
            codec.write(update.type, update.entity)
        except P4SwitchError as exc:
            raise EntriesFileError(f"{source}: update {i + 1}: {exc}") from None
    return len(request.updates)


def load_entries(state: Any, path: str | Path) -> int:
    return apply_write_request(state, read_write_request(path), source=str(path))
