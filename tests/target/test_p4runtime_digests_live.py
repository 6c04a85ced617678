"""Digests end to end on the switch engine: a compiled program's `digest()` reaches the primary as a DigestList
over P4Runtime once a DigestEntry configured it, and a sample is reported again only after its list was acked."""

from __future__ import annotations

import time

from p4.v1 import p4runtime_pb2
from p4runtime_support import live_switch, table_update

LEARN_P4 = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_t eth; }
struct learn_t { bit<48> mac; bit<9> port; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        digest<learn_t>(1, { h.eth.src, sm.ingress_port });
        sm.egress_spec = 1;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def frame(src: int) -> bytes:
    return bytes.fromhex("ffffffffffff") + src.to_bytes(6, "big") + bytes.fromhex("88b5") + b"learn me" * 4


def test_digest_from_the_data_plane_reaches_the_primary() -> None:
    with live_switch(LEARN_P4, "learn") as (program, switch, client):
        [digest_info] = program.p4info.digests
        switch.inject(3, frame(0x020000000003))  # before any DigestEntry: nothing is reported
        config = (f"digest_entry {{ digest_id: {digest_info.preamble.id} config {{ max_timeout_ns: 0 "
                  "max_list_size: 1 ack_timeout_ns: 60000000000 } }")
        assert client.write_updates(table_update(p4runtime_pb2.Update.INSERT, config)) == ("OK", [])
        switch.inject(2, frame(0x020000000002))
        got = client.next("digest", timeout=10).digest
        assert got.digest_id == digest_info.preamble.id
        assert [[m.bitstring for m in d.struct.members] for d in got.data] == [[b"\x02\x00\x00\x00\x00\x02", b"\x02"]]
        switch.inject(2, frame(0x020000000002))  # not acked: filtered
        switch.inject(4, frame(0x020000000004))
        nxt = client.next("digest", timeout=10).digest
        assert [d.struct.members[1].bitstring for d in nxt.data] == [b"\x04"]
        ack = p4runtime_pb2.StreamMessageRequest()
        ack.digest_ack.digest_id, ack.digest_ack.list_id = got.digest_id, got.list_id
        client.send(ack)
        digest = switch.state.digests[digest_info.preamble.id]
        deadline = time.monotonic() + 10
        while got.list_id in digest.awaiting_ack() and time.monotonic() < deadline:  # the ack has no answer
            time.sleep(0.01)
        switch.inject(2, frame(0x020000000002))  # acked: reported again
        again = client.next("digest", timeout=10).digest
        assert again.list_id > nxt.list_id and again.data[0].struct.members[1].bitstring == b"\x02"
