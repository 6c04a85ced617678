"""Load an installed program: P4Info + the compiler's device config -> runtime state + generated `Program`.

Loading does all the work (JSON, exec of the generated module, state construction) before anything is swapped
in, so a bad config leaves the running pipeline untouched (`Switch.install_pipeline` relies on this).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4switch.exceptions import DeviceConfigError
from p4switch.runtime.bindings import RuntimeBindings

DEVICE_CONFIG_FORMAT = "p4ina-v1model/1"

# What a generated Program must offer (docs/architecture.md, "Generated pipeline module").
PROGRAM_MEMBERS = (
    "init",
    "parse",
    "verify_checksum",
    "ingress",
    "egress",
    "compute_checksum",
    "deparse",
    "clone_ctx",
    "save_field_list",
    "restore_field_list",
    "reset_metadata",
)


@dataclass
class Pipeline:
    """One installed program. Immutable once built; a new config builds a new `Pipeline`."""

    p4info: p4info_pb2.P4Info
    config: dict[str, Any]
    state: Any
    rt: RuntimeBindings
    program: Any
    name: str = ""


def parse_device_config(device_config: bytes) -> dict[str, Any]:
    """The device config JSON, checked for the embedded target's format."""
    try:
        config = json.loads(device_config)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DeviceConfigError(f"device config is not the embedded target's JSON: {exc}") from None
    if not isinstance(config, dict):
        raise DeviceConfigError("device config is not a JSON object")
    fmt = config.get("format")
    if fmt != DEVICE_CONFIG_FORMAT:
        raise DeviceConfigError(
            f"device config format is {fmt!r}, expected {DEVICE_CONFIG_FORMAT!r} (compile with `p4ina compile`)"
        )
    if not isinstance(config.get("python"), str):
        raise DeviceConfigError("device config has no generated pipeline code ('python')")
    return config


def build_pipeline(
    p4info: p4info_pb2.P4Info,
    device_config: bytes,
    *,
    seed: int | None = None,
    clock_us: Callable[[], int] | None = None,
    log_sink: Callable[[str], None] | None = None,
) -> Pipeline:
    """Build everything a pipeline needs; raises `DeviceConfigError` and never half-builds."""
    config = parse_device_config(device_config)
    from p4switch.runtime.state import RuntimeState

    try:
        state = RuntimeState.from_p4info(p4info, config)
    except DeviceConfigError:
        raise
    except Exception as exc:  # the state builder validates P4Info + config; any failure is a bad config
        raise DeviceConfigError(f"device config does not match its P4Info: {exc}") from None
    rt = RuntimeBindings(state, seed=seed, clock_us=clock_us, log_sink=log_sink)

    def deliver_digest(name: str, values: tuple[int, ...]) -> None:
        digest = state.digests.get(name)
        if digest is not None:
            digest.push(values, rt.now_us() * 1000)

    rt.digest_sink = deliver_digest
    name = str(config.get("name") or config.get("program") or "")
    namespace: dict[str, Any] = {"__name__": f"p4ina_generated_{name or 'pipeline'}"}
    try:
        code = compile(config["python"], f"<generated pipeline {name or '?'}>", "exec")
        exec(code, namespace)
        build = namespace["build"]
        program = build(rt)
    except KeyError:
        raise DeviceConfigError("generated pipeline code defines no build(rt)") from None
    except Exception as exc:
        raise DeviceConfigError(f"generated pipeline code failed to load: {type(exc).__name__}: {exc}") from None
    missing = [m for m in PROGRAM_MEMBERS if not callable(getattr(program, m, None))]
    if missing:
        raise DeviceConfigError(f"generated Program lacks {', '.join(missing)}")
    return Pipeline(p4info=p4info, config=config, state=state, rt=rt, program=program, name=name)


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read P4Info in protobuf text format (`.txt`, `.txtpb`) or binary; errors are `DeviceConfigError`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DeviceConfigError(f"cannot read P4Info {path}: {exc.strerror}") from None
    p4info = p4info_pb2.P4Info()
    try:
        text_format.Parse(raw.decode("utf-8"), p4info)
        return p4info
    except (UnicodeDecodeError, text_format.ParseError):
        pass
    try:
        p4info.ParseFromString(raw)
    except Exception:
        raise DeviceConfigError(f"{path} is not a P4Info (neither text nor binary protobuf)") from None
    return p4info


def default_p4info_path(device_config_path: str | Path) -> Path:
    """`DIR/name.json` -> `DIR/name.p4info.txtpb`, where `p4ina compile` writes it."""
    path = Path(device_config_path)
    return path.with_name(path.stem + ".p4info.txtpb")
