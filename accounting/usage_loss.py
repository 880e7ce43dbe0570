"""Reads: a PBS cluster's finished jobs against what PBS recorded of them in its fairshare
database (trees.engine.recording: the MoM's polls read at the scheduler's cycles), by entity and
by job, and what other poll and cycle settings would have recorded."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from accounting.models import Job
from accounting.parsers.records import JobState
from trees.engine.recording import (
    CycleClock,
    EntityLoss,
    FinishedRun,
    PbsRecording,
    Polling,
    entity_losses,
    job_recording,
    recorded_total,
)
from trees.engine.times import epoch_seconds, epoch_time
from trees.models import Cluster


@dataclass(frozen=True)
class JobLoss:
    """A finished job's usage and what PBS recorded of it."""

    job_id: str
    entity: str
    start: datetime
    end: datetime
    actual: float
    recorded: float
    last_cycle: datetime | None  # the last cycle that read a poll of it
    last_poll: datetime | None  # the poll it read

    @property
    def lost(self) -> float:
        return self.actual - self.recorded

    @property
    def unseen(self) -> bool:
        return self.recorded == 0 and self.actual > 0


@dataclass(frozen=True)
class UsageLoss:
    """The jobs that ended in [since, until) on a cluster, against what PBS recorded."""

    cluster: Cluster
    since: datetime | None
    until: datetime | None
    polling: Polling
    iteration: int  # scheduler_iteration, seconds
    entities: list[EntityLoss]  # the most lost first
    jobs: list[JobLoss]  # when asked for, the most lost first

    @property
    def actual(self) -> float:
        return sum(entity.actual for entity in self.entities)

    @property
    def recorded(self) -> float:
        return sum(entity.recorded for entity in self.entities)

    @property
    def lost(self) -> float:
        return self.actual - self.recorded

    @property
    def lost_fraction(self) -> float:
        return self.lost / self.actual if self.actual > 0 else 0.0

    @property
    def job_count(self) -> int:
        return sum(entity.jobs for entity in self.entities)

    @property
    def unseen(self) -> int:
        return sum(entity.jobs_unseen for entity in self.entities)

    def shares(self) -> list[EntityShare]:
        """Each entity's share of all the usage and of all that PBS recorded, those whose
        recorded share is the smaller first: PBS charges them less than their part, so their
        standing gains from the recording (an entity of short jobs, which cycles often miss,
        gains; one of long jobs, which lose only their last minutes, pays for it)."""
        actual, recorded = self.actual, self.recorded
        shares = [
            EntityShare(
                entity.entity,
                entity.actual / actual if actual > 0 else 0.0,
                entity.recorded / recorded if recorded > 0 else 0.0,
            )
            for entity in self.entities
        ]
        shares.sort(key=lambda share: (-share.gain, share.entity))
        return shares


@dataclass(frozen=True)
class EntityShare:
    """An entity's share of the usage, and of what PBS recorded (fractions)."""

    entity: str
    actual: float
    recorded: float

    @property
    def gain(self) -> float:
        """How much smaller its share of what is recorded is than its share of the usage:
        above 0, PBS charges it less than its part and its standing gains."""
        return self.actual - self.recorded


def cluster_polling(cluster: Cluster) -> Polling:
    """The MoM poll settings the cluster keeps (import_mom_config)."""
    return Polling(cluster.mom_min_check_poll, cluster.mom_max_check_poll)


def cluster_iteration(cluster: Cluster) -> int:
    return int(cluster.scheduler_iteration.total_seconds())


