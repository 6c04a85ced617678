"""The table control-flow graph of a BMv2 pipeline control, and the two checks p4c-bm2-ss runs on it.

BMv2 runs a control as a graph of tables and conditions where each table names its successors, so a table can sit
at one place only. p4c-bm2-ss (`backends/bmv2/common/controlFlowGraph.cpp`) builds one node per apply site and
rejects the program when there is a path from a table back to itself (`CFG::dfs`) or when the apply sites of one
table do not all lead to the same successors (`CFG::checkMergeable`). The graph is built after p4c's front and
mid ends, so this builder follows the rewrites that change its shape:
- nested control instances are inlined at each apply call, sharing one copy of their tables; copy-in/copy-out
  assignments appear only when the call sites differ or the arguments alias (`frontends/p4/inlining.cpp`);
- every run of other statements becomes a synthesized table (a node of its own), an `if` a condition node,
  `switch (t.apply().action_run)` the table's node with one labelled edge per case (any other `switch` a new
  table), `t.apply().hit` inside a larger expression a table node with two branches (`TableHit`);
- conditions that fold to a constant keep only the taken branch, `if`s with two empty branches disappear, and a
  `return` becomes a flag that guards the rest of its control (`RemoveReturns`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from p4switch.frontend import ast
from p4switch.frontend.elaborate import BlockInstance, Pipeline, qualify
from p4switch.frontend.typecheck.helpers import expr_text
from p4switch.frontend.types import HeaderT, HeaderUnionT, P4Type, StackT, StructT

from .index import CodeIndex
from .report import Reporter

Label = bool | str | None  # None: unconditional; True/False: hit/miss or if branches; str: a switch label
NO, MAYBE, ALWAYS = 0, 1, 2  # does a statement return from its control


@dataclass(eq=False)
class Node:
    """One CFG node: the entry, the exit, a table apply site, a condition, or a synthesized action table."""

    kind: str
    table: str | None = None  # identifies the table instance (block prefix and declaration), not its @name
    decl: ast.TableDeclaration | None = None
    preds: list[tuple[Node, Label]] = field(default_factory=list)
    succs: list[tuple[Node, Label]] = field(default_factory=list)

    def same_destination(self, other: Node) -> bool:
        """p4c's `EdgeSet::isDestination`: the same node, or two apply sites of the same table."""
        return self is other or (self.table is not None and self.table == other.table)


Edges = list[tuple[Node, Label]]


