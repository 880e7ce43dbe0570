"""Reads for "why is my job waiting": one queued job's priority explained (its place, the jobs
ahead of it, its fairshare term against the best it could be, the level of its entity's path
furthest over target, its history), a cluster's queue, and a person's own jobs.

The priorities themselves are accounting.priorities' (the scheduler's rules, at a moment);
this module only reads around them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from accounting.models import Job, JobPriorityHistory
from accounting.parsers.records import JobState
from accounting.priorities import (
    QueuedJob,
    QueueOrder,
    job_sort_formula_parse,
    priority_history_get,
    queue_order_get,
)
from accounting.selectors import cycle_slot_of
from trees.engine.formula import FormulaError, FormulaValueError, describe_terms
from trees.engine.ranking import furthest_over_target
from trees.models import Cluster, Node, Scheduler
from trees.selectors.nodes import node_path_by_id_get, node_path_get
from trees.selectors.priority_config import multifactor_config_get

# What a term of job_sort_formula must read to move with the entity's usage; fairshare_perc
# alone is its target, which running less does not change.
_FAIRSHARE_NAME = re.compile(r"\bfairshare_(?:tree_usage|factor)\b")
# The fairshare inputs of an entity that has used nothing: all of the tree's usage is others'.
BEST_FAIRSHARE = {"fairshare_tree_usage": 0.0, "fairshare_factor": 1.0}
SLURM_FAIRSHARE = "fairshare"  # Slurm's weighted factor, as QueuedJob.terms names it


@dataclass(frozen=True)
class Ahead:
    """The jobs the scheduler considers before one: how many, and what they ask for."""

    jobs: int
    cores: int
    core_hours: float  # requested cores × requested walltime

    def document(self) -> dict[str, float]:
        return {"jobs": self.jobs, "cores": self.cores, "core_hours": self.core_hours}


@dataclass(frozen=True)
class FairshareTerm:
    """The part of a job's priority its entity's fairshare standing gives, against the most
    it could give: PBS, the job_sort_formula terms reading fairshare_tree_usage or
    fairshare_factor, evaluated again with the best inputs (tree usage 0, factor 1); Slurm,
    the weighted FairShare factor against PriorityWeightFairShare (a FairShare of 1.0)."""

    term: str  # the terms' text as the formula writes them; Slurm: "fairshare"
    value: float
    best: float


@dataclass(frozen=True)
class OverTarget:
    """The level of the entity's path furthest over its target, and by how much: PBS, its
    share of the machine's decayed usage over its target share; Slurm, its share of its
    siblings' usage over its share of their shares (1 / Level FS)."""

    node: Node
    ratio: float | None  # None where the ratio has no finite value


@dataclass(frozen=True)
class JobPriority:
    """One queued job with everything its page explains."""

    order: QueueOrder
    job: QueuedJob
    node: Node | None  # its entity's leaf, when the tree has it
    path: list[Node]  # from the root down to that leaf; empty without one
    in_queue: int  # jobs the scheduler considers in the job's queue
    ahead: Ahead
    fairshare: FairshareTerm | None
    over: OverTarget | None
    history: list[JobPriorityHistory] = field(default_factory=list)

    @property
    def path_ids(self) -> list[int]:
        return [step.pk for step in self.path]

    @property
    def waiting(self) -> int:
        """The jobs the scheduler considers (held ones aside)."""
        return len(self.order.ordered)

    @property
    def slurm(self) -> bool:
        return self.order.cluster.scheduler == Scheduler.SLURM


@dataclass(frozen=True)
class QueuedRow:
    """Who a waiting job is: what says whether a person may read it."""

    job_id: str
    user: str
    path: list[int]  # its entity's node ids from the root; empty when the tree lacks it


def queued_row_get(*, cluster: Cluster, job_id: str) -> QueuedRow | None:
    """The cluster's waiting job of that id, if any (the partial index of the running and
    queued rows finds it), with its entity's path (one query, whatever its depth). The path
    is looked up for a job that does not wait too, as for no node (id 0): a job hidden from
    the person and a missing one then cost the same queries."""
    row = (
        Job.objects.filter(cluster=cluster, job_id=job_id, state=JobState.QUEUED)
        .values_list("user", "node_id")
        .first()
    )
    user, node_id = row if row is not None else ("", None)
    path = node_path_by_id_get(node_id=node_id or 0, cluster=cluster)
    if row is None:
        return None
    return QueuedRow(job_id, user, [step.pk for step in path])


def priorities_at(cluster: Cluster, now: datetime) -> datetime:
    """When the priorities read at `now` are computed: at the cycle `now` falls in, as the
    scheduler computes them once a cycle (the cycles write the history at the same
    instants), so that every answer within a cycle is the same."""
    return cycle_slot_of(cluster, now)


def job_priority_get(*, cluster: Cluster, job_id: str, now: datetime) -> JobPriority | None:
    """The queued job of that id as the cycle of `now` orders it, explained; None when no
    such job waits."""
    order = queue_order_get(cluster=cluster, at=priorities_at(cluster, now))
    return job_priority_of(order, job_id)


