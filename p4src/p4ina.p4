// p4ina: in-network gradient aggregation for v1model (BMv2 simple_switch_grpc and the embedded p4ina target).
// This file only wires the pieces; each concern lives in include/. The interface the controller uses (tables,
// actions, counters, registers) is documented in docs/p4-program.md, the wire protocol in docs/protocol.md.
#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/checksum.p4"
#include "include/qos.p4"
#include "include/forwarding.p4"
#include "include/admission.p4"
#include "include/quantization.p4"
#include "include/aggregation.p4"
#include "include/agg_output.p4"
#include "include/rewrite.p4"
#include "include/pfc.p4"
#include "include/deparser.p4"

control P4inaIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    QosIngress() qos;
    ForwardingIngress() forwarding;
    AggAdmissionIngress() admission;
    AggWidenIngress() widen;
    AggregationIngress() aggregation;
    AggOutputIngress() output;
    AggNarrowIngress() narrow;
    PfcIngress() pfc;

    apply {
        // A packet held for a paused queue (recirculated, see pfc.p4) was fully processed on its first pass.
        if (meta.pfc_held == 0) {
            qos.apply(hdr, meta, standard_metadata);
            if (hdr.agg.isValid()) {
                admission.apply(hdr, meta, standard_metadata);     // job, slot range, admitted port and child
                widen.apply(hdr, meta);                             // to int32 at the job's scale
                aggregation.apply(hdr, meta);                       // the slot update: verdict
                output.apply(hdr, meta, standard_metadata);         // drop / absorb / up / down / reply, counters
                narrow.apply(hdr, meta);                            // RESULTs in the job's result format
            } else if (hdr.ethernet.ether_type != ETHERTYPE_MAC_CONTROL && !hdr.probe.isValid()) {
                forwarding.apply(hdr, meta, standard_metadata);
            }
        }
        pfc.apply(hdr, meta, standard_metadata);                    // pause, watchdog, deadlock probes
    }
}

control P4inaEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t standard_metadata) {
    AggRewriteEgress() agg_rewrite;
    PfcEgress() pfc_gen;

    apply {
        if (meta.pfc.hold == 0 && standard_metadata.instance_type != 1 && standard_metadata.instance_type != 2) {
            agg_rewrite.apply(hdr, meta, standard_metadata);
        }
        pfc_gen.apply(hdr, meta, standard_metadata);                // Xoff/Xon generation, held packets
    }
}

V1Switch(P4inaParser(), P4inaVerifyChecksum(), P4inaIngress(), P4inaEgress(), P4inaComputeChecksum(),
         P4inaDeparser()) main;