class ControlGraph:
    """The CFG of one pipeline control (ingress or egress), nested controls inlined."""

    def __init__(self, pipeline: Pipeline, root: BlockInstance, index: CodeIndex) -> None:
        self.pipeline = pipeline
        self.typed = pipeline.typed
        self.index = index
        self.nodes: list[Node] = []
        self.tables: dict[str, tuple[str, ast.TableDeclaration, str]] = {}  # key -> (block prefix, decl, name)
        self.entry = self.make("entry")
        self.exit = self.make("exit")
        assert isinstance(root.decl, ast.ControlDeclaration)
        live, _ = self.statement(root.decl.body, [(self.entry, None)], root)
        self.connect(self.exit, live)
        for node in self.nodes:
            for src, label in node.preds:
                src.succs.append((node, label))

    # -------------------------------------------------------------------------------------------------- building
    def make(self, kind: str, table: str | None = None, decl: ast.TableDeclaration | None = None) -> Node:
        node = Node(kind, table, decl)
        self.nodes.append(node)
        return node

    def connect(self, node: Node, live: Edges) -> None:
        seen = {(id(src), label) for src, label in node.preds}
        for src, label in live:
            if (id(src), label) not in seen:
                seen.add((id(src), label))
                node.preds.append((src, label))

    def step(self, kind: str, live: Edges) -> Edges:
        """A node after `live`; consecutive statements share one (p4c synthesizes one action per run of them)."""
        if kind == "stmt" and len(live) == 1 and live[0][1] is None and live[0][0].kind == "stmt":
            return live
        node = self.make(kind)
        self.connect(node, live)
        return [(node, None)]

    def table_node(self, call: ast.Call, live: Edges, block: BlockInstance) -> Node:
        info = self.typed.calls[call]
        decl = info.decl
        name = self.pipeline.table_names.get((block.prefix, decl)) or qualify(block.prefix, decl)
        key = f"{block.prefix}#{id(decl)}"
        self.tables.setdefault(key, (block.prefix, decl, name))
        node = self.make("table", key, decl)
        self.connect(node, live)
        return node

    def is_apply(self, e: ast.Node) -> bool:
        info = self.typed.calls.get(e) if isinstance(e, ast.Call) else None
        return info is not None and info.kind == "table_apply"

    def hoist(self, e: ast.Node | None, live: Edges, block: BlockInstance) -> Edges:
        """Table applies inside an expression run first, each as `if (t.apply().hit) tmp = true; else tmp = false;`
        (p4c's SideEffectOrdering and TableHit)."""
        if e is None:
            return live
        for n in ast.walk(e):
            if isinstance(n, ast.Call) and self.is_apply(n):
                node = self.table_node(n, live, block)
                live = self.step("stmt", [(node, True)]) + self.step("stmt", [(node, False)])
        return live

    def hit_test(self, cond: ast.Expression) -> tuple[ast.Call | None, bool]:
        """`t.apply().hit`, `t.apply().miss` and their negations: the apply call and whether true means miss."""
        negated = False
        while isinstance(cond, ast.UnaryOp) and cond.op == "!":
            negated = not negated
            cond = cond.operand
        if isinstance(cond, ast.Member) and cond.member in ("hit", "miss") and self.is_apply(cond.expr):
            assert isinstance(cond.expr, ast.Call)
            return cond.expr, negated != (cond.member == "miss")
        return None, False

    def statement(self, s: ast.Statement | None, live: Edges, block: BlockInstance) -> tuple[Edges, int]:
        if s is None or isinstance(s, (ast.EmptyStatement, ast.ConstantDeclaration)):
            return live, NO
        if isinstance(s, ast.BlockStatement):
            return self.sequence(list(s.statements), live, block)
        if isinstance(s, ast.VariableDeclaration):
            if s.init is None:
                return live, NO
            return self.step("stmt", self.hoist(s.init, live, block)), NO
        if isinstance(s, ast.AssignmentStatement):
            live = self.hoist(s.right, self.hoist(s.left, live, block), block)
            return self.step("stmt", live), NO
        if isinstance(s, ast.MethodCallStatement):
            return self.call(s.call, live, block), NO
        if isinstance(s, ast.IfStatement):
            return self.if_statement(s, live, block)
        if isinstance(s, ast.SwitchStatement):
            return self.switch_statement(s, live, block)
        if isinstance(s, ast.ExitStatement):
            self.connect(self.exit, live)
            return [], NO
        if isinstance(s, ast.ReturnStatement):
            return self.step("stmt", live), ALWAYS  # `hasReturned = true;`
        return self.step("stmt", live), NO

    def sequence(self, statements: list[ast.Statement], live: Edges, block: BlockInstance) -> tuple[Edges, int]:
        for i, s in enumerate(statements):
            live, returns = self.statement(s, live, block)
            if returns == ALWAYS:
                return live, ALWAYS
            rest = statements[i + 1:]
            if returns == MAYBE and not all(self.is_empty(r) for r in rest):
                guard = self.make("if")  # if (!hasReturned) { rest }
                self.connect(guard, live)
                after, _ = self.sequence(rest, [(guard, True)], block)
                return [*after, (guard, False)], MAYBE
            if returns == MAYBE:
                return live, MAYBE
        return live, NO

    def is_empty(self, s: ast.Statement | None) -> bool:
        """Statements p4c's SimplifyControlFlow and MoveDeclarations leave nothing of."""
        if s is None or isinstance(s, (ast.EmptyStatement, ast.ConstantDeclaration)):
            return True
        if isinstance(s, ast.VariableDeclaration):
            return s.init is None
        if isinstance(s, ast.BlockStatement):
            return all(self.is_empty(x) for x in s.statements)
        if isinstance(s, ast.IfStatement):
            return (self.is_empty(s.then) and self.is_empty(s.else_)
                    and not any(isinstance(n, ast.Call) for n in ast.walk(s.cond)))
        return False

    def if_statement(self, s: ast.IfStatement, live: Edges, block: BlockInstance) -> tuple[Edges, int]:
        const = self.typed.consts.get(s.cond)
        if isinstance(const, bool):
            return self.statement(s.then if const else s.else_, live, block)
        call, negated = self.hit_test(s.cond)
        if call is not None:
            node = self.table_node(call, live, block)
        else:
            if self.is_empty(s):
                return live, NO
            node = self.make("if")
            self.connect(node, self.hoist(s.cond, live, block))
        then_live, then_ret = self.statement(s.then, [(node, not negated)], block)
        if s.else_ is not None:
            else_live, else_ret = self.statement(s.else_, [(node, negated)], block)
        else:
            else_live, else_ret = [(node, negated)], NO
        returns = ALWAYS if then_ret == else_ret == ALWAYS else (NO if then_ret == else_ret == NO else MAYBE)
        return then_live + else_live, returns

    def switch_statement(self, s: ast.SwitchStatement, live: Edges, block: BlockInstance) -> tuple[Edges, int]:
        e = s.expr
        if isinstance(e, ast.Member) and e.member == "action_run" and self.is_apply(e.expr):
            assert isinstance(e.expr, ast.Call)
            node = self.table_node(e.expr, live, block)
        else:  # p4c's EliminateSwitch: a new table keyed on the expression
            node = self.make("switch")
            self.connect(node, self.hoist(e, live, block))
        result: Edges = [(node, None)]  # no label matched
        labels: Edges = []
        returns = NO
        for case in s.cases:
            label = "default" if isinstance(case.label, ast.DefaultExpression) else expr_text(case.label)
            labels.append((node, label))
            if case.body is not None:
                out, r = self.statement(case.body, labels, block)
                returns = max(returns, MAYBE if r else NO)
                result += out
                labels = []
        return result, returns

    def call(self, call: ast.Call, live: Edges, block: BlockInstance) -> Edges:
        info = self.typed.calls.get(call)
        if info is not None and info.kind == "table_apply":
            return [(self.table_node(call, live, block), None)]
        if info is not None and info.kind == "block_apply" and isinstance(info.receiver, ast.Name):
            child = block.child_by_name.get(info.receiver.name)
            if child is not None and isinstance(child.decl, ast.ControlDeclaration):
                return self.inline(call, child, live, block)
        for a in call.args:
            live = self.hoist(a.value, live, block)
        return self.step("stmt", live)

    def inline(self, call: ast.Call, child: BlockInstance, live: Edges, block: BlockInstance) -> Edges:
        """p4c's GeneralInliner: the callee's body in place of the call, with copies only where needed."""
        assert isinstance(child.decl, ast.ControlDeclaration)
        params = list(child.decl.params)
        temps = self.temporaries(call, block, params)
        for p in params:
            var = self.typed.decl_vars.get(p)
            if p.name in temps and p.direction in ("in", "inout"):
                live = self.step("stmt", live)  # copy-in
            elif p.direction == "out" and var is not None and _has_headers(var.type):
                live = self.step("stmt", live)  # out headers start invalid
        live, _ = self.statement(child.decl.body, live, child)
        for p in params:
            if p.name in temps and p.direction in ("out", "inout"):
                live = self.step("stmt", live)  # copy-out
        return live

    def temporaries(self, call: ast.Call, block: BlockInstance, params: list[ast.Parameter]) -> set[str]:
        """Parameters the inliner copies through a temporary: all of them when the instance's call sites differ,
        else those whose arguments overlap another argument."""
        info = self.typed.calls[call]
        receiver = info.receiver.name if isinstance(info.receiver, ast.Name) else ""
        assert isinstance(block.decl, ast.ControlDeclaration)
        sites = []
        for n in self.index.nodes(block.decl.body):
            other = self.typed.calls.get(n) if isinstance(n, ast.Call) else None
            if other is not None and other.kind == "block_apply" and isinstance(other.receiver, ast.Name) \
                    and other.receiver.name == receiver:
                assert isinstance(n, ast.Call)
                sites.append(tuple(_arg_text(a) for a in n.args))
        if len(set(sites)) > 1:
            return {p.name for p in params}
        texts = [_arg_text(a) for a in call.args]
        out = set()
        for i, p in enumerate(params[:len(texts)]):
            for j in range(len(texts)):
                if i != j and _overlaps(texts[i], texts[j]):
                    out.add(p.name)
        return out

    # ---------------------------------------------------------------------------------------------------- checks
    def check(self, report: Reporter) -> None:
        """p4c's `CFG::checkImplementable`: the first failure is the control's only error."""
        visited: set[int] = set()
        stack: set[str] = set()
        for node in self.nodes:
            if not self.dfs(node, visited, stack, report):
                return
        groups: dict[str, list[Node]] = {}
        for node in self.nodes:
            if node.table is not None:
                groups.setdefault(node.table, []).append(node)
        for name, sites in groups.items():
            first = sites[0]
            for other in sites[1:]:
                if not _same_successors(first, other):
                    self.error(report, name, "Program is not supported by this target, because table {} "
                                             "has multiple successors")
                    return

    def dfs(self, start: Node, visited: set[int], stack: set[str], report: Reporter) -> bool:
        """p4c's `CFG::dfs` (iterative): a table met again while it is on the current path is an error."""
        work: list[tuple[Node, Iterator[tuple[Node, Label]]]] = []

        def enter(node: Node) -> bool:
            table = node.table
            if table is not None and table in stack:
                self.error(report, table, "Program can not be implemented on this target since it contains a "
                                          "path from table {} back to itself")
                return False
            if id(node) not in visited:
                if table is not None:
                    stack.add(table)
                work.append((node, iter(node.succs)))
            return True

        if not enter(start):
            return False
        while work:
            node, successors = work[-1]
            following = next(successors, None)
            if following is None:
                work.pop()
                if node.table is not None:
                    stack.discard(node.table)
                visited.add(id(node))
            elif not enter(following[0]):
                return False
        return True

    def error(self, report: Reporter, table: str, message: str) -> None:
        """`message` with the table's control-plane name for `{}`, at the table's declaration."""
        _prefix, decl, name = self.tables[table]
        report.error_at_name(decl.loc, decl.name, message.format(name))


