"""Declarations outside parsers and controls: headers, structs and unions, enums, typedefs and `type`, `error` and
`match_kind`, constants, externs (objects and functions), functions, instantiations (with initializer blocks),
actions and packages.

A declared type name becomes a type name as soon as its name is read, so that later declarations (and its own
fields) parse `T x` as a declaration.
"""

from __future__ import annotations

from p4switch.exceptions import SourceLocation
from p4switch.frontend import ast
from p4switch.frontend.lexer import Token
from p4switch.frontend.parser.statements import StatementParser


class DeclarationParser(StatementParser):
    """Type, constant, extern, function, instance, action and package declarations."""

    def type_declaration_head(self, what: str) -> tuple[str, tuple[str, ...]]:
        """`Name<T, ...>` of a declared type: the name is declared at once (it may be used in its own body)."""
        name, _ = self.name(what)
        self.declare_type(name)
        return name, self.type_parameters()

    def struct_like_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        name, type_params = self.type_declaration_head(f"a {kw.text} name")
        with self.type_scope(type_params):
            self.expect("{", f"to start {kw.text} {name}")
            fields: list[ast.StructField] = []
            while not self.accept("}"):
                f_ann = self.annotations()
                f_loc = self.tok.loc
                f_type = self.type_ref()
                f_name, _ = self.name("a field name")
                self.expect(";", "after the field")
                fields.append(ast.StructField(loc=f_loc, name=f_name, type=f_type, annotations=f_ann))
        cls = {"header": ast.HeaderType, "header_union": ast.HeaderUnionType, "struct": ast.StructType}[kw.text]
        return cls(loc=kw.loc, name=name, annotations=annotations, fields=tuple(fields), type_params=type_params)

    def enum_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.EnumType:
        kw = self.advance()
        underlying = None
        if not (self.is_name_token(self.tok) and self.peek().is_punct("{")):
            underlying = self.type_ref()
        name, _ = self.name("an enum name")
        self.declare_type(name)
        self.expect("{", f"to start enum {name}")
        members = self.comma_list(self.enum_member, until="}")
        self.expect("}", f"to close enum {name}")
        return ast.EnumType(
            loc=kw.loc, name=name, annotations=annotations, members=tuple(members), underlying=underlying
        )

    def enum_member(self) -> ast.EnumMember:
        m_ann = self.annotations()
        m_name, m_loc = self.name("an enum member")
        value = self.expression() if self.accept("=") else None
        return ast.EnumMember(loc=m_loc, name=m_name, value=value, annotations=m_ann)

    def typedef_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        target: ast.Type | ast.Declaration
        if self.tok.kind == "id" and self.tok.text in ("header", "header_union", "struct", "enum"):
            target = self.struct_like_declaration(()) if self.tok.text != "enum" else self.enum_declaration(())
        else:
            target = self.type_ref()
        name, _ = self.name("a type name")
        self.declare_type(name)
        self.expect(";", f"after {kw.text} {name}")
        if kw.text == "typedef":
            return ast.TypedefDeclaration(loc=kw.loc, name=name, annotations=annotations, type=target)
        return ast.NewTypeDeclaration(loc=kw.loc, name=name, annotations=annotations, type=target)

    def identifier_list_declaration(self, what: str) -> tuple[SourceLocation, tuple[str, ...], tuple[SourceLocation, ...]]:
        kw = self.advance()
        self.expect("{", f"after '{what}'")
        toks: list[Token] = self.comma_list(lambda: self.identifier(f"a name in the {what} declaration"), until="}")
        self.expect("}", f"to close the {what} declaration")
        return kw.loc, tuple(tok.text for tok in toks), tuple(tok.loc for tok in toks)

    def error_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ErrorDeclaration:
        loc, names, locs = self.identifier_list_declaration("error")
        return ast.ErrorDeclaration(loc=loc, members=names, member_locs=locs, annotations=annotations)

    def match_kind_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.MatchKindDeclaration:
        loc, names, locs = self.identifier_list_declaration("match_kind")
        return ast.MatchKindDeclaration(loc=loc, members=names, member_locs=locs, annotations=annotations)

    def constant_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ConstantDeclaration:
        kw = self.expect("const")
        ctype = self.type_ref()
        name, _ = self.name("a constant name")
        self.expect("=", f"in the declaration of constant {name}")
        value = self.expression()
        self.expect(";", f"after the declaration of constant {name}")
        return ast.ConstantDeclaration(loc=kw.loc, name=name, annotations=annotations, type=ctype, value=value)

    # ============================================================================================== externs

    def extern_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        kw = self.advance()
        more = self.annotations()
        annotations = annotations + more
        if self.is_name_token(self.tok) and self.is_extern_object_header():
            name, type_params = self.type_declaration_head("an extern name")
            with self.type_scope(type_params):
                self.expect("{", f"to start extern {name}")
                ctors: list[ast.ConstructorPrototype] = []
                methods: list[ast.MethodPrototype] = []
                while not self.accept("}"):
                    m_ann = self.annotations()
                    m_loc = self.tok.loc
                    if self.tok.is_id(name) and self.peek().is_punct("("):
                        self.advance()
                        params = self.parameters()
                        self.expect(";", "after the constructor")
                        ctors.append(ast.ConstructorPrototype(loc=m_loc, name=name, params=params, annotations=m_ann))
                        continue
                    abstract = bool(self.accept("abstract"))
                    methods.append(self.method_prototype(m_ann, m_loc, abstract))
            return ast.ExternDeclaration(
                loc=kw.loc,
                name=name,
                annotations=annotations,
                type_params=type_params,
                constructors=tuple(ctors),
                methods=tuple(methods),
            )
        proto = self.method_prototype((), kw.loc, False)
        return ast.FunctionPrototype(
            loc=kw.loc,
            name=proto.name,
            annotations=annotations,
            return_type=proto.return_type,
            params=proto.params,
            type_params=proto.type_params,
        )

    def is_extern_object_header(self) -> bool:
        """After `extern`: `Name {` or `Name<T, ...> {` (an object) versus `R f(...)` (a function)."""
        nxt = self.peek()
        if nxt.is_punct("{"):
            return True
        if not nxt.is_punct("<"):
            return False
        k = 2
        depth = 1
        while depth:
            tok = self.peek(k)
            if tok.kind == "eof":
                return False
            if tok.is_punct("<"):
                depth += 1
            elif tok.is_punct(">"):
                depth -= 1
            k += 1
        return self.peek(k).is_punct("{")

    def method_prototype(
        self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, abstract: bool
    ) -> ast.MethodPrototype:
        rtype = self.type_ref()
        tok = self.identifier("a method name")
        type_params = self.type_parameters()
        with self.type_scope(type_params):
            params = self.parameters()
        self.expect(";", f"after the declaration of {tok.text}")
        return ast.MethodPrototype(
            loc=loc,
            name=tok.text,
            return_type=rtype,
            params=params,
            type_params=type_params,
            abstract=abstract,
            annotations=annotations,
        )

    # ============================================================================================== functions

    def function_or_instantiation(self, annotations: tuple[ast.Annotation, ...]) -> ast.Declaration:
        loc = self.tok.loc
        decl_type = self.type_ref()
        if self.at("("):
            return self.instantiation_rest(annotations, loc, decl_type)
        name, _ = self.name("a declaration name")
        if self.at("<") or self.at("("):
            return self.function_rest(annotations, loc, decl_type, name)
        self.fail(f"expected '(' after {name}: a top-level declaration must be a function or an instantiation")

    def function_rest(
        self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, return_type: ast.Type, name: str
    ) -> ast.FunctionDeclaration:
        """After `R name`: `<T, ...>(params) { body }`, at top level or in an instance initializer."""
        type_params = self.type_parameters()
        with self.type_scope(type_params):
            params = self.parameters()
            body = self.block()
        return ast.FunctionDeclaration(
            loc=loc,
            name=name,
            annotations=annotations,
            return_type=return_type,
            body=body,
            params=params,
            type_params=type_params,
        )

    def instantiation_rest(
        self, annotations: tuple[ast.Annotation, ...], loc: SourceLocation, decl_type: ast.Type
    ) -> ast.Instantiation:
        args = self.arguments()
        name, _ = self.name("an instance name")
        initializer: tuple[ast.Declaration, ...] | None = None
        if self.accept("="):
            self.expect("{", "to start the instance initializer")
            decls: list[ast.Declaration] = []
            while not self.accept("}"):
                ann = self.annotations()
                d_loc = self.tok.loc
                d_type = self.type_ref()
                if self.at("("):
                    decls.append(self.instantiation_rest(ann, d_loc, d_type))
                    continue
                d_name, _ = self.name("a method name")
                decls.append(self.function_rest(ann, d_loc, d_type, d_name))
            initializer = tuple(decls)
        self.expect(";", f"after the instantiation of {name}")
        return ast.Instantiation(
            loc=loc, name=name, annotations=annotations, type=decl_type, args=args, initializer=initializer
        )

    def action_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.ActionDeclaration:
        kw = self.advance()
        name, _ = self.name("an action name")
        params = self.parameters()
        body = self.block()
        return ast.ActionDeclaration(loc=kw.loc, name=name, annotations=annotations, body=body, params=params)

    def package_declaration(self, annotations: tuple[ast.Annotation, ...]) -> ast.PackageType:
        kw = self.advance()
        name, type_params = self.type_declaration_head("a package name")
        with self.type_scope(type_params):
            params = self.parameters()
        self.expect(";", f"after package {name}")
        return ast.PackageType(loc=kw.loc, name=name, annotations=annotations, params=params, type_params=type_params)
