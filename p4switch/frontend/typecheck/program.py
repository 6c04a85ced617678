"""The whole checker: top-level declarations in order, and `check_program`, the entry point."""

from __future__ import annotations

from typing import Any

from p4switch.exceptions import CompileError
from p4switch.frontend import ast
from p4switch.frontend.directapply import add_direct_instances
from p4switch.frontend.scope import Var
from p4switch.frontend.typecheck.controls import ControlChecker
from p4switch.frontend.typecheck.results import Abort, TypedProgram
from p4switch.frontend.types import BlockT, ErrorT, ExternT, MatchKindT


class TypeChecker(ControlChecker):
    """Walks the program once, in declaration order; errors are collected and raised together."""

    def run(self) -> TypedProgram:
        g = self.globals
        g.types["error"] = ErrorT()
        g.types["match_kind"] = MatchKindT()
        for decl in self.program.declarations:
            try:
                self.top_decl(decl)
            except Abort:
                pass
        if self.diagnostics:
            raise CompileError(self.diagnostics)
        self.out.named_types = dict(g.types)
        return self.out

    def top_decl(self, decl: ast.Node) -> None:
        g = self.globals
        if isinstance(decl, ast.ErrorDeclaration):
            for name, loc in zip(decl.members, decl.member_locs or [decl.loc] * len(decl.members), strict=False):
                if name in self.out.error_codes:
                    self.error(loc, f"error.{name}: duplicate declaration")
                else:
                    self.out.error_codes.append(name)
            return
        if isinstance(decl, ast.MatchKindDeclaration):
            for name in decl.members:
                if name not in self.out.match_kinds:
                    self.out.match_kinds.append(name)
                g.values[name] = Var(name, MatchKindT(), "const", node=decl, value=name)
            return
        if isinstance(decl, (ast.HeaderType, ast.HeaderUnionType, ast.StructType, ast.EnumType,
                             ast.TypedefDeclaration, ast.NewTypeDeclaration)):
            self.type_decl(g, decl)
            return
        if isinstance(decl, ast.ExternDeclaration):
            g.types[decl.name] = ExternT(decl.name, (), decl)
            # an extern's constructors are found through its type name
            return
        if isinstance(decl, ast.FunctionPrototype):
            existing = g.values.get(decl.name)
            if isinstance(existing, list):
                existing.append(decl)
            else:
                g.values[decl.name] = [decl]
            return
        if isinstance(decl, (ast.ParserType, ast.ControlType, ast.PackageType)):
            kind = {ast.ParserType: "parser", ast.ControlType: "control", ast.PackageType: "package"}[type(decl)]
            g.types[decl.name] = BlockT(kind, decl.name, decl)
            return
        if isinstance(decl, ast.ConstantDeclaration):
            self.const_decl(g, decl)
            return
        if isinstance(decl, ast.ActionDeclaration):
            self.declare_value(g, decl.name, decl, decl.loc)
            self.action_decl(g, decl)
            return
        if isinstance(decl, ast.FunctionDeclaration):
            self.declare_value(g, decl.name, decl, decl.loc)
            self.function_decl(g, decl)
            return
        if isinstance(decl, ast.ParserDeclaration):
            g.types[decl.name] = BlockT("parser", decl.name, decl)
            self.parser_decl(g, decl)
            return
        if isinstance(decl, ast.ControlDeclaration):
            g.types[decl.name] = BlockT("control", decl.name, decl)
            self.control_decl(g, decl)
            return
        if isinstance(decl, ast.Instantiation):
            self.instantiation(g, decl)
            return
        self.error(decl.loc, f"unsupported top-level declaration {type(decl).__name__}")


def check_program(program: ast.Program, *, line_of: Any = None) -> TypedProgram:
    """Resolve and type-check `program` (with the instances its direct type invocations imply); raise
    `CompileError` with every diagnostic found."""
    return TypeChecker(add_direct_instances(program), line_of=line_of).run()
