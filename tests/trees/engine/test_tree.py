"""trees.engine.tree: the array-backed tree every scheduler module builds on."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.tree import ROOT, Tree, subtree_ends


@pytest.fixture
def tree():
    """root ─ a ─ a1, a2 ; root ─ b ─ b1 ─ b11 ; root ─ c."""
    tree = Tree.with_root("root", shares=-1, usage=1.0)
    a = tree.add_child(ROOT, "a", shares=10, usage=2.0)
    b = tree.add_child(ROOT, "b", shares=20, usage=3.0)
    tree.add_child(ROOT, "c", shares=30, usage=4.0)
    tree.add_child(a, "a1", shares=1, usage=5.0)
    tree.add_child(a, "a2", shares=2, usage=6.0)
    b1 = tree.add_child(b, "b1", shares=3, usage=7.0)
    tree.add_child(b1, "b11", shares=4, usage=8.0)
    return tree


def names(tree, nodes):
    return [tree.names[node] for node in nodes]


def test_with_root_holds_only_the_root():
    tree = Tree.with_root("TREEROOT", shares=-1, usage=1.5)

    assert ROOT == 0
    assert len(tree) == 1
    assert tree.names == ["TREEROOT"]
    assert tree.parent == [-1]
    assert tree.children == [[]]
    assert tree.shares == [-1]
    assert tree.depth == [0]
    assert tree.usage == [1.5]


def test_add_child_numbers_nodes_in_insertion_order(tree):
    assert len(tree) == 8
    assert tree.names == ["root", "a", "b", "c", "a1", "a2", "b1", "b11"]
    assert tree.parent == [-1, 0, 0, 0, 1, 1, 2, 6]
    assert tree.shares == [-1, 10, 20, 30, 1, 2, 3, 4]
    assert tree.usage == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


def test_add_child_sets_depth_one_below_the_parent(tree):
    assert tree.depth == [0, 1, 1, 1, 2, 2, 2, 3]


def test_children_are_kept_oldest_first(tree):
    assert tree.children[ROOT] == [1, 2, 3]
    assert tree.children[1] == [4, 5]
    assert tree.children[6] == [7]


def test_is_leaf_only_for_nodes_without_children(tree):
    assert [tree.is_leaf(node) for node in range(len(tree))] == [
        False,
        False,
        False,
        True,
        True,
        True,
        False,
        True,
    ]


def test_path_runs_from_the_root_to_the_node_inclusive(tree):
    assert names(tree, tree.path(7)) == ["root", "b", "b1", "b11"]
    assert names(tree, tree.path(3)) == ["root", "c"]


def test_path_of_the_root_is_the_root_alone(tree):
    assert tree.path(ROOT) == [ROOT]


def test_preorder_lists_children_oldest_first_by_default(tree):
    assert names(tree, tree.preorder()) == ["root", "a", "a1", "a2", "b", "b1", "b11", "c"]


def test_preorder_newest_first_reverses_every_sibling_list(tree):
    assert names(tree, tree.preorder(newest_first=True)) == [
        "root",
        "c",
        "b",
        "b1",
        "b11",
        "a",
        "a2",
        "a1",
    ]


def test_preorder_from_a_start_node_covers_only_its_subtree(tree):
    assert names(tree, tree.preorder(2)) == ["b", "b1", "b11"]


def test_levels_group_nodes_by_depth_in_index_order(tree):
    levels = tree.levels()

    assert [level.tolist() for level in levels] == [[0], [1, 2, 3], [4, 5, 6], [7]]
    assert all(level.dtype == np.int64 for level in levels)


def test_levels_of_a_root_only_tree_is_one_level():
    levels = Tree.with_root("r", shares=0, usage=0.0).levels()

    assert [level.tolist() for level in levels] == [[0]]


def test_levels_keep_index_order_when_depths_interleave():
    tree = Tree.with_root("r", shares=0, usage=0.0)
    a = tree.add_child(ROOT, "a", shares=0, usage=0.0)
    tree.add_child(a, "a1", shares=0, usage=0.0)
    tree.add_child(ROOT, "b", shares=0, usage=0.0)
    tree.add_child(a, "a2", shares=0, usage=0.0)

    assert [level.tolist() for level in tree.levels()] == [[0], [1, 3], [2, 4]]


def test_subtree_ends_of_the_fixture_tree(tree):
    order = list(tree.preorder())
    ends = subtree_ends([tree.depth[node] for node in order])

    assert names(tree, order) == ["root", "a", "a1", "a2", "b", "b1", "b11", "c"]
    assert ends == [7, 3, 2, 3, 6, 6, 6, 7]


def test_subtree_ends_of_nothing_and_of_a_root_alone():
    assert subtree_ends([]) == []
    assert subtree_ends([0]) == [0]


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=40))
def test_subtree_ends_span_each_nodes_subtree(parents: list[int]) -> None:
    tree = Tree.with_root("root", shares=-1, usage=1.0)
    for number, parent in enumerate(parents, start=1):
        tree.add_child(parent % number, f"n{number}", shares=1, usage=1.0)
    order = list(tree.preorder(newest_first=True))
    ends = subtree_ends([tree.depth[node] for node in order])

    for place, node in enumerate(order):
        assert order[place : ends[place] + 1] == list(tree.preorder(node, newest_first=True))
