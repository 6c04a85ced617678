"""Elaboration: evaluate the `main` package instantiation into the v1model pipeline's blocks and list the
control-plane objects (actions, tables, externs, digests, controller headers) with their fully-qualified names.

Names follow p4c: a block passed to the package as `I()` is named by its type (`I.t`), a block instantiated
inside another one by its instance name (`I.sub.t`); `@name` replaces a local name (a leading `.` makes it
global). The order of every list is p4c's, so that P4Info matches p4c-bm2-ss byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend import ast
from p4switch.frontend import cpmodel as cp
from p4switch.frontend.scope import Var
from p4switch.frontend.typecheck import TypedProgram
from p4switch.frontend.types import (
    BitsT,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    HeaderUnionT,
    NewTypeT,
    P4Type,
    StructT,
    TupleT,
    width_of,
)

V1MODEL_ROLES = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")
V1SWITCH_PARAMS = ("p", "vr", "ig", "eg", "ck", "dep")  # v1model.p4's names for them, for named arguments


def by_position(names: tuple[str, ...], args: tuple[ast.Argument, ...]) -> list[ast.Expression | None]:
    """Arguments in parameter order: positional ones first, then named ones (`V1Switch(p = P(), ig = I(), ...)`,
    P4_16 8.20); None where a parameter got nothing."""
    out: list[ast.Expression | None] = [None] * len(names)
    for i, arg in enumerate(args):
        if arg.name is None:
            if i < len(out):
                out[i] = arg.value
        elif arg.name in names:
            out[names.index(arg.name)] = arg.value
    return out


def block_declaration(typed: TypedProgram, name: str) -> ast.ParserDeclaration | ast.ControlDeclaration | None:
    """The top-level parser or control declaration named `name`, if any."""
    return next((d for d in typed.program.declarations
                 if isinstance(d, (ast.ParserDeclaration, ast.ControlDeclaration)) and d.name == name), None)


def v1switch_block(typed: TypedProgram, value: ast.Expression
                   ) -> tuple[ast.ParserDeclaration | ast.ControlDeclaration | None, str]:
    """The parser or control declaration behind one V1Switch argument (`P()` or a named instance) and the
    instance's name prefix; (None, "") when the argument is neither. Also used before elaboration (bmv2limits)."""
    if isinstance(value, ast.Call) and isinstance(value.target, ast.Name):
        decl = block_declaration(typed, value.target.name)
        return decl, decl.name if decl is not None else ""
    if isinstance(value, ast.Name):
        inst = typed.globals.lookup_value(value.name)
        if isinstance(inst, Var) and isinstance(inst.node, ast.Instantiation):
            node = inst.node
            decl = block_declaration(typed, node.type.name if isinstance(node.type, ast.NamedType) else "")
            return decl, local_name(node) if decl is not None else ""
    return None, ""


_HIDDEN_ANNOTATIONS = {"name", "id", "brief", "description", "match", "pkginfo"}


@dataclass(eq=False)
class BlockInstance:
    """One parser or control instance in the pipeline (`prefix` is its fully-qualified name)."""

    decl: ast.ParserDeclaration | ast.ControlDeclaration
    prefix: str
    children: list[BlockInstance] = field(default_factory=list)
    child_by_name: dict[str, BlockInstance] = field(default_factory=dict)
    ctor_values: dict[str, Any] = field(default_factory=dict)  # constructor parameter -> compile-time value


@dataclass
class Pipeline:
    typed: TypedProgram
    blocks: dict[str, BlockInstance]  # role -> block
    model: cp.ControlPlane
    names: dict[Any, str] = field(default_factory=dict)  # (prefix, decl) -> fully-qualified control-plane name
    action_names: dict[ast.ActionDeclaration, str] = field(default_factory=dict)
    table_names: dict[tuple[str, ast.TableDeclaration], str] = field(default_factory=dict)
    extern_names: dict[tuple[str, ast.Node], str] = field(default_factory=dict)
    digests: dict[str, StructT] = field(default_factory=dict)
    field_lists: dict[int, list[str]] = field(default_factory=dict)  # user-metadata field names per @field_list


