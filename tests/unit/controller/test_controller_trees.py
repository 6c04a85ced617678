"""Reduction trees on the four fabric shapes: every member reached, depth minimal, concurrent jobs kept apart."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from controller.exceptions import TreeError
from controller.topologies import dragonfly, fat_tree, leaf_spine, torus
from controller.topology import Topology
from controller.trees import ReductionTree, compute_tree, link_load, min_depth


def check_tree(topo: Topology, tree: ReductionTree, members: list[str]) -> None:
    """The tree is a tree of live links, rooted at `tree.root`, and reaches every member through its switch."""
    g = topo.graph(include_hosts=False)
    assert tree.parent[tree.root] is None
    for sw, parent in tree.parent.items():
        if parent is not None:
            assert g.has_edge(sw, parent), (sw, parent)
    t = nx.Graph(list(tree.links()))
    t.add_nodes_from(tree.parent)
    assert nx.is_tree(t)
    for host in members:
        assert tree.member_switch[host] == topo.hosts[host].switch
        assert tree.member_switch[host] in tree.parent
    # no dangling branch: every leaf of the switch tree has member hosts
    for sw in tree.switches:
        if not tree.child_switches(sw):
            assert tree.child_hosts(sw), f"{sw} is a useless branch"


CASES = [
    ("leaf-spine", leaf_spine(4, 2, 2), ["h1", "h3", "h5", "h7"], 2),
    ("leaf-spine one leaf", leaf_spine(4, 2, 2), ["h1", "h2"], 1),
    ("fat-tree across pods", fat_tree(4), ["h1", "h5", "h9", "h13"], 3),
    ("fat-tree one pod", fat_tree(4), ["h1", "h3"], 2),
    ("dragonfly", dragonfly(5, 2, 2), ["h1", "h5", "h9", "h13"], None),
    ("torus", torus(4, 4, hosts_per_switch=1), ["h1", "h3", "h9", "h11"], None),
]


@pytest.mark.parametrize(("name", "topo", "members", "expected_depth"), CASES, ids=[c[0] for c in CASES])
def test_tree_reaches_members_with_minimal_depth(name: str, topo: Topology, members: list[str],
                                                 expected_depth: int | None) -> None:
    tree = compute_tree(topo, members)
    check_tree(topo, tree, members)
    assert tree.depth == min_depth(topo, members)
    if expected_depth is not None:
        assert tree.depth == expected_depth


def test_min_depth_is_a_true_lower_bound_on_every_root() -> None:
    topo = fat_tree(4)
    members = ["h1", "h7", "h10"]
    depths = []
    for root in topo.switches:
        try:
            depths.append(compute_tree(topo, members, root=root).depth)
        except TreeError:
            continue
    assert min(depths) == compute_tree(topo, members).depth


def test_roots_follow_the_fabric() -> None:
    assert leaf_spine(4, 2, 2).switches[compute_tree(leaf_spine(4, 2, 2), ["h1", "h3"]).root].role == "spine"
    ft = fat_tree(4)
    assert ft.switches[compute_tree(ft, ["h1", "h5"]).root].role == "core"
    assert ft.switches[compute_tree(ft, ["h1", "h3"]).root].role == "agg"
    assert compute_tree(ft, ["h1", "h2"]).root == "edge0_0"


@pytest.mark.parametrize(("topo", "a", "b"), [
    (leaf_spine(4, 2, 2), ["h1", "h3", "h5", "h7"], ["h2", "h4", "h6", "h8"]),
    (fat_tree(4), ["h1", "h5", "h9", "h13"], ["h2", "h6", "h10", "h14"]),
    (fat_tree(4), ["h1", "h3"], ["h2", "h4"]),
    (dragonfly(5, 2, 2), ["h1", "h5"], ["h3", "h7"]),
    (torus(4, 4, hosts_per_switch=2), ["h1", "h5"], ["h2", "h6"]),  # same two switches: around the ring both ways
], ids=["leaf-spine", "fat-tree-pods", "fat-tree-pod", "dragonfly", "torus"])
def test_two_concurrent_jobs_share_no_link(topo: Topology, a: list[str], b: list[str]) -> None:
    first = compute_tree(topo, a)
    second = compute_tree(topo, b, link_load=link_load([first]))
    check_tree(topo, second, b)
    assert second.depth == min_depth(topo, b), "avoiding sharing must never cost depth"
    assert not first.links() & second.links()


def test_sharing_is_avoided_only_when_depth_allows() -> None:
    topo = leaf_spine(2, 1, 2)  # one spine: both jobs must cross it
    first = compute_tree(topo, ["h1", "h3"])
    second = compute_tree(topo, ["h2", "h4"], link_load=link_load([first]))
    assert second.root == "spine1" and first.links() == second.links()


def test_tree_routes_around_failures() -> None:
    topo = leaf_spine(4, 2, 2)
    members = ["h1", "h3", "h5"]
    before = compute_tree(topo, members)
    after = compute_tree(topo, members, down_switches=[before.root])
    assert after.root != before.root and before.root not in after.parent
    check_tree(topo, after, members)
    cut = compute_tree(topo, members, down_links=[("leaf1", "spine1")])
    assert frozenset(("leaf1", "spine1")) not in cut.links()


def test_every_pair_on_fat_tree_is_minimal() -> None:
    topo = fat_tree(4)
    hosts = sorted(topo.hosts, key=lambda h: int(h[1:]))
    for a, b in itertools.combinations(hosts[::3], 2):
        tree = compute_tree(topo, [a, b])
        assert tree.depth == min_depth(topo, [a, b])


def test_errors_are_clear() -> None:
    topo = leaf_spine(2, 1, 1)
    with pytest.raises(TreeError, match="unknown member host 'nope'"):
        compute_tree(topo, ["nope"])
    with pytest.raises(TreeError, match="attached to switch leaf1, which is down"):
        compute_tree(topo, ["h1", "h2"], down_switches=["leaf1"])
    with pytest.raises(TreeError, match="not connected"):
        compute_tree(topo, ["h1", "h2"], down_switches=["spine1"])
    with pytest.raises(TreeError, match="at least one member"):
        compute_tree(topo, [])


def test_drawing_shows_every_node() -> None:
    topo = fat_tree(4)
    tree = compute_tree(topo, ["h1", "h5"])
    text = tree.drawing()
    for name in [*tree.switches, "h1", "h5"]:
        assert name in text
    assert text.splitlines()[0] == f"{tree.root} (root)"


def test_tree_dict_round_trip() -> None:
    tree = compute_tree(dragonfly(5, 2, 2), ["h1", "h9"])
    again = ReductionTree.from_dict(tree.to_dict())
    assert again == tree


def test_larger_fat_tree_jobs_stay_disjoint_and_minimal() -> None:
    topo = fat_tree(8)
    hosts = sorted(topo.hosts, key=lambda h: int(h[1:]))
    a, b = hosts[0::4], hosts[1::4]  # 32 members each, spread over every pod
    first = compute_tree(topo, a)
    second = compute_tree(topo, b, link_load=link_load([first]))
    for tree, members in ((first, a), (second, b)):
        check_tree(topo, tree, members)
        assert tree.depth == min_depth(topo, members) == 3
    assert not first.links() & second.links()
