"""The P4_16 parser: the whole language's syntax, precedence, and the known ambiguities."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import ast
from p4switch.frontend.parser import parse_program, parse_text

REPO = Path(__file__).resolve().parents[3]
PROGRAMS = sorted((REPO / "tests" / "conformance" / "programs").glob("*.p4"))
INCLUDES = sorted((REPO / "p4switch" / "include").glob("*.p4"))
P4SRC = sorted((REPO / "p4src").glob("*.p4"))  # top-level programs; p4src/include/ holds fragments
DATA = sorted((Path(__file__).resolve().parent / "data").glob("*.p4"))
TARGET_PROGRAMS = sorted(p.parent / "prog.p4" for p in (REPO / "tests" / "target" / "programs").glob("*/case.py"))


def decls(text: str) -> tuple[ast.Node, ...]:
    return parse_text(text, "t.p4").declarations


def only(text: str) -> ast.Node:
    result = decls(text)
    assert len(result) == 1
    return result[0]


def expr(text: str, prelude: str = "") -> ast.Expression:
    decl = decls(f"{prelude}\nconst bit<8> _x = {text};")[-1]
    assert isinstance(decl, ast.ConstantDeclaration)
    return decl.value


def shape(e: ast.Node) -> str:
    """Fully parenthesized rendering of an expression, to check grouping."""
    if isinstance(e, ast.BinaryOp):
        return f"({shape(e.left)} {e.op} {shape(e.right)})"
    if isinstance(e, ast.UnaryOp):
        return f"({e.op}{shape(e.operand)})"
    if isinstance(e, ast.Ternary):
        return f"({shape(e.cond)} ? {shape(e.then)} : {shape(e.else_)})"
    if isinstance(e, ast.Cast):
        return f"(cast {shape(e.expr)})"
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.IntLiteral):
        return e.text
    if isinstance(e, ast.Member):
        return f"{shape(e.expr)}.{e.member}"
    if isinstance(e, ast.Slice):
        return f"{shape(e.expr)}[{shape(e.hi)}:{shape(e.lo)}]"
    if isinstance(e, ast.Index):
        return f"{shape(e.expr)}[{shape(e.index)}]"
    if isinstance(e, ast.Call):
        return f"{shape(e.target)}({', '.join(shape(a.value) for a in e.args)})"
    raise AssertionError(type(e).__name__)


@pytest.mark.parametrize(
    "path", PROGRAMS + INCLUDES + P4SRC + TARGET_PROGRAMS + DATA, ids=lambda p: p.parent.name if p.name == "prog.p4" else p.name
)
def test_corpus_parses(path: Path) -> None:
    program = parse_program(path, include_dirs=(path.parent,))
    assert program.declarations


@pytest.mark.parametrize(
    ("source", "grouped"),
    [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("a - b - c", "((a - b) - c)"),
        ("a << 1 + 2", "(a << (1 + 2))"),
        ("a & b == c", "((a & b) == c)"),  # P4: bitwise binds tighter than comparison, unlike C
        ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
        ("a == b && c != d || e", "(((a == b) && (c != d)) || e)"),
        ("a < b == c > d", "((a < b) == (c > d))"),
        ("a ++ b + c", "((a ++ b) + c)"),
        ("a |+| b * c |-| d", "((a |+| (b * c)) |-| d)"),
        ("a >> 2 > b", "((a >> 2) > b)"),
        ("!a && ~b == -c", "((!a) && ((~b) == (-c)))"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("(bit<8>) a + b", "((cast a) + b)"),
        ("-a.b[3:0]", "(-a.b[3:0])"),
        ("h.s[1].f", "h.s[1].f"),
        ("f(a, b)[7:0] % 3", "(f(a, b)[7:0] % 3)"),
    ],
)
def test_precedence(source: str, grouped: str) -> None:
    assert shape(expr(source)) == grouped


def test_integer_literals() -> None:
    lits = {
        "8w5": (5, 8, False, 10),
        "8s5": (5, 8, True, 10),
        "16w0xBEEF": (0xBEEF, 16, False, 16),
        "0b1010_1010": (0xAA, None, False, 2),
        "0o17": (15, None, False, 8),
        "0d99": (99, None, False, 10),
        "1_000": (1000, None, False, 10),
        "4w0b1111": (15, 4, False, 2),
    }
    for text, (value, width, signed, base) in lits.items():
        lit = expr(text)
        assert isinstance(lit, ast.IntLiteral), text
        assert (lit.value, lit.width, lit.signed, lit.base) == (value, width, signed, base), text


def test_generic_call_versus_less_than() -> None:
    prelude = "extern packet_in { T lookahead<T>(); }\nheader h_t { bit<8> f; }"
    call = expr("pkt.lookahead<bit<8>>()", prelude)
    assert isinstance(call, ast.Call)
    assert isinstance(call.type_args[0], ast.BitType)
    call2 = expr("pkt.lookahead<h_t>().f", prelude)
    assert isinstance(call2, ast.Member) and isinstance(call2.expr, ast.Call)
    assert isinstance(call2.expr.type_args[0], ast.NamedType)
    cmp = expr("a < b", prelude)
    assert isinstance(cmp, ast.BinaryOp) and cmp.op == "<"
    cmp2 = expr("a < b && c > (d)", prelude)
    assert shape(cmp2) == "((a < b) && (c > d))"


def test_nested_type_arguments_close_with_adjacent_angles() -> None:
    decl = only("control C() { register<bit<32>>(64) r; tuple<bit<8>, tuple<bit<4>>> t; apply {} }")
    assert isinstance(decl, ast.ControlDeclaration)
    inst, var = decl.locals
    assert isinstance(inst, ast.Instantiation) and inst.name == "r"
    assert isinstance(inst.type, ast.NamedType) and inst.type.name == "register"
    assert isinstance(inst.type.type_args[0], ast.BitType)
    assert isinstance(var, ast.VariableDeclaration)
    assert isinstance(var.type, ast.TupleType) and isinstance(var.type.elements[1], ast.TupleType)


def test_width_as_expression_and_types() -> None:
    d = decls(
        """
        const int N = 3;
        header h_t { bit<(N + 1)> a; int<8> b; varbit<32> c; bool d; bit e; }
        struct s_t { h_t[4] stack; error e; }
        """
    )
    h = d[1]
    assert isinstance(h, ast.HeaderType)
    a, b, c, dd, e = (f.type for f in h.fields)
    assert isinstance(a, ast.BitType) and isinstance(a.width, ast.BinaryOp)
    assert isinstance(b, ast.IntType) and isinstance(c, ast.VarbitType) and isinstance(dd, ast.BoolType)
    assert isinstance(e, ast.BitType) and isinstance(e.width, ast.IntLiteral) and e.width.value == 1
    s = d[2]
    assert isinstance(s, ast.StructType)
    stack = s.fields[0].type
    assert isinstance(stack, ast.StackType) and isinstance(stack.element, ast.NamedType)
    assert isinstance(s.fields[1].type, ast.ErrorType)


def test_type_declarations() -> None:
    d = decls(
        """
        enum Color { Red, Green }
        enum bit<8> Op { ADD = 1, SUB = 0x2 }
        typedef bit<48> mac_t;
        type bit<32> ip_t;
        error { Oops, Bad }
        match_kind { fancy }
        header_union u_t { mac_t a; ip_t b; }
        """
    )
    color, op, mac, ip, err, mk, union = d
    assert isinstance(color, ast.EnumType) and color.underlying is None
    assert [m.name for m in color.members] == ["Red", "Green"]
    assert isinstance(op, ast.EnumType) and isinstance(op.underlying, ast.BitType)
    assert [(m.name, m.value.value) for m in op.members if isinstance(m.value, ast.IntLiteral)] == [
        ("ADD", 1),
        ("SUB", 2),
    ]
    assert isinstance(mac, ast.TypedefDeclaration) and isinstance(ip, ast.NewTypeDeclaration)
    assert isinstance(err, ast.ErrorDeclaration) and err.members == ("Oops", "Bad")
    assert isinstance(mk, ast.MatchKindDeclaration) and mk.members == ("fancy",)
    assert isinstance(union, ast.HeaderUnionType)


def test_extern_with_constructors_generic_methods_overloads_and_abstract() -> None:
    d = only(
        """
        extern Thing<T> {
            Thing(bit<32> size);
            Thing(bit<32> size, T init);
            @pure T get<I>(in I index);
            void put(in T v);
            void put(in T v, in bit<8> how);
            abstract void hook(inout T v);
        }
        """
    )
    assert isinstance(d, ast.ExternDeclaration) and d.type_params == ("T",)
    assert len(d.constructors) == 2
    names = [(m.name, m.abstract, m.type_params) for m in d.methods]
    assert names == [("get", False, ("I",)), ("put", False, ()), ("put", False, ()), ("hook", True, ())]
    assert d.methods[0].annotations[0].name == "pure"


def test_extern_function_and_function_declaration() -> None:
    f, g = decls(
        """
        @pure extern void hash<O, T>(out O result, in T data);
        bit<8> max(in bit<8> a, in bit<8> b) { return a > b ? a : b; }
        """
    )
    assert isinstance(f, ast.FunctionPrototype) and f.type_params == ("O", "T")
    assert [p.direction for p in f.params] == ["out", "in"]
    assert isinstance(g, ast.FunctionDeclaration) and isinstance(g.body.statements[0], ast.ReturnStatement)


def test_parser_with_value_set_select_and_loops() -> None:
    p = only(
        """
        parser P(packet_in pkt, out H h)(bit<8> ctor_arg) {
            value_set<bit<16>>(4) vs;
            bit<8> n = 0;
            state start {
                pkt.extract(h.a);
                transition select(h.a.t, h.a.u) {
                    (0x0800 &&& 0xFF00, _): one;
                    (vs, 1 .. 5): start;
                    default: reject;
                }
            }
            state one { transition accept; }
        }
        """
    )
    assert isinstance(p, ast.ParserDeclaration)
    assert [c.name for c in p.constructor_params] == ["ctor_arg"]
    vs, n = p.locals
    assert isinstance(vs, ast.ValueSetDeclaration) and isinstance(vs.element_type, ast.BitType)
    assert isinstance(n, ast.VariableDeclaration)
    start = p.states[0]
    assert start.transition is not None
    select = start.transition.target
    assert isinstance(select, ast.SelectExpression) and len(select.keys) == 2
    first, second, third = select.cases
    assert isinstance(first.keyset, ast.TupleKeyset)
    mask = first.keyset.elements[0]
    assert isinstance(mask, ast.BinaryOp) and mask.op == "&&&"
    assert isinstance(first.keyset.elements[1], ast.DontCare)
    assert isinstance(second.keyset, ast.TupleKeyset)
    assert isinstance(second.keyset.elements[0], ast.Name)
    rng = second.keyset.elements[1]
    assert isinstance(rng, ast.BinaryOp) and rng.op == ".."
    assert isinstance(third.keyset, ast.DefaultExpression) and third.state.name == "reject"


def test_control_with_table_properties_and_entries() -> None:
    c = only(
        """
        control C(inout H h) {
            direct_counter(CounterType.packets) dc;
            action a(bit<8> v) { h.x = v; }
            action b() {}
            table t {
                key = { h.x : exact @name("x"); h.y : ternary; }
                actions = { a; @defaultonly b; }
                const default_action = b();
                const entries = {
                    (1, 2 &&& 3) : a(4);
                    priority = 10 : (5, _) : a(6);
                    (_, _) : b();
                }
                size = 1024;
                counters = dc;
                my_custom = true;
            }
            apply { t.apply(); }
        }
        """
    )
    assert isinstance(c, ast.ControlDeclaration)
    table = c.locals[-1]
    assert isinstance(table, ast.TableDeclaration)
    key, actions, default, entries, size, counters, custom = table.properties
    assert isinstance(key, ast.KeyProperty)
    assert [(k.match_kind, [a.name for a in k.annotations]) for k in key.elements] == [
        ("exact", ["name"]),
        ("ternary", []),
    ]
    assert isinstance(actions, ast.ActionsProperty)
    assert [(r.name.name, r.args, [a.name for a in r.annotations]) for r in actions.actions] == [
        ("a", None, []),
        ("b", None, ["defaultonly"]),
    ]
    assert isinstance(default, ast.DefaultActionProperty) and default.const
    assert default.action is not None and default.action.args == ()
    assert isinstance(entries, ast.EntriesProperty) and entries.const
    e0, e1, e2 = entries.entries
    assert e0.priority is None and isinstance(e0.keyset, ast.TupleKeyset)
    assert isinstance(e2.keyset, ast.TupleKeyset) and e2.action.name.name == "b"
    assert isinstance(e1.priority, ast.IntLiteral) and e1.priority.value == 10
    assert e1.action.args is not None and isinstance(e1.action.args[0].value, ast.IntLiteral)
    assert isinstance(size, ast.TableProperty) and size.name == "size"
    assert isinstance(counters.value, ast.Name) and counters.value.name == "dc"
    assert custom.name == "my_custom" and isinstance(custom.value, ast.BoolLiteral)


def test_statements() -> None:
    c = only(
        """
        control C(inout H h) {
            apply {
                bit<8> x = 1;
                const bit<8> y = 2;
                h.a[3:0] = x[7:4];
                if (x == y) { exit; } else if (x > y) return; else ;
                switch (t.apply().action_run) {
                    a:
                    b: { h.c = 1; }
                    default: {}
                }
                switch (h.e) { 1: {} }
                { h.setValid(); }
                @atomic { h.n = h.n + 1; }
                h.s.push_front(1);
                f(_, x = 3);
                h = { a = 1, b = {2, 3} };
                h.u = {#};
            }
        }
        """
    )
    assert isinstance(c, ast.ControlDeclaration)
    s = c.body.statements
    assert isinstance(s[0], ast.VariableDeclaration) and isinstance(s[1], ast.ConstantDeclaration)
    assert isinstance(s[2], ast.AssignmentStatement) and isinstance(s[2].left, ast.Slice)
    iff = s[3]
    assert isinstance(iff, ast.IfStatement) and isinstance(iff.else_, ast.IfStatement)
    assert isinstance(iff.else_.then, ast.ReturnStatement) and isinstance(iff.else_.else_, ast.EmptyStatement)
    sw = s[4]
    assert isinstance(sw, ast.SwitchStatement)
    assert [c.body is None for c in sw.cases] == [True, False, False]
    assert isinstance(sw.cases[2].label, ast.DefaultExpression)
    assert isinstance(s[6], ast.BlockStatement)
    assert isinstance(s[7], ast.BlockStatement) and s[7].annotations[0].name == "atomic"
    call = s[9]
    assert isinstance(call, ast.MethodCallStatement)
    assert isinstance(call.call.args[0].value, ast.DontCare) and call.call.args[1].name == "x"
    init = s[10]
    assert isinstance(init, ast.AssignmentStatement) and isinstance(init.right, ast.StructExpression)
    assert isinstance(init.right.fields[1].value, ast.ListExpression)
    assert isinstance(s[11], ast.AssignmentStatement) and isinstance(s[11].right, ast.InvalidHeader)


def test_declarations_versus_expressions_in_bodies() -> None:
    c = decls(
        """
        header h_t { bit<8> f; }
        control Inner(inout bit<8> v) { apply {} }
        control C(inout h_t h) {
            Inner() inner;
            h_t[2] stack;
            apply {
                h_t tmp;
                tmp = h;
                inner.apply(h.f);
                error e = error.NoError;
                bit<8> z = (bit<8>) h.f;
            }
        }
        """
    )[-1]
    assert isinstance(c, ast.ControlDeclaration)
    inner, stack = c.locals
    assert isinstance(inner, ast.Instantiation) and isinstance(stack, ast.VariableDeclaration)
    assert isinstance(stack.type, ast.StackType)
    kinds = [type(s).__name__ for s in c.body.statements]
    assert kinds == [
        "VariableDeclaration",
        "AssignmentStatement",
        "MethodCallStatement",
        "VariableDeclaration",
        "VariableDeclaration",
    ]


def test_cast_to_named_type_versus_parenthesized_value() -> None:
    prelude = "typedef bit<8> byte_t;"
    assert isinstance(expr("(byte_t) a", prelude), ast.Cast)
    assert shape(expr("(a) + b", prelude)) == "(a + b)"


def test_instantiations_and_package() -> None:
    d = decls(
        """
        package Pkg<H>(P<H> p);
        Pkg(MyP()) main;
        Thing<bit<8>>(4) t = { void hook(inout bit<8> v) { v = 1; } };
        """
    )
    pkg, main, thing = d
    assert isinstance(pkg, ast.PackageType) and pkg.type_params == ("H",)
    assert isinstance(main, ast.Instantiation) and main.name == "main"
    arg = main.args[0].value
    assert isinstance(arg, ast.Call) and isinstance(arg.target, ast.Name)
    assert isinstance(thing, ast.Instantiation) and thing.initializer is not None
    assert isinstance(thing.initializer[0], ast.FunctionDeclaration)


def test_annotations_structured_and_unstructured() -> None:
    s = only(
        """
        @name("top.s") @id(0x10) @field_list(1, 2) @pragma a b
        @structured[k = 1, j = "s"] @plain
        struct s_t { @field_list(1) bit<8> f; }
        """
    )
    assert isinstance(s, ast.StructType)
    name, ident, fl, pragma, structured, plain = s.annotations
    assert name.args is not None and isinstance(name.args[0], ast.StringLiteral) and name.args[0].value == "top.s"
    assert ident.args is not None and isinstance(ident.args[0], ast.IntLiteral) and ident.args[0].value == 16
    assert fl.args is not None and len(fl.args) == 2
    assert pragma.name == "pragma" and pragma.tokens == ("a", "b")
    assert structured.structured and structured.kvs is not None and [kv.name for kv in structured.kvs] == ["k", "j"]
    assert plain.name == "plain" and plain.args is None
    assert s.fields[0].annotations[0].name == "field_list"


def test_unparseable_annotation_body_is_kept_as_tokens() -> None:
    s = only('@weird(a b : c) struct s_t { }')
    assert isinstance(s, ast.StructType)
    ann = s.annotations[0]
    assert ann.args is None and ann.tokens == ("a", "b", ":", "c")


def test_soft_keywords_as_names() -> None:
    h = only("header o_t { bit<8> type; bit<8> key; bit<8> state; }")
    assert isinstance(h, ast.HeaderType) and [f.name for f in h.fields] == ["type", "key", "state"]


def test_global_names_and_locations() -> None:
    d = decls("const bit<8> A = 1;\ncontrol C() { apply { x = .A; } }")
    c = d[1]
    assert isinstance(c, ast.ControlDeclaration)
    stmt = c.body.statements[0]
    assert isinstance(stmt, ast.AssignmentStatement)
    assert isinstance(stmt.right, ast.Name) and stmt.right.is_global
    assert (stmt.loc.file, stmt.loc.line, stmt.loc.column) == ("t.p4", 2, 23)


def test_for_loops_break_and_continue() -> None:
    c = only(
        """
        control C(inout bit<8> x) {
            apply {
                for (bit<8> i = 0, bit<8> j = 1; i < 4; i = i + 1, j = j << 1) {
                    if (i == 2) { continue; }
                    x = x + j;
                }
                for (bit<8> k in 1 .. 3) { x = x + k; break; }
                for (v in {1, 2}) { }
            }
        }
        """
    )
    assert isinstance(c, ast.ControlDeclaration)
    loop, loop_in, loop_untyped = c.body.statements
    assert isinstance(loop, ast.ForStatement)
    assert [type(s).__name__ for s in loop.init] == ["VariableDeclaration", "VariableDeclaration"]
    assert isinstance(loop.cond, ast.BinaryOp) and len(loop.updates) == 2
    body = loop.body
    assert isinstance(body, ast.BlockStatement)
    first = body.statements[0]
    assert isinstance(first, ast.IfStatement) and isinstance(first.then, ast.BlockStatement)
    assert isinstance(first.then.statements[0], ast.ContinueStatement)
    assert isinstance(loop_in, ast.ForInStatement) and isinstance(loop_in.var_type, ast.BitType)
    assert isinstance(loop_in.collection, ast.BinaryOp) and loop_in.collection.op == ".."
    assert isinstance(loop_untyped, ast.ForInStatement) and loop_untyped.var_type is None
    assert isinstance(loop_untyped.collection, ast.ListExpression)


@pytest.mark.parametrize(
    "path", DATA + TARGET_PROGRAMS, ids=lambda p: p.parent.name if p.name == "prog.p4" else p.name
)
def test_programs_type_check(path: Path) -> None:
    """Parsed programs (third-party style, and the target corpus) also pass the type checker."""
    import p4switch.frontend.typecheck as check
    check.check_program(parse_program(path))


def test_ast_walk_dump_and_identity() -> None:
    program = parse_text("const bit<8> A = 1 + 2;\nconst bit<8> B = 1 + 2;", "t.p4")
    a, b = program.declarations
    assert isinstance(a, ast.ConstantDeclaration) and isinstance(b, ast.ConstantDeclaration)
    kinds = [type(n).__name__ for n in ast.walk(a)]
    assert kinds == ["ConstantDeclaration", "BitType", "IntLiteral", "BinaryOp", "IntLiteral", "IntLiteral"]
    # structurally equal values, distinct nodes: side tables keyed by node never mix them up
    assert ast.dump(a.value) == ast.dump(b.value)
    assert a.value != b.value and len({a.value: 1, b.value: 2}) == 2
    assert ast.dump(a.value, with_loc=True) != ast.dump(b.value, with_loc=True)
    with pytest.raises(AttributeError):
        a.name = "C"  # type: ignore[misc]


def test_v1model_version_20200408_api() -> None:
    """With -D V1MODEL_VERSION=20200408, v1model declares PortId_t and index-typed counters/meters/registers."""
    text = """
    #include <core.p4>
    #include <v1model.p4>
    struct h_t { }
    struct m_t { }
    parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t sm) { state start { transition accept; } }
    control VC(inout h_t h, inout m_t m) { apply { } }
    control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
        register<bit<32>, bit<8>>(16) r;
        counter<bit<8>>(16, CounterType.packets) c;
        apply {
            PortId_t port = sm.ingress_port;
            bit<32> v;
            r.read(v, 8w3);
            r.write(8w3, v + 1);
            c.count(8w3);
            sm.egress_spec = port;
        }
    }
    control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
    control CC(inout h_t h, inout m_t m) { apply { } }
    control D(packet_out p, in h_t h) { apply { } }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    program = parse_text(text, "v.p4", defines={"V1MODEL_VERSION": "20200408"})
    version = next(d for d in program.declarations if isinstance(d, ast.ConstantDeclaration))
    assert version.name == "__v1model_version"
    assert isinstance(version.value, ast.IntLiteral) and version.value.value == 20200408
    register = next(d for d in program.declarations if isinstance(d, ast.ExternDeclaration) and d.name == "register")
    assert register.type_params == ("T", "I")
    import p4switch.frontend.typecheck as check
    check.check_program(program)
