"""Code generator: typed, elaborated P4 program -> one Python module implementing the v1model pipeline."""

from __future__ import annotations

from p4switch.codegen.exprs import CodegenError
from p4switch.codegen.module import generate_module

__all__ = ["CodegenError", "generate_module"]
