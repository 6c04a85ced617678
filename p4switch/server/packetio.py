"""Controller packet headers: `@controller_header("packet_out")` built from PacketOut metadata and
`@controller_header("packet_in")` parsed off frames the switch sends to the CPU port, per P4Info
`ControllerPacketMetadata` (fields in order, bit-packed MSB first, as BMv2 lays out the header)."""

from __future__ import annotations

from dataclasses import dataclass

from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.runtime.entries import decode_bytes, encode_bytes
from p4switch.server.errors import RpcError


@dataclass(frozen=True)
class ControllerHeader:
    """One controller header's layout: `(id, name, bitwidth)` per field, in header order."""

    name: str
    fields: tuple[tuple[int, str, int], ...]

    @property
    def bits(self) -> int:
        return sum(w for _, _, w in self.fields)

    @property
    def nbytes(self) -> int:
        return (self.bits + 7) // 8

    @classmethod
    def from_p4info(cls, p4info: p4info_pb2.P4Info, name: str) -> ControllerHeader | None:
        for cpm in p4info.controller_packet_metadata:
            if cpm.preamble.name == name:
                return cls(name, tuple((m.id, m.name, m.bitwidth) for m in cpm.metadata))
        return None

    def build(self, metadata: list[p4runtime_pb2.PacketMetadata]) -> bytes:
        """Header bytes for a PacketOut; fields the client leaves out are zero."""
        given: dict[int, bytes] = {}
        widths = {fid: (fname, w) for fid, fname, w in self.fields}
        for md in metadata:
            if md.metadata_id not in widths:
                raise RpcError(code_pb2.INVALID_ARGUMENT, f"{self.name}: unknown metadata id {md.metadata_id}")
            given[md.metadata_id] = md.value
        word = 0
        for fid, fname, width in self.fields:
            value = 0
            if fid in given:
                try:
                    value = decode_bytes(given[fid], width, f"{self.name}.{fname}")
                except Exception as exc:  # RuntimeStateError: a one-line reason
                    raise RpcError(code_pb2.INVALID_ARGUMENT, str(exc)) from None
            word = (word << width) | value
        pad = self.nbytes * 8 - self.bits
        return (word << pad).to_bytes(self.nbytes, "big") if self.nbytes else b""

    def parse(self, frame: bytes) -> tuple[list[p4runtime_pb2.PacketMetadata], bytes]:
        """Metadata (canonical byte strings) and the payload after the header."""
        if len(frame) < self.nbytes:
            return [], frame
        word = int.from_bytes(frame[: self.nbytes], "big") >> (self.nbytes * 8 - self.bits)
        out = []
        shift = self.bits
        for fid, _, width in self.fields:
            shift -= width
            value = (word >> shift) & ((1 << width) - 1)
            out.append(p4runtime_pb2.PacketMetadata(metadata_id=fid, value=encode_bytes(value)))
        return out, frame[self.nbytes :]
