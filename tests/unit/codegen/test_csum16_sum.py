"""`update_checksum`/`verify_checksum` with csum16 over one run of fields compile to `_csum16s` of the fields' sum
(`BlockGen.csum16`): checked against an independent RFC 1071 checksum of the packed bytes (fields MSB first,
zero-padded to 16-bit words, as BMv2 packs a field list), on fields of odd widths that straddle words and a list
that is not a whole number of words, with all-zero lists (the 0xFFFF case) among random ones; and a list of an
optional header's field, left out when the header is invalid (BMv2: the empty list's checksum, 0xFFFF)."""

from __future__ import annotations

import random

import vector_support as vs

WIDTHS = (4, 12, 7, 9, 32, 3, 5)  # 72 bits: the last word is padded
NAMES = "abcdefg"
TEXT = vs.PRELUDE + """
header h_t { bit<4> a; bit<12> b; bit<7> c; bit<9> d; bit<32> e; bit<3> f; bit<5> g; bit<16> csum; bit<8> bad;
             bit<16> ck2; }
header o_t { bit<16> x; }
struct headers_t { h_t h; o_t o; }
struct meta_t { }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition select(h.h.a) { 1: opt; default: accept; } }
    state opt { pkt.extract(h.o); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) {
    apply { verify_checksum(h.h.isValid(), { h.h.a, h.h.b, h.h.c, h.h.d, h.h.e, h.h.f, h.h.g }, h.h.csum,
                            HashAlgorithm.csum16); }
}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { h.h.bad = (bit<8>)sm.checksum_error; h.h.e = h.h.e + 1; sm.egress_spec = 1; }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) {
    apply { update_checksum(h.h.isValid(), { h.h.a, h.h.b, h.h.c, h.h.d, h.h.e, h.h.f, h.h.g }, h.h.csum,
                            HashAlgorithm.csum16);
            update_checksum(true, { h.o.x }, h.h.ck2, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.h); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _rfc1071(values: list[int]) -> int:
    bits = 0
    n = 0
    for v, w in zip(values, WIDTHS, strict=True):
        bits = (bits << w) | v
        n += w
    bits <<= -n % 16
    n += -n % 16
    data = bits.to_bytes(n // 8, "big")
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _frame(values: list[int], csum: int, opt: int) -> bytes:
    bits = 0
    for v, w in zip(values, WIDTHS, strict=True):
        bits = (bits << w) | v
    return bits.to_bytes(9, "big") + csum.to_bytes(2, "big") + b"\x00\x00\x00" + opt.to_bytes(2, "big")


def test_csum16_of_one_run_is_the_rfc1071_checksum_of_the_packed_fields() -> None:
    vec, _scalar, _log = vs.compile_both(TEXT, "csum16_sum")
    assert "_csum16s(" in vec.source
    rng = random.Random(23)
    for i in range(400):
        values = [0 if rng.random() < 0.15 else rng.getrandbits(w) for w in WIDTHS]
        if rng.random() < 0.5:
            values[0] = 1
        good = _rfc1071(values)
        wire = good if rng.random() < 0.5 else rng.getrandbits(16)
        opt = rng.getrandbits(16)
        out, _port, _ctx = vec.run(_frame(values, wire, opt))
        assert out[11] == (wire != good), f"frame {i}: verify"
        values[4] = (values[4] + 1) & 0xFFFFFFFF
        assert out[9:11] == _rfc1071(values).to_bytes(2, "big"), f"frame {i}: update"
        assert out[:9] == _frame(values, 0, 0)[:9]
        # h.o is valid only when a == 1; an invalid header's fields are left out: the empty list's 0xFFFF
        x = 0xFFFF if values[0] != 1 else ~opt & 0xFFFF  # RFC 1071 of one word
        assert out[12:14] == x.to_bytes(2, "big"), f"frame {i}: optional header"
