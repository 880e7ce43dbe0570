"""The API's representation of clusters and nodes (DESIGN §6 field names)."""

from __future__ import annotations

import math
from typing import Any, Protocol

from trees.engine.accelerator import NO_RANK, NO_RANK9
from trees.engine.slurm import Algorithm
from trees.models import Cluster, NodeKind, Scheduler
from trees.selectors.tree import TreeNode


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
        **(_slurm_policy(cluster) if cluster.scheduler == Scheduler.SLURM else {}),
        **(_accelerator_policy(cluster) if cluster.scheduler == Scheduler.ACCELERATOR else {}),
    }


def _accelerator_policy(cluster: Cluster) -> dict[str, Any]:
    return {
        "fairshare_relative": cluster.fairshare_relative,
        "fairshare_relative_alpha": cluster.fairshare_relative_alpha,
        "scheduler_iteration": cluster.scheduler_iteration.total_seconds(),
    }


def _slurm_policy(cluster: Cluster) -> dict[str, Any]:
    return {
        "fairshare_algorithm": cluster.fairshare_algorithm,
        "fairshare_dampening_factor": cluster.fairshare_dampening_factor,
        "priority_decay_half_life": cluster.priority_decay_half_life.total_seconds(),
        "priority_calc_period": cluster.priority_calc_period.total_seconds(),
        "priority_usage_reset_period": cluster.priority_usage_reset_period,
        "charge_job_end": cluster.charge_job_end,
    }


def json_number(value: float | None) -> float | str | None:
    """A double for JSON, which has no infinity: `inf` is written as sshare prints it."""
    if value is None or math.isfinite(value):
        return value
    return "inf" if value > 0 else "-inf"


def _node_fields(item: TreeNode) -> dict[str, Any]:
    """What every scheduler's node has: place in the tree, shares, target share, usage."""
    node = item.node
    return {
        "id": node.id,
        "name": node.name,
        "kind": node.kind,
        "parent": node.parent_id,
        "depth": item.depth,
        "shares": node.shares,
        "fairshare_perc": node.fairshare_perc,
        "usage": node.usage,
    }


def slurm_node_document(item: TreeNode, algorithm: str) -> dict[str, Any]:
    """One association: Slurm's values; the PBS-only metrics are null."""
    node = item.node
    ranked = node.fairshare_rank is not None
    fairshare = node.fairshare_factor if ranked or Algorithm(algorithm).classic else None
    return {
        **_node_fields(item),
        "usage_perc": None,
        "fairshare_tree_usage": None,
        "fairshare_factor": fairshare,
        "level_fs": json_number(node.level_fs),
        "fairshare_rank": (
            {"rank": node.fairshare_rank, "of": node.fairshare_rank_of} if ranked else None
        ),
        "slurm": {
            "account": item.account,
            "user": node.name if node.kind == NodeKind.USER else None,
            "raw_shares": (
                None if node.parent_id is None else "parent" if node.shares_parent else node.shares
            ),
            "norm_shares": node.norm_shares,
            "raw_usage": int(node.usage),
            "norm_usage": node.norm_usage,
            "effectv_usage": node.effectv_usage,
            "fairshare": fairshare,
            # sshare prints a `parent` association's LevelFS blank (its own is its parent's).
            "level_fs": None if node.shares_parent else json_number(node.level_fs),
        },
    }


def node_document(item: TreeNode) -> dict[str, Any]:
    """One node: PBS values as PBS holds them (float32 percentages as exact doubles)."""
    node = item.node
    return {
        **_node_fields(item),
        "usage_perc": node.usage_perc,
        "fairshare_tree_usage": node.fairshare_tree_usage,
        "fairshare_factor": node.fairshare_factor,
        "level_fs": None,
        "fairshare_rank": None,
    }


def accelerator_node_document(item: TreeNode) -> dict[str, Any]:
    """One FairShare group: its FS_* fields (scaled by 10,000, as Accelerator's job fields are)
    and what they come from; `fairshare_perc` is its target unscaled, `usage` its running jobs,
    `shares` its weight; the PBS and Slurm metrics are null."""
    return {
        **_node_fields(item),
        "usage_perc": None,
        "fairshare_tree_usage": None,
        "fairshare_factor": None,
        "level_fs": None,
        "fairshare_rank": None,
        "accelerator": accelerator_fields_document(item.node),
    }


class _FsValues(Protocol):
    """A group's stored FS_* values: a Node or a NodeValues row."""

    @property
    def fs_target(self) -> int | None: ...
    @property
    def fs_running(self) -> int | None: ...
    @property
    def fs_running_count(self) -> int | None: ...
    @property
    def fs_excess_running(self) -> int | None: ...
    @property
    def fs_excess_running_local(self) -> int | None: ...
    @property
    def fs_history(self) -> int | None: ...
    @property
    def fs_excess_history(self) -> int | None: ...
    @property
    def fs_rank(self) -> int | None: ...
    @property
    def fs_active(self) -> bool | None: ...
    @property
    def fs_window_effective(self) -> int | None: ...
    @property
    def fs_window(self) -> int | None: ...
    @property
    def fs_distance(self) -> float | None: ...


def accelerator_fields_document(node: _FsValues) -> dict[str, Any]:
    """A group's FS_* fields as stored, and what they come from (the API's `accelerator`)."""
    rank = node.fs_rank
    return {
        "FS_TARGET": node.fs_target,
        "FS_RUNNING": node.fs_running,
        "FS_RUNNING_COUNT": node.fs_running_count,
        "FS_EXCESS_RUNNING": node.fs_excess_running,
        "FS_EXCESS_RUNNING_LOCAL": node.fs_excess_running_local,
        "FS_HISTORY": node.fs_history,
        "FS_EXCESS_HISTORY": node.fs_excess_history,
        "FS_RANK": rank,
        "FS_RANK9": None if rank is None else (NO_RANK9 if rank == NO_RANK else rank),
        "active": node.fs_active,
        "window": node.fs_window_effective,
        "window_set": node.fs_window,
        "distance": json_number(node.fs_distance),
    }


def cluster_node_document(cluster: Cluster, item: TreeNode) -> dict[str, Any]:
    """One node, in its cluster's scheduler's terms."""
    if cluster.scheduler == Scheduler.SLURM:
        return slurm_node_document(item, cluster.fairshare_algorithm)
    if cluster.scheduler == Scheduler.ACCELERATOR:
        return accelerator_node_document(item)
    return node_document(item)


def tree_json_document(
    cluster: Cluster, item: TreeNode, *, children: int, opens: bool
) -> dict[str, Any]:
    """A node as tree.json lists it: its document, how many children it has (0 to a reader
    who may not open it) and whether the reader may open it."""
    document = cluster_node_document(cluster, item)
    document["children"] = children if opens else 0
    document["opens"] = opens
    return document


def tree_document(cluster: Cluster, nodes: list[TreeNode]) -> dict[str, Any]:
    return {
        "cluster": cluster_document(cluster),
        "nodes": [cluster_node_document(cluster, item) for item in nodes],
    }
