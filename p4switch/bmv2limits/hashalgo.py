"""HashAlgorithm arguments p4c-bm2-ss cannot convert: testdata/p4_16_bmv_errors/issue5464-bmv2.p4 and
issue5464-hash-bmv2.p4 (p4c issue 5464, a crash before the fix).

p4c's BMv2 mid end turns every plain enum into `bit<32>` (ConvertEnums) except the ones declared in v1model.p4,
which the back end keeps to name the algorithm in its JSON. A program that declares its own `HashAlgorithm` and
the extern functions that take it (instead of including v1model.p4) therefore hands `hash` and the checksum
functions a number where p4c's converters (`backends/bmv2/simple_switch/simpleSwitch.cpp`) expect an enum member:
`32w0: expected a HashAlgorithm member`, the number being the member's position in the program's enum. The two
stored outputs word it differently for `hash` (with "Are you using an up-to-date v1model.p4?") and for
`verify_checksum`; the `update_checksum` and `*_with_payload` functions are taken to word it as `verify_checksum`
(the same checksum converter family), which no stored output confirms."""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.types import EnumT

from .declarations import is_system_file
from .index import CodeIndex
from .report import Reporter, start_of

_CHECKSUM = "expected a HashAlgorithm member"
WORDING = {
    "hash": _CHECKSUM + ". Are you using an up-to-date v1model.p4?",
    "verify_checksum": _CHECKSUM,
    "update_checksum": _CHECKSUM,
    "verify_checksum_with_payload": _CHECKSUM,
    "update_checksum_with_payload": _CHECKSUM,
}


def check_hash_algorithms(index: CodeIndex, report: Reporter) -> set[int]:
    """Report each call of v1model's hash or checksum functions (by name, as p4c's back end finds them) whose
    algorithm is a member of an enum declared outside v1model.p4; return the ids of those functions' declarations
    (the error replaces "unknown extern function" for them, as in p4c, whose back end knows them by name)."""
    enums = {d.name: d for d in index.typed.program.declarations if isinstance(d, ast.EnumType)}
    handled: set[int] = set()
    for root in index.all_roots():
        for n in index.nodes(root):
            info = index.typed.calls.get(n) if isinstance(n, ast.Call) else None
            if info is None or info.kind != "extern_function" or info.name not in WORDING:
                continue
            for arg in info.args:
                value = arg.value if arg is not None else None
                t = index.typed.types.get(value) if value is not None else None
                if not isinstance(t, EnumT) or t.name != "HashAlgorithm" or t.underlying is not None:
                    continue
                decl = enums.get(t.name)
                if decl is None or is_system_file(decl.loc.file) or not isinstance(value, ast.Member):
                    continue
                if value.member in t.members:
                    position = t.members.index(value.member)
                    report.error(start_of(value), f"32w{position}: {WORDING[info.name]}")
                    handled.add(id(info.decl))
    return handled
