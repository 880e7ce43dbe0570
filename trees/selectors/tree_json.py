"""tree.json's answers (the pages' and the API's tree): from the cluster's TreeJsonRow rows for
whole-tree readers, else built from the nodes as far as the person may see them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trees.access import Access, visible_ids_get
from trees.models import Cluster, Node, TreeJsonRow
from trees.selectors.clusters import cluster_node_get
from trees.selectors.nodes import NodeValues
from trees.selectors.tree import Subtree, nodes_named_get, subtree_get
from trees.serializers import tree_json_document

EVERY_LEVEL = 10**6  # deeper than any tree


def tree_json_documents_get(
    *,
    cluster: Cluster,
    top: int | None,
    levels: int,
    max_depth: int | None = None,
    start: int = 0,
    limit: int | None = None,
) -> list[str] | None:
    """What subtree_get finds, as tree.json documents for whole-tree readers (JSON texts, from
    the cluster's TreeJsonRow rows), no deeper than `max_depth` (the root is depth 0), from
    the `start`th on and `limit` at most; None when those are not of the tree as stored (their
    task has not run since the last store) or hold no node `top` (default: the root). Two
    queries."""
    if not cluster.tree_json_current:
        return None
    listed = TreeJsonRow.objects.filter(cluster=cluster)
    listed = listed.filter(node_id=top) if top is not None else listed.filter(place=0)
    found = listed.values_list("place", "last", "depth").first()
    if found is None:
        return None
    place, last, depth = found
    deepest = depth + levels if max_depth is None else min(depth + levels, max_depth)
    rows = (
        TreeJsonRow.objects.filter(cluster=cluster, place__range=(place, last), depth__lte=deepest)
        .order_by("place")
        .values_list("document", flat=True)
    )
    return list(rows[start:] if limit is None else rows[start : start + limit])


@dataclass(frozen=True)
class TreeAnswer:
    """The nodes of a tree answer: encoded already (`listed`, from the listing) or as
    documents to encode."""

    listed: list[str] | None
    documents: list[dict[str, Any]]
    more: bool = False  # a limit left nodes out after these


def tree_answer_get(
    *,
    cluster: Cluster,
    access: Access,
    text: str | None,
    top_id: int | None,
    levels: int,
    max_depth: int | None = None,
    start: int = 0,
    limit: int | None = None,
) -> TreeAnswer:
    """A node (`top_id`, default: the root) and its descendants `levels` deep, or the nodes
    whose name contains `text` with their ancestors; none deeper than `max_depth`; as far as
    the person may see them, each with its number of children, to open on demand; in tree
    order, from the `start`th on and `limit` at most. Node.DoesNotExist: no node `top_id`
    that they may see."""
    beyond = None if limit is None else limit + 1  # one more says whether more follow
    if access.whole_tree and text is None:  # the listing of the tree as stored
        listed = tree_json_documents_get(
            cluster=cluster, top=top_id, levels=levels, max_depth=max_depth, start=start,
            limit=beyond,
        )  # fmt: skip
        if listed is not None:
            return TreeAnswer(listed[:limit], [], len(listed) > len(listed[:limit]))
    if text is not None:
        subtree = nodes_named_get(cluster=cluster, text=text, among=visible_ids_get(access=access))
    else:
        top = cluster_node_get(cluster=cluster, node_id=top_id) if top_id else None
        subtree = subtree_get(cluster=cluster, top=top, levels=levels)
    documents = _documents(cluster, access, subtree, text is not None, max_depth)
    shown = documents[start:] if beyond is None else documents[start : start + beyond]
    return TreeAnswer(None, shown[:limit], len(shown) > len(shown[:limit]))


def _documents(
    cluster: Cluster, access: Access, subtree: Subtree, searched: bool, max_depth: int | None
) -> list[dict[str, Any]]:
    if not subtree.nodes:
        return []
    if access.whole_tree:  # every node shows and opens: no path to weigh (trees of 10,000+)
        shown = [(item, True) for item in subtree.nodes]
    else:
        paths = _paths(subtree.above, [item.node for item in subtree.nodes])
        if not searched and not access.sees(paths[subtree.nodes[0].node.id]):
            raise Node.DoesNotExist("no such node")
        shown = [
            (item, access.opens(paths[item.node.id]))
            for item in subtree.nodes
            if access.sees(paths[item.node.id])
        ]
    return [
        tree_json_document(cluster, item, children=subtree.children[item.node.id], opens=opens)
        for item, opens in shown
        if max_depth is None or item.depth <= max_depth
    ]


def _paths(above: list[int], nodes: list[NodeValues]) -> dict[int, list[int]]:
    """The ids from the root to each node of a subtree, given the ids above its top."""
    top = nodes[0]
    paths = {top.id: [*above, top.id]}
    for node in nodes:  # in tree order: a parent before its children
        if node.id not in paths and node.parent_id in paths:
            paths[node.id] = [*paths[node.parent_id], node.id]
    return paths
