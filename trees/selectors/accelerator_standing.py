"""Where Altair Accelerator FairShare groups stand, as the last cycle stored them: each group's
FS_* fields with what they come from (its parent, its active siblings' weight, the machine's
running jobs, how many groups are ranked), for the pages' sentences; and a person's leaves.

A job submitted to group G by user U runs in the leaf `G.U` (trees.engine.accelerator.parent_of),
a Node of kind user whose name is that full path: the user is what follows the last dot of the
path's last name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Max, Q, Sum

from trees.engine.accelerator import NO_RANK
from trees.models import Cluster, Node, NodeKind
from trees.selectors.nodes import descendant_ids_get


def leaf_user(path: str) -> str:
    """The user of a leaf `G.U` ("/class/vcs.u5" is u5's); "" when the last name has no dot."""
    base, dot, user = path.rpartition("/")[2].rpartition(".")
    return user if dot and base else ""


def user_leaf_ids_get(*, cluster: Cluster, user: str) -> frozenset[int]:
    """The leaves `G.user` of an Accelerator cluster: every group where that user's jobs run."""
    if not user or "/" in user or "." in user:  # not a name that ends a leaf's path
        return frozenset()
    rows = Node.objects.filter(cluster=cluster, kind=NodeKind.USER, name__endswith=f".{user}")
    return frozenset(pk for pk, name in rows.values_list("id", "name") if leaf_user(name) == user)


def user_leaf_ids_under_get(*, ids: Iterable[int]) -> frozenset[int]:
    """The users' leaves below these groups (a manager's members)."""
    below = descendant_ids_get(ids)
    rows = Node.objects.filter(id__in=below, kind=NodeKind.USER)
    return frozenset(rows.values_list("id", flat=True))


@dataclass(frozen=True)
class GroupStanding:
    """A group's stored fields and what its sentences need beside them."""

    node: Node
    parent: Node | None  # None for the root
    active_weight: int  # the weight of its parent's active children, itself included if active
    machine_running: int  # every job running on the machine (the root's FS_RUNNING_COUNT)
    ranked: int  # the groups holding queued jobs, which FS_RANK orders

    @property
    def user(self) -> str:
        """The user of a leaf `G.U`; "" for a group."""
        return leaf_user(self.node.name) if self.node.kind == NodeKind.USER else ""

    @property
    def local_target(self) -> float:
        """Its weight's part of its active siblings' (a fraction; the root's is 1)."""
        if self.parent is None:
            return 1.0
        if not self.node.fs_active or not self.active_weight:
            return 0.0
        return (self.node.shares or 0) / self.active_weight


def group_standings_get(*, cluster: Cluster, ids: Iterable[int]) -> list[GroupStanding]:
    """The standing of the cluster's nodes of these ids, in dispatch order: FS_RANK from 0,
    then those without a queued job, by path (three queries whatever their number)."""
    nodes = sorted(
        Node.objects.filter(cluster=cluster, id__in=list(ids)).select_related("parent"),
        key=_dispatch_order,
    )
    if not nodes:
        return []
    weights = dict(
        Node.objects.filter(parent_id__in={node.parent_id for node in nodes}, fs_active=True)
        .values("parent_id")
        .annotate(total=Sum("shares"))
        .values_list("parent_id", "total")
    )
    totals = Node.objects.filter(cluster=cluster).aggregate(
        machine=Max("fs_running_count", filter=Q(parent__isnull=True)),
        ranked=Count("id", filter=Q(fs_rank__gt=NO_RANK)),
    )
    return [
        GroupStanding(
            node=node,
            parent=node.parent,
            active_weight=(weights.get(node.parent_id) or 0) if node.parent_id is not None else 0,
            machine_running=totals["machine"] or 0,
            ranked=totals["ranked"],
        )
        for node in nodes
    ]


def _dispatch_order(node: Node) -> tuple[bool, int, str]:
    """FS_RANK from 0 first, then the groups without a queued job (-1), by path."""
    rank = NO_RANK if node.fs_rank is None else node.fs_rank
    return (rank == NO_RANK, rank, node.name)
