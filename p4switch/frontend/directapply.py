"""Direct type invocation (P4_16 15.1): `C.apply(args)` on a control or parser *type* without constructor
parameters stands for an instance of it declared in the enclosing block, `C() C;`. p4c names that hidden instance
after the type, so its tables and actions get `<block>.C.<name>` control-plane names (p4c's
actions-almost-duplicate-names1 midend output: `ingressImpl.c1.t2`). This rewrite adds the instance to the
block's locals before type checking; the call then resolves to it like any instance's `apply`."""

from __future__ import annotations

import dataclasses

from p4switch.frontend import ast

Block = ast.ControlDeclaration | ast.ParserDeclaration


def add_direct_instances(program: ast.Program) -> ast.Program:
    """The program with one implicit instance per type a block applies directly (unchanged when there is none)."""
    blocks = {d.name: d for d in program.declarations if isinstance(d, (ast.ControlDeclaration, ast.ParserDeclaration))}
    changed = False
    out: list[ast.Node] = []
    for decl in program.declarations:
        if isinstance(decl, (ast.ControlDeclaration, ast.ParserDeclaration)):
            new = _with_instances(decl, blocks)
            changed = changed or new is not decl
            out.append(new)
        else:
            out.append(decl)
    return dataclasses.replace(program, declarations=tuple(out)) if changed else program


def _with_instances(decl: Block, blocks: dict[str, Block]) -> Block:
    shadowed = {p.name for p in decl.params} | {p.name for p in decl.constructor_params} \
        | {local.name for local in decl.locals}
    roots: list[ast.Node] = [decl.body] if isinstance(decl, ast.ControlDeclaration) else list(decl.states)
    added: dict[str, ast.Instantiation] = {}
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.VariableDeclaration):
                shadowed.add(node.name)
            target = node.target if isinstance(node, ast.Call) else None
            if not (isinstance(target, ast.Member) and target.member == "apply" and isinstance(target.expr, ast.Name)):
                continue
            name = target.expr.name
            applied = blocks.get(name)
            if applied is None or applied.constructor_params or name in shadowed or name in added:
                continue
            added[name] = ast.Instantiation(loc=node.loc, name=name, type=ast.NamedType(loc=node.loc, name=name))
    if not added:
        return decl
    return dataclasses.replace(decl, locals=decl.locals + tuple(added.values()))
