"""The API's representation of clusters and nodes (DESIGN §6 field names)."""

from __future__ import annotations

from typing import Any

from trees.models import Cluster
from trees.selectors import TreeNode


def cluster_document(cluster: Cluster) -> dict[str, Any]:
    return {
        "name": cluster.name,
        "scheduler": cluster.scheduler,
        "fairshare_usage_res": cluster.fairshare_usage_res,
        "fairshare_entity": cluster.fairshare_entity,
        "decay_interval": cluster.decay_interval.total_seconds(),
        "decay_factor": cluster.decay_factor,
        "unknown_shares": cluster.unknown_shares,
        "last_decay": cluster.last_decay.isoformat() if cluster.last_decay else None,
        "metrics_updated_at": (
            cluster.metrics_updated_at.isoformat() if cluster.metrics_updated_at else None
        ),
    }


def node_document(item: TreeNode) -> dict[str, Any]:
    """One node: PBS values as PBS holds them (float32 percentages as exact doubles)."""
    node = item.node
    return {
        "id": node.pk,
        "name": node.name,
        "kind": node.kind,
        "parent": node.parent_id,
        "depth": item.depth,
        "shares": node.shares,
        "fairshare_perc": node.fairshare_perc,
        "usage": node.usage,
        "usage_perc": node.usage_perc,
        "fairshare_tree_usage": node.fairshare_tree_usage,
        "fairshare_factor": node.fairshare_factor,
        "level_fs": None,
        "fairshare_rank": None,
    }


def tree_document(cluster: Cluster, nodes: list[TreeNode]) -> dict[str, Any]:
    return {"cluster": cluster_document(cluster), "nodes": [node_document(n) for n in nodes]}