def finished_runs_get(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> tuple[list[FinishedRun], list[str]]:
    """The runs that ended in [since, until), with the id of each, in end order."""
    rows = Job.objects.filter(
        cluster=cluster, state=JobState.ENDED, start__isnull=False, end__isnull=False
    )
    if since is not None:
        rows = rows.filter(end__gte=since)
    if until is not None:
        rows = rows.filter(end__lt=until)
    runs, ids = [], []
    for job_id, entity, usage, start, end in rows.order_by("end", "pk").values_list(
        "job_id", "entity", "usage", "start", "end"
    ):
        runs.append(FinishedRun(entity, usage, epoch_seconds(start), epoch_seconds(end)))
        ids.append(job_id)
    return runs, ids


def cycle_ends_get(*, cluster: Cluster, runs: list[FinishedRun], iteration: int) -> list[int]:
    """The job ends of the cluster that make cycles these runs may see: those from one
    iteration before the first start to the last end, sorted."""
    if not runs:
        return []
    first = min(run.start for run in runs) - iteration
    last = max(run.end for run in runs)
    ends = Job.objects.filter(
        cluster=cluster, end__gte=epoch_time(first), end__lte=epoch_time(last)
    ).values_list("end", flat=True)
    return sorted(epoch_seconds(end) for end in ends)


def usage_loss_get(
    *,
    cluster: Cluster,
    since: datetime | None = None,
    until: datetime | None = None,
    jobs: bool = False,
) -> UsageLoss:
    """What PBS recorded of the cluster's jobs that ended in [since, until), with its own
    settings, by entity (and by job, with `jobs`)."""
    runs, ids = finished_runs_get(cluster=cluster, since=since, until=until)
    polling, iteration = cluster_polling(cluster), cluster_iteration(cluster)
    ends = cycle_ends_get(cluster=cluster, runs=runs, iteration=iteration)
    recording = PbsRecording(polling, CycleClock(iteration, ends))
    per_job = []
    if jobs:
        for job_id, run in zip(ids, runs, strict=True):
            found = job_recording(run.usage, run.start, run.end, recording)
            per_job.append(
                JobLoss(
                    job_id=job_id,
                    entity=run.entity,
                    start=epoch_time(run.start),
                    end=epoch_time(run.end),
                    actual=found.actual,
                    recorded=found.recorded,
                    last_cycle=None if found.last_cycle is None else epoch_time(found.last_cycle),
                    last_poll=None if found.last_poll is None else epoch_time(found.last_poll),
                )
            )
        per_job.sort(key=lambda job: (-job.lost, job.end, job.job_id))
    return UsageLoss(
        cluster, since, until, polling, iteration, entity_losses(runs, recording), per_job
    )


@dataclass(frozen=True)
class WhatIf:
    """What PBS would have recorded of the same jobs with one setting changed."""

    setting: str  # "scheduler_iteration", "$max_check_poll", "$min_check_poll"
    value: int  # seconds
    recorded: float
    more: float  # against what it records now, a fraction (0.031: 3.1 % more)


def usage_loss_whatifs_get(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> list[WhatIf]:
    """What other settings would have recorded of the jobs that ended in [since, until): a
    scheduler_iteration half and twice as long, polls at the minimum only, a maximum of a
    minute, a minimum of 10 s (PBS's defaults where they differ from the cluster's)."""
    runs, _ = finished_runs_get(cluster=cluster, since=since, until=until)
    polling, iteration = cluster_polling(cluster), cluster_iteration(cluster)
    ends = cycle_ends_get(cluster=cluster, runs=runs, iteration=2 * iteration)
    now = recorded_total(runs, PbsRecording(polling, CycleClock(iteration, ends)))
    low, high = polling.min_check_poll, polling.max_check_poll
    choices: list[tuple[str, int, Polling, int]] = [
        ("scheduler_iteration", iteration // 2, polling, iteration // 2),
        ("scheduler_iteration", iteration * 2, polling, iteration * 2),
    ]
    if high > low:
        choices.append(("$max_check_poll", low, Polling(low, low), iteration))
    if low <= 60 < high:
        choices.append(("$max_check_poll", 60, Polling(low, 60), iteration))
    if low > 10:
        choices.append(("$min_check_poll", 10, Polling(10, high), iteration))
    found = []
    for setting, value, other, every in choices:
        if every < 1:
            continue
        recorded = recorded_total(runs, PbsRecording(other, CycleClock(every, ends)))
        more = (recorded - now) / now if now > 0 else 0.0
        found.append(WhatIf(setting, value, recorded, more))
    return found


def default_since(now: datetime) -> datetime:
    """The usage-loss page's window when none is asked for: the last 7 days."""
    return now - timedelta(days=7)
