"""Where entities stand: their places among all of a cluster's, and how a node recovers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from trees.engine.pbs import PbsTree
from trees.engine.ranking import EntityRanking, RankedNode, pbs_ranking, slurm_ranking
from trees.engine.recovery import decay_dates, pbs_recovery
from trees.models import Cluster, Node, NodeOrigin, Scheduler
from trees.selectors.pbs import pbs_tree_get


def entity_ranking_get(*, cluster: Cluster) -> EntityRanking:
    """PBS: every entity (a leaf of the tree) in the order pbsfs -c puts them, from the stored
    metrics; Slurm: each user association's place in Fair Tree's ranking as slurmctld left it."""
    rows = Node.objects.filter(cluster=cluster).values_list(
        "id", "parent_id", "name", "origin", "fairshare_perc", "usage", "fairshare_rank",
        "fairshare_rank_of",
    )  # fmt: skip
    scheduler_made = NodeOrigin.SCHEDULER.value
    nodes = [
        RankedNode(pk, parent, name, origin == scheduler_made, perc, usage, rank, rank_of)
        for pk, parent, name, origin, perc, usage, rank, rank_of in rows
    ]
    if cluster.scheduler == Scheduler.SLURM:
        return slurm_ranking(nodes)
    return pbs_ranking(nodes)


@dataclass(frozen=True)
class RecoveryProjection:
    """A PBS node's factor if its entities stop running, at each coming decay."""

    at: list[datetime]  # now, then each decay
    factors: list[float]
    reaches: int | None  # decays until the factor is 0.5 or more; None: never
    held_by: str | None  # the ancestor that keeps it under 0.5, when it never gets there
    no_target: bool = False  # its target share is 0: the factor is 0 whatever the usage


def recovery_get(
    *, cluster: Cluster, node: Node, now: datetime, pbs: PbsTree | None = None
) -> RecoveryProjection:
    """With no further usage by the node's entities, its factor at each decay to come (the
    decay policy's interval and factor; the rest of the tree as it is). `pbs`: the cluster's
    tree as pbsfs reads it, when the caller projects several nodes of it."""
    if pbs is None:
        pbs = pbs_tree_get(cluster=cluster)
    index = pbs.find(node.name)
    if index is None:
        raise LookupError(f"{node.name} is not in the tree pbsfs reads")
    recovery = pbs_recovery(pbs, index, cluster.decay_factor)
    at = decay_dates(
        now=now,
        last_decay=cluster.last_decay,
        interval=cluster.decay_interval,
        decays=len(recovery.factors) - 1,
    )
    factors = recovery.factors[: len(at)]
    held = pbs.name(recovery.held_by) if recovery.held_by is not None else None
    no_target = node.fairshare_perc <= 0
    reaches = recovery.reaches if recovery.reaches is None or recovery.reaches < len(at) else None
    return RecoveryProjection(at, factors, reaches, held, no_target)
