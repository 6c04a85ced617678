"""A structural check of generated pipeline modules, and the restricted namespace they run in.

The code generator is the only producer of code the switch runs, and it builds Python text from a parsed P4 AST
(`names.py` checks every name and literal it splices in). This module is the second line: before the switch
execs a module, `audit_generated` parses it with Python's `ast` (which runs nothing) and refuses anything the
generator never emits: imports other than the four below, dunder attributes other than `__new__`/`__slots__`/
`__name__`/`__init__`, built-in names outside `SAFE_BUILTINS`, and statements such as `global`, `with`,
`lambda`, `yield` or `del`. `run_generated` then execs it with only those built-ins and an `__import__` that
serves only those modules. A name or string that slipped through the generator unquoted can therefore neither
import, open, eval, nor reach an object's internals.
"""

from __future__ import annotations

import ast
import builtins
from types import CodeType, ModuleType
from typing import Any

#: What a generated module may import: (module, name or None for `import module`, alias).
ALLOWED_IMPORTS = frozenset({
    ("struct", None, "_struct"),
    ("p4switch.exceptions", "PacketProcessingError", "_AssertFailed"),
    ("p4switch.runtime.context", "PacketContext", "_PacketContext"),
    ("p4switch.runtime.hashes", "field_bytes", "_fbytes"),
    ("p4switch.runtime.hashes", "csum16_groups", "_csum16g"),
    ("p4switch.runtime.vecops", None, "_vx"),  # vectorised runs (codegen/vector.py): numpy behind a narrow API
})


def _struct_attr(attr: str) -> bool:
    return attr == "Struct"


def _vecops_attr(attr: str) -> bool:
    import importlib

    vecops = importlib.import_module("p4switch.runtime.vecops")
    return not attr.startswith("_") and hasattr(vecops, attr) and not isinstance(getattr(vecops, attr), ModuleType)


#: Module aliases may appear only as `alias.attribute`, with an attribute this check allows: `_struct.Struct`, and
#: the vectoriser's runtime helpers (`_vx.where`, ...), not the modules behind them (`_vx.np` is refused).
MODULE_ALIASES = {"_struct": _struct_attr, "_vx": _vecops_attr}

#: Built-ins generated code uses (or may: plain value operations only).
SAFE_BUILTINS = frozenset({
    "Exception", "all", "any", "abs", "bool", "bytes", "bytearray", "dict", "enumerate", "getattr", "hasattr", "int",
    "isinstance", "len", "list", "max", "min", "range", "repr", "reversed", "setattr", "sorted", "staticmethod",
    "str", "sum", "tuple", "type", "zip", "property", "True", "False", "None", "IndexError", "KeyError", "ValueError",
})

#: Built-ins that would hand out code execution, files or interpreter internals (P4 locals may carry these names;
#: only a use that would reach the built-in is refused).
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "breakpoint", "input", "help",
    "memoryview", "object", "super", "delattr", "dir", "id", "classmethod", "__builtins__", "exit", "quit",
})

ALLOWED_DUNDERS = frozenset({"__new__", "__slots__", "__name__", "__init__"})

ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef, ast.Return,
    ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.Pass, ast.Raise, ast.Try, ast.ExceptHandler,
    ast.Import, ast.ImportFrom, ast.alias, ast.arguments, ast.arg, ast.keyword,
    ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Call, ast.Attribute, ast.Subscript, ast.Slice,
    ast.Starred, ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.GeneratorExp, ast.ListComp,
    ast.comprehension, ast.Load, ast.Store, ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)


class GeneratedCodeError(Exception):
    """Generated code contains something the code generator never emits."""


def _check_import(node: ast.Import | ast.ImportFrom) -> None:
    items: set[tuple[str, str | None, str | None]]
    if isinstance(node, ast.Import):
        items = {(a.name, None, a.asname) for a in node.names}
    else:
        if node.level:
            raise GeneratedCodeError("relative import")
        items = {(node.module or "", a.name, a.asname) for a in node.names}
    for item in items:
        if item not in ALLOWED_IMPORTS:
            raise GeneratedCodeError(f"import of {item[0]}{'.' + item[1] if item[1] else ''}")


_ATTR_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr"})


def _check_attr_call(node: ast.Call) -> None:
    """`getattr(o, "__class__")` would bypass the attribute check: a literal name must be an ordinary one."""
    if len(node.args) >= 2:
        name = node.args[1]
        if isinstance(name, ast.Constant) and (
                not isinstance(name.value, str) or (name.value.startswith("__") and name.value not in ALLOWED_DUNDERS)):
            raise GeneratedCodeError(f"{node.func.id}(..., {name.value!r}) at line {node.lineno}")  # type: ignore[attr-defined]


def audit_generated(source: str) -> ast.Module:
    """Parse generated code and refuse anything outside the generator's vocabulary; returns the tree. Raises
    `SyntaxError` for text that is not Python and `GeneratedCodeError` for Python the generator never writes."""
    tree = ast.parse(source, "<generated pipeline>", "exec")
    bound: set[str] = set()
    loads: list[ast.Name] = []
    module_uses: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in MODULE_ALIASES:
            if not MODULE_ALIASES[node.value.id](node.attr):
                raise GeneratedCodeError(f"{node.value.id}.{node.attr} at line {node.lineno}")
            module_uses.add(id(node.value))
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED_NODES):
            raise GeneratedCodeError(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(node)
            bound.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            raise GeneratedCodeError(f"attribute {node.attr} at line {node.lineno}")
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
                raise GeneratedCodeError(f"name {node.id} at line {node.lineno}")
            if node.id in MODULE_ALIASES and id(node) not in module_uses:
                raise GeneratedCodeError(f"module {node.id} used other than as {node.id}.attribute at line {node.lineno}")
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            else:
                loads.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ATTR_FUNCTIONS:
            _check_attr_call(node)
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bytes, bool, type(None))):
            raise GeneratedCodeError(f"constant {node.value!r} at line {node.lineno}")
    for name in loads:
        if name.id not in bound and name.id not in SAFE_BUILTINS:
            raise GeneratedCodeError(f"unknown name {name.id} at line {name.lineno}")
    return tree


assert not FORBIDDEN_NAMES & SAFE_BUILTINS


#: numpy imports some of its own modules lazily from C code, which runs with the calling (generated) frame's
#: built-ins; those imports must pass the guard too.
RUNTIME_IMPORT_PREFIXES = ("numpy.",)


def _guarded_import(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    allowed = any(name == module for module, _, _ in ALLOWED_IMPORTS) or name == "numpy" or \
        name.startswith(RUNTIME_IMPORT_PREFIXES)
    if level or not allowed:
        raise ImportError(f"generated code may not import {name}")
    return __import__(name, globals_, locals_, fromlist, level)


def restricted_builtins() -> dict[str, Any]:
    """The built-ins a generated module sees: `SAFE_BUILTINS`, class creation and the guarded import."""
    table: dict[str, Any] = {name: getattr(builtins, name) for name in SAFE_BUILTINS}
    table["__build_class__"] = builtins.__build_class__
    table["__import__"] = _guarded_import
    return table


def compile_generated(source: str, filename: str) -> CodeType:
    """Audit, then byte-compile a generated module (raises `SyntaxError` or `GeneratedCodeError`)."""
    tree = audit_generated(source)
    return compile(tree, filename, "exec")


def run_generated(code: CodeType, module_name: str) -> dict[str, Any]:
    """Exec an audited module in a fresh namespace with the restricted built-ins; returns the namespace."""
    namespace: dict[str, Any] = {"__name__": module_name, "__builtins__": restricted_builtins()}
    exec(code, namespace)
    return namespace
