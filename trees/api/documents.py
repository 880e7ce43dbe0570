"""The API's answers as plain data: the pages' selectors' results in the DESIGN §6 fields."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from accounting.models import Job, NodeHistory
from accounting.selectors import OTHER_CHILDREN, HistoryPoint, Trends
from trees.engine.accelerator import NO_RANK, NO_RANK9
from trees.engine.trends import far_over_target, shares_over_time
from trees.explanations import TargetStanding, recovery_sentence
from trees.models import Cluster, Node, NodeKind, ShareChange
from trees.selectors.nodes import node_values
from trees.selectors.standing import RecoveryProjection
from trees.selectors.tree import TreeNode
from trees.serializers import accelerator_fields_document, cluster_node_document, json_number
from trees.views.standing import ClusterStanding, GroupLeafStanding, Standing


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def path_documents(cluster: Cluster, path: Sequence[Node]) -> list[dict[str, Any]]:
    """Each node of a path from the root, in its scheduler's terms."""
    documents = []
    for depth, node in enumerate(path):
        above = path[depth - 1].name if depth and node.kind == NodeKind.USER else node.name
        documents.append(cluster_node_document(cluster, TreeNode(node_values(node), depth, above)))
    return documents


def child_documents(
    cluster: Cluster, node: Node, depth: int, children: Sequence[Node]
) -> list[dict[str, Any]]:
    """A node's children (at `depth` + 1), in their scheduler's terms."""
    return [
        cluster_node_document(
            cluster,
            TreeNode(
                node_values(child),
                depth + 1,
                node.name if child.kind == NodeKind.USER else child.name,
            ),
        )
        for child in children
    ]


def recovery_document(projection: RecoveryProjection) -> dict[str, Any]:
    return {
        "at": [moment.isoformat() for moment in projection.at],
        "fairshare_factor": projection.factors,
        "reaches": projection.reaches,
        "held_by": projection.held_by,
        "sentence": recovery_sentence(projection),
    }


def history_document(
    point: HistoryPoint | NodeHistory, *, accelerator: bool = False
) -> dict[str, Any]:
    """A point of a node's history (a history row has the same fields). An Accelerator group's
    has the FS_* fields the history keeps and null PBS numbers, as its tree document has."""
    pbs = not accelerator
    return {
        "at": point.at.isoformat(),
        "usage": point.usage,
        "fairshare_perc": point.fairshare_perc,
        "fairshare_tree_usage": point.fairshare_tree_usage if pbs else None,
        "usage_perc": point.usage_perc if pbs else None,
        "fairshare_factor": point.fairshare_factor if pbs else None,
        "level_fs": json_number(point.level_fs),
        "fairshare_rank": point.fairshare_rank,
        "accelerator": accelerator_history_fields(point) if accelerator else None,
    }


def accelerator_history_fields(point: HistoryPoint | NodeHistory) -> dict[str, int | None]:
    """The FS_* fields a cycle keeps in history, named as the tree's `accelerator` object
    names them (scaled by 10,000; FS_RANK -1 and FS_RANK9 9,999,999 without a queued job)."""
    rank = point.fs_rank
    return {
        "FS_TARGET": point.fs_target,
        "FS_RUNNING": point.fs_running,
        "FS_RUNNING_COUNT": point.fs_running_count,
        "FS_HISTORY": point.fs_history,
        "FS_RANK": rank,
        "FS_RANK9": None if rank is None else (NO_RANK9 if rank == NO_RANK else rank),
    }


def job_document(job: Job) -> dict[str, Any]:
    return {
        "id": job.pk,
        "job_id": job.job_id,
        "run": job.run,
        "state": job.state,
        "entity": job.entity,
        "node": job.node_id,
        "user": job.user,
        "group": job.group,
        "account": job.account,
        "project": job.project,
        "queue": job.queue,
        "partition": job.partition,
        "ncpus": job.ncpus,
        "ngpus": job.ngpus,
        "nodes": job.nodes,
        "requested_walltime": job.requested_walltime,
        "walltime": job.walltime,
        "cput": job.cput,
        "submitted": iso(job.qtime or job.ctime),
        "eligible": iso(job.etime),
        "start": iso(job.start),
        "end": iso(job.end),
        "exit_status": job.exit_status,
        "usage": job.usage,
    }


