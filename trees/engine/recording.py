"""What PBS records of a job's usage in its fairshare database, against what the job used
(seed 000, "Accuracy of Reported Usage": a 30-minute job can lose 13 minutes).

Follows pbs-job-priority-and-polling.md §C (OpenPBS commit cd7ab5ed) as a running OpenPBS 23.06
showed it (docs/pbs.md, "What PBS records"):

* Samples. A MoM samples all its running jobs at once. When a job starts on it, it sets its
  interval to `$min_check_poll` and counts it from that start (start_exec.c:1803-1822); after
  each sample the interval grows by `inc_check_poll = (max - min + 19) // 20` up to
  `$max_check_poll` (mom_main.c:4114, :8628-8654) and counts from that sample. A sample due at
  second d is taken at the MoM's first wake-up from d on: it wakes every 2 s
  (work_task.c:373) counted from its last event: a job's start, a job's exit (start +
  walltime), the server's answer to a job's obituary (the second after the job's end).
* Delivery. A sample reaches the server at the MoM's next wake-up, 2 s after it is taken: a
  cycle reads the samples taken 2 s or more before it.
* Cycles. The scheduler runs a cycle at each job's submission and at each job's end, and
  `scheduler_iteration` after its previous cycle of any kind (the server sets its timer
  again after each cycle); a job starts inside one. Or the cycles its log shows
  (import_sched_log). Within a second a timer's cycle comes first, then those of
  submissions, then those of ends.
* Recording. At each cycle the scheduler adds to the job's entity what the server last heard
  from the MoM, less what it added before (fifo.cpp:370-395), for a job running at that cycle
  and at the one before: the cycle its own end triggers finds it over. So a job is charged
  its usage at the last sample its last cycle read; whatever it used after is lost, and a job
  no cycle read a sample of is unseen. Between samples a job's usage grows evenly over its
  walltime.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

MIN_CHECK_POLL = 10  # MIN_CHECK_POLL_TIME, mom_func.h:414
MAX_CHECK_POLL = 120  # MAX_CHECK_POLL_TIME, mom_func.h:413
_GROWTH_STEPS = 20  # inc_check_poll = (max - min + 19) / 20: the maximum after at most 20 polls
MOM_WAKE = 2  # s between a MoM's wake-ups with nothing to do (work_task.c:373, tilwhen)
DELIVERY = 2  # s from a sample to the server: the MoM sends it at its next wake-up


@dataclass(frozen=True, slots=True)
class Polling:
    """A MoM's poll settings (mom_priv/config), in seconds."""

    min_check_poll: int = MIN_CHECK_POLL
    max_check_poll: int = MAX_CHECK_POLL

    def __post_init__(self) -> None:
        if not 0 < self.min_check_poll <= self.max_check_poll:
            raise ValueError(
                f"min_check_poll {self.min_check_poll} and max_check_poll {self.max_check_poll}:"
                " both must be positive, the minimum at most the maximum"
            )

    @property
    def increment(self) -> int:
        """inc_check_poll (mom_main.c:4114)."""
        return (self.max_check_poll - self.min_check_poll + _GROWTH_STEPS - 1) // _GROWTH_STEPS


@dataclass(frozen=True, slots=True)
class MomRun:
    """A run as its MoM sees it: its start, its exit (start + walltime; None while it runs)
    and its end in the accounting log (None while it runs)."""

    start: int
    exit: int | None
    end: int | None


def wake_up(due: int, events: Sequence[int]) -> int:
    """The second of the MoM's first wake-up from `due` on: every MOM_WAKE seconds from its
    last event (sorted `events`) at or before `due`."""
    found = bisect.bisect_right(events, due)
    if not found:
        return due
    since = due - events[found - 1]
    return due + (-since) % MOM_WAKE


