"""Reads: how PBS records a cluster's usage (trees.engine.recording: its MoMs' samples read at
its scheduler's cycles), its finished jobs against what PBS recorded of them in its fairshare
database, by entity and by job, and what other poll and cycle settings would have recorded."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from accounting.models import Job, SchedulerCycle
from accounting.parsers.records import JobState
from trees.engine.recording import (
    EntityLoss,
    FinishedRun,
    MomRun,
    PbsRecording,
    Polling,
    derived_cycles,
    entity_losses,
    job_recording,
    logged_cycles,
    mom_samples,
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
    logged_cycles: int = 0  # cycles of the scheduler's log the recording ran on

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


@dataclass(frozen=True)
class RecordingEvents:
    """What PBS's recording of a span is made from: each MoM's runs, the seconds jobs were
    submitted, started and ended in, and those its imported scheduler's log has cycles at."""

    last: int
    runs: dict[str, list[MomRun]]
    queued: list[int]
    started: list[int]
    ended: list[int]
    logged: list[int]

    def recording(self, polling: Polling, iteration: int, *, logged: bool = True) -> PbsRecording:
        """The recording with these settings: the log's cycles where it covers (unless not
        `logged`), elsewhere those the submissions, starts, ends and the timer make."""
        cycles = derived_cycles(self.queued, self.ended, self.started, iteration, self.last)
        if logged and self.logged:
            low, high = min(self.logged), max(self.logged)
            cycles = sorted(
                [cycle for cycle in cycles if not low <= cycle.at <= high]
                + logged_cycles(self.logged, self.queued, self.ended)
            )
        samples = {mom: mom_samples(runs, polling, self.last) for mom, runs in self.runs.items()}
        return PbsRecording(cycles, samples)


def recording_events_get(
    *, cluster: Cluster, first: int, last: int, margin: int
) -> RecordingEvents:
    """The events of the cluster from `margin` seconds before `first` to `last` (epoch
    seconds): the runs then, the submissions, and the imported log's cycles."""
    since, until = epoch_time(first - margin), epoch_time(last)
    jobs = Job.objects.filter(cluster=cluster)
    runs = jobs.filter(start__isnull=False, start__lte=until).filter(
        Q(end__isnull=True) | Q(end__gte=since) | Q(state=JobState.RUNNING)
    )
    by_mom: dict[str, list[MomRun]] = {}
    started, ended = [], []
    for mom, state, start, end, walltime in runs.values_list(
        "mom", "state", "start", "end", "walltime"
    ).iterator(chunk_size=10_000):
        begun = epoch_seconds(start)
        over = None if state == JobState.RUNNING or end is None else epoch_seconds(end)
        exit = None if over is None else (over if walltime is None else begun + walltime)
        by_mom.setdefault(mom, []).append(MomRun(begun, exit, over))
        started.append(begun)
        if over is not None:
            ended.append(over)
    submitted = jobs.filter(qtime__gte=since, qtime__lte=until)
    queued = [epoch_seconds(at) for _, at in set(submitted.values_list("job_id", "qtime"))]
    log = SchedulerCycle.objects.filter(cluster=cluster, at__gte=since, at__lte=until)
    logged = [epoch_seconds(at) for at in log.values_list("at", flat=True)]
    return RecordingEvents(last, by_mom, queued, started, ended, logged)


def recording_margin(polling: Polling, iteration: int) -> int:
    """How long before a span the events whose cycles and samples reach into it may be."""
    return iteration + 2 * polling.max_check_poll


def pbs_recording_get(*, cluster: Cluster, first: int, last: int) -> PbsRecording:
    """How PBS recorded the cluster's usage from `first` to `last` (epoch seconds), with its
    own poll settings and scheduler_iteration: each MoM's samples, and the scheduler's
    cycles (RecordingEvents.recording)."""
    polling, iteration = cluster_polling(cluster), cluster_iteration(cluster)
    margin = recording_margin(polling, iteration)
    events = recording_events_get(cluster=cluster, first=first, last=last, margin=margin)
    return events.recording(polling, iteration)


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
    for job_id, entity, usage, start, end, walltime, mom in rows.order_by("end", "pk").values_list(
        "job_id", "entity", "usage", "start", "end", "walltime", "mom"
    ):
        runs.append(
            FinishedRun(entity, usage, epoch_seconds(start), epoch_seconds(end), walltime, mom)
        )
        ids.append(job_id)
    return runs, ids


def runs_events_get(*, cluster: Cluster, runs: list[FinishedRun], margin: int) -> RecordingEvents:
    """recording_events_get over the span of these runs."""
    if not runs:
        return RecordingEvents(0, {}, [], [], [], [])
    first = min(run.start for run in runs)
    last = max(run.end for run in runs)
    return recording_events_get(cluster=cluster, first=first, last=last, margin=margin)


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
    margin = recording_margin(polling, iteration)
    events = runs_events_get(cluster=cluster, runs=runs, margin=margin)
    recording = events.recording(polling, iteration)
    per_job = []
    if jobs:
        for job_id, run in zip(ids, runs, strict=True):
            found = job_recording(run, recording)
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
        cluster,
        since,
        until,
        polling,
        iteration,
        entity_losses(runs, recording),
        per_job,
        logged_cycles=len(events.logged),
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
    minute, a minimum of 10 s (PBS's defaults where they differ from the cluster's). All on
    the cycles the jobs and the timer make, the scheduler's log aside (it shows one
    iteration's)."""
    runs, _ = finished_runs_get(cluster=cluster, since=since, until=until)
    polling, iteration = cluster_polling(cluster), cluster_iteration(cluster)
    widest = Polling(min(polling.min_check_poll, 10), max(polling.max_check_poll, 60))
    events = runs_events_get(
        cluster=cluster, runs=runs, margin=recording_margin(widest, 2 * iteration)
    )

    def recorded(other: Polling, every: int) -> float:
        return recorded_total(runs, events.recording(other, every, logged=False))

    now = recorded(polling, iteration)
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
        total = recorded(other, every)
        more = (total - now) / now if now > 0 else 0.0
        found.append(WhatIf(setting, value, total, more))
    return found


def default_since(now: datetime) -> datetime:
    """The usage-loss page's window when none is asked for: the last 7 days."""
    return now - timedelta(days=7)
