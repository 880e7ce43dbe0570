"""tree.json's answers for whole-tree readers, from the cluster's TreeJsonRow rows."""

from __future__ import annotations

from trees.models import Cluster, TreeJsonRow


def tree_json_documents_get(*, cluster: Cluster, top: int | None, levels: int) -> list[str] | None:
    """What subtree_get finds, as tree.json documents for whole-tree readers (JSON texts, from
    the cluster's TreeJsonRow rows); None when those are not of the tree as stored (their task
    has not run since the last store) or hold no node `top` (default: the root). Two queries."""
    if not cluster.tree_json_current:
        return None
    listed = TreeJsonRow.objects.filter(cluster=cluster)
    listed = listed.filter(node_id=top) if top is not None else listed.filter(place=0)
    found = listed.values_list("place", "last", "depth").first()
    if found is None:
        return None
    place, last, depth = found
    return list(
        TreeJsonRow.objects.filter(
            cluster=cluster, place__range=(place, last), depth__lte=depth + levels
        )
        .order_by("place")
        .values_list("document", flat=True)
    )
