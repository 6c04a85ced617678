"""The code generator's name gate (`codegen/names.py`), the audit of generated modules and their restricted
namespace (`codegen/audit.py`), and the preprocessed-text round trip the device config relies on."""

from __future__ import annotations

import pytest

from p4switch.codegen.audit import GeneratedCodeError, audit_generated, compile_generated, run_generated
from p4switch.codegen.names import UnsafeNameError, py_ident, py_int, py_str
from p4switch.compiler import compile_preprocessed, compile_text
from p4switch.exceptions import CompileError


@pytest.mark.parametrize("name", ['t"]', "a\nb", "a b", "1a", "", "class", "import", "a.b", "é", None, 3])
def test_py_ident_refuses_what_is_not_a_plain_identifier(name: object) -> None:
    with pytest.raises(UnsafeNameError):
        py_ident(name)


def test_py_ident_int_and_str() -> None:
    assert py_ident("hdr_ipv4") == "hdr_ipv4" and py_ident("_x1") == "_x1"
    assert py_int(255) == "255" and py_int(-1) == "-1"
    for bad in ("1", True, 1.0, "__import__('os')"):
        with pytest.raises(UnsafeNameError):
            py_int(bad)
    hostile = "x']\n__import__('os').system('id')#\"\\"
    assert eval(py_str(hostile)) == hostile  # a literal, and only that: evaluating it gives the text back


GOOD = "import struct as _struct\n_S = _struct.Struct('>H')\n\ndef build(rt):\n    return len(rt)\n"


@pytest.mark.parametrize(("source", "fragment"), [
    ("import os\n", "import of os"),
    ("from os import system as _fbytes\n", "import of os.system"),
    ("import struct as s2\n", "import of struct"),
    ("x = ().__class__\n", "attribute __class__"),
    ("x = ().__class__.__bases__\n", "attribute __"),
    ("x = getattr((), '__class__')\n", "getattr"),
    ("x = eval('1')\n", "unknown name eval"),
    ("x = open('/etc/passwd')\n", "unknown name open"),
    ("x = __import__('os')\n", "name __import__"),
    ("x = __builtins__\n", "name __builtins__"),
    ("import struct as _struct\nx = _struct.unpack\n", "_struct.unpack"),
    ("import p4switch.runtime.vecops as _vx\nx = _vx.np\n", "_vx.np"),
    ("import struct as _struct\nm = _struct\n", "module _struct used"),
    ("f = lambda: 1\n", "Lambda"),
    ("with x:\n    pass\n", "With"),
    ("global y\n", "Global"),
    ("del y\n", "Delete"),
    ("x = f'{y}'\n", "JoinedStr"),
])
def test_audit_refuses_what_the_generator_never_writes(source: str, fragment: str) -> None:
    with pytest.raises(GeneratedCodeError, match=fragment.replace("(", r"\(")):
        audit_generated(source)


def test_audit_accepts_generator_vocabulary_and_runs_it_without_open_or_import() -> None:
    namespace = run_generated(compile_generated(GOOD, "<good>"), "good")
    assert namespace["build"]("abc") == 3
    assert "open" not in namespace["__builtins__"] and "eval" not in namespace["__builtins__"]
    with pytest.raises(ImportError):
        namespace["__builtins__"]["__import__"]("os")


def test_generated_module_of_a_real_program_passes_the_audit() -> None:
    compiled = compile_text(PROGRAM, "t")
    audit_generated(compiled.python_source)


PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
#define SHIFT(x) ((x) >> 2)
header h_t { bit<16> a; bit<16> b; }
struct hs { h_t h; }
struct m_t { bit<16> x; }
parser P(packet_in p, out hs h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs h, inout m_t m) { apply { } }
control I(inout hs h, inout m_t m, inout standard_metadata_t sm) {
    @pragma my_pragma one two
    action set(bit<16> v) { h.h.b = SHIFT(v) >> 1; h.h.a = h.h.a >>
        1; }
    @name("fwd") table t { key = { h.h.a: exact; } actions = { set; } }
    apply { t.apply(); if (h.h.a > 3) { h.h.b = (bit<16>) (h.h.a >> 3); } sm.egress_spec = 1; }
}
control E(inout hs h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs h, inout m_t m) { apply { } }
control D(packet_out p, in hs h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_preprocessed_text_compiles_to_the_same_p4info_and_data() -> None:
    """Macros (expanded), shifts (two adjacent `>` tokens on one line, which the parser joins) and `@pragma`
    (which runs to the end of its line) survive the round trip through text."""
    compiled = compile_text(PROGRAM, "t")
    text = compiled.program_text
    assert "#" not in text and "SHIFT" not in text and "@pragma my_pragma one two\n" in text
    again = compile_preprocessed(text, "t")
    assert again.p4info == compiled.p4info and again.runtime_config == compiled.runtime_config


@pytest.mark.parametrize("directive", ['#include "/etc/passwd"', "#define X 1", "#pragma once", "# 1 \"x\"", "##"])
def test_switch_side_compile_refuses_directives(directive: str) -> None:
    compiled = compile_text(PROGRAM, "t")
    with pytest.raises(CompileError, match="preprocessing directives are not accepted"):
        compile_preprocessed(f"{directive}\n{compiled.program_text}", "t")
