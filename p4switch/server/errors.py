"""Errors the P4Runtime server turns into gRPC statuses. `RpcError` carries a canonical google.rpc code and,
for batch writes, the per-update `p4.v1.Error` list that goes into `grpc-status-details-bin`."""

from __future__ import annotations

from google.rpc import code_pb2

from p4switch.exceptions import P4SwitchError


class RpcError(P4SwitchError):
    """Answer the current RPC with `code` (a google.rpc code) and `message`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def code_name(code: int) -> str:
    return str(code_pb2.Code.Name(code))
