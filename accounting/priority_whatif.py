"""What would change a waiting job's place: "if its entity ran nothing more, after the next
decay it would be Nth". PBS only: the entity's usage decays once (× decay_factor, floor 1, as
pbsfs -d), everyone else's stays as it is, the tree's metrics are recomputed in memory by the
engine (trees.engine.pbs.compute, as the recovery projection does) and the queue is ordered
again at that decay's time with the new standings (trees.engine.job_sort). Nothing is saved.

Slurm's FairShare is a rank among all users that every pass recomputes with everyone's decayed
usage: one user's decay alone says little, so Slurm gets no projection.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from accounting.job_priority import priorities_at
from accounting.priorities import NodeStandings, pbs_order, queue_order_get, queued_rows_get
from trees.engine.job_sort import Entities
from trees.engine.pbs import FAIRSHARE_MIN_USAGE, PbsMetrics, PbsTree, compute, f32
from trees.engine.recovery import decay_dates
from trees.models import Cluster, Node, Scheduler
from trees.selectors.pbs import pbs_tree_get

SLURM_NOT_PROJECTED = (
    "Slurm's FairShare is a rank among all users that every pass recomputes from everyone's"
    " usage: no projection is made for it."
)


@dataclass(frozen=True)
class PriorityWhatIf:
    """A job's place now and after the next decay if its entity ran nothing more."""

    job_id: str
    entity: str
    supported: bool  # False: Slurm, or an entity the tree pbsfs reads does not hold
    reason: str  # why there is no projection, when there is none
    decay_at: datetime | None
    position_now: int | None
    position: int | None  # after the decay; None: held, or no projection
    queue_position: int | None
    priority: float | None
    waiting: int  # jobs the scheduler would consider then


def priority_whatif_get(*, cluster: Cluster, job_id: str, now: datetime) -> PriorityWhatIf | None:
    """The projection for the queued job of that id (None when no such job waits)."""
    rows = queued_rows_get(cluster=cluster)
    mine = rows.find(job_id)
    if mine is None:
        return None
    entity = mine["entity"]
    if cluster.scheduler != Scheduler.PBS:
        return _none(job_id, entity, SLURM_NOT_PROJECTED)
    found = queue_order_get(cluster=cluster, at=priorities_at(cluster, now)).find(job_id)
    if found is None or found.position is None:
        return _none(job_id, entity, "The job is held: the scheduler does not consider it.")
    decay_at = decay_dates(
        now=now, last_decay=cluster.last_decay, interval=cluster.decay_interval, decays=1
    )[1:]
    node = Node.objects.filter(cluster=cluster, pk=mine["node_id"]).first()
    pbs = pbs_tree_get(cluster=cluster)
    index = pbs.find(node.name) if node is not None else None
    if index is None or not decay_at:
        return _none(job_id, entity, f"{entity} is not in the tree PBS reads: no projection.")
    metrics = decayed_once(pbs, index, cluster.decay_factor)
    then = pbs_order(cluster, decay_at[0], rows, standings_of(cluster, pbs, metrics))
    moved = then.find(job_id)
    assert moved is not None
    return PriorityWhatIf(
        job_id=job_id,
        entity=entity,
        supported=True,
        reason="",
        decay_at=decay_at[0],
        position_now=found.position,
        position=moved.position,
        queue_position=moved.queue_position,
        priority=moved.priority,
        waiting=len(then.ordered),
    )


def _none(job_id: str, entity: str, reason: str) -> PriorityWhatIf:
    return PriorityWhatIf(job_id, entity, False, reason, None, None, None, None, None, 0)


def decayed_once(pbs: PbsTree, node: int, decay_factor: float) -> PbsMetrics:
    """The tree's metrics after one decay of the leaves under `node` (pbsfs -d on them alone:
    usage × the float32 factor, floor 1), the rest of the usage as it is; the change reaches
    the ancestors as a re-read of the usage file would (a leaf back at 1 adds nothing), as in
    trees.engine.recovery.pbs_recovery."""
    tree = pbs.tree
    factor = f32(decay_factor)
    for leaf in [n for n in tree.preorder(node) if tree.is_leaf(n)]:
        old = tree.usage[leaf]
        new = max(FAIRSHARE_MIN_USAGE, old * factor)
        change = _counted(new) - _counted(old)
        tree.usage[leaf] = new
        for ancestor in tree.path(leaf)[:-1]:
            tree.usage[ancestor] += change
    return compute(pbs)


def _counted(usage: float) -> float:
    return 0.0 if usage == FAIRSHARE_MIN_USAGE else usage


def standings_of(cluster: Cluster, pbs: PbsTree, metrics: PbsMetrics) -> NodeStandings:
    """Each stored node's standing as the scheduler would hold it with these metrics (nodes by
    name: PBS names are unique in a cluster)."""
    tree = pbs.tree
    rows = {}
    for pk, name in Node.objects.filter(cluster=cluster).values_list("id", "name"):
        index = pbs.find(name)
        if index is not None:
            rows[pk] = index
    entities = Entities.of_tree(
        np.asarray(tree.parent, dtype=np.int64),
        metrics.fairshare_perc.astype(np.float64),
        metrics.fairshare_tree_usage.astype(np.float64),
        metrics.usage,
    )
    return NodeStandings(rows, entities)
