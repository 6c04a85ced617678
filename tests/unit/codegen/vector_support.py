"""Compile one program twice, with and without the vectoriser, and run both generated modules side by side.

The scalar code generator is the reference here: it follows BMv2's integer semantics statement by statement and
is checked against real BMv2 by the conformance corpus, and the vectoriser must give the same packets and the same
register state on any input. Programs are written per lane with `{n}` for the lane number (as the macros in
p4src/include write them) and expanded here.
"""

from __future__ import annotations

from typing import Any

from p4switch.codegen import vector
from p4switch.compiler import CompiledProgram, compile_text
from p4switch.runtime.bindings import RuntimeBindings
from p4switch.runtime.context import PacketContext
from p4switch.runtime.state import RuntimeState

PRELUDE = "#include <core.p4>\n#include <v1model.p4>\n"

SKELETON = PRELUDE + """
{decls}
struct meta_t {{ {meta} }}
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    {parser}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    {ingress_locals}
    apply {{ {ingress} }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t h) {{ apply {{ {deparser} }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def lanes(template: str, count: int, sep: str = " ") -> str:
    """`template` once per lane, `{n}` replaced by the lane number (and `{n1}` by the next lane's)."""
    return sep.join(template.replace("{n1}", str(n + 1)).replace("{n}", str(n)) for n in range(count))


def fields(width: int, count: int, signed: bool = False, prefix: str = "v") -> str:
    kind = "int" if signed else "bit"
    return " ".join(f"{kind}<{width}> {prefix}{n};" for n in range(count))


def program(*, decls: str, parser: str, ingress: str, meta: str = "", ingress_locals: str = "",
            deparser: str = "") -> str:
    return SKELETON.format(decls=decls, parser=parser, ingress=ingress, meta=meta, ingress_locals=ingress_locals,
                           deparser=deparser)


class Harness:
    """The generated module of one compile, run packet by packet (parse .. deparse), with its runtime state."""

    def __init__(self, compiled: CompiledProgram) -> None:
        config = getattr(compiled, "runtime_config", None) or compiled.device_config
        self.state = RuntimeState.from_p4info(compiled.p4info, config)
        self.rt = RuntimeBindings(self.state, seed=1, clock_us=lambda: 0, log_sink=lambda _m: None,
                                  digest_sink=lambda _n, _v: None)
        self.source = compiled.python_source
        namespace: dict[str, Any] = {}
        exec(compile(self.source, f"<{compiled.name}>", "exec"), namespace)
        self.program = namespace["build"](self.rt)

    def run(self, frame: bytes) -> tuple[bytes, int, PacketContext]:
        ctx = PacketContext(frame)
        p = self.program
        p.init(ctx)
        ctx.sm.packet_length = len(frame)
        p.parse(ctx)
        p.verify_checksum(ctx)
        p.ingress(ctx)
        p.egress(ctx)
        p.compute_checksum(ctx)
        return p.deparse(ctx), ctx.sm.egress_spec, ctx

    def registers(self) -> dict[str, list[int]]:
        return {r.name: list(r.cells) for r in self.state.registers}


def compile_both(text: str, name: str = "vec") -> tuple[Harness, Harness, list[tuple[int, str]]]:
    """(vectorised, scalar, the vectoriser's decisions for the vectorised compile)."""
    with vector.recording() as log:
        vec = Harness(compile_text(text, name))
    with vector.disabled():
        scalar = Harness(compile_text(text, name))
    return vec, scalar, log


def meta_values(ctx: PacketContext) -> tuple[Any, ...]:
    m = ctx.m
    return tuple(getattr(m, s) for s in type(m).__slots__)


def assert_same(vec: Harness, scalar: Harness, frames: list[bytes]) -> None:
    """Every frame gives the same bytes, egress port and metadata both ways, and the registers end equal."""
    for i, frame in enumerate(frames):
        out_v, port_v, ctx_v = vec.run(frame)
        out_s, port_s, ctx_s = scalar.run(frame)
        assert out_v == out_s, f"frame {i}: vector {out_v.hex()} != scalar {out_s.hex()}"
        assert port_v == port_s, f"frame {i}: egress port"
        assert meta_values(ctx_v) == meta_values(ctx_s), f"frame {i}: metadata"
        assert vec.registers() == scalar.registers(), f"frame {i}: registers"