def _same_successors(a: Node, b: Node) -> bool:
    """p4c's `EdgeSet::checkSame`: as many edges, and every destination of each is one of the other's."""
    if len(a.succs) != len(b.succs):
        return False
    return all(any(d.same_destination(e) for e, _ in b.succs) for d, _ in a.succs) and \
        all(any(e.same_destination(d) for d, _ in a.succs) for e, _ in b.succs)


def _arg_text(a: ast.Argument) -> str:
    return expr_text(a.value)


def _overlaps(x: str, y: str) -> bool:
    """Two argument paths name overlapping storage (one is the other or contains it)."""
    if x == y:
        return True
    short, long_ = (x, y) if len(x) < len(y) else (y, x)
    return long_.startswith(short) and long_[len(short)] in ".["


def _has_headers(t: P4Type) -> bool:
    if isinstance(t, (HeaderT, HeaderUnionT, StackT)):
        return True
    if isinstance(t, StructT):
        return any(_has_headers(ft) for _, ft in t.fields)
    return False


def check_control_graphs(pipeline: Pipeline, index: CodeIndex, report: Reporter) -> dict[str, ControlGraph]:
    """Build and check the ingress and egress graphs (the controls p4c-bm2-ss turns into BMv2 pipelines)."""
    graphs = {}
    for role in ("ingress", "egress"):
        block = pipeline.blocks.get(role)
        if block is not None and isinstance(block.decl, ast.ControlDeclaration):
            graph = ControlGraph(pipeline, block, index)
            graph.check(report)
            graphs[role] = graph
    return graphs
