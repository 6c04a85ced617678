"""Forwarding pipeline changes: verify a config without touching the device, install it, and for
RECONCILE_AND_COMMIT carry the forwarding state over wherever the new P4Info still accepts it (PI does the same:
read everything, install, write it back, skipping what no longer fits; registers and counters are copied)."""

from __future__ import annotations

from dataclasses import dataclass

from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.exceptions import P4SwitchError
from p4switch.runtime.entries import EntityCodec, meter_config_to_proto
from p4switch.runtime.state import RuntimeState, RuntimeStateError
from p4switch.server.device import Device, runtime_config
from p4switch.server.errors import RpcError


@dataclass
class PipelineConfig:
    """A pipeline config as committed. `p4info_bytes` answers GetForwardingPipelineConfig: with the pure-Python
    protobuf runtime, copying a message that another thread reads (getters insert fields) can fail with
    "dictionary changed size during iteration", so the server never copies the live P4Info."""

    p4info: p4info_pb2.P4Info
    device_config: bytes
    cookie: int | None
    p4info_bytes: bytes = b""


def from_request(config: p4runtime_pb2.ForwardingPipelineConfig) -> PipelineConfig:
    cookie = config.cookie.cookie if config.HasField("cookie") else None
    p4info = p4info_pb2.P4Info()
    p4info.CopyFrom(config.p4info)  # the request is this thread's own message
    return PipelineConfig(p4info, config.p4_device_config, cookie, p4info.SerializeToString())


def from_state(state: RuntimeState) -> PipelineConfig:
    """The config of a pipeline the switch was started with: its P4Info, so that clients can fetch it; the device
    config bytes stay with the switch."""
    p4info = p4info_pb2.P4Info()
    p4info.CopyFrom(state.p4info)
    return PipelineConfig(p4info, b"", None, p4info.SerializeToString())


def verify(config: PipelineConfig) -> None:
    """Check that the P4Info is usable and the device config is valid, compiles and fits it, with no side effect
    (the compiled program is cached, so the COMMIT that usually follows does not compile again)."""
    if not config.p4info.ListFields():
        raise RpcError(code_pb2.INVALID_ARGUMENT, "the pipeline config has no P4Info")
    try:
        RuntimeState.from_p4info(config.p4info, runtime_config(config.p4info, config.device_config))
    except P4SwitchError as exc:
        raise RpcError(code_pb2.INVALID_ARGUMENT, str(exc)) from None
    except Exception as exc:  # whatever a malformed P4Info makes the state builder trip on
        raise RpcError(code_pb2.INVALID_ARGUMENT, f"P4Info and device config do not fit together: {exc!r}") from None


def install(device: Device, config: PipelineConfig) -> None:
    try:
        device.install_pipeline(config.p4info, config.device_config)
    except P4SwitchError as exc:
        raise RpcError(code_pb2.INVALID_ARGUMENT, f"cannot install the pipeline: {exc}") from None
    except Exception as exc:  # the old pipeline keeps running; the client learns why
        raise RpcError(code_pb2.INTERNAL, f"cannot install the pipeline: {type(exc).__name__}: {exc}") from None


def snapshot(state: RuntimeState) -> list[tuple[int, p4runtime_pb2.Entity]]:
    """Everything a controller wrote, as (update type, entity) pairs that recreate it."""
    codec = EntityCodec(state)
    insert, modify = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY
    out: list[tuple[int, p4runtime_pb2.Entity]] = []
    with state.lock:
        for kind in ("action_profile_member", "action_profile_group"):  # before the entries that point at them
            req = p4runtime_pb2.Entity()
            getattr(req, kind).SetInParent()
            out.extend((insert, e) for e in codec.read(req))
        for table in sorted(state.tables, key=lambda t: t.id):
            for entry in table.entries():
                if not entry.is_const:
                    ent = p4runtime_pb2.Entity()
                    codec.entry_to_proto(table, entry, into=ent.table_entry)
                    if table.has_direct_counter:
                        ent.table_entry.counter_data.packet_count = entry.packets
                        ent.table_entry.counter_data.byte_count = entry.bytes
                    if entry.meter is not None and entry.meter.config is not None:
                        ent.table_entry.meter_config.CopyFrom(meter_config_to_proto(entry.meter.config))
                    out.append((insert, ent))
            if (table.default_entry.action_id, table.default_entry.action_args) != table.initial_default:
                ent = p4runtime_pb2.Entity()
                codec.default_entry_to_proto(table, into=ent.table_entry)
                out.append((modify, ent))
        for kind, request in (
            ("multicast_group_entry", p4runtime_pb2.MulticastGroupEntry()),
            ("clone_session_entry", p4runtime_pb2.CloneSessionEntry()),
        ):
            req = p4runtime_pb2.Entity()
            getattr(req.packet_replication_engine_entry, kind).CopyFrom(request)
            out.extend((insert, e) for e in codec.read(req))
        req = p4runtime_pb2.Entity()
        req.meter_entry.SetInParent()  # registers and counters are carried over by `carry_externs`
        out.extend((modify, e) for e in codec.read(req) if e.meter_entry.HasField("config"))
        req = p4runtime_pb2.Entity()
        req.digest_entry.SetInParent()
        out.extend((insert, e) for e in codec.read(req))
    return out


def restore(state: RuntimeState, saved: list[tuple[int, p4runtime_pb2.Entity]]) -> int:
    """Write back what still fits the new pipeline; returns how many entities were kept."""
    codec = EntityCodec(state)
    kept = 0
    for update_type, entity in saved:
        try:
            codec.write(update_type, entity)
            kept += 1
        except RuntimeStateError:
            continue
    return kept



def carry_externs(old: RuntimeState, new: RuntimeState) -> int:
    """Register cells and counter values of every register/counter the new P4Info keeps unchanged (same name, id,
    size and width/unit), copied directly: a P4Runtime round trip per cell would take seconds for large arrays."""
    kept = 0
    with old.lock, new.lock:
        for reg in new.registers:
            prev = old.registers.get(reg.name)
            if prev is not None and (prev.id, prev.size, prev.bitwidth) == (reg.id, reg.size, reg.bitwidth):
                reg.cells[:] = prev.cells
                kept += 1
        for counter in new.counters:
            before = old.counters.get(counter.name)
            if before is not None and (before.id, before.size, before.unit) == (counter.id, counter.size, counter.unit):
                counter.packets[:], counter.bytes[:] = before.packets, before.bytes
                kept += 1
    return kept
