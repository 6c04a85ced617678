"""Run small P4 programs through the compiler and the generated module directly (no engine, no traffic manager).

`Harness.run(frame)` performs parse, verify checksum, ingress, egress, compute checksum and deparse once, which is
enough to check the code generator's semantics field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4switch.compiler import CompiledProgram, compile_text
from p4switch.runtime.bindings import RuntimeBindings
from p4switch.runtime.context import PacketContext
from p4switch.runtime.state import RuntimeState

V1_PRELUDE = "#include <core.p4>\n#include <v1model.p4>\n"

# A control/parser skeleton: tests give the headers, the parser states and the ingress apply body.
TEMPLATE = V1_PRELUDE + """
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


@dataclass
class Result:
    ctx: PacketContext
    out: bytes

    @property
    def h(self) -> Any:
        return self.ctx.h

    @property
    def m(self) -> Any:
        return self.ctx.m

    @property
    def sm(self) -> Any:
        return self.ctx.sm


class Harness:
    def __init__(self, compiled: CompiledProgram, *, seed: int = 1) -> None:
        self.compiled = compiled
        self.state = RuntimeState.from_p4info(compiled.p4info, compiled.runtime_config)
        self.digests: list[tuple[str, tuple[int, ...]]] = []
        self.logs: list[str] = []
        self.rt = RuntimeBindings(self.state, seed=seed, clock_us=lambda: 0, log_sink=self.logs.append,
                                  digest_sink=lambda name, values: self.digests.append((name, values)))
        namespace: dict[str, Any] = {}
        exec(compile(compiled.python_source, f"<{compiled.name}>", "exec"), namespace)
        self.program = namespace["build"](self.rt)

    def run(self, frame: bytes, ingress_port: int = 0) -> Result:
        ctx = PacketContext(frame)
        p = self.program
        p.init(ctx)
        ctx.sm.ingress_port = ingress_port
        ctx.sm.packet_length = len(frame)
        p.parse(ctx)
        p.verify_checksum(ctx)
        p.ingress(ctx)
        p.egress(ctx)
        p.compute_checksum(ctx)
        return Result(ctx, p.deparse(ctx))


def build(text: str, name: str = "t", *, p4c_checks: bool = True) -> Harness:
    return Harness(compile_text(text, name, p4c_checks=p4c_checks))


def program(*, decls: str, parser: str, ingress: str, meta: str = "", ingress_locals: str = "",
            deparser: str = "") -> str:
    return TEMPLATE.format(decls=decls, parser=parser, ingress=ingress, meta=meta, ingress_locals=ingress_locals,
                           deparser=deparser)
