"""P4_16 1.2.5 loops -> Python loops. P4's `break` and `continue` bind to the innermost P4 loop, as Python's bind
to the innermost Python loop; nothing else the code generator emits is a Python loop around statements, so they
are emitted as they are.

`for (init; cond; updates) body` runs the updates at the top of every iteration but the first, so a `continue`
(a jump to the top) still runs them before the condition is evaluated again. `for (T x in lo .. hi)` evaluates
its bounds once and visits lo..hi inclusive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4switch.frontend import ast

if TYPE_CHECKING:
    from p4switch.codegen.blocks import BlockGen


def emit_for(g: BlockGen, st: ast.ForStatement) -> None:
    for init in st.init:
        g.stmt(init)
    started = g.tmp("loop")
    g.w(f"{started} = False")
    g.w("while True:")
    g.level += 1
    if st.updates:
        g.w(f"if {started}:")
        g.level += 1
        for update in st.updates:
            g.stmt(update)
        g.level -= 1
    g.w(f"{started} = True")
    if st.cond is not None:
        g.w(f"if not ({g.x.cond(st.cond)}):")  # the condition's own statements, if any, land before this line
        g.w("    break")
    g.block_stmts((st.body,))
    g.level -= 1


def emit_for_in(g: BlockGen, st: ast.ForInStatement) -> None:
    rng = st.collection
    assert isinstance(rng, ast.BinaryOp) and rng.op == ".."
    lo, hi = g.tmp("lo"), g.tmp("hi")
    g.w(f"{lo} = {g.x.expr(rng.left)}")
    g.w(f"{hi} = {g.x.expr(rng.right)}")
    name = g.bind_local(g.typed.decl_vars[st])
    g.w(f"for {name} in range({lo}, {hi} + 1):")
    g.level += 1
    g.block_stmts((st.body,))
    g.level -= 1


def emit_jump(g: BlockGen, st: ast.Statement) -> None:
    g.w("break" if isinstance(st, ast.BreakStatement) else "continue")