def annotation_value(annotations: tuple[ast.Annotation, ...], name: str) -> Any:
    for a in annotations:
        if a.name == name:
            if a.args:
                arg = a.args[0]
                if isinstance(arg, ast.StringLiteral):
                    return arg.value
                if isinstance(arg, ast.IntLiteral):
                    return arg.value
            return a.body or True
    return None


def render_annotations(annotations: tuple[ast.Annotation, ...]) -> list[str]:
    """Annotations as p4c copies them into P4Info preambles: `@name(body)`, minus the ones P4Info encodes itself."""
    out = []
    for a in annotations:
        if a.name in _HIDDEN_ANNOTATIONS:
            continue
        if a.structured:
            continue  # p4c puts `@x[...]` into structured_annotations, which this target does not emit
        if a.body or a.tokens:
            out.append(f"@{a.name}({a.body})")
        else:
            out.append(f"@{a.name}")
    return out


def local_name(decl: Any) -> str:
    """A declaration's control-plane name relative to its block (`@name` wins)."""
    annotations = getattr(decl, "annotations", ())
    value = annotation_value(annotations, "name")
    if isinstance(value, str):
        return value
    return str(decl.name)


def qualify(prefix: str, decl: Any) -> str:
    name = local_name(decl)
    if name.startswith("."):
        return name[1:]
    return f"{prefix}.{name}" if prefix else name