def job_priority_of(order: QueueOrder, job_id: str) -> JobPriority | None:
    """The job of that id in an order already read, explained."""
    job = order.find(job_id)
    if job is None:
        return None
    cluster = order.cluster
    node = Node.objects.filter(cluster=cluster, pk=job.node_id).first() if job.node_id else None
    path = node_path_get(node=node) if node is not None else []
    slurm = cluster.scheduler == Scheduler.SLURM
    return JobPriority(
        order=order,
        job=job,
        node=node,
        path=path,
        in_queue=order.queue_sizes.get(job.queue, 0),
        ahead=Ahead(*order.ahead_sizes(job)),
        fairshare=fairshare_term(order, job),
        over=over_target(path, slurm=slurm),
        history=priority_history_get(cluster=cluster, job_id=job.job_id),
    )


def fairshare_term(order: QueueOrder, job: QueuedJob) -> FairshareTerm | None:
    """The job's fairshare term against its best (see FairshareTerm); None where the priority
    has none (PBS without a formula, or a formula not reading the fairshare values)."""
    cluster = order.cluster
    if job.priority is None or job.error:
        return None
    if cluster.scheduler == Scheduler.SLURM:
        if SLURM_FAIRSHARE not in job.terms:
            return None
        weight = float(multifactor_config_get(cluster).weight_fairshare)
        return FairshareTerm(SLURM_FAIRSHARE, job.terms[SLURM_FAIRSHARE], weight)
    try:
        formula = job_sort_formula_parse(cluster)
        if formula is None:
            return None
        now = describe_terms(formula, job.values)
        best = describe_terms(formula, {**job.values, **BEST_FAIRSHARE})
    except (FormulaError, FormulaValueError):
        return None
    chosen = [
        (text, value, better)
        for (text, value), (_, better) in zip(now, best, strict=True)
        if _FAIRSHARE_NAME.search(text)
    ]
    if not chosen:
        return None
    return FairshareTerm(
        " + ".join(text for text, _, _ in chosen),
        sum(value for _, value, _ in chosen),
        sum(better for _, _, better in chosen),
    )


def over_target(path: Sequence[Node], *, slurm: bool) -> OverTarget | None:
    """The level of the path furthest over target (trees.engine.ranking), with its ratio."""
    if len(path) < 2:
        return None
    culprit = furthest_over_target(path, slurm)
    if culprit is None:
        return None
    if slurm:
        level = culprit.level_fs
        ratio = 1 / level if level and level != float("inf") else None
    else:
        whole = path[0].usage
        ratio = culprit.usage_perc / whole if whole > 0 and culprit.usage_perc >= 0 else None
    return OverTarget(culprit, ratio)


def entity_paths_get(*, cluster: Cluster, node_ids: Iterable[int]) -> dict[int, list[int]]:
    """Each node's ids from the root down to it (one query for the cluster's parents)."""
    wanted = set(node_ids)
    if not wanted:
        return {}
    parents = dict(Node.objects.filter(cluster=cluster).values_list("id", "parent_id"))
    paths = {}
    for pk in wanted:
        if pk not in parents:
            continue
        path = [pk]
        while (parent := parents.get(path[-1])) is not None:
            path.append(parent)
        path.reverse()
        paths[pk] = path
    return paths


@dataclass(frozen=True)
class RunningJob:
    """A run going on now and what it has used so far: its cores × the time since it began."""

    job: Job
    elapsed: float  # seconds since it started

    @property
    def core_hours(self) -> float:
        return self.job.ncpus * self.elapsed / 3600


@dataclass(frozen=True)
class WaitingJob:
    """A queued job of the person's, where it stands in its cluster's queue."""

    job: QueuedJob
    waiting: int  # jobs the scheduler considers
    in_queue: int  # of them in the job's queue
    fairshare: FairshareTerm | None


@dataclass(frozen=True)
class ClusterJobs:
    cluster: Cluster
    running: list[RunningJob]
    queued: list[WaitingJob]  # in the scheduler's order, the held ones last


def person_jobs_get(
    *, user_name: str, clusters: Sequence[Cluster], now: datetime
) -> list[ClusterJobs]:
    """The jobs running or waiting under the scheduler user name on each of these clusters
    (those with none left out): the runs with their use so far, longest running first; the
    waiting ones in the scheduler's order at the cycle of `now`. One query finds them all
    (the partial index of the running and queued rows holds them); a queue is ordered only
    where the person has a job waiting."""
    if not user_name:
        return []
    rows = Job.objects.filter(
        cluster__in=list(clusters),
        state__in=[JobState.RUNNING, JobState.QUEUED],
        user=user_name,
    ).order_by("start", "job_id")
    by_cluster: dict[int, list[Job]] = {}
    for job in rows:
        by_cluster.setdefault(job.cluster_id, []).append(job)
    found = []
    for cluster in clusters:
        jobs = by_cluster.get(cluster.pk)
        if not jobs:
            continue
        running = [
            RunningJob(job, max(0.0, (now - job.start).total_seconds()) if job.start else 0.0)
            for job in jobs
            if job.state == JobState.RUNNING
        ]
        queued: list[WaitingJob] = []
        if any(job.state == JobState.QUEUED for job in jobs):
            order = queue_order_get(cluster=cluster, at=priorities_at(cluster, now))
            queues = order.queue_sizes
            queued = [
                WaitingJob(
                    job, len(order.ordered), queues.get(job.queue, 0), fairshare_term(order, job)
                )
                for job in order.jobs_of(user_name)
            ]
        found.append(ClusterJobs(cluster, running, queued))
    return found


def queue_get(*, cluster: Cluster, now: datetime) -> QueueOrder:
    """The cluster's queue in the order the scheduler considers it at the cycle of `now`
    (accounting.priorities)."""
    return queue_order_get(cluster=cluster, at=priorities_at(cluster, now))
