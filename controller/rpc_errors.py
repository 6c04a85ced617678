"""Decode gRPC failures into controller errors, including P4Runtime's per-update details.

A failed batch Write carries a `google.rpc.Status` in the `grpc-status-details-bin` trailer whose details are one
`p4.v1.Error` per update, in request order (P4Runtime spec 12.3); successful updates have code OK.
"""

from __future__ import annotations

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from controller.exceptions import RpcError, SwitchUnavailableError, UpdateError

_UNAVAILABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}


def code_name(code: int) -> str:
    try:
        return str(code_pb2.Code.Name(code))
    except ValueError:
        return str(code)


def update_errors(error: grpc.RpcError) -> list[UpdateError]:
    """The failed updates of a Write, from the status details trailer (empty when absent)."""
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailers or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:  # a malformed trailer must not hide the RPC's own error
            return []
        result = []
        for index, detail in enumerate(status.details):
            p4error = p4runtime_pb2.Error()
            if not detail.Unpack(p4error):
                continue
            if p4error.canonical_code != code_pb2.OK:
                result.append(UpdateError(index, p4error.canonical_code, code_name(p4error.canonical_code),
                                          p4error.message))
        return result
    return []


def decode(switch: str, rpc: str, error: grpc.RpcError) -> RpcError | SwitchUnavailableError:
    """The controller error for a failed call: unavailable switches apart from rejected requests."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = (error.details() if hasattr(error, "details") else str(error)) or ""
    if code in _UNAVAILABLE:
        return SwitchUnavailableError(switch, f"{rpc}: {code.name}: {details}".rstrip(": "))
    return RpcError(switch, rpc, code.name, details, update_errors(error))
