// p4ina: traffic classes and the pause hook. Priority by DSCP (gradients carry DSCP 46; the controller maps it to
// the top queue). PFC frames
// are counted per port and never forwarded (MAC control frames end at the link); the pause work (Xoff/Xon,
// watchdog, deadlock probes) builds on `pfc_rx` and `hdr.pfc`.
#ifndef P4INA_QOS_P4
#define P4INA_QOS_P4

#include "headers.p4"

control QosIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets) pfc_rx;

    action set_priority(bit<3> prio) {
        standard_metadata.priority = prio;
    }

    table dscp_priority {
        key = {
            hdr.ipv4.dscp : exact;
        }
        actions = {
            set_priority;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = 64;
    }

    apply {
        if (hdr.pfc.isValid()) {
            pfc_rx.count((bit<32>)standard_metadata.ingress_port);
            mark_to_drop(standard_metadata);
        } else if (hdr.ipv4.isValid()) {
            // Gradients too (DSCP 46): the controller maps classes to the queues the switch really has, since
            // simple_switch drops a packet whose priority is not below its number of queues (--priority-queues).
            dscp_priority.apply();
        }
    }
}

#endif  // P4INA_QOS_P4
