"""`p4ina.Admin`: the target's non-P4Runtime operations (BMv2 does these over Thrift) as a tiny gRPC service with
JSON payloads, so the controller's `Target` abstraction needs no generated code. Each method takes a JSON object
and returns one; a bad argument is INVALID_ARGUMENT, an operation the device lacks is UNIMPLEMENTED.

Methods (`/p4ina.Admin/<name>`): set_queue_rate {port, rate_pps, priority?}, set_queue_depth {port, depth,
priority?}, set_impairment {port, direction, loss?, dup?, reorder?, delay_ms?, jitter_ms?, seed?}, read_register {register,
index?} -> {cells}, write_register {register, index?, value}, stats {} -> {server: {...}, device: {...}},
set_policer {policer: "packet_in"|"digest", rate: per second or null (off), burst}, policers {} ->
{name: {rate, burst, passed, dropped}}.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc

from p4switch.exceptions import P4SwitchError
from p4switch.server.device import Device
from p4switch.server.policer import PolicerConfig, TokenBucket

SERVICE = "p4ina.Admin"
JsonHandler = Callable[[dict[str, Any]], dict[str, Any]]


class AdminError(P4SwitchError):
    """A bad admin request (answered as INVALID_ARGUMENT)."""


def _decode(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdminError(f"request is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AdminError("request must be a JSON object")
    return value


def _encode(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode()


def _number(args: dict[str, Any], name: str) -> float:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise AdminError(f"{name!r} must be a non-negative number")
    return value


def _int(args: dict[str, Any], name: str, default: int | None = None) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise AdminError(f"{name!r} must be an integer")
    return value


class AdminService:
    def __init__(self, device: Device, server_stats: Callable[[], dict[str, Any]], *,
                 policers: dict[str, TokenBucket] | None = None) -> None:
        self.device = device
        self.server_stats = server_stats
        self.policers = policers if policers is not None else {}

    def handlers(self) -> dict[str, JsonHandler]:
        return {
            "set_queue_rate": self.set_queue_rate,
            "set_queue_depth": self.set_queue_depth,
            "set_impairment": self.set_impairment,
            "read_register": self.read_register,
            "write_register": self.write_register,
            "stats": self.stats,
            "set_policer": self.set_policer,
            "policers": self.read_policers,
        }

    def _device_op(self, name: str) -> Callable[..., Any]:
        op = getattr(self.device, name, None)
        if op is None:
            raise NotImplementedError(f"this device has no {name}")
        return op

    @staticmethod
    def _priority(args: dict[str, Any]) -> int | None:
        return None if args.get("priority") is None else _int(args, "priority")

    def set_queue_rate(self, args: dict[str, Any]) -> dict[str, Any]:
        port, rate, priority = _int(args, "port"), _number(args, "rate_pps"), self._priority(args)
        self._device_op("set_queue_rate")(port, rate, priority=priority)
        return {}

    def set_queue_depth(self, args: dict[str, Any]) -> dict[str, Any]:
        port, depth, priority = _int(args, "port"), _int(args, "depth"), self._priority(args)
        self._device_op("set_queue_depth")(port, depth, priority=priority)
        return {}

    def set_impairment(self, args: dict[str, Any]) -> dict[str, Any]:
        port = _int(args, "port")
        options = {k: args[k] for k in ("loss", "dup", "reorder", "delay_ms", "jitter_ms", "seed") if k in args}
        direction = args.get("direction", "both")
        if not isinstance(direction, str):
            raise AdminError("'direction' must be a string")
        self._device_op("set_impairment")(port, direction, **options)
        return {}

    def _register(self, args: dict[str, Any]) -> Any:
        state = self.device.state
        if state is None:
            raise AdminError("no pipeline installed")
        key = args.get("register")
        reg = state.registers.get(key) if isinstance(key, (str, int)) else None
        if reg is None:
            raise AdminError(f"unknown register {key!r}")
        return reg

    def read_register(self, args: dict[str, Any]) -> dict[str, Any]:
        reg = self._register(args)
        if "index" in args:
            index = _int(args, "index")
            if not 0 <= index < reg.size:
                raise AdminError(f"index {index} out of range (size {reg.size})")
            return {"cells": [reg.cells[index]]}
        return {"cells": list(reg.cells)}

    def write_register(self, args: dict[str, Any]) -> dict[str, Any]:
        reg = self._register(args)
        value = _int(args, "value")
        if not 0 <= value < (1 << reg.bitwidth):
            raise AdminError(f"value {value} does not fit in {reg.bitwidth} bits")
        indices = [_int(args, "index")] if "index" in args else list(range(reg.size))
        for i in indices:
            if not 0 <= i < reg.size:
                raise AdminError(f"index {i} out of range (size {reg.size})")
            reg.cells[i] = value
        return {}

    def set_policer(self, args: dict[str, Any]) -> dict[str, Any]:
        name = args.get("policer")
        bucket = self.policers.get(name) if isinstance(name, str) else None
        if bucket is None:
            raise AdminError(f"unknown policer {name!r} (have: {', '.join(sorted(self.policers)) or 'none'})")
        rate = None if args.get("rate") is None else _number(args, "rate")
        bucket.configure(PolicerConfig(rate, _int(args, "burst", bucket.config.burst)))
        return bucket.snapshot()

    def read_policers(self, args: dict[str, Any]) -> dict[str, Any]:
        return {name: bucket.snapshot() for name, bucket in self.policers.items()}

    def stats(self, args: dict[str, Any]) -> dict[str, Any]:
        device_stats = getattr(self.device, "stats", None)
        return {"server": self.server_stats(), "device": device_stats() if callable(device_stats) else {}}


def generic_handler(service: AdminService) -> grpc.GenericRpcHandler:
    def wrap(fn: JsonHandler) -> Callable[[bytes, grpc.ServicerContext], bytes]:
        def call(request: bytes, context: grpc.ServicerContext) -> bytes:
            try:
                return _encode(fn(_decode(request)))
            except AdminError as exc:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            except NotImplementedError as exc:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, str(exc))
            except (P4SwitchError, ValueError, TypeError) as exc:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise AssertionError("unreachable")  # context.abort raises

        return call

    methods = {
        name: grpc.unary_unary_rpc_method_handler(wrap(fn)) for name, fn in service.handlers().items()
    }
    return grpc.method_handlers_generic_handler(SERVICE, methods)


def call(channel: grpc.Channel, method: str, args: dict[str, Any] | None = None, timeout: float = 10.0
         ) -> dict[str, Any]:
    """Client side: `call(channel, "set_queue_rate", {"port": 1, "rate_pps": 1000})`."""
    stub = channel.unary_unary(f"/{SERVICE}/{method}", request_serializer=None, response_deserializer=None)
    return _decode(stub(_encode(args or {}), timeout=timeout))