class Elaborator:
    def __init__(self, typed: TypedProgram, line_of: Any = None) -> None:
        self.typed = typed
        self.line_of = line_of
        self.diagnostics: list[Diagnostic] = []
        self.model = cp.ControlPlane()
        self.pipeline = Pipeline(typed, {}, self.model)
        self._seen_actions: set[str] = set()

    def error(self, loc: SourceLocation, message: str) -> None:
        line = self.line_of(loc) if self.line_of else None
        self.diagnostics.append(Diagnostic(loc, message, source_line=line))

    def run(self) -> Pipeline:
        main = None
        for decl in self.typed.program.declarations:
            if isinstance(decl, ast.Instantiation) and decl.name == "main":
                main = decl
        if main is None:
            raise CompileError([Diagnostic(self.typed.program.loc, "the program has no `main` package instance")])
        package_type = main.type.name if isinstance(main.type, ast.NamedType) else ""
        if package_type != "V1Switch":
            self.error(main.loc, f"main: only the v1model V1Switch package is supported, not {package_type}")
            raise CompileError(self.diagnostics)
        if len(main.args) != 6:
            self.error(main.loc, "main: V1Switch takes 6 blocks")
            raise CompileError(self.diagnostics)
        values = by_position(V1SWITCH_PARAMS, main.args)
        for role, param, value in zip(V1MODEL_ROLES, V1SWITCH_PARAMS, values, strict=True):
            if value is None:
                self.error(main.loc, f"main: no argument for V1Switch's parameter {param}")
                continue
            block = self.block_arg(value)
            if block is not None:
                self.pipeline.blocks[role] = block
        if self.diagnostics:
            raise CompileError(self.diagnostics)
        self.collect_program_scope(main)
        self.collect([self.pipeline.blocks[role] for role in V1MODEL_ROLES])
        self.collect_controller_headers()
        self.collect_field_lists()
        if self.diagnostics:
            raise CompileError(self.diagnostics)
        return self.pipeline

    def collect_program_scope(self, main: ast.Instantiation) -> None:
        """Extern instances declared at program scope (`register<bit<8>>(2) r;` outside any control): one object
        shared by every block that names it, with no block prefix in its control-plane name. p4c's evaluator visits
        them with `main`, one level above the blocks, so they come first in P4Info."""
        root = BlockInstance(self.pipeline.blocks[V1MODEL_ROLES[0]].decl, "")
        for decl in self.typed.program.declarations:
            if isinstance(decl, ast.Instantiation) and decl is not main:
                self.add_extern(root, decl)

    def block_arg(self, value: ast.Expression) -> BlockInstance | None:
        decl, prefix = v1switch_block(self.typed, value)
        if decl is None:
            self.error(value.loc, "V1Switch arguments must be parser or control instances")
            return None
        return self.instantiate(decl, prefix)

    def find_global(self, name: str) -> Any:
        return block_declaration(self.typed, name)

    def instantiate(self, decl: ast.ParserDeclaration | ast.ControlDeclaration, prefix: str) -> BlockInstance:
        block = BlockInstance(decl, prefix)
        for local in decl.locals:
            if isinstance(local, ast.Instantiation) and isinstance(local.type, ast.NamedType):
                sub = self.find_global(local.type.name)
                if sub is not None:
                    child = self.instantiate(sub, f"{prefix}.{local_name(local)}")
                    names = tuple(param.name for param in sub.constructor_params)
                    for name, value in zip(names, by_position(names, local.args), strict=True):
                        if value is None:
                            continue
                        bound = block.child_by_name.get(value.name) if isinstance(value, ast.Name) else None
                        if bound is not None:
                            # a parser or control instance passed to a constructor parameter of its type (p4c's
                            # issue1566-bmv2): `c.apply(...)` in the child applies that one shared instance
                            child.child_by_name[name] = bound
                            continue
                        if value not in self.typed.consts:
                            self.error(value.loc, f"{name}: constructor arguments must be compile-time constants")
                        child.ctor_values[name] = self.typed.consts.get(value)
                    block.children.append(child)
                    block.child_by_name[local.name] = child
        return block

    # ----------------------------------------------------------------------------------------------- collection
    def collect(self, roots: list[BlockInstance]) -> None:
        """Visit blocks breadth first, as p4c's `forAllEvaluatedBlocks` does: a block's actions when the block is
        visited, its tables, extern instances and sub-controls one level later, in declaration order."""
        for block in roots:
            self.visit_block(block)
        level = roots
        while level:
            following: list[BlockInstance] = []
            for block in level:
                decl = block.decl
                applied = self.applied_tables(decl) if isinstance(decl, ast.ControlDeclaration) else set()
                for local in decl.locals:
                    if isinstance(local, ast.TableDeclaration):
                        if local in applied:
                            self.add_table(block, local)
                    elif isinstance(local, ast.Instantiation):
                        child = block.child_by_name.get(local.name)
                        if child is not None:
                            self.visit_block(child)
                            following.append(child)
                        else:
                            self.add_extern(block, local)
            level = following

    def visit_block(self, block: BlockInstance) -> None:
        decl = block.decl
        prefix = block.prefix
        if isinstance(decl, ast.ControlDeclaration):
            used = self.used_actions(decl)
            # p4c localizes global actions (NoAction) into the control, ahead of its own actions
            for action in used:
                if action not in decl.locals:
                    self.add_action(action, "")
            for local in decl.locals:
                if isinstance(local, ast.ActionDeclaration) and local in used:
                    self.add_action(local, prefix)
            if any(self.action_has_params(a) for a in used) or self.calls_extern_function(decl):
                self.model.type_info_used = True
            self.collect_digests(decl)
        else:
            for local in decl.locals:
                if isinstance(local, ast.ValueSetDeclaration):
                    self.add_value_set(block, local)

    def used_actions(self, decl: ast.ControlDeclaration) -> list[ast.ActionDeclaration]:
        """Actions referenced by the control's tables or called from its apply body, in first-use order. p4c
        removes the others before generating P4Info, including actions only called from other actions (they are
        inlined into their callers: p4c's gauntlet_side_effect_order_1-bmv2 lists only the outer action)."""
        seen: list[ast.ActionDeclaration] = []
        refs = self.typed.refs

        def visit(node: ast.Node) -> None:
            for n in ast.walk(node):
                target = refs.get(n)
                if isinstance(target, ast.ActionDeclaration) and target not in seen:
                    if isinstance(n, (ast.Name, ast.ActionRef)):
                        seen.append(target)

        applied = self.applied_tables(decl)
        no_action = self.no_action()
        for local in decl.locals:
            if isinstance(local, ast.TableDeclaration) and local in applied:
                visit(local)
                if not has_default_action(local) and no_action is not None and no_action not in seen:
                    seen.append(no_action)
        visit(decl.body)
        order = {id(a): i for i, a in enumerate(decl.locals)}
        globals_first = [a for a in seen if id(a) not in order]
        locals_ = sorted((a for a in seen if id(a) in order), key=lambda a: order[id(a)])
        return globals_first + locals_

    def no_action(self) -> ast.ActionDeclaration | None:
        found = self.typed.globals.lookup_value("NoAction")
        return found if isinstance(found, ast.ActionDeclaration) else None

    def applied_tables(self, decl: ast.ControlDeclaration) -> set[ast.TableDeclaration]:
        tables = set()
        for n in ast.walk(decl.body):
            info = self.typed.calls.get(n) if isinstance(n, ast.Call) else None
            if info is not None and info.kind == "table_apply":
                tables.add(info.decl)
        return tables

    def calls_extern_function(self, decl: ast.ControlDeclaration) -> bool:
        nodes: list[ast.Node] = [decl.body] + [a for a in decl.locals if isinstance(a, ast.ActionDeclaration)]
        for root in nodes:
            for n in ast.walk(root):
                if isinstance(n, ast.Call):
                    info = self.typed.calls.get(n)
                    if info is not None and info.kind == "extern_function":
                        return True
        return False

    def action_has_params(self, action: ast.ActionDeclaration) -> bool:
        """Action data parameters: only these become P4Info params (and touch type_info); in/out/inout ones are
        bound at the call."""
        return any(p.direction is None for p in action.params)

    def param_width(self, t: P4Type) -> int:
        """The bitwidth P4Runtime sees: a type with `@p4runtime_translation(uri, N)` is N bits on the control
        plane whatever its data-plane width (p4c's P4Info for custom-type-restricted-fields: bit<48> -> 32)."""
        sdn = _sdn_bitwidth(t)
        if sdn:
            return sdn
        w = width_of(t)
        return w if w is not None else 0

    def add_action(self, action: ast.ActionDeclaration, prefix: str) -> None:
        name = qualify(prefix, action)
        self.pipeline.action_names[action] = name
        if name in self._seen_actions or annotation_value(action.annotations, "hidden"):
            return
        self._seen_actions.add(name)
        params = []
        for p in action.params:
            if p.direction is not None:
                continue
            var = self.typed.decl_vars.get(p)
            t = var.type if var else BitsT(0)
            params.append(cp.Param(local_name(p), self.param_width(t), _explicit_id(p.annotations),
                                   render_annotations(p.annotations), _type_name(t)))
            self.note_user_type(t)
        self.model.actions.append(cp.Action(name, params, _explicit_id(action.annotations),
                                            render_annotations(action.annotations)))

    def note_user_type(self, t: P4Type) -> None:
        if isinstance(t, EnumT) and t.underlying is not None:
            self.model.ser_enums[t.name] = cp.SerEnumInfo(
                t.name, t.underlying.width, [(m, t.values.get(m, 0)) for m in t.members])
        elif isinstance(t, NewTypeT):
            translation = None
            for a in t.annotations:
                if a.name == "p4runtime_translation" and a.args:
                    uri = a.args[0].value if isinstance(a.args[0], ast.StringLiteral) else ""
                    width = 0
                    if len(a.args) > 1 and isinstance(a.args[1], ast.IntLiteral):
                        width = a.args[1].value
                    elif len(a.args) > 1:
                        width = 0
                    translation = (uri, width)
            self.model.new_types[t.name] = cp.NewTypeInfo(t.name, width_of(t.base) or 0, translation)

    def add_table(self, block: BlockInstance, table: ast.TableDeclaration) -> None:
        name = qualify(block.prefix, table)
        self.pipeline.table_names[(block.prefix, table)] = name
        self.model.type_info_used = True
        props = {p.name: p for p in table.properties}
        fields = []
        key = props.get("key")
        if isinstance(key, ast.KeyProperty):
            for ke in key.elements:
                if ke.match_kind == "selector":
                    continue  # p4c lists selector keys nowhere in P4Info: they are the selector's hash input
                t = self.typed.types.get(ke.expr, BitsT(0))
                fname = annotation_value(ke.annotations, "name")
                if not isinstance(fname, str):
                    fname = key_name(ke.expr, self.typed)
                self.note_user_type(t)
                width = self.param_width(t) if not isinstance(t, ErrorT) else 0
                fields.append(cp.MatchField(fname, width, ke.match_kind, _explicit_id(ke.annotations),
                                            render_annotations(ke.annotations), _type_name(t)))
        refs = []
        actions = props.get("actions")
        if isinstance(actions, ast.ActionsProperty):
            for ref in actions.actions:
                decl = self.typed.refs.get(ref)
                if isinstance(decl, ast.ActionDeclaration):
                    refs.append(cp.ActionRef(self.pipeline.action_names.get(decl, qualify(block.prefix, decl)),
                                             render_annotations(ref.annotations)))
        no_action = self.no_action()
        if not has_default_action(table) and no_action is not None:
            # p4c's front end (CreateBuiltins): a table without a default action gets `@defaultonly NoAction`
            # in its action list and `default_action = NoAction()`
            name_na = self.pipeline.action_names.get(no_action, "NoAction")
            if all(r.action != name_na for r in refs):
                refs.append(cp.ActionRef(name_na, ["@defaultonly"]))
        default = None
        if not has_default_action(table) and no_action is not None:
            default = cp.DefaultAction(self.pipeline.action_names.get(no_action, "NoAction"), [], False)
        dprop = props.get("default_action")
        if isinstance(dprop, ast.DefaultActionProperty) and dprop.action is not None:
            decl = self.typed.refs.get(dprop.action)
            if isinstance(decl, ast.ActionDeclaration):
                args = []
                data_params = [p for p in decl.params if p.direction is None]
                given = list(dprop.action.args or ())[len(decl.params) - len(data_params):]
                for p, a in zip(data_params, given, strict=False):
                    var = self.typed.decl_vars.get(p)
                    args.append((_int_const(self.typed.consts.get(a.value, 0)),
                                 self.param_width(var.type) if var else 0))
                default = cp.DefaultAction(self.pipeline.action_names.get(decl, decl.name), args, dprop.const)
        size = 1024
        sprop = props.get("size")
        if sprop is not None and sprop.value is not None:
            size = int(self.typed.consts.get(sprop.value, 1024))
        entries = props.get("entries")
        is_const = isinstance(entries, ast.EntriesProperty) and entries.const
        has_entries = isinstance(entries, ast.EntriesProperty)
        direct_counter = direct_meter = None
        for pname in ("counters", "meters"):
            prop = props.get(pname)
            if prop is not None and isinstance(prop.value, ast.Name):
                var = self.typed.refs.get(prop.value)
                if isinstance(var, Var) and isinstance(var.node, ast.Instantiation):
                    ext_name = qualify(block.prefix, var.node)
                    if pname == "counters":
                        direct_counter = ext_name
                    else:
                        direct_meter = ext_name
        timeout = props.get("support_timeout")
        supports_timeout = timeout is not None and timeout.value is not None and bool(
            self.typed.consts.get(timeout.value, False))
        implementation = self.table_implementation(block, props.get("implementation"))
        self.model.tables.append(cp.Table(
            name, fields, refs, default, size, is_const, has_entries, direct_counter, direct_meter,
            supports_timeout, _explicit_id(table.annotations), render_annotations(table.annotations),
            implementation))

    def table_implementation(self, block: BlockInstance, prop: ast.TableProperty | None) -> str | None:
        """The action profile a table's `implementation` names. One constructed in place is added to P4Info here,
        as p4c does while serializing the table, under the property's @name (p4c's controlPlaneName of the
        property: the @name verbatim, else `implementation`)."""
        if prop is None or prop.value is None:
            return None
        value = prop.value
        if isinstance(value, ast.Name):
            var = self.typed.refs.get(value)
            if isinstance(var, Var) and isinstance(var.node, ast.Instantiation):
                return qualify(block.prefix, var.node)
            self.error(prop.loc, "Expected an action profile or action selector: " + value.name)
            return None
        if isinstance(value, ast.Call) and isinstance(value.target, ast.Name) and value.target.name in _PROFILE_TYPES:
            given = annotation_value(prop.annotations, "name")
            name = given.lstrip(".") if isinstance(given, str) else prop.name
            args = [self.typed.consts.get(a.value) for a in value.args]
            if any(p.name == name for p in self.model.action_profiles):
                # p4c names an inline instance after the property; two unnamed ones would be one P4Info object
                self.error(prop.loc, f"{name}: two action profiles have this control-plane name; give each "
                                     f"inline implementation its own @name")
                return name
            self.model.action_profiles.append(self.action_profile(
                name, value.target.name, args, prop.annotations))
            return name
        self.error(prop.loc, "Expected an action profile or action selector")
        return None

    def action_profile(self, name: str, kind: str, args: list[Any],
                       annotations: tuple[ast.Annotation, ...]) -> cp.ActionProfile:
        """P4Info's view of a v1model action_profile(size) / action_selector(algo, size, outputWidth)."""
        selector = kind == "action_selector"
        size = _int_const(args[1] if selector else args[0]) if len(args) > (1 if selector else 0) else 0
        rendered = [a for a in render_annotations(annotations)
                    if a.split("(")[0] not in ("@max_group_size", "@selector_size_semantics", "@max_member_weight")]
        profile = cp.ActionProfile(name, selector, size, 0, _explicit_id(annotations), rendered)
        if selector:
            algo = args[0] if args else None
            profile.algorithm = str(algo[2]) if isinstance(algo, tuple) and algo[0] == "enum" else ""
            profile.output_width = _int_const(args[2]) if len(args) > 2 else 0
            mgs = annotation_value(annotations, "max_group_size")
            profile.max_group_size = int(mgs) if isinstance(mgs, int) else 0
            semantics = annotation_value(annotations, "selector_size_semantics")
            if isinstance(semantics, str):
                profile.size_semantics = semantics.lower()
            mmw = annotation_value(annotations, "max_member_weight")
            profile.max_member_weight = int(mmw) if isinstance(mmw, int) else 0
        return profile

    def add_extern(self, block: BlockInstance, inst: ast.Instantiation) -> None:
        var = self.typed.decl_vars.get(inst)
        if var is None or not isinstance(var.type, ExternT):
            return
        t = var.type
        name = qualify(block.prefix, inst)
        self.pipeline.extern_names[(block.prefix, inst)] = name
        self.model.type_info_used = True
        args = [self.typed.consts.get(a.value) for a in inst.args]
        annotations = render_annotations(inst.annotations)
        explicit = _explicit_id(inst.annotations)
        if t.name == "register":
            elem = t.args[0] if t.args else BitsT(0)
            self.model.registers.append(cp.Register(name, self.type_spec(elem), int(args[0] or 0), explicit,
                                                    annotations))
        elif t.name == "counter":
            self.model.counters.append(cp.Counter(name, _counter_unit(args[1]), int(args[0] or 0), None, explicit,
                                                  annotations))
        elif t.name == "direct_counter":
            table = self.table_using(block, inst, "counters")
            self.model.counters.append(cp.Counter(name, _counter_unit(args[0]), 0, table, explicit, annotations))
        elif t.name == "meter":
            self.model.meters.append(cp.Meter(name, _meter_unit(args[1]), int(args[0] or 0), None, explicit,
                                              annotations))
        elif t.name == "direct_meter":
            table = self.table_using(block, inst, "meters")
            self.model.meters.append(cp.Meter(name, _meter_unit(args[0]), 0, table, explicit, annotations))
        elif t.name in _PROFILE_TYPES:
            self.model.action_profiles.append(self.action_profile(name, t.name, args, inst.annotations))

    def table_using(self, block: BlockInstance, inst: ast.Instantiation, prop_name: str) -> str | None:
        for local in block.decl.locals:
            if isinstance(local, ast.TableDeclaration):
                for prop in local.properties:
                    if prop.name == prop_name and isinstance(prop.value, ast.Name) and prop.value.name == inst.name:
                        return qualify(block.prefix, local)
        if prop_name == "meters":  # p4c-bm2-ss's wording (simple_switch/simpleSwitch.cpp), at the instance's name
            from p4switch.bmv2limits.report import name_location

            self.error(name_location(inst.loc, inst.name, self.line_of, last=True),
                       f"{qualify(block.prefix, inst)}: direct meter is not associated with any table via 'meters' "
                       f"table property")
            return None
        self.error(inst.loc, f"{inst.name}: a direct counter or meter must be attached to a table")
        return None

    def add_value_set(self, block: BlockInstance, vs: ast.ValueSetDeclaration) -> None:
        var = self.typed.decl_vars.get(vs)
        if var is None:
            return
        name = qualify(block.prefix, vs)
        elem = var.type.args[0] if isinstance(var.type, ExternT) and var.type.args else BitsT(0)
        match = []
        if isinstance(elem, BitsT):
            match.append(cp.MatchField("", elem.width, "exact", 1))
        elif isinstance(elem, StructT):
            decl = elem.decl
            for (fname, ftype), fnode in zip(elem.fields, decl.fields if decl is not None else (), strict=False):
                kind = "exact"
                for a in fnode.annotations:
                    if a.name == "match" and a.args and isinstance(a.args[0], ast.Name):
                        kind = a.args[0].name
                match.append(cp.MatchField(fname, width_of(ftype) or 0, kind, _explicit_id(fnode.annotations),
                                           [x for x in render_annotations(fnode.annotations)]))
        self.pipeline.extern_names[(block.prefix, vs)] = name
        self.model.value_sets.append(cp.ValueSet(name, int(var.value or 0), match, _explicit_id(vs.annotations),
                                                 render_annotations(vs.annotations)))

    def collect_digests(self, decl: ast.ControlDeclaration) -> None:
        roots: list[ast.Node] = [decl.body] + [a for a in decl.locals if isinstance(a, ast.ActionDeclaration)]
        for root in roots:
            for n in ast.walk(root):
                if not isinstance(n, ast.Call):
                    continue
                info = self.typed.calls.get(n)
                if info is None or info.kind != "extern_function" or info.name != "digest":
                    continue
                t = info.type_args.get("T")
                if not isinstance(t, StructT):
                    self.error(n.loc, "digest: the data must be a struct")
                    continue
                name = local_name(t.decl) if t.decl is not None else t.name
                if name not in self.pipeline.digests:
                    self.pipeline.digests[name] = t
                    self.model.digests.append(cp.Digest(name, cp.TypeSpec("struct", name=name),
                                                        _explicit_id(t.decl.annotations if t.decl else ())))
                    self.add_struct_info(t)

    def add_struct_info(self, t: P4Type) -> None:
        if isinstance(t, (StructT, HeaderT)) and t.name not in self.model.structs:
            members = [(fname, self.type_spec(ftype)) for fname, ftype in t.fields]
            self.model.structs[t.name] = cp.StructInfo(t.name, isinstance(t, HeaderT), members)

    def type_spec(self, t: P4Type) -> cp.TypeSpec:
        if isinstance(t, BitsT):
            return cp.TypeSpec("int" if t.signed else "bit", t.width)
        if isinstance(t, BoolT):
            return cp.TypeSpec("bool")
        if isinstance(t, EnumT) and t.underlying is not None:
            self.note_user_type(t)
            return cp.TypeSpec("serializable_enum", name=t.name)
        if isinstance(t, NewTypeT):
            self.note_user_type(t)
            return cp.TypeSpec("new_type", name=t.name)
        if isinstance(t, (StructT, HeaderT)):
            self.add_struct_info(t)
            return cp.TypeSpec("header" if isinstance(t, HeaderT) else "struct", name=t.name)
        if isinstance(t, TupleT):
            return cp.TypeSpec("tuple", members=[self.type_spec(e) for e in t.elements])
        return cp.TypeSpec("bit", width_of(t) or 0)

    def collect_controller_headers(self) -> None:
        for decl in self.typed.program.declarations:
            if not isinstance(decl, ast.HeaderType):
                continue
            name = annotation_value(decl.annotations, "controller_header")
            if not isinstance(name, str):
                continue
            t = self.typed.named_types.get(decl.name)
            if not isinstance(t, HeaderT):
                continue
            fields = []
            for (fname, ftype), fnode in zip(t.fields, decl.fields, strict=False):
                if annotation_value(fnode.annotations, "hidden"):
                    continue
                self.note_user_type(ftype)
                fields.append(cp.Param(fname, self.param_width(ftype), _explicit_id(fnode.annotations),
                                       render_annotations(fnode.annotations), _type_name(ftype)))
            self.model.controller_headers.append(cp.ControllerHeader(
                name, decl.name, fields, render_annotations(decl.annotations), _explicit_id(decl.annotations)))

    def collect_field_lists(self) -> None:
        ingress = self.pipeline.blocks.get("ingress")
        if ingress is None or len(ingress.decl.params) < 2:
            return
        var = self.typed.decl_vars.get(ingress.decl.params[1])
        meta = var.type if var is not None else None
        if not isinstance(meta, StructT) or meta.decl is None:
            return
        for fnode in meta.decl.fields:
            for a in fnode.annotations:
                if a.name == "field_list" and a.args:
                    for arg in a.args:
                        if isinstance(arg, ast.IntLiteral):
                            self.pipeline.field_lists.setdefault(arg.value, []).append(fnode.name)


