"""Reduction trees: which switches sum a job's gradients, and in what shape.

A tree is chosen over the live topology (failed switches and links left out) in three steps: candidate roots
from the topology's strategy; for each, the depth a shortest-path tree from that root needs to reach every member
(hop count from the root to the farthest member); among the shallowest roots, a tree built leaf by leaf along
shortest paths that reuses its own links and avoids links other jobs already use. The score is (depth, links
shared with other jobs, load on them, links used, strategy preference, root name), so the result is deterministic.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from controller.exceptions import TreeError
from controller.topology import Topology

Edge = frozenset[str]


def edge(a: str, b: str) -> Edge:
    return frozenset((a, b))


@dataclass
class ReductionTree:
    """Root, parent of every switch in the tree, and where each member host attaches."""

    root: str
    parent: dict[str, str | None]
    member_switch: dict[str, str]
    members: list[str] = field(default_factory=list)

    @property
    def switches(self) -> list[str]:
        return sorted(self.parent)

    def child_switches(self, switch: str) -> list[str]:
        return sorted(s for s, p in self.parent.items() if p == switch)

    def child_hosts(self, switch: str) -> list[str]:
        return sorted(h for h, s in self.member_switch.items() if s == switch)

    def level(self, switch: str) -> int:
        """Hops from the root (root is 0)."""
        n, hops = switch, 0
        while (p := self.parent[n]) is not None:
            n, hops = p, hops + 1
        return hops

    @property
    def depth(self) -> int:
        """Hops from the root switch to the farthest member host."""
        return max(self.level(s) for s in self.member_switch.values()) + 1

    def links(self) -> set[Edge]:
        """Switch-to-switch links the tree uses."""
        return {edge(s, p) for s, p in self.parent.items() if p is not None}

    def role(self, switch: str) -> str:
        if self.parent[switch] is None:
            return "root"
        return "leaf" if self.child_hosts(switch) and not self.child_switches(switch) else "inner"

    def to_dict(self) -> dict[str, object]:
        return {"root": self.root, "parent": dict(sorted(self.parent.items())),
                "member_switch": dict(self.member_switch), "members": list(self.members)}

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> ReductionTree:
        return cls(str(d["root"]), dict(d["parent"]), dict(d["member_switch"]),  # type: ignore[call-overload]
                   list(d.get("members", [])))  # type: ignore[call-overload]

    def drawing(self) -> str:
        """An indented text drawing, root first, hosts as leaves."""
        lines: list[str] = []

        def walk(sw: str, prefix: str, last: bool, top: bool) -> None:
            tag = f"{sw} ({self.role(sw)})"
            lines.append(tag if top else f"{prefix}{'`-- ' if last else '|-- '}{tag}")
            kids = [(c, True) for c in self.child_switches(sw)] + [(h, False) for h in self.child_hosts(sw)]
            child_prefix = "" if top else prefix + ("    " if last else "|   ")
            for i, (child, is_switch) in enumerate(kids):
                end = i == len(kids) - 1
                if is_switch:
                    walk(child, child_prefix, end, False)
                else:
                    lines.append(f"{child_prefix}{'`-- ' if end else '|-- '}{child}")

        walk(self.root, "", True, True)
        return "\n".join(lines)


# -- strategies --------------------------------------------------------------------------------------------------
# A strategy names the roots worth trying and a preference among equally good trees (smaller is better).
Strategy = tuple[Callable[[Topology, nx.Graph, set[str]], list[str]],
                 Callable[[Topology, nx.Graph, set[str], str, Mapping[str, int]], tuple[float, ...]]]


def _all_switches(topo: Topology, g: nx.Graph, leaves: set[str]) -> list[str]:
    return sorted(g.nodes)


def _total_distance(topo: Topology, g: nx.Graph, leaves: set[str], root: str,
                    dist: Mapping[str, int]) -> tuple[float, ...]:
    return (float(sum(dist[leaf] for leaf in leaves)),)


def _leaf_spine_roots(topo: Topology, g: nx.Graph, leaves: set[str]) -> list[str]:
    spines = [s for s in g.nodes if topo.switches[s].role == "spine"]
    return sorted(set(spines) | leaves) or sorted(g.nodes)


def _fat_tree_roots(topo: Topology, g: nx.Graph, leaves: set[str]) -> list[str]:
    # edges without members are never better roots than the aggregation layer above them
    return sorted(s for s in g.nodes if topo.switches[s].role != "edge" or s in leaves)


def _tier(topo: Topology, g: nx.Graph, leaves: set[str], root: str, dist: Mapping[str, int]) -> tuple[float, ...]:
    order = {"core": 0, "spine": 0, "agg": 1, "edge": 2, "leaf": 2}
    return (float(sum(dist[leaf] for leaf in leaves)), float(order.get(topo.switches[root].role, 3)))


def _dragonfly_pref(topo: Topology, g: nx.Graph, leaves: set[str], root: str,
                    dist: Mapping[str, int]) -> tuple[float, ...]:
    # a root in the group holding most member routers keeps most traffic off the scarce global links
    group = topo.switches[root].group
    local = sum(1 for leaf in leaves if topo.switches[leaf].group == group)
    return (float(sum(dist[leaf] for leaf in leaves)), float(-local))


def _torus_pref(topo: Topology, g: nx.Graph, leaves: set[str], root: str,
                dist: Mapping[str, int]) -> tuple[float, ...]:
    # the hop-count medoid of the members; ties go to roots that are themselves members (one fewer transit hop)
    return (float(sum(dist[leaf] for leaf in leaves)), 0.0 if root in leaves else 1.0)


STRATEGIES: dict[str, Strategy] = {
    "generic": (_all_switches, _total_distance),
    "leaf-spine": (_leaf_spine_roots, _tier),
    "fat-tree": (_fat_tree_roots, _tier),
    "dragonfly": (_all_switches, _dragonfly_pref),
    "torus": (_all_switches, _torus_pref),
}


# -- computation -------------------------------------------------------------------------------------------------
def compute_tree(topo: Topology, members: Iterable[str], *, root: str | None = None,
                 link_load: Mapping[Edge, int] | None = None, down_switches: Iterable[str] = (),
                 down_links: Iterable[tuple[str, str]] = (), strategy: str | None = None) -> ReductionTree:
    """The best reduction tree for `members` (host names); see the module docstring for "best"."""
    members = list(dict.fromkeys(members))
    if not members:
        raise TreeError("a job needs at least one member host")
    load: Mapping[Edge, int] = link_load or Counter()
    g = topo.graph(include_hosts=False, down_switches=down_switches, down_links=down_links)
    member_switch: dict[str, str] = {}
    for host in members:
        if host not in topo.hosts:
            raise TreeError(f"unknown member host {host!r}")
        sw = topo.hosts[host].switch
        if sw not in g:
            raise TreeError(f"member {host} is attached to switch {sw}, which is down")
        member_switch[host] = sw
    leaves = set(member_switch.values())
    roots_of, prefer = STRATEGIES.get(strategy or topo.kind, STRATEGIES["generic"])
    if root is not None:
        if root not in topo.switches:
            raise TreeError(f"unknown root switch {root!r}")
        if root not in g:
            raise TreeError(f"requested root {root} is down")
        candidates = [root]
    else:
        candidates = roots_of(topo, g, leaves)

    best: tuple[tuple[float, ...], dict[str, str | None], str] | None = None
    scored: list[tuple[int, str, dict[str, int]]] = []
    for r in candidates:
        dist = nx.single_source_shortest_path_length(g, r)
        if not leaves <= dist.keys():
            continue
        scored.append((max(dist[leaf] for leaf in leaves) + 1, r, dist))
    if not scored:
        where = f"root {root}" if root else "any root"
        raise TreeError(f"members {', '.join(members)} are not connected through {where} in the live topology")
    min_depth = min(d for d, _, _ in scored)
    from_leaf = {leaf: nx.single_source_shortest_path_length(g, leaf) for leaf in leaves}
    for depth, r, dist in scored:
        if depth != min_depth:
            continue
        parent = _grow(g, r, dist, leaves, load, from_leaf)
        links = {edge(s, p) for s, p in parent.items() if p is not None}
        shared = [e for e in links if load.get(e, 0) > 0]
        key = (float(depth), float(len(shared)), float(sum(load.get(e, 0) for e in links)), float(len(links)),
               *prefer(topo, g, leaves, r, dist))
        if best is None or (key, r) < (best[0], best[2]):
            best = (key, parent, r)
    assert best is not None
    return ReductionTree(best[2], best[1], member_switch, members)


def _grow(g: nx.Graph, root: str, dist: Mapping[str, int], leaves: set[str], load: Mapping[Edge, int],
          from_leaf: Mapping[str, Mapping[str, int]]) -> dict[str, str | None]:
    """Shortest-path tree from `root` to every leaf switch: each leaf joins along the cheapest downhill path, where
    links already in this tree are free and links used by other jobs cost more than any number of fresh ones.
    The search stays inside the leaf's cone (nodes on some shortest root-leaf path), which keeps large fabrics
    fast: a fat-tree's cone from a core to an edge switch is a handful of nodes."""
    parent: dict[str, str | None] = {root: None}
    heavy = g.number_of_edges() + 1
    for leaf in sorted(leaves, key=lambda s: (-dist[s], s)):
        if leaf in parent:
            continue
        # Dijkstra from the root over edges that go one hop further from it (keeps every path shortest)
        best: dict[str, float] = {root: 0.0}
        prev: dict[str, str] = {}
        heap: list[tuple[float, str]] = [(0.0, root)]
        to_leaf = from_leaf[leaf]
        while heap:
            cost, u = heapq.heappop(heap)
            if u == leaf:
                break
            if cost > best.get(u, float("inf")):
                continue
            for v in sorted(g.neighbors(u)):
                if dist.get(v) != dist[u] + 1 or dist[v] + to_leaf.get(v, dist[leaf] + 1) != dist[leaf]:
                    continue
                in_tree = parent.get(v, "") == u
                step = 0.0 if in_tree else 1.0 + heavy * load.get(edge(u, v), 0)
                if cost + step < best.get(v, float("inf")):
                    best[v] = cost + step
                    prev[v] = u
                    heapq.heappush(heap, (cost + step, v))
        node = leaf
        while node != root and node not in parent:
            parent[node] = prev[node]
            node = prev[node]
    return parent


def min_depth(topo: Topology, members: Iterable[str], **graph_filters: Iterable[str]) -> int:
    """The smallest depth any root can achieve for `members` (for checks and tests)."""
    g = topo.graph(include_hosts=False, **graph_filters)  # type: ignore[arg-type]
    leaves = {topo.hosts[h].switch for h in members}
    best = None
    for r in g.nodes:
        dist = nx.single_source_shortest_path_length(g, r)
        if leaves <= dist.keys():
            d = max(dist[leaf] for leaf in leaves) + 1
            best = d if best is None else min(best, d)
    if best is None:
        raise TreeError("members are not connected")
    return best


def link_load(trees: Iterable[ReductionTree]) -> Counter[Edge]:
    """How many of the given trees use each switch-to-switch link."""
    load: Counter[Edge] = Counter()
    for tree in trees:
        load.update(tree.links())
    return load
