"""The embedded target's device config: a strictly validated JSON object that carries P4 text, never code.

Accepted forms of `p4_device_config` (docs/compiler.md): the JSON bytes that `p4ina compile` writes, or PI's
`p4.tmp.P4DeviceConfig` wrapper (`reassign`, `extras`, `device_data` = those JSON bytes), which p4lang/tutorials'
`p4runtime_lib` sends and `simple_switch_grpc` accepts. The JSON is checked against a closed schema (every key
known, every value's type and size bounded) before anything else looks at it; a config of the old
code-carrying format (`"python"`) is refused by name. Every failure is a `DeviceConfigError` with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from p4switch.exceptions import DeviceConfigError

FORMAT = "p4ina-v1model/2"
OLD_FORMAT = "p4ina-v1model/1"

#: Upper bounds: a config larger than this is refused before it is parsed (p4ina.p4 preprocessed is ~120 KB).
MAX_CONFIG_BYTES = 8 << 20
MAX_PROGRAM_CHARS = 4 << 20
MAX_DEFINES = 256
MAX_TEXT = 256

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}\Z")
MACRO_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
SHA256_RE = re.compile(r"[0-9a-f]{64}\Z")
COMPILER_RE = re.compile(r"[A-Za-z0-9_.+ \-]{1,64}\Z")

REQUIRED_KEYS = frozenset({"format", "name", "program", "program_sha256"})
OPTIONAL_KEYS = frozenset({"compiler", "defines"})


@dataclass(frozen=True)
class DeviceConfig:
    """A validated device config: the program's name and its preprocessed P4 text (plus metadata only)."""

    name: str
    program: str
    program_sha256: str
    compiler: str = ""
    defines: dict[str, str | None] = field(default_factory=dict)


def _wrapper_class() -> Any:
    """`p4.tmp.P4DeviceConfig` (PI's proto/p4/tmp/p4config.proto), built with the protobuf runtime."""
    proto = descriptor_pb2.FileDescriptorProto(name="p4ina/p4config.proto", package="p4.tmp", syntax="proto3")
    msg = proto.message_type.add(name="P4DeviceConfig")
    extras = msg.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    f = descriptor_pb2.FieldDescriptorProto
    entry.field.add(name="key", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    extras.field.add(name="kv", number=1, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry")
    msg.field.add(name="reassign", number=1, type=f.TYPE_BOOL, label=f.LABEL_OPTIONAL)
    msg.field.add(name="extras", number=2, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL,
                  type_name=".p4.tmp.P4DeviceConfig.Extras")
    msg.field.add(name="device_data", number=3, type=f.TYPE_BYTES, label=f.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("p4.tmp.P4DeviceConfig"))


P4DeviceConfig = _wrapper_class()


def wrap(device_data: bytes, *, reassign: bool = True) -> bytes:
    """`device_data` in PI's `P4DeviceConfig` wrapper, as p4lang/tutorials' `p4runtime_lib` builds it."""
    return bytes(P4DeviceConfig(reassign=reassign, device_data=device_data).SerializeToString())


def unwrap(raw: bytes) -> bytes:
    """The JSON bytes of a `p4_device_config`: as they are when they look like JSON (first non-blank byte `{` or
    `[`, which cannot begin a `P4DeviceConfig`: they would start groups of fields 15 and 11), else the wrapper's
    `device_data`."""
    if raw.lstrip()[:1] in (b"{", b"["):
        return raw
    message = P4DeviceConfig()
    try:
        message.ParseFromString(raw)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise DeviceConfigError(f"device config is neither JSON nor a p4.tmp.P4DeviceConfig: {exc}") from None
    data = bytes(message.device_data)
    if data.lstrip()[:1] != b"{":
        raise DeviceConfigError("device config is not the embedded target's JSON (nor a P4DeviceConfig holding it)")
    return data


def _text(config: dict[str, Any], key: str, limit: int) -> str:
    value = config[key]
    if not isinstance(value, str):
        raise DeviceConfigError(f"device config {key!r} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise DeviceConfigError(f"device config {key!r} is longer than {limit} characters")
    return value


def _defines(value: Any) -> dict[str, str | None]:
    if not isinstance(value, dict) or len(value) > MAX_DEFINES:
        raise DeviceConfigError(f"device config 'defines' must be an object of at most {MAX_DEFINES} macros")
    out: dict[str, str | None] = {}
    for name, text in value.items():
        if not MACRO_RE.match(name) or not (text is None or (isinstance(text, str) and len(text) <= MAX_TEXT)):
            raise DeviceConfigError(f"device config 'defines' has an invalid entry {name[:64]!r}")
        out[name] = text
    return out


def parse(raw: bytes) -> DeviceConfig:
    """Decode and validate a `p4_device_config` (either form). Raises `DeviceConfigError` with the reason."""
    if not isinstance(raw, bytes | bytearray):
        raise DeviceConfigError("device config must be bytes")
    if len(raw) > MAX_CONFIG_BYTES:
        raise DeviceConfigError(f"device config is {len(raw)} bytes, more than the {MAX_CONFIG_BYTES} accepted")
    data = unwrap(bytes(raw))
    try:
        config = json.loads(data)
    except RecursionError:
        raise DeviceConfigError("device config JSON is nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DeviceConfigError(f"device config is not the embedded target's JSON: {exc}") from None
    if not isinstance(config, dict):
        raise DeviceConfigError("device config is not a JSON object")
    if "python" in config or config.get("format") == OLD_FORMAT:
        raise DeviceConfigError(
            f"device config is of the old format {OLD_FORMAT!r}, which carried Python code; the switch no longer "
            f"runs code from a config: recompile the program with `p4ina compile` (format {FORMAT!r})")
    fmt = config.get("format")
    if fmt != FORMAT:
        shown = fmt[:64] if isinstance(fmt, str) else fmt if fmt is None else type(fmt).__name__
        raise DeviceConfigError(f"device config format is {shown!r}, expected {FORMAT!r} (compile with `p4ina compile`)")
    unknown = sorted(k[:64] for k in set(config) - REQUIRED_KEYS - OPTIONAL_KEYS)
    if unknown:
        raise DeviceConfigError(f"device config has unknown keys: {', '.join(repr(k) for k in unknown[:5])}")
    missing = sorted(REQUIRED_KEYS - set(config))
    if missing:
        raise DeviceConfigError(f"device config lacks {', '.join(missing)}")
    name = _text(config, "name", 64)
    if not NAME_RE.match(name):
        raise DeviceConfigError("device config 'name' must match [A-Za-z_][A-Za-z0-9_.-]* (at most 64 characters)")
    program = _text(config, "program", MAX_PROGRAM_CHARS)
    digest = _text(config, "program_sha256", 64)
    if not SHA256_RE.match(digest):
        raise DeviceConfigError("device config 'program_sha256' must be 64 lowercase hex digits")
    if hashlib.sha256(program.encode("utf-8", "surrogatepass")).hexdigest() != digest:
        raise DeviceConfigError("device config 'program_sha256' does not match its program")
    compiler = _text(config, "compiler", 64) if "compiler" in config else ""
    if compiler and not COMPILER_RE.match(compiler):
        raise DeviceConfigError("device config 'compiler' must match [A-Za-z0-9_.+ -]* (at most 64 characters)")
    defines = _defines(config["defines"]) if "defines" in config else {}
    return DeviceConfig(name=name, program=program, program_sha256=digest, compiler=compiler, defines=defines)


__all__ = ["FORMAT", "DeviceConfig", "P4DeviceConfig", "parse", "unwrap", "wrap"]
