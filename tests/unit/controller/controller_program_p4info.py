"""A P4Info with the control-plane interface that docs/p4-program.md documents, for tests that run before (or
without) the compiler. The integration tests use the compiler's real P4Info instead; the names here are the
documented ones, so a drift between the doc and `controller/program.py` fails these tests."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2

EXACT, LPM, TERNARY = p4info_pb2.MatchField.EXACT, p4info_pb2.MatchField.LPM, p4info_pb2.MatchField.TERNARY

ACTIONS: dict[str, list[tuple[str, int]]] = {
    "NoAction": [],
    "P4inaIngress.admission.set_job_root": [("job_idx", 8), ("slot_base", 16), ("slot_count", 16), ("children", 8),
                                            ("mcast_grp", 16), ("scale", 8), ("result_fmt", 2)],
    "P4inaIngress.admission.set_job_member": [("job_idx", 8), ("slot_base", 16), ("slot_count", 16),
                                              ("children", 8), ("mcast_grp", 16), ("scale", 8),
                                              ("parent_port", 9), ("my_index", 5)],
    "P4inaIngress.admission.admit": [],
    "P4inaEgress.agg_rewrite.set_neighbor": [("src_mac", 48), ("dst_mac", 48), ("src_addr", 32), ("dst_addr", 32),
                                             ("dst_port", 16)],
    "P4inaIngress.forwarding.route": [("port", 9), ("src_mac", 48), ("dst_mac", 48)],
    "P4inaIngress.forwarding.route_ecmp": [("group", 16), ("size", 16)],
    "P4inaIngress.forwarding.route_spray": [("group", 16), ("size", 16)],
    "P4inaIngress.forwarding.drop": [],
    "P4inaIngress.forwarding.l2_forward": [("port", 9)],
    "P4inaIngress.qos.set_priority": [("prio", 3)],
}

TABLES: dict[str, tuple[list[tuple[str, int, int]], list[str], int]] = {
    "P4inaIngress.admission.job": ([("hdr.agg.job_id", 16, EXACT)],
                                   ["P4inaIngress.admission.set_job_root", "P4inaIngress.admission.set_job_member",
                                    "NoAction"], 1024),
    "P4inaIngress.admission.agg_children": ([("standard_metadata.ingress_port", 9, EXACT),
                                             ("hdr.agg.job_id", 16, EXACT), ("hdr.agg.child", 5, EXACT)],
                                            ["P4inaIngress.admission.admit", "NoAction"], 4096),
    "P4inaEgress.agg_rewrite.agg_neighbors": ([("hdr.agg.job_id", 16, EXACT),
                                               ("standard_metadata.egress_port", 9, EXACT)],
                                              ["P4inaEgress.agg_rewrite.set_neighbor", "NoAction"], 4096),
    "P4inaIngress.forwarding.ipv4_lpm": ([("hdr.ipv4.dst_addr", 32, LPM)],
                                         ["P4inaIngress.forwarding.route", "P4inaIngress.forwarding.route_ecmp",
                                          "P4inaIngress.forwarding.route_spray", "P4inaIngress.forwarding.drop",
                                          "NoAction"], 4096),
    "P4inaIngress.forwarding.ecmp_members": ([("meta.fwd.ecmp_group", 16, EXACT), ("meta.fwd.ecmp_member", 16, EXACT)],
                                             ["P4inaIngress.forwarding.route", "P4inaIngress.forwarding.drop"], 1024),
    "P4inaIngress.forwarding.l2": ([("hdr.ethernet.dst_addr", 48, EXACT)],
                                   ["P4inaIngress.forwarding.l2_forward", "P4inaIngress.forwarding.drop"], 4096),
    "P4inaIngress.qos.dscp_priority": ([("hdr.ipv4.dscp", 6, EXACT)], ["P4inaIngress.qos.set_priority", "NoAction"],
                                       64),
}

COUNTERS = {"P4inaIngress.output.agg_drops": 136, "P4inaIngress.output.agg_packets": 17,
            "P4inaIngress.forwarding.fwd_drops": 512, "P4inaIngress.qos.pfc_rx": 512}
# The per-cell slot state (AGG_CELLS = 1024 cells: 512 slots x 2 versions) with its element widths; the controller
# clears it for the slots it grants (docs/controller.md, "Jobs"). The 64 value registers are not part of the
# control-plane interface.
REGISTERS = {f"P4inaIngress.aggregation.{name}": (1024, width) for name, width in (
    ("agg_bitmap", 32), ("agg_child_count", 8), ("agg_round_step", 32), ("agg_round_seq", 32),
    ("agg_contributions", 16), ("agg_checksum", 32), ("agg_status", 32))}


def documented_p4info() -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    info.pkg_info.arch = "v1model"
    action_ids = {}
    for i, (name, params) in enumerate(ACTIONS.items()):
        a = info.actions.add()
        a.preamble.id = 0x01000000 + i + 1
        a.preamble.name = name
        a.preamble.alias = name.rsplit(".", 1)[-1]
        action_ids[name] = a.preamble.id
        for j, (pname, width) in enumerate(params):
            a.params.add(id=j + 1, name=pname, bitwidth=width)
    for i, (name, (keys, actions, size)) in enumerate(TABLES.items()):
        t = info.tables.add()
        t.preamble.id = 0x02000000 + i + 1
        t.preamble.name = name
        t.size = size
        for j, (kname, width, kind) in enumerate(keys):
            t.match_fields.add(id=j + 1, name=kname, bitwidth=width, match_type=kind)
        for a_name in actions:
            t.action_refs.add(id=action_ids[a_name])
    for i, (name, size) in enumerate(COUNTERS.items()):
        c = info.counters.add()
        c.preamble.id = 0x12000000 + i + 1
        c.preamble.name = name
        c.spec.unit = p4info_pb2.CounterSpec.BOTH
        c.size = size
    for i, (name, (size, width)) in enumerate(REGISTERS.items()):
        r = info.registers.add()
        r.preamble.id = 0x13000000 + i + 1
        r.preamble.name = name
        r.size = size
        r.type_spec.bitstring.bit.bitwidth = width
    return info
