"""The C-preprocessor subset real P4 programs use, working on tokens so every token keeps its origin.

Supported: `#include "f"` / `<f>` (with `#pragma once` and include guards), object- and function-like `#define`
(`#` stringizing, `##` pasting, variadic `...`/`__VA_ARGS__`), `#undef`, `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/
`#endif` with `defined` and C integer expressions, `#error`, `-D NAME[=VALUE]`, `__LINE__`/`__FILE__`; `#pragma`,
`#line` and `#warning` are accepted and ignored. Macro expansion follows C's rescanning rules with per-token hide
sets (Prosser's algorithm), so recursive macros stop as in cpp.

A token that comes from a macro body is located at its spelling inside the `#define`; it also records the outermost
invocation (`Token.expanded_at`), which diagnostics add as a note.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from p4switch.exceptions import CompileError, Diagnostic, SourceLocation
from p4switch.frontend.lexer import Token, parse_int, tokenize
from p4switch.frontend.source import SourceManager

MAX_INCLUDE_DEPTH = 200

#: What p4c-bm2-ss defines for every program (p4c 1.2.5, the BMv2 back end), so `#ifdef __TARGET_BMV2__` and
#: `#if __p4c_major__ ...` choose the same variant as with the reference compiler. -D options override them.
PREDEFINED: dict[str, str | None] = {
    "__TARGET_BMV2__": None,
    "__p4c__": "1",
    "__p4c_major__": "1",
    "__p4c_minor__": "2",
    "__p4c_patchlevel__": "5",
    "__p4c_version__": '"1.2.5"',
}
_CMDLINE = "<command line>"


@dataclass(slots=True)
class Macro:
    name: str
    params: list[str] | None  # None for object-like macros
    body: list[Token]
    loc: SourceLocation
    variadic: bool = False
    plan: list[tuple[int, Any]] | None = None  # the body analysed for substitution (`_plan`), made on first use


# The steps of a macro's substitution plan (`_plan`).
_LITERALS, _EXPANDED, _RAW, _STRINGIZE, _PASTE_ARG, _PASTE_TOKEN = range(6)


def _plan(macro: Macro) -> list[tuple[int, Any]]:
    """What substituting `macro` does, body position by body position, as C specifies it: `# param` stringizes the
    argument, `## x` pastes x (an argument or a token) onto what precedes, a parameter next to `##` takes its
    argument unexpanded, any other parameter its fully expanded argument, every other token is copied. Depends only
    on the body and the parameter names, so it is worked out once per macro."""
    params = {name: i for i, name in enumerate(macro.params or [])}
    function_like = macro.params is not None
    body = macro.body
    plan: list[tuple[int, Any]] = []
    literals: list[Token] = []

    def step(op: int, value: Any) -> None:
        nonlocal literals
        if literals:
            plan.append((_LITERALS, literals))
            literals = []
        plan.append((op, value))

    i = 0
    while i < len(body):
        tok = body[i]
        nxt = body[i + 1] if i + 1 < len(body) else None
        if tok.is_punct("#") and function_like and nxt is not None and nxt.text in params:
            step(_STRINGIZE, (params[nxt.text], tok))
            i += 2
            continue
        if tok.is_punct("##") and nxt is not None:
            if nxt.kind == "id" and nxt.text in params:
                step(_PASTE_ARG, params[nxt.text])
            else:
                step(_PASTE_TOKEN, nxt)
            i += 2
            continue
        if tok.kind == "id" and tok.text in params:
            step(_RAW if nxt is not None and nxt.is_punct("##") else _EXPANDED, params[tok.text])
            i += 1
            continue
        literals.append(tok)
        i += 1
    if literals:
        plan.append((_LITERALS, literals))
    return plan


@dataclass(slots=True)
class _Cond:
    """One open `#if` group: whether its current branch is live, whether a branch was taken, `#else` seen."""

    active: bool
    taken: bool
    seen_else: bool
    parent_active: bool
    loc: SourceLocation


def diagnostics_for(sources: SourceManager, token: Token, message: str) -> list[Diagnostic]:
    """An error at `token`, plus an "in expansion of macro" note when it came out of a macro."""
    diags = [sources.diagnostic(token.loc, message)]
    if token.expanded_at is not None and token.macro is not None:
        diags.append(sources.diagnostic(token.expanded_at, f"in expansion of macro '{token.macro}'", "note"))
    return diags


class Preprocessor:
    """Turns a main file (and everything it includes) into one token stream for the parser."""

    def __init__(self, sources: SourceManager, defines: Mapping[str, str | None] | None = None) -> None:
        self.sources = sources
        self.macros: dict[str, Macro] = {}
        self._once: set[str] = set()
        self._depth = 0
        self._hide_sets: dict[frozenset[str], frozenset[str]] = {}
        self._unions: dict[tuple[frozenset[str], frozenset[str]], frozenset[str]] = {}
        for name, value in PREDEFINED.items():
            self.define_from_command_line(name, value)
        for name, value in (defines or {}).items():
            self.define_from_command_line(name, value)

    # ------------------------------------------------------------------------------------------------- public

    def define_from_command_line(self, name: str, value: str | None = None) -> None:
        """`-D NAME` (value 1) or `-D NAME=VALUE`."""
        loc = SourceLocation(_CMDLINE, 1, 1)
        if not name.isidentifier():
            raise CompileError([Diagnostic(loc, f"invalid macro name {name!r} in -D option")])
        body = tokenize("1" if value is None else value, _CMDLINE)
        self.macros[name] = Macro(name, None, body, loc)

    def process_file(self, path: str, *, requested_at: SourceLocation | None = None) -> list[Token]:
        name, index = self.sources.load(path, requested_at=requested_at)
        return self._process(tokenize(index.text, name, index), name)

    def process_text(self, text: str, filename: str) -> list[Token]:
        index = self.sources.add_text(filename, text)
        return self._process(tokenize(text, filename, index), filename)

    # ------------------------------------------------------------------------------------------------- errors

    def _error(self, token: Token, message: str) -> CompileError:
        return CompileError(diagnostics_for(self.sources, token, message))

    # ------------------------------------------------------------------------------------------------- driver

    def _process(self, tokens: list[Token], filename: str) -> list[Token]:
        lines = _logical_lines(tokens)
        out: list[Token] = []
        pending: list[Token] = []
        conds: list[_Cond] = []
        for line in lines:
            live = not conds or conds[-1].active
            if line[0].is_punct("#"):
                if pending:
                    out.extend(self.expand(pending))
                    pending = []
                self._directive(line, conds, live, filename, out)
            elif live:
                pending.extend(line)
        if pending:
            out.extend(self.expand(pending))
        if conds:
            raise CompileError([self.sources.diagnostic(conds[-1].loc, "unterminated conditional directive")])
        return out

    def _directive(self, line: list[Token], conds: list[_Cond], live: bool, filename: str, out: list[Token]) -> None:
        if len(line) == 1:
            return  # the null directive
        word = line[1]
        name = word.text
        args = line[2:]
        if name in ("if", "ifdef", "ifndef"):
            if not live:
                conds.append(_Cond(False, True, False, False, word.loc))
                return
            if name == "if":
                value = self._eval_condition(word, args)
            else:
                if not args or args[0].kind != "id":
                    raise self._error(word, f"macro name missing after #{name}")
                value = (args[0].text in self.macros) == (name == "ifdef")
            conds.append(_Cond(value, value, False, True, word.loc))
            return
        if name in ("elif", "else", "endif"):
            if not conds:
                raise self._error(word, f"#{name} without #if")
            cond = conds[-1]
            if name == "endif":
                conds.pop()
            elif cond.seen_else:
                raise self._error(word, f"#{name} after #else")
            elif name == "else":
                cond.seen_else = True
                cond.active = cond.parent_active and not cond.taken
                cond.taken = True
            else:
                if cond.parent_active and not cond.taken:
                    cond.active = self._eval_condition(word, args)
                    cond.taken = cond.active
                else:
                    cond.active = False
            return
        if not live:
            return
        if name == "define":
            self._define(word, args)
        elif name == "undef":
            if not args or args[0].kind != "id":
                raise self._error(word, "macro name missing after #undef")
            self.macros.pop(args[0].text, None)
        elif name == "include":
            self._include(word, args, filename, out)
        elif name == "error":
            message = " ".join(t.text for t in args)
            raise self._error(word, f"#error {message}".rstrip())
        elif name == "pragma":
            if args and args[0].is_id("once"):
                self._once.add(filename)
        elif name in ("line", "warning", "ident"):
            return
        elif word.kind == "int":
            return  # GNU line marker `# 12 "file"`
        else:
            raise self._error(word, f"invalid preprocessing directive #{name}")

    # ------------------------------------------------------------------------------------------------ #define

    def _define(self, word: Token, args: list[Token]) -> None:
        if not args or args[0].kind != "id":
            raise self._error(word, "macro name missing after #define")
        name_tok = args[0]
        rest = args[1:]
        params: list[str] | None = None
        variadic = False
        if rest and rest[0].is_punct("(") and not rest[0].space:
            params = []
            i = 1
            expect_param = True
            while True:
                if i >= len(rest):
                    raise self._error(name_tok, f"missing ')' in parameter list of macro '{name_tok.text}'")
                tok = rest[i]
                if tok.is_punct(")") and (not expect_param or not params):
                    i += 1
                    break
                if expect_param and tok.kind == "id":
                    params.append(tok.text)
                    expect_param = False
                elif expect_param and tok.is_punct("..."):
                    params.append("__VA_ARGS__")
                    variadic = True
                    expect_param = False
                elif not expect_param and tok.is_punct(","):
                    if variadic:
                        raise self._error(tok, "'...' must be the last macro parameter")
                    expect_param = True
                else:
                    raise self._error(tok, f"unexpected '{tok.text}' in parameter list of macro '{name_tok.text}'")
                i += 1
            rest = rest[i:]
        body = list(rest)
        if body and (body[0].is_punct("##") or body[-1].is_punct("##")):
            raise self._error(body[0] if body[0].is_punct("##") else body[-1], "'##' cannot appear at either end of a macro")
        if params is not None:
            for i, tok in enumerate(body):
                if tok.is_punct("#") and (i + 1 >= len(body) or body[i + 1].text not in params):
                    raise self._error(tok, "'#' is not followed by a macro parameter")
        self.macros[name_tok.text] = Macro(name_tok.text, params, body, name_tok.loc, variadic)

    # ----------------------------------------------------------------------------------------------- #include

    def _include(self, word: Token, args: list[Token], filename: str, out: list[Token]) -> None:
        if args and args[0].kind != "string" and not args[0].is_punct("<"):
            args = self.expand(args)
        if not args:
            raise self._error(word, "#include expects \"FILENAME\" or <FILENAME>")
        first = args[0]
        if first.kind == "string":
            target, angled = first.text[1:-1], False
        elif first.is_punct("<"):
            line = self.sources.line_text(first.loc) or ""
            start = first.loc.column
            end = line.find(">", start)
            if end < 0 or first.expanded_at is not None:
                close = next((i for i, t in enumerate(args) if t.is_punct(">")), None)
                if close is None:
                    raise self._error(first, "missing terminating '>' in #include")
                target = "".join(t.text for t in args[1:close])
            else:
                target = line[start:end]
            angled = True
        else:
            raise self._error(first, "#include expects \"FILENAME\" or <FILENAME>")
        path = self.sources.find_include(target, angled=angled, including_file=filename)
        if path is None:
            raise self._error(first, f"cannot find include file {target!r}")
        if path in self._once:
            return
        if self._depth >= MAX_INCLUDE_DEPTH:
            raise self._error(word, "#include nested too deeply")
        self._depth += 1
        try:
            out.extend(self.process_file(path, requested_at=first.loc))
        finally:
            self._depth -= 1

    # ------------------------------------------------------------------------------------------------ #if

    def _eval_condition(self, word: Token, args: list[Token]) -> bool:
        if not args:
            raise self._error(word, f"#{word.text} with no expression")
        replaced: list[Token] = []
        i = 0
        while i < len(args):
            tok = args[i]
            if tok.is_id("defined"):
                if i + 1 < len(args) and args[i + 1].kind == "id":
                    name, i = args[i + 1].text, i + 2
                elif (
                    i + 3 < len(args)
                    and args[i + 1].is_punct("(")
                    and args[i + 2].kind == "id"
                    and args[i + 3].is_punct(")")
                ):
                    name, i = args[i + 2].text, i + 4
                else:
                    raise self._error(tok, "operator 'defined' requires an identifier")
                replaced.append(replace(tok, kind="int", text="1" if name in self.macros else "0"))
                continue
            replaced.append(tok)
            i += 1
        expanded = self.expand(replaced)
        return _CondEvaluator(expanded, word, self._error).evaluate() != 0

    # ------------------------------------------------------------------------------------------------ expansion

    def expand(self, tokens: list[Token]) -> list[Token]:
        """Macro-expand a token list (C rescanning semantics with hide sets)."""
        out: list[Token] = []
        work: deque[Token] = deque(tokens)
        macros = self.macros
        while work:
            tok = work.popleft()
            if tok.kind != "id":
                out.append(tok)
                continue
            text = tok.text
            if text == "__LINE__" or text == "__FILE__":
                at = tok.expanded_at or tok.loc
                if text == "__LINE__":
                    out.append(replace(tok, kind="int", text=str(at.line)))
                else:
                    quoted = at.file.replace("\\", "\\\\").replace('"', '\\"')
                    out.append(replace(tok, kind="string", text=f'"{quoted}"'))
                continue
            macro = macros.get(text)
            if macro is None or text in tok.hide:
                out.append(tok)
                continue
            if macro.params is None:
                hide = self._intern(tok.hide | {text})
                body = self._substitute(macro, [], tok, hide)
            else:
                if not work or not work[0].is_punct("("):
                    out.append(tok)
                    continue
                args, rparen = self._collect_args(macro, tok, work)
                hide = self._intern((tok.hide & rparen.hide) | {text})
                body = self._substitute(macro, args, tok, hide)
            work.extendleft(reversed(body))
        return out

    def _collect_args(self, macro: Macro, tok: Token, work: deque[Token]) -> tuple[list[list[Token]], Token]:
        work.popleft()  # '('
        assert macro.params is not None
        args: list[list[Token]] = [[]]
        depth = 1
        while True:
            if not work:
                raise self._error(tok, f"unterminated argument list invoking macro '{macro.name}'")
            t = work.popleft()
            if t.is_punct("("):
                depth += 1
            elif t.is_punct(")"):
                depth -= 1
                if depth == 0:
                    break
            elif t.is_punct(",") and depth == 1 and not (macro.variadic and len(args) == len(macro.params)):
                args.append([])
                continue
            args[-1].append(t)
        if len(macro.params) == 0 and args == [[]]:
            args = []
        if macro.variadic and len(args) == len(macro.params) - 1:
            args.append([])
        if len(args) != len(macro.params):
            raise self._error(
                tok, f"macro '{macro.name}' takes {len(macro.params)} argument(s), but {len(args)} given"
            )
        return args, t

    def _substitute(self, macro: Macro, args: list[list[Token]], call: Token, hide: frozenset[str]) -> list[Token]:
        """The macro's body with its arguments in (`#`, `##`, pre-expanded arguments), every token marked with the
        new hide set and the outermost invocation. Runs the macro's plan (`_plan`): the body is analysed once per
        `#define`, not once per invocation."""
        plan = macro.plan
        if plan is None:
            plan = macro.plan = _plan(macro)
        expanded_cache: dict[int, list[Token]] = {}
        placemarker = Token("placemarker", "", call.loc)
        res: list[Token] = []
        for op, value in plan:
            if op == _LITERALS:
                res.extend(value)
            elif op == _EXPANDED:
                arg = expanded_cache.get(value)
                if arg is None:
                    arg = expanded_cache[value] = self.expand(args[value])
                res.extend(arg)
            elif op == _RAW:
                res.extend(args[value] or [placemarker])
            elif op == _STRINGIZE:
                index, at = value
                res.append(self._stringize(args[index], at))
            else:  # _PASTE_ARG (value: the parameter) or _PASTE_TOKEN (value: the token)
                rhs = list(args[value]) if op == _PASTE_ARG else [value]
                if not rhs:
                    continue
                left = res.pop() if res else placemarker
                if left is placemarker:
                    res.extend(rhs)
                else:
                    res.append(self._paste(left, rhs[0]))
                    res.extend(rhs[1:])
        origin_name = call.macro or macro.name
        origin_loc = call.expanded_at or call.loc
        unions = self._unions
        result: list[Token] = []
        append = result.append
        first = True  # the first entry of `res` (even a placemarker) takes the invocation's leading space
        for t in res:
            if t is placemarker:
                first = False
                continue
            t_hide = t.hide
            new_hide = hide
            if t_hide:
                key = (t_hide, hide)
                union = unions.get(key)
                if union is None:
                    union = unions[key] = self._intern(t_hide | hide)
                new_hide = union
            # a direct constructor call: dataclasses.replace is the hot spot of macro-heavy programs
            append(Token(t.kind, t.text, t.loc, False, call.space if first else t.space, new_hide, origin_name,
                         origin_loc))
            first = False
        return result

    def _intern(self, hide: frozenset[str]) -> frozenset[str]:
        """One object per distinct hide set, so the union cache of `_substitute` hits by identity."""
        return self._hide_sets.setdefault(hide, hide)

    def _stringize(self, arg: list[Token], at: Token) -> Token:
        parts: list[str] = []
        for n, t in enumerate(arg):
            if n and t.space:
                parts.append(" ")
            text = t.text
            if t.kind == "string":
                text = text.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(text)
        return replace(at, kind="string", text='"' + "".join(parts) + '"')

    def _paste(self, left: Token, right: Token) -> Token:
        text = left.text + right.text
        kind = _pasted_kind(text)
        if kind is None:
            raise self._error(
                left, f"pasting '{left.text}' and '{right.text}' does not give a valid preprocessing token"
            )
        return Token(kind, text, left.loc, left.bol, left.space, left.hide, left.macro, left.expanded_at)


@functools.lru_cache(maxsize=65536)
def _pasted_kind(text: str) -> str | None:
    """The kind of the one token `text` lexes to, or None when it is not exactly one token (the same pastes recur
    for every element of a wide program: one lex per distinct spelling)."""
    try:
        toks = tokenize(text, "<paste>")
    except CompileError:
        return None
    return toks[0].kind if len(toks) == 1 else None


def _logical_lines(tokens: list[Token]) -> list[list[Token]]:
    lines: list[list[Token]] = []
    for tok in tokens:
        if tok.bol or not lines:
            lines.append([tok])
        else:
            lines[-1].append(tok)
    return lines


class _CondEvaluator:
    """C integer constant expressions for `#if` (identifiers left after expansion are 0)."""

    _BINARY: list[set[str]] = [
        {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"},
        {"*", "/", "%"},
    ]  # fmt: skip

    def __init__(self, tokens: list[Token], word: Token, error: Callable[[Token, str], CompileError]) -> None:
        merged: list[Token] = []
        for tok in tokens:
            if tok.is_punct(">") and merged and merged[-1].is_punct(">") and not tok.space:
                merged[-1] = replace(merged[-1], text=">>")
                continue
            merged.append(tok)
        self.tokens = merged
        self.pos = 0
        self.word = word
        self.error = error

    def _peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _fail(self, message: str) -> CompileError:
        return self.error(self._peek() or self.word, message)

    def evaluate(self) -> int:
        value = self._ternary()
        if self._peek() is not None:
            tok = self._peek()
            assert tok is not None
            raise self._fail(f"unexpected '{tok.text}' in #{self.word.text} expression")
        return value

    def _ternary(self) -> int:
        cond = self._binary(0)
        tok = self._peek()
        if tok is not None and tok.is_punct("?"):
            self.pos += 1
            then = self._ternary()
            colon = self._peek()
            if colon is None or not colon.is_punct(":"):
                raise self._fail(f"expected ':' in #{self.word.text} expression")
            self.pos += 1
            other = self._ternary()
            return then if cond else other
        return cond

    def _binary(self, level: int) -> int:
        if level == len(self._BINARY):
            return self._unary()
        left = self._binary(level + 1)
        while True:
            tok = self._peek()
            if tok is None or tok.kind != "punct" or tok.text not in self._BINARY[level]:
                return left
            self.pos += 1
            right = self._binary(level + 1)
            left = self._apply(tok, left, right)

    def _apply(self, tok: Token, a: int, b: int) -> int:
        op = tok.text
        if op in ("/", "%") and b == 0:
            raise self.error(tok, f"division by zero in #{self.word.text}")
        table: dict[str, Callable[[int, int], int]] = {
            "||": lambda x, y: int(bool(x) or bool(y)),
            "&&": lambda x, y: int(bool(x) and bool(y)),
            "|": lambda x, y: x | y,
            "^": lambda x, y: x ^ y,
            "&": lambda x, y: x & y,
            "==": lambda x, y: int(x == y),
            "!=": lambda x, y: int(x != y),
            "<": lambda x, y: int(x < y),
            ">": lambda x, y: int(x > y),
            "<=": lambda x, y: int(x <= y),
            ">=": lambda x, y: int(x >= y),
            "<<": lambda x, y: x << y,
            ">>": lambda x, y: x >> y,
            "+": lambda x, y: x + y,
            "-": lambda x, y: x - y,
            "*": lambda x, y: x * y,
            "/": lambda x, y: int(x / y),
            "%": lambda x, y: x - int(x / y) * y,
        }
        return table[op](a, b)

    def _unary(self) -> int:
        tok = self._peek()
        if tok is None:
            raise self._fail(f"missing operand in #{self.word.text} expression")
        self.pos += 1
        if tok.kind == "punct" and tok.text in ("!", "~", "-", "+"):
            value = self._unary()
            return {"!": int(not value), "~": ~value, "-": -value, "+": value}[tok.text]
        if tok.is_punct("("):
            value = self._ternary()
            close = self._peek()
            if close is None or not close.is_punct(")"):
                raise self._fail(f"missing ')' in #{self.word.text} expression")
            self.pos += 1
            return value
        if tok.kind == "int":
            return parse_int(tok.text)[0]
        if tok.kind == "id":
            return 0
        raise self.error(tok, f"unexpected '{tok.text}' in #{self.word.text} expression")


def preprocess_file(
    path: str | os.PathLike[str],
    *,
    include_dirs: tuple[str | os.PathLike[str], ...] = (),
    defines: Mapping[str, str | None] | None = None,
    sources: SourceManager | None = None,
) -> list[Token]:
    """Preprocess a P4 file into tokens (convenience wrapper)."""
    sources = sources or SourceManager(include_dirs)
    return Preprocessor(sources, defines).process_file(os.fspath(path))
