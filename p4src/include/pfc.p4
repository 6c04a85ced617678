// p4ina: priority flow control (802.1Qbb), the pause-storm watchdog (SONiC PFCWD semantics) and deadlock probes.
// Design and reasons in docs/pfc.md; the controller's interface in docs/p4-program.md.
//
// Ingress (PfcIngress, after forwarding): received PFC frames are checked, counted per (port, class) with the time
// they pause for; a pause that lasts the detection time is a storm, reported by digest, and the port's watchdog
// action applies to unicast traffic of that class until no pause came for the restoration time; a pause that lasts
// the deadlock threshold turns the frame into a probe sent back out of the paused port; a probe that returns to its
// origin is a cyclic buffer dependency, reported by digest with the ports of the cycle. On targets whose MAC does
// not honour pause (BMv2), `hold_limit` > 0 holds unicast packets for a paused (port, class) by recirculating them.
//
// Egress (PfcEgress): Xoff/Xon hysteresis per (egress port, class) on the queue depth; a crossing clones the packet
// (E2E, session PFC_SESSION_BASE + port of the sender) and the clone leaves as the PFC frame.
#ifndef P4INA_PFC_P4
#define P4INA_PFC_P4

#include "headers.p4"

control PfcIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    // All per (port, class) state, index port * 8 + class; times in us of ingress_global_timestamp.
    register<bit<48>>(PFC_ROWS) pfc_paused_until;   // the pause granted by the last frame ends here
    register<bit<48>>(PFC_ROWS) pfc_pause_since;    // start of the current continuous pause
    register<bit<48>>(PFC_ROWS) pfc_last_pause;     // last frame with a non-zero pause time
    register<bit<48>>(PFC_ROWS) pfc_paused_us;      // paused time granted so far (Xon takes back the rest)
    register<bit<1>>(PFC_ROWS) pfcwd_storm;         // 1 while the watchdog holds the queue in storm state
    register<bit<48>>(PFC_ROWS) pfc_last_probe;
    register<bit<16>>(PFC_CLASSES) pfc_paused_port; // per class: 1 + the port paused last (0: none)
    register<bit<48>>(PFC_ROWS) pfc_last_release;   // last Xon forced by a pfc_release entry
    register<bit<16>>(PFC_ROWS) pfc_backlog;        // packets that reached the queue during its current pause
    register<bit<48>>(PFC_ROWS) pfc_backlog_since;  // the pause they were counted in (its pause_since)
    register<bit<16>>(PFC_ROWS) pfc_prop_target;    // 1 + the sender the last propagated Xoff went to
    register<bit<48>>(PFC_ROWS) pfc_prop_time;

    counter(PFC_ROWS, CounterType.packets) pfc_rx_class;    // frames with the class enabled (Xoff and Xon)
    counter(NUM_PORTS, CounterType.packets) pfc_malformed;  // MAC control frames that are not valid 802.1Qbb
    counter(PFC_ROWS, CounterType.packets) pfcwd_storms;
    counter(PFC_ROWS, CounterType.packets) pfcwd_restores;
    counter(PFC_ROWS, CounterType.packets) pfcwd_dropped;   // unicast packets dropped by the `drop` action
    counter(PFC_ROWS, CounterType.packets) pfc_held;        // recirculations of held packets
    counter(PFC_ROWS, CounterType.packets) pfc_hold_drops;  // held packets whose budget ran out
    counter(8, CounterType.packets) dl_probes;              // 0 sent, 1 forwarded, 2 cycles, 3 no paused port, 4 too long

    action set_switch(bit<16> switch_id, bit<3> probe_prio) {
        meta.pfc.switch_id = switch_id;
        meta.pfc.probe_prio = probe_prio;
    }

    table pfc_switch {
        key = {}
        actions = {
            set_switch;
        }
        default_action = set_switch(0, 0);
        size = 1;
    }

    // One pause quantum is 512 bit times: quantum_x65536 = 512 / link_bps * 1e6 * 65536 (3355 at 10 Gb/s).
    action pfc_port_config(bit<32> quantum_x65536, bit<32> detect_us, bit<32> restore_us, bit<2> wd_action,
                           bit<32> deadlock_us, bit<32> probe_interval_us, bit<16> hold_limit,
                           bit<16> backlog_xoff, bit<16> backlog_quanta) {
        meta.pfc.backlog_xoff = backlog_xoff;
        meta.pfc.backlog_quanta = backlog_quanta;
        meta.pfc.quantum_x65536 = quantum_x65536;
        meta.pfc.detect_us = detect_us;
        meta.pfc.restore_us = restore_us;
        meta.pfc.wd_action = wd_action;
        meta.pfc.deadlock_us = deadlock_us;
        meta.pfc.probe_interval_us = probe_interval_us;
        meta.pfc.hold_limit = hold_limit;
    }

    table pfc_port {
        key = {
            meta.pfc.cfg_port : exact;
        }
        actions = {
            pfc_port_config;
        }
        // 10 Gb/s, SONiC's 200 ms detection and restoration, drop, probes after 100 ms every 100 ms, no hold.
        default_action = pfc_port_config(3355, 200000, 200000, 0, 100000, 100000, 0, 0, 0);
        size = NUM_PORTS;
    }

    action malformed() {
        pfc_malformed.count((bit<32>)standard_metadata.ingress_port);
        mark_to_drop(standard_metadata);
    }

    // One class of a received PFC frame: pause bookkeeping, watchdog detection, deadlock trigger, all in one action
    // (BMv2 locks the registers an action touches).
    action rx_class(bit<3> cls, bit<16> quanta) {
        port_t port = standard_metadata.ingress_port;
        bit<32> idx = (bit<32>)port * PFC_CLASSES + (bit<32>)cls;
        bit<8> bit_cls = (bit<8>)1 << cls;
        bit<48> now = standard_metadata.ingress_global_timestamp;
        bit<48> until;
        bit<48> since;
        bit<48> paused;
        bit<1> storm;
        bit<48> last_probe;
        bit<16> paused_port;
        pfc_paused_until.read(until, idx);
        pfc_pause_since.read(since, idx);
        pfc_paused_us.read(paused, idx);
        pfcwd_storm.read(storm, idx);
        pfc_last_probe.read(last_probe, idx);
        pfc_paused_port.read(paused_port, (bit<32>)cls);
        pfc_rx_class.count(idx);

        bit<48> dur = ((bit<48>)quanta * (bit<48>)meta.pfc.quantum_x65536) >> 16;
        // Paused time: the part of the previous grant still ahead is replaced by the new grant.
        if (until > now) {
            paused = paused - (until - now);
        }
        paused = paused + dur;
        if (until <= now) {
            since = now;                      // the previous pause had ended: a new continuous pause starts
        }
        if (quanta == 0) {
            if (paused_port == (bit<16>)port + 1) {
                paused_port = 0;
            }
        } else {
            pfc_last_pause.write(idx, now);
            paused_port = (bit<16>)port + 1;
            if (storm == 0 && now - since >= (bit<48>)meta.pfc.detect_us) {
                storm = 1;
                pfcwd_storms.count(idx);
                meta.pfc.ev_kind = PFC_EVENT_STORM;
                meta.pfc.ev_classes = meta.pfc.ev_classes | bit_cls;
            }
            if (meta.pfc.deadlock_us != 0 && now - since >= (bit<48>)meta.pfc.deadlock_us
                    && now - last_probe >= (bit<48>)meta.pfc.probe_interval_us) {
                last_probe = now;
                meta.pfc.probe_classes = meta.pfc.probe_classes | bit_cls;
            }
        }
        pfc_paused_until.write(idx, now + dur);
        pfc_pause_since.write(idx, since);
        pfc_paused_us.write(idx, paused);
        pfcwd_storm.write(idx, storm);
        pfc_last_probe.write(idx, last_probe);
        // Pause propagation: a paused queue cannot send Xoff at departures (it has none), so once
        // `backlog_xoff` packets reached it during this pause, every sender adding to it is paused in turn
        // (refreshed at half the pause time); this is what lets a cyclic dependency close into a deadlock.
        bit<16> backlog;
        bit<48> counted_in;
        bit<16> target;
        bit<48> prop_time;
        pfc_backlog.read(backlog, idx);
        pfc_backlog_since.read(counted_in, idx);
        pfc_prop_target.read(target, idx);
        pfc_prop_time.read(prop_time, idx);
        if (until > now && meta.pfc.backlog_xoff != 0) {
            if (counted_in != since) {
                backlog = 0;
                counted_in = since;
            }
            if (backlog != 0xffff) {
                backlog = backlog + 1;
            }
            bit<48> half = ((bit<48>)meta.pfc.backlog_quanta * (bit<48>)meta.pfc.quantum_x65536) >> 17;
            port_t sender = standard_metadata.ingress_port;
            if (meta.pfc_held == 1) {
                sender = meta.pfc_hold_in_port;
            }
            if (meta.pfc_gen == PFC_GEN_NONE && backlog >= meta.pfc.backlog_xoff
                    && (target != (bit<16>)sender + 1 || now - prop_time >= half)) {
                target = (bit<16>)sender + 1;
                prop_time = now;
                meta.pfc_gen = PFC_GEN_XOFF;
                meta.pfc_gen_cls = meta.pfc.cls;
                meta.pfc_gen_quanta = meta.pfc.backlog_quanta;
                meta.pfc.gen_port = sender;
            }
        }
        pfc_backlog.write(idx, backlog);
        pfc_backlog_since.write(idx, counted_in);
        pfc_prop_target.write(idx, target);
        pfc_prop_time.write(idx, prop_time);
        pfc_paused_port.write((bit<32>)cls, paused_port);
    }

    // A probe leaves back out of the paused port: towards the switch whose buffers hold this one's traffic.
    action start_probe(bit<3> cls) {
        hdr.pfc.setInvalid();
        hdr.probe.setValid();
        hdr.ethernet.dst_addr = 0xffffffffffff;
        hdr.ethernet.ether_type = ETHERTYPE_PFC_PROBE;
        hdr.probe.origin = meta.pfc.switch_id;
        hdr.probe.cls = (bit<8>)cls;
        hdr.probe.hops = 1;
        hdr.probe.path = (bit<256>)(meta.pfc.switch_id ++ (bit<7>)0 ++ standard_metadata.ingress_port);
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        standard_metadata.priority = meta.pfc.probe_prio;
        dl_probes.count(0);
    }

    // A probe from a neighbour: on along this switch's paused port of the probe's class, if it is still paused.
    action forward_probe() {
        bit<3> cls = hdr.probe.cls[2:0];
        bit<16> paused_port;
        pfc_paused_port.read(paused_port, (bit<32>)cls);
        port_t port = (port_t)(paused_port - 1);
        bit<48> until;
        pfc_paused_until.read(until, (bit<32>)port * PFC_CLASSES + (bit<32>)cls);
        if (paused_port != 0 && until > standard_metadata.ingress_global_timestamp) {
            hdr.probe.path = (hdr.probe.path << 32) | (bit<256>)(meta.pfc.switch_id ++ (bit<7>)0 ++ port);
            hdr.probe.hops = hdr.probe.hops + 1;
            standard_metadata.egress_spec = port;
            standard_metadata.priority = meta.pfc.probe_prio;
            dl_probes.count(1);
        } else {
            mark_to_drop(standard_metadata);
            dl_probes.count(3);
        }
    }

    action probe_cycle() {
        meta.pfc.ev_kind = PFC_EVENT_DEADLOCK;
        bit<256> oldest = hdr.probe.path >> ((hdr.probe.hops - 1) * 32);   // the origin's own hop
        meta.pfc.ev_port = oldest[15:0];
        meta.pfc.ev_classes = (bit<8>)1 << hdr.probe.cls[2:0];
        meta.pfc.ev_hops = hdr.probe.hops;
        meta.pfc.ev_path = hdr.probe.path;
        mark_to_drop(standard_metadata);
        dl_probes.count(2);
    }

    action probe_too_long() {
        mark_to_drop(standard_metadata);
        dl_probes.count(4);
    }

    // The controller's deadlock breaker on the switch downstream of the chosen queue: traffic of the class makes
    // this switch send Xon out of `port` (at most once per probe interval), so the upstream queue drains into
    // this switch, which drops what it cannot hold.
    action release(port_t port) {
        bit<32> idx = (bit<32>)port * PFC_CLASSES + (bit<32>)meta.pfc.cls;
        bit<48> now = standard_metadata.ingress_global_timestamp;
        bit<48> last;
        pfc_last_release.read(last, idx);
        if (now - last >= (bit<48>)meta.pfc.probe_interval_us) {
            last = now;
            meta.pfc_gen = PFC_GEN_XON;
            meta.pfc_gen_cls = meta.pfc.cls;
            meta.pfc_gen_quanta = 0;
            meta.pfc.gen_port = port;
        }
        pfc_last_release.write(idx, last);
    }

    table pfc_release {
        key = {
            meta.pfc.cls : exact;
        }
        actions = {
            release;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PFC_CLASSES;
    }

    // A packet (first pass only) reaching a queue that is paused now: deadlock probe and pause propagation.
    action paused_queue() {
        port_t port = standard_metadata.egress_spec;
        bit<32> idx = (bit<32>)port * PFC_CLASSES + (bit<32>)meta.pfc.cls;
        bit<48> now = standard_metadata.ingress_global_timestamp;
        bit<48> since;
        bit<48> last_probe;
        pfc_pause_since.read(since, idx);
        pfc_last_probe.read(last_probe, idx);
        // A queue paused past the deadlock threshold that still gets traffic: probe from here (a clone of this
        // packet becomes the probe in egress), as the pause frames that started it may have stopped.
        if (meta.pfc.deadlock_us != 0 && now - since >= (bit<48>)meta.pfc.deadlock_us
                && now - last_probe >= (bit<48>)meta.pfc.probe_interval_us) {
            last_probe = now;
            meta.pfc_gen = PFC_GEN_PROBE;
            meta.pfc_gen_cls = meta.pfc.cls;
            meta.pfc_gen_origin = meta.pfc.switch_id;
            meta.pfc.gen_port = port;
            dl_probes.count(0);
        }
        pfc_last_probe.write(idx, last_probe);
        // Pause propagation: a paused queue cannot send Xoff at departures (it has none), so once
        // `backlog_xoff` packets reached it during this pause, every sender adding to it is paused in turn
        // (refreshed at half the pause time); this is what lets a cyclic dependency close into a deadlock.
        bit<16> backlog;
        bit<48> counted_in;
        bit<16> target;
        bit<48> prop_time;
        pfc_backlog.read(backlog, idx);
        pfc_backlog_since.read(counted_in, idx);
        pfc_prop_target.read(target, idx);
        pfc_prop_time.read(prop_time, idx);
        if (meta.pfc.backlog_xoff != 0) {
            if (counted_in != since) {
                backlog = 0;
                counted_in = since;
            }
            if (backlog != 0xffff) {
                backlog = backlog + 1;
            }
            bit<48> half = ((bit<48>)meta.pfc.backlog_quanta * (bit<48>)meta.pfc.quantum_x65536) >> 17;
            port_t sender = standard_metadata.ingress_port;
            if (meta.pfc_gen == PFC_GEN_NONE && backlog >= meta.pfc.backlog_xoff
                    && (target != (bit<16>)sender + 1 || now - prop_time >= half)) {
                target = (bit<16>)sender + 1;
                prop_time = now;
                meta.pfc_gen = PFC_GEN_XOFF;
                meta.pfc_gen_cls = meta.pfc.cls;
                meta.pfc_gen_quanta = meta.pfc.backlog_quanta;
                meta.pfc.gen_port = sender;
            }
        }
        pfc_backlog.write(idx, backlog);
        pfc_backlog_since.write(idx, counted_in);
        pfc_prop_target.write(idx, target);
        pfc_prop_time.write(idx, prop_time);
    }

    // A unicast packet for (egress port, class): restoration check, watchdog action, hold while paused.
    action guard() {
        port_t port = standard_metadata.egress_spec;
        bit<32> idx = (bit<32>)port * PFC_CLASSES + (bit<32>)meta.pfc.cls;
        bit<48> now = standard_metadata.ingress_global_timestamp;
        bit<1> storm;
        bit<48> last_pause;
        bit<48> until;
        pfcwd_storm.read(storm, idx);
        pfc_last_pause.read(last_pause, idx);
        pfc_paused_until.read(until, idx);
        if (until > now) {
            meta.pfc.paused = 1;
        }
        if (storm == 1 && now - last_pause >= (bit<48>)meta.pfc.restore_us) {
            storm = 0;
            pfcwd_restores.count(idx);
            meta.pfc.ev_kind = PFC_EVENT_RESTORE;
            meta.pfc.ev_port = (bit<16>)port;
            meta.pfc.ev_classes = (bit<8>)1 << meta.pfc.cls;
        }
        pfcwd_storm.write(idx, storm);
        if (storm == 1 && meta.pfc.wd_action == WD_ACTION_DROP) {
            pfcwd_dropped.count(idx);
            mark_to_drop(standard_metadata);
        } else if (meta.pfc.hold_limit != 0 && until > now
                   && (storm == 0 || meta.pfc.wd_action == WD_ACTION_ALERT)) {
            if (meta.pfc_held == 0) {
                meta.pfc_hold_budget = meta.pfc.hold_limit;
                meta.pfc_hold_in_port = standard_metadata.ingress_port;
            }
            if (meta.pfc_hold_budget == 0) {
                pfc_hold_drops.count(idx);
                mark_to_drop(standard_metadata);
            } else {
                pfc_held.count(idx);
                meta.pfc_hold_budget = meta.pfc_hold_budget - 1;
                meta.pfc.hold = 1;
                meta.pfc_held = 1;
                meta.pfc_hold_port = port;
                meta.pfc_hold_cls = meta.pfc.cls;
            }
        }
    }

    apply {
        pfc_switch.apply();
        if (meta.pfc_held == 1) {
            // A held packet back from recirculation: out of the same queue, or held again.
            standard_metadata.egress_spec = meta.pfc_hold_port;
            standard_metadata.priority = meta.pfc_hold_cls;
        }
        meta.pfc.cls = standard_metadata.priority;

        // Which of the three cases below this packet is, decided first so that pfc_port has one apply site: p4c's
        // BMv2 back end rejects a table applied twice ("... has multiple successors").
        bool mac_control = hdr.ethernet.ether_type == ETHERTYPE_MAC_CONTROL;
        bool pause_frame = mac_control && hdr.pfc.isValid() && hdr.ethernet.dst_addr == PFC_DEST_MAC
                           && hdr.pfc.reserved == 0;
        bool unicast = !mac_control && !hdr.probe.isValid()
                       && standard_metadata.mcast_grp == 0 && standard_metadata.egress_spec != 511;
        if (pause_frame) {
            meta.pfc.cfg_port = standard_metadata.ingress_port;      // the port the pause came in on
        } else {
            meta.pfc.cfg_port = standard_metadata.egress_spec;       // the port a unicast packet goes out of
        }
        if (pause_frame || unicast) {
            pfc_port.apply();
        }

        if (mac_control) {
            // MAC control frames end at the link: the valid ones are processed, every one is dropped.
            if (!pause_frame) {
                malformed();
            } else {
                mark_to_drop(standard_metadata);
                if (hdr.pfc.class_enable[0:0] == 1) { rx_class(0, hdr.pfc.time0); }
                if (hdr.pfc.class_enable[1:1] == 1) { rx_class(1, hdr.pfc.time1); }
                if (hdr.pfc.class_enable[2:2] == 1) { rx_class(2, hdr.pfc.time2); }
                if (hdr.pfc.class_enable[3:3] == 1) { rx_class(3, hdr.pfc.time3); }
                if (hdr.pfc.class_enable[4:4] == 1) { rx_class(4, hdr.pfc.time4); }
                if (hdr.pfc.class_enable[5:5] == 1) { rx_class(5, hdr.pfc.time5); }
                if (hdr.pfc.class_enable[6:6] == 1) { rx_class(6, hdr.pfc.time6); }
                if (hdr.pfc.class_enable[7:7] == 1) { rx_class(7, hdr.pfc.time7); }
                meta.pfc.ev_port = (bit<16>)standard_metadata.ingress_port;
                // The lowest class past the deadlock threshold sends the probe (one per frame).
                if (meta.pfc.probe_classes[0:0] == 1) { start_probe(0); }
                else if (meta.pfc.probe_classes[1:1] == 1) { start_probe(1); }
                else if (meta.pfc.probe_classes[2:2] == 1) { start_probe(2); }
                else if (meta.pfc.probe_classes[3:3] == 1) { start_probe(3); }
                else if (meta.pfc.probe_classes[4:4] == 1) { start_probe(4); }
                else if (meta.pfc.probe_classes[5:5] == 1) { start_probe(5); }
                else if (meta.pfc.probe_classes[6:6] == 1) { start_probe(6); }
                else if (meta.pfc.probe_classes[7:7] == 1) { start_probe(7); }
            }
        } else if (hdr.probe.isValid()) {
            if (hdr.probe.origin == meta.pfc.switch_id) {
                probe_cycle();
            } else if (hdr.probe.hops >= PROBE_MAX_HOPS) {
                probe_too_long();
            } else {
                forward_probe();
            }
        } else if (unicast) {
            bit<1> arrival = meta.pfc_held == 0 ? (bit<1>)1 : (bit<1>)0;   // not a held packet coming back
            guard();
            if (meta.pfc.paused == 1 && arrival == 1 && standard_metadata.egress_spec != 511) {
                paused_queue();                                      // not when the watchdog dropped it
            }
            if (meta.pfc_gen == PFC_GEN_NONE) {
                pfc_release.apply();
            }
            if (meta.pfc_gen != PFC_GEN_NONE) {
                clone_preserving_field_list(CloneType.I2E, PFC_SESSION_BASE + (bit<32>)meta.pfc.gen_port, FL_PFC_GEN);
            }
        }

        if (meta.pfc.ev_kind != 0) {
            digest<pfc_event_t>(1, {meta.pfc.ev_kind, meta.pfc.switch_id, meta.pfc.ev_port, meta.pfc.ev_classes,
                                    meta.pfc.ev_hops, meta.pfc.ev_path});
        }
    }
}

control PfcEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    register<bit<1>>(PFC_ROWS) pfc_xoff;            // 1 after Xoff was sent for the queue, until Xon
    register<bit<16>>(PFC_ROWS) pfc_xoff_target;    // the port the last Xoff went out of
    register<bit<48>>(PFC_ROWS) pfc_xoff_time;      // when it went (for the refresh while still above Xoff)

    counter(PFC_ROWS, CounterType.packets) pfc_xoff_tx;   // index: port the frame left by * 8 + class
    counter(PFC_ROWS, CounterType.packets) pfc_xon_tx;
    counter(PFC_ROWS, CounterType.packets) pfc_queue_drops;  // packets dropped by pfc_queue_drop entries

    // Hysteresis on the depth left in the queue when this packet leaves it (deq_qdepth, packets).
    // A queue still above Xoff `refresh_us` after its last Xoff pauses its sender again (0: never), as a real MAC
    // refreshes pause before the quanta run out.
    action set_thresholds(bit<19> xoff, bit<19> xon, bit<16> quanta, bit<32> refresh_us) {
        bit<32> idx = (bit<32>)standard_metadata.egress_port * PFC_CLASSES + (bit<32>)meta.pfc.cls;
        port_t sender = standard_metadata.ingress_port;
        if (meta.pfc_held == 1) {
            sender = meta.pfc_hold_in_port;
        }
        bit<19> depth = standard_metadata.deq_qdepth;
        bit<48> now = standard_metadata.egress_global_timestamp;
        bit<1> state;
        bit<16> target;
        bit<48> sent;
        pfc_xoff.read(state, idx);
        pfc_xoff_target.read(target, idx);
        pfc_xoff_time.read(sent, idx);
        meta.pfc_gen_cls = meta.pfc.cls;
        if (depth >= xoff && (state == 0 || target != (bit<16>)sender
                              || (refresh_us != 0 && now - sent >= (bit<48>)refresh_us))) {
            // Xoff towards whoever fills the queue (a second sender gets its own).
            state = 1;
            sent = now;
            target = (bit<16>)sender;
            meta.pfc_gen = PFC_GEN_XOFF;
            meta.pfc_gen_quanta = quanta;
            meta.pfc.gen_port = sender;
        } else if (state == 1 && depth <= xon) {
            state = 0;
            meta.pfc_gen = PFC_GEN_XON;
            meta.pfc_gen_quanta = 0;
            meta.pfc.gen_port = (port_t)target;
        }
        pfc_xoff.write(idx, state);
        pfc_xoff_target.write(idx, target);
        pfc_xoff_time.write(idx, sent);
    }

    // The controller's deadlock breaker: the queue's packets are dropped as they leave, so it drains although its
    // downstream neighbour will not take them.
    action queue_drop() {
        pfc_queue_drops.count((bit<32>)standard_metadata.egress_port * PFC_CLASSES + (bit<32>)meta.pfc.cls);
        mark_to_drop(standard_metadata);
    }

    table pfc_queue_drop {
        key = {
            standard_metadata.egress_port : exact;
            meta.pfc.cls                  : exact;
        }
        actions = {
            queue_drop;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PFC_ROWS;
    }

    table pfc_thresholds {
        key = {
            standard_metadata.egress_port : exact;
            meta.pfc.cls                  : exact;
        }
        actions = {
            set_thresholds;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PFC_ROWS;
    }

    action set_src_mac(mac_addr_t mac) {
        hdr.ethernet.src_addr = mac;
    }

    table pfc_src_mac {
        key = {
            standard_metadata.egress_port : exact;
        }
        actions = {
            set_src_mac;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = NUM_PORTS;
    }

    // An I2E clone becomes a deadlock probe leaving by the paused port (see PfcIngress.guard).
    action build_probe() {
        hdr.ethernet.dst_addr = 0xffffffffffff;
        hdr.ethernet.ether_type = ETHERTYPE_PFC_PROBE;
        hdr.probe.setValid();
        hdr.probe.origin = meta.pfc_gen_origin;
        hdr.probe.cls = (bit<8>)meta.pfc_gen_cls;
        hdr.probe.hops = 1;
        hdr.probe.path = (bit<256>)(meta.pfc_gen_origin ++ (bit<7>)0 ++ standard_metadata.egress_port);
        hdr.pfc.setInvalid();
        hdr.pfc_pad.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.tcp.setInvalid();
        hdr.agg.setInvalid();
        hdr.vals32.setInvalid();
        hdr.vals16.setInvalid();
        hdr.vals8.setInvalid();
    }

    // The E2E clone becomes the PFC frame: only Ethernet + PFC + padding are emitted.
    action build_pfc() {
        hdr.ethernet.dst_addr = PFC_DEST_MAC;
        hdr.ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
        hdr.pfc.setValid();
        hdr.pfc.opcode = PFC_OPCODE;
        hdr.pfc.reserved = 0;
        hdr.pfc.class_enable = (bit<8>)1 << meta.pfc_gen_cls;
        hdr.pfc.time0 = 0;
        hdr.pfc.time1 = 0;
        hdr.pfc.time2 = 0;
        hdr.pfc.time3 = 0;
        hdr.pfc.time4 = 0;
        hdr.pfc.time5 = 0;
        hdr.pfc.time6 = 0;
        hdr.pfc.time7 = 0;
        hdr.pfc_pad.setValid();
        hdr.pfc_pad.zeros = 0;
        hdr.probe.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.tcp.setInvalid();
        hdr.agg.setInvalid();
        hdr.vals32.setInvalid();
        hdr.vals16.setInvalid();
        hdr.vals8.setInvalid();
    }

    apply {
        if ((standard_metadata.instance_type == 1 || standard_metadata.instance_type == 2)
                && meta.pfc_gen == PFC_GEN_PROBE) {
            build_probe();
        } else if ((standard_metadata.instance_type == 1 || standard_metadata.instance_type == 2)
                   && meta.pfc_gen != PFC_GEN_NONE) {
            build_pfc();
            bit<16> q = meta.pfc_gen_quanta;
            bit<3> c = meta.pfc_gen_cls;
            if (c == 0) { hdr.pfc.time0 = q; }
            else if (c == 1) { hdr.pfc.time1 = q; }
            else if (c == 2) { hdr.pfc.time2 = q; }
            else if (c == 3) { hdr.pfc.time3 = q; }
            else if (c == 4) { hdr.pfc.time4 = q; }
            else if (c == 5) { hdr.pfc.time5 = q; }
            else if (c == 6) { hdr.pfc.time6 = q; }
            else { hdr.pfc.time7 = q; }
            pfc_src_mac.apply();
            bit<32> idx = (bit<32>)standard_metadata.egress_port * PFC_CLASSES + (bit<32>)c;
            if (meta.pfc_gen == PFC_GEN_XOFF) {
                pfc_xoff_tx.count(idx);
            } else {
                pfc_xon_tx.count(idx);
            }
        } else if (meta.pfc.hold == 1) {
            recirculate_preserving_field_list(FL_PFC_HOLD);
        } else if (!hdr.pfc.isValid() && !hdr.probe.isValid()) {
            meta.pfc_gen = PFC_GEN_NONE;        // what ingress generated went with its clone
            if (!pfc_queue_drop.apply().hit) {
                pfc_thresholds.apply();
            }
            if (meta.pfc_gen != PFC_GEN_NONE) {
                clone_preserving_field_list(CloneType.E2E, PFC_SESSION_BASE + (bit<32>)meta.pfc.gen_port, FL_PFC_GEN);
            }
        }
    }
}

#endif  // P4INA_PFC_P4
