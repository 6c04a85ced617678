"""The code of the pipeline that the checks look at, found once and walked once (walking the AST is most of this
pass's cost: p4ina.p4's unrolled actions hold tens of thousands of nodes).

Per V1Switch block: its parser states or control body, its applied tables, the same for its nested instances, and
the actions and functions all of these reference, transitively: the code p4c keeps after removing unused
declarations (and tables nobody applies), each root paired with the block instance it belongs to.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend.elaborate import BlockInstance, Pipeline


class CodeIndex:
    def __init__(self, pipeline: Pipeline) -> None:
        self.typed = pipeline.typed
        self._applied = set(pipeline.table_names)  # (block prefix, table): p4c removes tables nobody applies
        self._nodes: dict[int, list[ast.Node]] = {}
        self.roots: dict[str, list[tuple[BlockInstance, ast.Node]]] = {
            role: self._collect(block) for role, block in pipeline.blocks.items()}

    def nodes(self, root: ast.Node) -> list[ast.Node]:
        """Every node under `root`, depth first in source order (computed once per root)."""
        found = self._nodes.get(id(root))
        if found is None:
            found = self._nodes[id(root)] = list(ast.walk(root))
        return found

    def all_roots(self) -> list[ast.Node]:
        """Each root once, whichever blocks share it."""
        seen: set[int] = set()
        out = []
        for pairs in self.roots.values():
            for _owner, root in pairs:
                if id(root) not in seen:
                    seen.add(id(root))
                    out.append(root)
        return out

    def _collect(self, block: BlockInstance) -> list[tuple[BlockInstance, ast.Node]]:
        instances = [block]
        for inst in instances:
            instances.extend(inst.children)
        out: list[tuple[BlockInstance, ast.Node]] = []
        for inst in instances:
            decl = inst.decl
            roots: list[ast.Node] = list(decl.states) if isinstance(decl, ast.ParserDeclaration) else [decl.body]
            roots += [local for local in decl.locals
                      if isinstance(local, ast.TableDeclaration) and (inst.prefix, local) in self._applied]
            out += [(inst, r) for r in roots]
        seen: set[tuple[int, int]] = set()
        for owner, root in out:  # grows while it runs: actions and functions found are walked in turn
            for n in self.nodes(root):
                info = self.typed.calls.get(n) if isinstance(n, ast.Call) else None
                target = info.decl if info is not None and info.kind in ("action", "function") else self.typed.refs.get(n)
                if isinstance(target, (ast.ActionDeclaration, ast.FunctionDeclaration)) \
                        and (id(owner), id(target)) not in seen:
                    seen.add((id(owner), id(target)))
                    out.append((owner, target.body))
        return out