_PROFILE_TYPES = ("action_profile", "action_selector")


def has_default_action(table: ast.TableDeclaration) -> bool:
    return any(isinstance(p, ast.DefaultActionProperty) and p.action is not None for p in table.properties)


def key_name(e: ast.Expression, typed: TypedProgram) -> str:
    """p4c's default match-field name: the key expression as written (`h.ipv4.dst`, `h.b.$valid$`)."""
    if isinstance(e, ast.Call) and isinstance(e.target, ast.Member) and e.target.member == "isValid":
        return f"{key_name(e.target.expr, typed)}.$valid$"
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.Member):
        return f"{key_name(e.expr, typed)}.{e.member}"
    if isinstance(e, ast.Index):
        return f"{key_name(e.expr, typed)}[{key_name(e.index, typed)}]"
    if isinstance(e, ast.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, ast.Slice):
        return f"{key_name(e.expr, typed)}[{key_name(e.hi, typed)}:{key_name(e.lo, typed)}]"
    if isinstance(e, ast.BinaryOp):
        return f"{key_name(e.left, typed)} {e.op} {key_name(e.right, typed)}"
    if isinstance(e, ast.Cast):
        return key_name(e.expr, typed)
    return "key"


def _explicit_id(annotations: tuple[ast.Annotation, ...]) -> int | None:
    value = annotation_value(annotations, "id")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _sdn_bitwidth(t: P4Type) -> int:
    """N of a new type's `@p4runtime_translation(uri, N)`, else 0."""
    if not isinstance(t, NewTypeT):
        return 0
    for a in t.annotations:
        if a.name == "p4runtime_translation" and len(a.args) > 1 and isinstance(a.args[1], ast.IntLiteral):
            return a.args[1].value
    return 0


def _type_name(t: P4Type) -> str | None:
    if isinstance(t, NewTypeT):
        return t.name
    return None


def _int_const(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    return 0


def _counter_unit(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 3:
        return {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}.get(v[2], "PACKETS")
    return "PACKETS"


def _meter_unit(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 3:
        return {"packets": "PACKETS", "bytes": "BYTES"}.get(v[2], "PACKETS")
    return "PACKETS"


def is_header_like(t: P4Type) -> bool:
    return isinstance(t, (HeaderT, HeaderUnionT))


def elaborate(typed: TypedProgram, *, line_of: Any = None) -> Pipeline:
    return Elaborator(typed, line_of).run()
