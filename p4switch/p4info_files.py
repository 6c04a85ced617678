"""P4Info files in p4c's three formats, picked by the file name as p4c does it.

p4c's `--p4runtime-files A,B,...` chooses each file's format from its suffix: `.txt` text, `.json` JSON, `.bin`
binary, anything else is an error (`.txtpb`, the suffix the P4 tutorials use, is text too, as in current p4c).
The older `--p4runtime-file F --p4runtime-format binary|json|text` names the format explicitly (default binary).
Reading accepts the same three formats, so a switch can start from whatever P4Info a p4c-style build left.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from p4switch.exceptions import DeviceConfigError, P4SwitchError
from p4switch.p4info import to_text

FORMATS = ("binary", "json", "text")
_SUFFIX_FORMAT = {".txt": "text", ".txtpb": "text", ".json": "json", ".bin": "binary"}


class P4InfoFileError(P4SwitchError):
    """A P4Runtime output file name whose format cannot be told, or a file that cannot be written."""


def format_for(path: str | Path) -> str:
    """The format p4c's `--p4runtime-files` gives `path`: by its last suffix, `P4InfoFileError` when unknown."""
    suffix = Path(path).suffix
    if not suffix:
        raise P4InfoFileError(f"{path}: unknown file kind; known suffixes are .bin, .txt, .txtpb, .json")
    fmt = _SUFFIX_FORMAT.get(suffix)
    if fmt is None:
        raise P4InfoFileError(f"{path}: could not detect the P4Runtime file format from the suffix {suffix}")
    return fmt


def split_file_list(value: str) -> list[str]:
    """`--p4runtime-files a.txt,b.bin` -> the file names (p4c splits on commas; empty names are refused)."""
    names = value.split(",")
    if any(not n for n in names):
        raise P4InfoFileError(f"--p4runtime-files {value!r}: empty file name in the list")
    return names


def serialize(p4info: p4info_pb2.P4Info, fmt: str) -> bytes:
    """P4Info as bytes in `fmt`: text as p4c writes it, JSON as protobuf's JSON mapping, binary wire format."""
    if fmt == "text":
        return to_text(p4info).encode()
    if fmt == "json":
        return (json_format.MessageToJson(p4info, indent=2) + "\n").encode()
    if fmt == "binary":
        return p4info.SerializeToString()
    raise P4InfoFileError(f"unknown P4Runtime format {fmt!r} (expected one of {', '.join(FORMATS)})")


def write_p4info(p4info: p4info_pb2.P4Info, path: str | Path, fmt: str | None = None) -> Path:
    """Write `p4info` to `path` in `fmt` (default: from the suffix); parent directories are created."""
    out = Path(path)
    data = serialize(p4info, fmt or format_for(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except OSError as exc:
        raise P4InfoFileError(f"couldn't open P4Runtime API file {out}: {exc.strerror}") from None
    return out


def read_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read a P4Info file: `.json` as JSON, `.bin` as binary, else text with a fallback to binary."""
    src = Path(path)
    try:
        raw = src.read_bytes()
    except OSError as exc:
        raise DeviceConfigError(f"cannot read P4Info {src}: {exc.strerror}") from None
    p4info = p4info_pb2.P4Info()
    suffix = src.suffix
    try:
        if suffix == ".json":
            json_format.Parse(raw.decode("utf-8"), p4info)
            return p4info
        if suffix == ".bin":
            p4info.ParseFromString(raw)
            return p4info
    except Exception:
        raise DeviceConfigError(f"{src} is not a P4Info in {_SUFFIX_FORMAT[suffix]} format") from None
    try:
        text_format.Parse(raw.decode("utf-8"), p4info)
        return p4info
    except (UnicodeDecodeError, text_format.ParseError):
        pass
    try:
        p4info.ParseFromString(raw)
    except Exception:
        raise DeviceConfigError(f"{src} is not a P4Info (neither text nor binary protobuf)") from None
    return p4info


def p4info_candidates(device_config: str | Path) -> list[Path]:
    """Where a P4Info for `DIR/name.json` may be, in the order tried: `p4ina compile`'s `name.p4info.txtpb`, then
    the names p4c-style builds use (`name.p4.p4info.txtpb` in the P4 tutorials' Makefile, `name.p4info.txt`, ...)."""
    config = Path(device_config)
    stem = config.stem
    names = [f"{stem}.p4info.txtpb"]
    for base in (f"{stem}.p4.p4info", f"{stem}.p4info"):
        names.extend(f"{base}{suffix}" for suffix in (".txtpb", ".txt", ".bin", ".json", ""))
    seen: list[Path] = []
    for name in names:
        candidate = config.with_name(name)
        if candidate not in seen:
            seen.append(candidate)
    return seen