def mom_samples(runs: Sequence[MomRun], polling: Polling, until: int) -> list[int]:
    """The seconds at which one MoM sampled its jobs, up to `until`: its interval restarts at
    each job start, each sample at the MoM's first wake-up once it is due; none while no job
    runs on it (the start's own sample, at walltime 0, is left out: it reads nothing)."""
    starts = sorted({run.start for run in runs})
    events = sorted(
        {run.start for run in runs}
        | {run.exit for run in runs if run.exit is not None}
        | {run.end + 1 for run in runs if run.end is not None}
    )
    spans = sorted((run.start, until if run.exit is None else run.exit) for run in runs)
    samples: list[int] = []
    increment, ceiling = polling.increment, polling.max_check_poll
    busy_until, span = -1, 0  # the last exit of the runs started so far
    for index, start in enumerate(starts):
        while span < len(spans) and spans[span][0] <= start:
            busy_until = max(busy_until, spans[span][1])
            span += 1
        following = starts[index + 1] if index + 1 < len(starts) else None
        last, interval = start, polling.min_check_poll
        while True:
            at = wake_up(last + interval, events)
            if at > until or at > busy_until or (following is not None and at > following):
                break
            samples.append(at)
            last, interval = at, min(interval + increment, ceiling)
    return samples


class CycleKind(IntEnum):
    """What started a scheduler's cycle, in the order cycles of one second run."""

    TIMER = 0
    QUEUED = 1
    ENDED = 2


@dataclass(frozen=True, slots=True, order=True)
class PbsCycle:
    at: int
    kind: CycleKind


def derived_cycles(
    queued: Iterable[int],
    ended: Iterable[int],
    started: Iterable[int],
    iteration: int,
    until: int,
) -> list[PbsCycle]:
    """The cycles that submissions and job ends make; one in each second a job started in
    without either (a job starts inside a cycle: the timer's, or one of those qrun or a node
    coming back makes); and the timer's, `iteration` seconds after the previous cycle while
    nothing comes sooner. From the first of them to `until`."""
    if iteration <= 0:
        raise ValueError(f"scheduler_iteration must be positive, not {iteration} s")
    made = [PbsCycle(at, CycleKind.QUEUED) for at in queued]
    made += [PbsCycle(at, CycleKind.ENDED) for at in ended]
    seconds = {cycle.at for cycle in made}
    made += [PbsCycle(at, CycleKind.TIMER) for at in set(started) - seconds]
    cycles: list[PbsCycle] = []
    for event in sorted(made):
        if event.at > until:
            break
        while cycles and cycles[-1].at + iteration < event.at:
            cycles.append(PbsCycle(cycles[-1].at + iteration, CycleKind.TIMER))
        cycles.append(event)
    while cycles and cycles[-1].at + iteration <= until:
        cycles.append(PbsCycle(cycles[-1].at + iteration, CycleKind.TIMER))
    return cycles


def logged_cycles(
    starts: Iterable[int], queued: Iterable[int], ended: Iterable[int]
) -> list[PbsCycle]:
    """The cycles a scheduler's log shows (their start seconds), each named by what started
    it: in each second, as many as the submissions and job ends of that second made, the last
    ones; the others, first, the timer's."""
    count: dict[int, int] = {}
    for at in starts:
        count[at] = count.get(at, 0) + 1
    made: dict[int, list[CycleKind]] = {}
    for kind, times in ((CycleKind.QUEUED, queued), (CycleKind.ENDED, ended)):
        for at in times:
            if at in count:
                made.setdefault(at, []).append(kind)
    cycles = []
    for at in sorted(count):
        kinds = sorted(made.get(at, []))[-count[at] :]
        timers = count[at] - len(kinds)
        cycles += [PbsCycle(at, CycleKind.TIMER)] * timers
        cycles += [PbsCycle(at, kind) for kind in kinds]
    return cycles


def running_at(cycle: PbsCycle, start: int, end: int | None) -> bool:
    """Whether a run from `start` to `end` (None: still running) is running at the cycle: one
    it started in has not run yet; the one its end made, and any after it, find it over."""
    if start >= cycle.at:
        return False
    return end is None or cycle.at < end or (cycle.at == end and cycle.kind != CycleKind.ENDED)


@dataclass(frozen=True, slots=True)
class Reading:
    """The last cycle that read a sample of a run, and the sample's second."""

    cycle: int
    sample: int


