"""One packet in flight through the v1model pipeline, shared by the engine and the generated code.

The engine creates a `PacketContext`, the generated `Program.init` fills `h`, `m` and `sm`, and the v1model
controls read and write them. Externs that act after a control ends (clone, resubmit, recirculate) are recorded
here as requests and carried out by the engine with BMv2's semantics, so generated code never touches queues.
"""

from __future__ import annotations

from typing import Any

# v1model `enum CloneType { I2E, E2E }`: the value generated code puts first in a clone request.
CLONE_I2E = 0
CLONE_E2E = 1

# BMv2 simple_switch's instance_type values (simple_switch.h PktInstanceType).
INSTANCE_NORMAL = 0
INSTANCE_INGRESS_CLONE = 1
INSTANCE_EGRESS_CLONE = 2
INSTANCE_COALESCED = 3
INSTANCE_RECIRC = 4
INSTANCE_REPLICATION = 5
INSTANCE_RESUBMIT = 6

# egress_spec / egress_port value that means "drop" in BMv2 (the default drop port of simple_switch).
DROP_PORT = 511

# The fields of v1model's standard_metadata_t, in declaration order.
STANDARD_METADATA_FIELDS: tuple[str, ...] = (
    "ingress_port",
    "egress_spec",
    "egress_port",
    "instance_type",
    "packet_length",
    "enq_timestamp",
    "enq_qdepth",
    "deq_timedelta",
    "deq_qdepth",
    "ingress_global_timestamp",
    "egress_global_timestamp",
    "mcast_grp",
    "egress_rid",
    "checksum_error",
    "parser_error",
    "priority",
)


class StandardMetadata:
    """v1model `standard_metadata_t` with every field zeroed.

    Generated code may use this class for `ctx.sm` (the engine only needs attribute access by v1model's field
    names); a generated class with the same attribute names works as well.
    """

    def __init__(self) -> None:
        self.ingress_port = 0
        self.egress_spec = 0
        self.egress_port = 0
        self.instance_type = 0
        self.packet_length = 0
        self.enq_timestamp = 0
        self.enq_qdepth = 0
        self.deq_timedelta = 0
        self.deq_qdepth = 0
        self.ingress_global_timestamp = 0
        self.egress_global_timestamp = 0
        self.mcast_grp = 0
        self.egress_rid = 0
        self.checksum_error = 0
        self.parser_error = 0
        self.priority = 0

    def copy(self) -> StandardMetadata:
        other = StandardMetadata.__new__(StandardMetadata)
        other.__dict__.update(self.__dict__)
        return other

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v}" for k, v in self.__dict__.items())
        return f"StandardMetadata({fields})"


class PacketContext:
    """A packet and its pipeline state.

    `data` is the frame as received (for resubmit: the original frame; for recirculate: the deparsed frame);
    `payload_offset` is set by the parser to the number of bytes it consumed, so the deparser appends
    `data[payload_offset:]` after the emitted headers. `h`, `m` and `sm` are the program's headers, user metadata
    and standard metadata (allocated by the generated `Program.init`).

    Requests recorded by externs, carried out by the engine when the control ends:
    - `clone_requests`: `(clone_type, session, field_list_or_None)` per `clone`/`clone_preserving_field_list`
      call, `clone_type` being `CLONE_I2E` or `CLONE_E2E`. As in BMv2 only the last request of a control counts.
    - `resubmit_field_list`, `recirculate_field_list`: `None` when not requested, else the field list index
      (`0` for the field-list-less legacy externs).
    - `truncate_length`: bytes to keep on output (v1model `truncate`), `None` when not requested.
    """

    __slots__ = (
        "clone_requests",
        "copy_id",
        "data",
        "h",
        "m",
        "packet_id",
        "payload_offset",
        "recirculate_field_list",
        "resubmit_field_list",
        "sm",
        "truncate_length",
    )

    def __init__(self, data: bytes, packet_id: int = 0, copy_id: int = 0) -> None:
        self.data = data
        self.payload_offset = 0
        self.h: Any = None
        self.m: Any = None
        self.sm: Any = None
        self.clone_requests: list[tuple[int, int, int | None]] = []
        self.resubmit_field_list: int | None = None
        self.recirculate_field_list: int | None = None
        self.truncate_length: int | None = None
        self.packet_id = packet_id
        self.copy_id = copy_id

    def clear_requests(self) -> None:
        """Forget extern requests (the engine calls this between ingress and egress)."""
        self.clone_requests = []
        self.resubmit_field_list = None
        self.recirculate_field_list = None

    def __repr__(self) -> str:
        return f"PacketContext(packet_id={self.packet_id}, copy_id={self.copy_id}, len={len(self.data)})"
