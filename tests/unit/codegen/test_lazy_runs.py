"""Field runs allocated lazily and shared copy-on-write by copies (`p4switch/codegen/runs.py`), against the scalar
code generator, whose headers hold every field in its own slot (no arrays, nothing shared): the reference.

The program adds an invariant to a 16-lane run in ingress; every packet is then copied as a multicast would copy
it (`clone_ctx`), and each copy's egress treats the run differently by port: one changes every lane (vector code),
one a single field (scalar code through `RunField`), one invalidates the header, two re-validate one (zeros when
it was invalid), one leaves it as it is. A copy that saw another's change, or an encoding cached for arrays that changed, shows in the bytes."""

from __future__ import annotations

import random
import struct
from typing import Any

import vector_support as vs

from p4switch.runtime.context import PacketContext

L = 16
TEXT = vs.PRELUDE + f"""
header ctl_t {{ bit<8> k; bit<8> mode; }}
header a_t {{ {vs.fields(32, L)} }}
header b_t {{ {vs.fields(32, L, prefix="w")} }}
struct headers_t {{ ctl_t ctl; a_t a; b_t b; }}
struct meta_t {{ bit<32> seen; }}
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(h.ctl); pkt.extract(h.a); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{
        {vs.lanes("h.a.v{n} = h.a.v{n} + (bit<32>)h.ctl.k;", L)}
        if (h.ctl.mode == 1) {{
            h.b.setValid();
            {vs.lanes("h.b.w{n} = h.a.v{n} ^ 0x55;", L)}
        }}
        m.seen = h.b.w3;
        sm.egress_spec = 1;
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{
        if (sm.egress_port == 2) {{
            {vs.lanes("h.a.v{n} = h.a.v{n} ^ 0xffff;", L)}
        }} else if (sm.egress_port == 3) {{
            h.a.v5 = 7;
            h.b.w2 = 9;
        }} else if (sm.egress_port == 4) {{
            h.a.setInvalid();
        }} else if (sm.egress_port == 5) {{
            h.b.setValid();
            h.b.w0 = h.a.v0;
        }} else if (sm.egress_port == 6) {{
            h.b.setInvalid();
            h.b.setValid();
        }}
    }}
}}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t h) {{ apply {{ pkt.emit(h.ctl); pkt.emit(h.a); pkt.emit(h.b); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
PORTS = (2, 3, 4, 5, 6, 1)


def _multicast(h: vs.Harness, frame: bytes, order: tuple[int, ...]) -> dict[int, bytes]:
    """One ingress pass, then one copy per port as `V1Model._replicate` makes them (the last port takes the packet
    itself), each copy's egress run in `order`: the deparsed frame per port."""
    p = h.program
    ctx = PacketContext(frame)
    p.init(ctx)
    ctx.sm.packet_length = len(frame)
    p.parse(ctx)
    p.verify_checksum(ctx)
    p.ingress(ctx)
    copies: dict[int, Any] = {}
    for port in PORTS[:-1]:
        copies[port] = p.clone_ctx(ctx)
    copies[PORTS[-1]] = ctx
    out = {}
    for port in order:
        c = copies[port]
        c.sm.egress_port = port
        p.egress(c)
        p.compute_checksum(c)
        out[port] = p.deparse(c)
    return out


def _frames(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [bytes([rng.randrange(256), rng.randrange(2)])
            + struct.pack(f">{L}I", *(rng.getrandbits(32) for _ in range(L))) for _ in range(count)]


def test_copies_share_runs_until_one_writes_and_match_the_scalar_code() -> None:
    vec, scalar, log = vs.compile_both(TEXT, "lazy_runs")
    assert sum(1 for _, outcome in log if outcome == "vectorised") >= 2, log
    assert "_a0 = None" in vec.source and "property(" in vec.source  # the lazy, shared layout is the one under test
    rng = random.Random(5)
    for i, frame in enumerate(_frames(60, 3)):
        order = tuple(rng.sample(PORTS, len(PORTS)))
        got, want = _multicast(vec, frame, order), _multicast(scalar, frame, order)
        assert got == want, f"frame {i}, egress order {order}"


def _header(h: vs.Harness, frame: bytes) -> Any:
    p = h.program
    ctx = PacketContext(frame)
    p.init(ctx)
    p.parse(ctx)
    return ctx.h


def test_a_header_never_extracted_holds_no_array_and_reads_zeros() -> None:
    vec, _scalar, _log = vs.compile_both(TEXT, "lazy_runs")
    hdrs = _header(vec, _frames(1, 9)[0])
    assert hdrs.b._a0 is None and not hdrs.b._v
    assert hdrs.b.values() == (0,) * L  # through RunField: allocates zeros on first access
    assert hdrs.b._a0 is not None and not hdrs.b._a0.any()


def test_copy_shares_the_array_and_the_encoding_until_a_write() -> None:
    vec, _scalar, _log = vs.compile_both(TEXT, "lazy_runs")
    frame = _frames(1, 11)[0]
    hdrs = _header(vec, frame)
    a = hdrs.a
    b = a.copy()
    assert b._a0 is a._a0 and b._sh is a._sh is not None
    ns: dict[str, Any] = {}
    exec(compile(vec.source, "<lazy>", "exec"), ns)
    emit = ns["e_T_a_t"]
    first = emit(a)
    assert emit(b) is first  # encoded once for both
    assert bytes(first) == frame[2:2 + 4 * L]
    b.v5 = 123  # a write through RunField: b takes its own copy first
    assert b._a0 is not a._a0 and b._sh is None
    assert a.v5 == struct.unpack_from(">I", frame, 2 + 4 * 5)[0]
    assert bytes(emit(b))[20:24] == struct.pack(">I", 123)
    assert bytes(emit(a)) == frame[2:2 + 4 * L]
    # the original, still marked shared, copies before its own write and leaves b alone
    a._r0[0] = 1
    assert b.v0 == struct.unpack_from(">I", frame, 2)[0] and a.v0 == 1


def test_equality_and_assign_see_the_values_not_the_storage() -> None:
    vec, _scalar, _log = vs.compile_both(TEXT, "lazy_runs")
    ns: dict[str, Any] = {}
    exec(compile(vec.source, "<lazy>", "exec"), ns)
    eq, cls = ns["_eq"], ns["T_b_t"]
    x, y = cls(), cls()
    x.set_valid()
    y.set_valid()
    y.w4 = 0
    assert y._a0 is not None and x._a0 is not None
    assert eq(x, y)
    y.w4 = 1
    assert not eq(x, y)
    z = cls()
    z.assign(y)
    assert eq(z, y) and z._a0 is not y._a0
    y.w4 = 2
    assert z.w4 == 1
