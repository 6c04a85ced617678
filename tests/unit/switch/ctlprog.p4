// The engine tests' contract program (switch_ctlprog.py): an 8-byte control header says what each packet asks of
// the engine (output port, multicast group, clone sessions, resubmit/recirculate rounds, priority, flags), and
// egress appends a 17-byte observation header with the standard metadata the engine handed it.
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8> port;
    bit<8> mcast;
    bit<8> i2e;
    bit<8> resub;
    bit<8> recirc;
    bit<8> e2e;
    bit<8> prio;
    bit<8> flags;   // bit0: mark_to_drop in egress; bit1: preserve field list 1 on clones; bit2: a failing assert
}

header obs_t {
    bit<8>  instance_type;
    bit<16> egress_rid;
    bit<16> egress_port;
    bit<16> packet_length;
    bit<8>  resubmits;
    bit<8>  recircs;
    bit<16> ingress_port;
    bit<8>  enq_qdepth;
    bit<8>  deq_qdepth;
    bit<32> deq_timedelta;
}

struct headers_t {
    ctl_t ctl;
    obs_t obs;
}

struct meta_t {
    @field_list(1) bit<8> resubmits;
    @field_list(1) bit<8> recircs;
    @field_list(1) bit<8> mark;
}

parser CtlParser(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.ctl);
        transition accept;
    }
}

control CtlVerify(inout headers_t h, inout meta_t m) {
    apply { }
}

control CtlIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (!h.ctl.isValid()) {
            mark_to_drop(sm);
            return;
        }
        if ((h.ctl.flags & 4) != 0) {
            assert(false);
        }
        sm.priority = (bit<3>) h.ctl.prio;
        if (h.ctl.i2e != 0) {
            if ((h.ctl.flags & 2) != 0) {
                clone_preserving_field_list(CloneType.I2E, (bit<32>) h.ctl.i2e, 1);
            } else {
                clone(CloneType.I2E, (bit<32>) h.ctl.i2e);
            }
        }
        if (m.resubmits < h.ctl.resub) {
            m.resubmits = m.resubmits + 1;
            resubmit_preserving_field_list(1);
            return;
        }
        if (h.ctl.mcast != 0) {
            sm.mcast_grp = (bit<16>) h.ctl.mcast;
        } else if (h.ctl.port == 0xFF) {
            sm.egress_spec = 511;
            sm.mcast_grp = 0;
        } else {
            sm.egress_spec = (bit<9>) h.ctl.port;
        }
    }
}

control CtlEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.ctl.e2e != 0 && sm.instance_type != 2) {
            if ((h.ctl.flags & 2) != 0) {
                clone_preserving_field_list(CloneType.E2E, (bit<32>) h.ctl.e2e, 1);
            } else {
                clone(CloneType.E2E, (bit<32>) h.ctl.e2e);
            }
        }
        if (m.recircs < h.ctl.recirc && sm.instance_type != 2) {
            m.recircs = m.recircs + 1;
            recirculate_preserving_field_list(1);
            return;
        }
        h.obs.setValid();
        h.obs.instance_type = (bit<8>) sm.instance_type;
        h.obs.egress_rid = sm.egress_rid;
        h.obs.egress_port = (bit<16>) sm.egress_port;
        h.obs.packet_length = (bit<16>) sm.packet_length;
        h.obs.resubmits = m.resubmits;
        h.obs.recircs = m.recircs;
        h.obs.ingress_port = (bit<16>) sm.ingress_port;
        h.obs.enq_qdepth = sm.enq_qdepth > 255 ? 8w255 : (bit<8>) sm.enq_qdepth;
        h.obs.deq_qdepth = sm.deq_qdepth > 255 ? 8w255 : (bit<8>) sm.deq_qdepth;
        h.obs.deq_timedelta = sm.deq_timedelta;
        if ((h.ctl.flags & 1) != 0 && sm.instance_type == 0) {
            sm.egress_spec = 511;
        }
    }
}

control CtlCompute(inout headers_t h, inout meta_t m) {
    apply { }
}

control CtlDeparser(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.ctl);
        pkt.emit(h.obs);
    }
}

V1Switch(CtlParser(), CtlVerify(), CtlIngress(), CtlEgress(), CtlCompute(), CtlDeparser()) main;
