"""p4ina's ACCUMULATE (p4src/include/aggregation.p4): the register row read into `t`, on the add path `t` rebound
to the saturating sum (which is written back to the register), then `hdr.v = t`. The field run takes `t`'s array
instead of copying it (the absorbed packet's write-back costs nothing) only when no other name can hold that
array: here run `a` (the macro's shape). Run `b` aliases the row local first (`u = t`, read after the run is
changed in place) and keeps its copy; run `d` rebinds `t` to a view of another header's run, not a fresh array,
and keeps its copy too. Both against the scalar code on random packets, with the registers carried
from packet to packet, so a run aliasing a register row or a local would show in the bytes or the registers."""

from __future__ import annotations

import random
import struct

import vector_support as vs

L = 20
DECLS = f"""
header ctl_t {{ bit<8> slot; bit<8> add; bit<32> keep; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(32, L, prefix="w")} }}
header c_t {{ {vs.fields(32, L, prefix="x")} }}
header d_t {{ {vs.fields(32, L, prefix="y")} }}
header f_t {{ bit<8> flags; }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; c_t c; d_t d; f_t f; }}
"""
LOCALS = vs.lanes("register<bit<32>>(4) ra{n}; register<bit<32>>(4) rb{n}; register<bit<32>>(4) rd{n};", L) + """
    action acc() {
        bit<32> s = (bit<32>) h.ctl.slot;
        """ + vs.lanes("""{ bit<32> t; ra{n}.read(t, s);
            if (h.ctl.add == 1) {
                bit<32> base = t & h.ctl.keep;
                int<32> sat = (int<32>)base |+| (int<32>)h.a.v{n};
                if ((bit<32>)sat != base + h.a.v{n}) { m.f1 = 1; }
                t = (bit<32>)sat;
                ra{n}.write(s, t);
            }
            h.a.v{n} = t;
            h.a.v{n} = h.a.v{n} ^ 3; }""", L) + """
        """ + vs.lanes("""{ bit<32> t; rb{n}.read(t, s); bit<32> u = t;
            if (h.ctl.add == 1) {
                bit<32> base = t & h.ctl.keep;
                int<32> sat = (int<32>)base |+| (int<32>)h.b.w{n};
                if ((bit<32>)sat != base + h.b.w{n}) { m.f2 = 1; }
                t = (bit<32>)sat;
                rb{n}.write(s, t);
            }
            h.b.w{n} = t;
            h.b.w{n} = h.b.w{n} + 1;
            h.c.x{n} = u; }""", L) + """
        """ + vs.lanes("""{ bit<32> t; rd{n}.read(t, s);
            if (h.ctl.add == 1) {
                int<32> q = (int<32>)h.c.x{n};
                t = (bit<32>)q;
            }
            h.d.y{n} = t;
            h.d.y{n} = h.d.y{n} + 5; }""", L) + """
    }
"""
EDGES = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x40000000)


def _frames(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        keep = rng.choice((0, 0xFFFFFFFF, rng.getrandbits(32)))
        ctl = struct.pack(">BBI", rng.randrange(5), rng.choice((0, 1, 1, 2)), keep)
        small = rng.random() < 0.6
        runs = b"".join(struct.pack(f">{L}I", *((rng.getrandbits(28) if small else rng.choice(EDGES))
                                                for _ in range(L))) for _ in range(4))
        out.append(ctl + runs + b"\x00")
    return out


def test_the_run_takes_the_accumulated_array_only_when_no_other_name_holds_it() -> None:
    text = vs.program(decls=DECLS, parser="state start { pkt.extract(h.ctl); pkt.extract(h.a); pkt.extract(h.b); "
                      "pkt.extract(h.c); pkt.extract(h.d); pkt.extract(h.f); transition accept; }",
                      ingress="m.f1 = 0; m.f2 = 0; acc(); h.f.flags = (bit<8>)m.f1 | ((bit<8>)m.f2 << 1); "
                              "sm.egress_spec = 1;",
                      meta="bit<1> f1; bit<1> f2;", ingress_locals=LOCALS,
                      deparser="pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); pkt.emit(h.c); pkt.emit(h.d); "
                               "pkt.emit(h.f);")
    vec, scalar, log = vs.compile_both(text, "accumulate_rebind")
    assert sum(1 for _, outcome in log if outcome == "vectorised") == 3, log
    body = vec.source.split("def build", 1)[1]
    rebound = [line.strip() for line in body.splitlines()
               if any(f"h{sep}{x}._r" in line for x in "abd" for sep in "._")
               and ".view(_vx.u32)" in line and "[" not in line.split(" = ")[0]]
    assert len(rebound) == 1 and ("h.a._r" in rebound[0] or "h_a._r" in rebound[0]), rebound
    vs.assert_same(vec, scalar, _frames(400, 17))