def share_change_document(change: ShareChange) -> dict[str, Any]:
    return {
        "id": change.pk,
        "changed_at": change.changed_at.isoformat(),
        "changed_by": change.changed_by.get_username() if change.changed_by else None,
        "node": change.node_id,
        "node_name": change.node_name,
        "old_shares": change.old_shares,
        "new_shares": change.new_shares,
        "old_name": change.old_name or None,
        "old_parent": change.old_parent or None,
        "new_parent": change.new_parent or None,
        "reason": change.reason,
    }


def _target(target: TargetStanding) -> dict[str, str]:
    return {"words": target.words, "tone": target.tone}


def _standing(standing: Standing, *, full: bool) -> dict[str, Any]:
    node = standing.node
    document: dict[str, Any] = {
        "node": node.pk,
        "name": node.name,
        "path": standing.path,
        "fairshare_factor": node.fairshare_factor,
        "level_fs": json_number(node.level_fs),
        "place": standing.place,
        "of": standing.ranked,
        "week_ago": standing.week_ago,
        "change": standing.change,
        "target": _target(standing.target),
    }
    if full:
        document |= {
            "pulled_by": standing.pulled_by or None,
            "recovery": standing.recovery or None,
            "running": [job_document(job) for job in standing.jobs.running],
            "queued": [job_document(job) for job in standing.jobs.queued],
        }
    return document


def _group(group: GroupLeafStanding, *, full: bool) -> dict[str, Any]:
    """An Accelerator group of the person's (or of a member's): its stored FS_* fields."""
    node = group.node
    document: dict[str, Any] = {
        "node": node.pk,
        "name": node.name,
        "said": group.said,
        "accelerator": accelerator_fields_document(node),
    }
    if full:
        document |= {
            "running": [job_document(job) for job in group.jobs.running],
            "queued": [job_document(job) for job in group.jobs.queued],
        }
    return document


def standings_document(scheduler_user: str, standings: Sequence[ClusterStanding]) -> dict[str, Any]:
    return {
        "scheduler_user": scheduler_user,
        "clusters": [
            {
                "cluster": standing.cluster.name,
                "scheduler": standing.cluster.scheduler,
                "usage_unit": standing.unit.name,
                "best": standing.best.node.pk if standing.best else None,
                "mine": [_standing(mine, full=True) for mine in standing.mine],
                "members": [_standing(member, full=False) for member in standing.members],
                "groups": [_group(group, full=True) for group in standing.groups],
                "groups_best": standing.groups_best.node.pk if standing.groups_best else None,
                "group_members": [_group(member, full=False) for member in standing.group_members],
            }
            for standing in standings
        ],
    }


def trends_document(node: Node, span: str, trends: Trends) -> dict[str, Any]:
    """What the trends page draws: each child's decayed usage, its share of its siblings'
    usage and its target share at each moment; who ran far over target; the top consumers."""
    usage, perc = trends.series()
    usage_shares = shares_over_time(usage)
    target_shares = shares_over_time(perc)
    others = trends.others
    return {
        "node": node.pk,
        "range": span,
        "at": [moment.isoformat() for moment in trends.at],
        "children": [
            {
                "id": child.pk,
                "name": child.name,
                "target_share": child.group_perc,
                "usage": child.usage,
                "usage_share": trends.usage_share(child),
                "series": {
                    "usage": trends.usage[child.pk],
                    "usage_share": usage_shares[child.pk],
                    "target_share": target_shares[child.pk],
                },
            }
            for child in trends.children
        ],
        "others": None
        if others is None
        else {
            "count": others.count,
            "target_share": others.group_perc,
            "usage": others.usage,
            "usage_share": trends.usage_share(others),
            "series": {
                "usage": others.series_usage,
                "usage_share": usage_shares[OTHER_CHILDREN],
                "target_share": target_shares[OTHER_CHILDREN],
            },
        },
        "far_over_target": [
            {
                "id": over.child,
                "usage_share": over.usage_share,
                "target_share": over.target_share,
                "times": over.times,
            }
            for over in far_over_target(usage_shares, target_shares)
            if over.child != OTHER_CHILDREN  # a sum of many is no one child far over
        ],
        "top": [row.document() for row in trends.top],
    }
