"""The tree in the scheduler's order: whole, a node's subtree some levels deep, or the nodes a
search finds with their ancestors."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import Count

from trees.models import Cluster, Node, NodeKind, NodeOrigin, Scheduler
from trees.selectors.nodes import (
    NodeValues,
    ancestor_ids_get,
    node_path_get,
    node_values,
    node_values_get,
)


class TreeNode(NamedTuple):
    node: NodeValues
    depth: int
    account: str = ""  # the node's own name; a user's parent (Slurm: the user's account)


def tree_get(*, cluster: Cluster) -> list[TreeNode]:
    """Every node, root first, each before its children; siblings in the scheduler's order.

    PBS lists children newest first: resource_group entries in reverse definition order, and
    the entities it met in usage before them, newest record first. Slurm lists users first,
    then accounts, each by name.
    """
    # Unsorted: _in_tree_order orders them (the model's order joins the cluster to sort).
    nodes = node_values_get(Node.objects.filter(cluster=cluster).order_by())
    return _in_tree_order(cluster, nodes, [n for n in nodes if n.parent_id is None], 0, "")


def _in_tree_order(
    cluster: Cluster, nodes: list[NodeValues], tops: list[NodeValues], depth: int, account: str
) -> list[TreeNode]:
    """`tops` and their descendants among `nodes`, each before its children, siblings in the
    scheduler's order (tree_get's)."""
    children: dict[int | None, list[NodeValues]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    newest_first = cluster.scheduler == Scheduler.PBS  # Slurm: sshare's order, kept in position
    usage = NodeOrigin.USAGE.value
    for kids in children.values():
        kids.sort(key=lambda n: (n.origin == usage, n.position, n.id), reverse=newest_first)
    ordered: list[TreeNode] = []
    user = NodeKind.USER.value
    stack = [(top, depth, account if top.kind == user else top.name) for top in reversed(tops)]
    while stack:
        node, level, above = stack.pop()
        ordered.append(TreeNode(node, level, above))
        below = children.get(node.id)
        if below:
            stack.extend(
                (kid, level + 1, node.name if kid.kind == user else kid.name)
                for kid in reversed(below)
            )
    return ordered


@dataclass(frozen=True)
class Subtree:
    nodes: list[TreeNode]  # the top, then its descendants in tree order
    children: dict[int, int]  # how many children each node has (loaded or not)
    above: list[int]  # the ids from the root down to the top's parent


def _with_child_counts(
    cluster: Cluster,
    nodes: list[NodeValues],
    top: NodeValues,
    above: list[Node],
    counts: dict[int, int] | None = None,
) -> Subtree:
    """`nodes` from `top` down in tree order, with their child counts; `above` is the top's
    path from the root, the top excluded."""
    account = above[-1].name if above else ""
    if counts is None:
        counts = dict(
            Node.objects.filter(parent_id__in=[node.id for node in nodes])
            .values("parent_id")
            .annotate(count=Count("id"))
            .values_list("parent_id", "count")
        )
    ordered = _in_tree_order(cluster, nodes, [top], len(above), account)
    children = {item.node.id: counts.get(item.node.id, 0) for item in ordered}
    return Subtree(ordered, children, [step.pk for step in above])


MATCHES_SHOWN = 50


def nodes_named_get(
    *,
    cluster: Cluster,
    text: str,
    among: frozenset[int] | None = None,
    limit: int = MATCHES_SHOWN,
) -> Subtree:
    """The nodes whose name contains `text` (case aside; the first `limit` by name), with
    every ancestor, from the root (one query a level). `among`: the only nodes that may match
    (what a reader of part of the tree sees), so that a hidden node answers as a name that
    does not exist, ancestors and limit included."""
    found = Node.objects.filter(cluster=cluster, name__icontains=text)
    if among is not None:
        found = found.filter(pk__in=among)
    matches = node_values_get(found.order_by("name", "id")[:limit])
    above = ancestor_ids_get([node.id for node in matches]) - {node.id for node in matches}
    nodes = matches + node_values_get(Node.objects.filter(pk__in=above).order_by())
    root = next((node for node in nodes if node.parent_id is None), None)
    if root is None:
        return Subtree([], {}, [])
    return _with_child_counts(cluster, nodes, root, [])


def subtree_get(*, cluster: Cluster, top: Node | None = None, levels: int = 2) -> Subtree:
    """A node (default: the root) and its descendants `levels` deep: what a tree view shows
    before the person opens deeper nodes (one query a level, and one for the deepest level's
    child counts)."""
    if top is None:
        top = Node.objects.get(cluster=cluster, parent__isnull=True)
    first = node_values(top)
    nodes, frontier, previous = [first], [top.pk], [top.pk]
    counts: Counter[int] = Counter()
    for _ in range(levels):
        kids = node_values_get(
            Node.objects.filter(cluster=cluster, parent_id__in=frontier).order_by()
        )
        counts.update(kid.parent_id for kid in kids if kid.parent_id is not None)
        if not kids:
            break
        nodes += kids
        previous, frontier = frontier, [kid.id for kid in kids]
    else:
        # The deepest level's counts, found by its parents' ids (a few) rather than its own
        # (thousands).
        counts.update(
            dict(
                Node.objects.filter(parent__parent_id__in=previous)
                .order_by()
                .values("parent_id")
                .annotate(count=Count("id"))
                .values_list("parent_id", "count")
            )
        )
    return _with_child_counts(cluster, nodes, first, node_path_get(node=top)[:-1], counts)
