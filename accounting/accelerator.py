"""Reads for Altair Accelerator clusters: every FairShare group's FS_* fields at a moment
(trees.engine.accelerator on the groups and jobs stored), which running jobs each preemption
rule would let each queued job preempt, and why (trees.engine.preempt); a group's jobs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from accounting.models import Job as JobRow
from accounting.parsers.records import JobState
from accounting.selectors import AcceleratorJob, accelerator_jobs_get
from trees.engine.accelerator import FsFields, fs_fields
from trees.engine.preempt import Job, Preemption, job_of, preemptions
from trees.engine.times import epoch_seconds
from trees.models import Cluster, Node
from trees.selectors.accelerator import accelerator_groups_of, preempt_rules_get
from trees.selectors.nodes import descendant_ids_get, stored_nodes_get


@dataclass(frozen=True)
class FieldsAt:
    """Every group's fields at a moment, and the jobs they come from."""

    at: datetime
    fields: list[FsFields]  # parents before children, the root first
    jobs: list[AcceleratorJob]

    def of(self, group: str) -> FsFields | None:
        return next((fields for fields in self.fields if fields.group == group), None)


def accelerator_fields_get(*, cluster: Cluster, now: datetime) -> FieldsAt:
    """Every group's FS_* fields at `now`, worked out from the groups and jobs stored (what a
    cycle at `now` would store; nothing is saved)."""
    groups = accelerator_groups_of(stored_nodes_get(cluster=cluster))
    jobs = accelerator_jobs_get(cluster=cluster, now=now)
    fields = fs_fields(
        [group.fs_group for group in groups],
        [found.job for found in jobs],
        epoch_seconds(now),
        relative=cluster.fairshare_relative,
        alpha=cluster.fairshare_relative_alpha,
    )
    return FieldsAt(now, fields, jobs)


def preemptions_get(*, cluster: Cluster, now: datetime) -> list[Preemption]:
    """For each preemption rule of the cluster (by -order, then file order) and each job
    queued at `now`: whether the rule fires, the running jobs it may preempt, and why. A
    suspended job is preempted already: it is no candidate."""
    rules = preempt_rules_get(cluster=cluster)
    if not rules:
        return []
    found = accelerator_fields_get(cluster=cluster, now=now)
    by_group = {fields.group: fields for fields in found.fields}
    queued: list[Job] = []
    running: list[Job] = []
    for job in found.jobs:
        status = job.job.status
        if status not in ("queued", "running"):
            continue
        mapping = job_of(job.job, by_group[job.job.group], user=job.user, jobclass=job.jobclass)
        (queued if status == "queued" else running).append(mapping)
    return preemptions(rules, queued, running, epoch_seconds(now))


@dataclass(frozen=True)
class GroupPreemption:
    """A rule's answer for a queued job, with where its jobs are: the queued job's group and
    node id, and each running job it may preempt with its group's node id."""

    preemption: Preemption
    group: str  # the queued job's group (its user's leaf)
    node_id: int | None
    victims: tuple[tuple[str, int | None], ...]  # each job's id and node id, in the rule's order


@dataclass(frozen=True)
class GroupPreemptions:
    """What the preemption rules do about a group: for the jobs queued in it or below it
    (`queued`), and for queued jobs elsewhere that may preempt its running jobs (`against`)."""

    queued: list[GroupPreemption]
    against: list[GroupPreemption]
    leaves: frozenset[int]  # the group's node id and those below it


def group_preemptions_get(*, node: Node, now: datetime) -> GroupPreemptions:
    """preemptions_get as it concerns the node's group and those below it, by rule, then job."""
    leaves = frozenset({node.pk, *descendant_ids_get([node.pk])})
    current = JobRow.objects.filter(
        cluster_id=node.cluster_id, state__in=[JobState.QUEUED, JobState.RUNNING]
    )
    where = {job_id: (group, pk) for job_id, group, pk in current.values_list(
        "job_id", "entity", "node_id"
    )}  # fmt: skip
    found = GroupPreemptions([], [], leaves)
    for preemption in preemptions_get(cluster=node.cluster, now=now):
        group, pk = where.get(preemption.queued_job, ("", None))
        victims = tuple((job, where.get(job, ("", None))[1]) for job in preemption.victims)
        answer = GroupPreemption(preemption, group, pk, victims)
        if pk in leaves:
            found.queued.append(answer)
        elif any(victim in leaves for _, victim in victims):
            found.against.append(answer)
    return found


GROUP_JOBS = 50


@dataclass(frozen=True)
class GroupJobs:
    """The jobs queued and running in a group or below it: the first `limit` of each (the
    longest waiting, the longest running first) and how many there are."""

    queued: list[JobRow]
    running: list[JobRow]
    queued_count: int
    running_count: int


def group_jobs_get(*, node: Node, limit: int = GROUP_JOBS) -> GroupJobs:
    leaves = [node.pk, *descendant_ids_get([node.pk])]
    jobs = JobRow.objects.filter(cluster_id=node.cluster_id, node_id__in=leaves)
    queued = jobs.filter(state=JobState.QUEUED)
    running = jobs.filter(state=JobState.RUNNING)
    return GroupJobs(
        queued=list(queued.order_by("qtime", "ctime", "job_id")[:limit]),
        running=list(running.order_by("start", "job_id")[:limit]),
        queued_count=queued.count(),
        running_count=running.count(),
    )
