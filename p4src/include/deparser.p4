// p4ina: the deparser. At most one of the value vectors is valid.
#ifndef P4INA_DEPARSER_P4
#define P4INA_DEPARSER_P4

#include "headers.p4"

control P4inaDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pfc);
        packet.emit(hdr.pfc_pad);
        packet.emit(hdr.probe);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp);
        packet.emit(hdr.agg);
        packet.emit(hdr.vals32);
        packet.emit(hdr.vals16);
        packet.emit(hdr.vals8);
    }
}

#endif  // P4INA_DEPARSER_P4
