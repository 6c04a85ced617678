"""Load an installed program: P4Info + device config -> runtime state + the generated `Program`.

The device config is data (`p4switch.device_config`): the switch compiles its P4 text itself
(`p4switch.device_loader`) and runs only the module its own code generator wrote, in a namespace with restricted
built-ins. Loading does all the work before anything is swapped in, so a bad config leaves the running pipeline
untouched (`Switch.install_pipeline` relies on this).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p4.config.v1 import p4info_pb2

from p4switch import device_config as device_config_format
from p4switch.codegen.audit import run_generated
from p4switch.device_loader import LoadedProgram, load
from p4switch.exceptions import DeviceConfigError
from p4switch.runtime.bindings import RuntimeBindings

DEVICE_CONFIG_FORMAT = device_config_format.FORMAT

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
    #: the program's fused entry for a packet from a port (`Program.port_ingress`: init, the standard metadata a
    #: port packet starts with, parse, verify and ingress in one call), None for a module without one: the engine
    #: then calls the entry points one by one (`V1Model.ingress_frame`)
    port_ingress: Any = None


def parse_device_config(device_config: bytes) -> device_config_format.DeviceConfig:
    """The device config, validated against the embedded target's schema (either accepted form)."""
    return device_config_format.parse(device_config)


def build_pipeline(
    p4info: p4info_pb2.P4Info,
    device_config: bytes,
    *,
    seed: int | None = None,
    clock_us: Callable[[], int] | None = None,
    log_sink: Callable[[str], None] | None = None,
) -> Pipeline:
    """Build everything a pipeline needs from a pushed or loaded config; raises `DeviceConfigError` and never
    half-builds."""
    return instantiate(p4info, load(p4info, device_config), seed=seed, clock_us=clock_us, log_sink=log_sink)


def instantiate(
    p4info: p4info_pb2.P4Info,
    program: LoadedProgram,
    *,
    seed: int | None = None,
    clock_us: Callable[[], int] | None = None,
    log_sink: Callable[[str], None] | None = None,
) -> Pipeline:
    """A fresh pipeline (new state, new module instance) of a compiled program."""
    from p4switch.runtime.state import RuntimeState

    config = program.runtime_config
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
    try:
        namespace = run_generated(program.code, f"p4ina_generated_{program.name}")
        build = namespace["build"]
        built = build(rt)
    except KeyError:
        raise DeviceConfigError("generated pipeline code defines no build(rt)") from None
    except Exception as exc:
        raise DeviceConfigError(f"generated pipeline code failed to load: {type(exc).__name__}: {exc}") from None
    missing = [m for m in PROGRAM_MEMBERS if not callable(getattr(built, m, None))]
    if missing:
        raise DeviceConfigError(f"generated Program lacks {', '.join(missing)}")
    return Pipeline(p4info=p4info, config=config, state=state, rt=rt, program=built, name=program.name,
                    port_ingress=getattr(built, "port_ingress", None))


def default_p4info_path(device_config_path: str | Path) -> Path:
    """`DIR/name.json` -> `DIR/name.p4info.txtpb`, where `p4ina compile` writes it."""
    path = Path(device_config_path)
    return path.with_name(path.stem + ".p4info.txtpb")
