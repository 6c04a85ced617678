"""The one gate for names and literals the code generator splices into Python source.

Generated code is the only code the switch runs, so every piece of it that comes from the P4 program goes through
here: identifiers must match `[A-Za-z_][A-Za-z0-9_]*` and not be a Python keyword, integers must be `int`s (not
strings that look like numbers), and any other text (control-plane names from `@name`, messages, file names)
becomes a Python string literal through `repr`. A name that fails is a `CodegenError`, never quoted silently.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class UnsafeNameError(ValueError):
    """A name or literal that must not enter generated code as it is."""


def py_ident(name: Any) -> str:
    """`name` unchanged if it is a plain Python identifier that is not a keyword; raises `UnsafeNameError`."""
    if not isinstance(name, str) or not IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise UnsafeNameError(f"{name!r} is not a valid identifier for generated code")
    return name


def py_int(value: Any) -> str:
    """An integer literal (bools are refused: they are not P4 bit values here)."""
    if type(value) is not int:
        raise UnsafeNameError(f"{value!r} is not an integer")
    return repr(value)


def py_str(text: Any) -> str:
    """Any text as a Python string literal (`repr` escapes quotes, backslashes and newlines)."""
    if not isinstance(text, str):
        raise UnsafeNameError(f"{text!r} is not a string")
    return repr(text)
