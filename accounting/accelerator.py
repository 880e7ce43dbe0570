"""Reads for Altair Accelerator clusters: every FairShare group's FS_* fields at a moment
(trees.engine.accelerator on the groups and jobs stored), and which running jobs each
preemption rule would let each queued job preempt, and why (trees.engine.preempt)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from accounting.selectors import AcceleratorJob, accelerator_jobs_get
from trees.engine.accelerator import FsFields, fs_fields
from trees.engine.preempt import Job, Preemption, job_of, preemptions
from trees.engine.times import epoch_seconds
from trees.models import Cluster
from trees.selectors.accelerator import accelerator_groups_of, preempt_rules_get
from trees.selectors.nodes import stored_nodes_get


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