@dataclass(frozen=True)
class PbsRecording:
    """PBS's recording of running jobs' usage: the cycles, and each MoM's samples."""

    cycles: Sequence[PbsCycle]  # sorted
    samples: Mapping[str, Sequence[int]]  # by MoM, sorted

    def reading(
        self, mom: str, start: int, exit: int | None, end: int | None, moment: int
    ) -> Reading | None:
        """What PBS had read of a run by `moment`: the sample its last cycle so far (while it
        ran) read; None while no cycle has read one."""
        cycles = self.cycles
        bound = moment if end is None else min(moment, end)
        index = bisect.bisect_right(cycles, PbsCycle(bound, CycleKind.ENDED))
        while index and not running_at(cycles[index - 1], start, end):  # those of its end
            if cycles[index - 1].at <= start:
                return None
            index -= 1
        if not index:
            return None
        cycle = cycles[index - 1].at
        samples = self.samples.get(mom, ())
        latest = cycle - DELIVERY if exit is None else min(cycle - DELIVERY, exit)
        found = bisect.bisect_right(samples, latest)
        if not found or samples[found - 1] <= start:
            return None
        return Reading(cycle, samples[found - 1])


def usage_at(usage: float, start: int, end: int, moment: int) -> float:
    """What a run that used `usage` in all had used by `moment`, growing evenly in time."""
    if moment >= end:
        return usage
    if moment <= start or end <= start:
        return 0.0
    return usage * (moment - start) / (end - start)


@dataclass(frozen=True, slots=True)
class JobRecording:
    """A finished job's usage, and what PBS recorded of it."""

    actual: float
    recorded: float
    last_cycle: int | None  # the last cycle that read a sample of it
    last_poll: int | None  # the sample that cycle read

    @property
    def lost(self) -> float:
        return self.actual - self.recorded

    @property
    def unseen(self) -> bool:
        """Whether PBS recorded nothing of a job that used something."""
        return self.recorded == 0 and self.actual > 0


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """A finished job as the losses count it: its MoM (the first host of exec_host), its
    usage, start, end and walltime (None: its end less its start)."""

    entity: str
    usage: float
    start: int
    end: int
    walltime: int | None = None
    mom: str = ""

    @property
    def exit(self) -> int:
        """When its processes ended: its start plus its walltime."""
        return self.start + (self.end - self.start if self.walltime is None else self.walltime)


def job_recording(run: FinishedRun, recording: PbsRecording) -> JobRecording:
    """What PBS recorded of a finished run."""
    found = recording.reading(run.mom, run.start, run.exit, run.end, run.end)
    if found is None:
        return JobRecording(run.usage, 0.0, None, None)
    recorded = usage_at(run.usage, run.start, run.exit, found.sample)
    return JobRecording(run.usage, recorded, found.cycle, found.sample)


@dataclass(frozen=True, slots=True)
class EntityLoss:
    """An entity's usage against what PBS recorded of it."""

    entity: str
    actual: float
    recorded: float
    jobs: int
    jobs_unseen: int

    @property
    def lost(self) -> float:
        return self.actual - self.recorded

    @property
    def lost_fraction(self) -> float:
        """The part of its usage lost (0 for an entity that used nothing)."""
        return self.lost / self.actual if self.actual > 0 else 0.0


def entity_losses(runs: Iterable[FinishedRun], recording: PbsRecording) -> list[EntityLoss]:
    """Each entity's usage, what PBS recorded of it, its jobs and those unseen; the most lost
    first, then by name."""
    totals: dict[str, list[float]] = {}
    for run in runs:
        found = job_recording(run, recording)
        total = totals.setdefault(run.entity, [0.0, 0.0, 0, 0])
        total[0] += found.actual
        total[1] += found.recorded
        total[2] += 1
        total[3] += found.unseen
    losses = [
        EntityLoss(entity, actual, recorded, int(jobs), int(unseen))
        for entity, (actual, recorded, jobs, unseen) in totals.items()
    ]
    losses.sort(key=lambda loss: (-loss.lost, loss.entity))
    return losses


def recorded_total(runs: Iterable[FinishedRun], recording: PbsRecording) -> float:
    """What PBS records of all these runs."""
    return sum(job_recording(run, recording).recorded for run in runs)
