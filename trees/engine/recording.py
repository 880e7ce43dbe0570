"""What PBS records of a job's usage in its fairshare database, against what the job used
(seed 000, "Accuracy of Reported Usage": a 30-minute job can lose 13 minutes).

Follows pbs-job-priority-and-polling.md §C (OpenPBS commit cd7ab5ed):

* Polls. A MoM samples a job's usage when it starts, then after an interval that starts at
  `$min_check_poll` and grows by `inc_check_poll = (max - min + 19) // 20` after each sample,
  up to `$max_check_poll` (mom_main.c:4114, :8636-8640); with min == max the increment is 0
  and it samples every that many seconds. A real MoM keeps one interval for all its jobs and
  sets it back to the minimum whenever a job starts on it (start_exec.c:1803-1822): the model
  gives each job its own, from its start, as the accounting logs can rebuild it.
* Cycles. The scheduler runs a cycle every `scheduler_iteration` and when a job ends
  (SCH_SCHEDULE_TERM, req_jobobit.c:231-232); the model puts the timer's cycles on the epoch
  grid, as the dashboard's own cycles are (the server restarts its timer after every cycle,
  which the model does not follow), and a cycle at every job end of the cluster. A job starts
  inside a cycle.
* Recording. At each cycle the scheduler adds to the job's entity what the server last heard
  from the MoM, less what it added before (fifo.cpp:370-395), but only for a job running at that
  cycle and at the one before: at the cycle its own end triggers the job is over and nothing is
  added. So a job is charged what the last poll before the last cycle before its end reported;
  whatever it used after that poll is lost, and a job that no cycle sees after a poll is
  unseen. A poll counts for a cycle when it was taken before it (the 2 to 4 s a sample takes
  to reach the server are not modelled). Between polls a job's usage grows evenly with time:
  its fairshare_usage_res spread over its run, as the exact accrual spreads it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MIN_CHECK_POLL = 10  # MIN_CHECK_POLL_TIME, mom_func.h:414
MAX_CHECK_POLL = 120  # MAX_CHECK_POLL_TIME, mom_func.h:413
_GROWTH_STEPS = 20  # inc_check_poll = (max - min + 19) / 20: the maximum after at most 20 polls


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

    def polls(self, start: int, until: int) -> list[int]:
        """A job's poll times from its start, those before `until`."""
        times, at, interval = [], start, self.min_check_poll
        while at < until:
            times.append(at)
            at += interval
            interval = min(interval + self.increment, self.max_check_poll)
        return times

    def last_poll_before(self, start: int, moment: int) -> int:
        """The last poll of a job started at `start` taken before `moment` (> start)."""
        if moment <= start:
            raise ValueError(f"no poll is before {moment}: the job starts at {start}")
        at, interval = start, self.min_check_poll
        while interval < self.max_check_poll:  # the growing intervals: 20 polls at most
            if at + interval >= moment:
                return at
            at += interval
            interval = min(interval + self.increment, self.max_check_poll)
        return at + (moment - at - 1) // interval * interval


@dataclass(frozen=True)
class CycleClock:
    """When the scheduler's cycles run: every `iteration` seconds on the epoch grid, and at
    each job end (`ends`, sorted)."""

    iteration: int
    ends: Sequence[int]

    def __post_init__(self) -> None:
        if self.iteration <= 0:
            raise ValueError(f"scheduler_iteration must be positive, not {self.iteration} s")

    def last_cycle(self, start: int, end: int | None, moment: int) -> int | None:
        """The last cycle after a job's start, by `moment` and while it runs (before `end`);
        None when there is none yet."""
        bound = moment if end is None else min(moment, end - 1)
        if bound <= start:
            return None
        timer = bound - bound % self.iteration
        found = bisect.bisect_right(self.ends, bound)
        event = self.ends[found - 1] if found else None
        latest = max(timer, event) if event is not None else timer
        return latest if latest > start else None


@dataclass(frozen=True)
class PbsRecording:
    """PBS's recording of running jobs' usage: the polls and the cycles."""

    polling: Polling
    clock: CycleClock

    def recorded_at(self, start: int, end: int | None, moment: int) -> int | None:
        """The moment of the job's usage that PBS has recorded by `moment`: the poll read at
        its last cycle so far; None while no cycle has read one."""
        cycle = self.clock.last_cycle(start, end, moment)
        if cycle is None:
            return None
        return self.polling.last_poll_before(start, cycle)


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
    last_cycle: int | None  # the last cycle that read a poll of it
    last_poll: int | None  # the poll that cycle read

    @property
    def lost(self) -> float:
        return self.actual - self.recorded

    @property
    def unseen(self) -> bool:
        """Whether PBS recorded nothing of a job that used something."""
        return self.recorded == 0 and self.actual > 0


def job_recording(usage: float, start: int, end: int, recording: PbsRecording) -> JobRecording:
    """What PBS recorded of a job that ran from `start` to `end` and used `usage`."""
    cycle = recording.clock.last_cycle(start, end, end)
    if cycle is None:
        return JobRecording(usage, 0.0, None, None)
    poll = recording.polling.last_poll_before(start, cycle)
    return JobRecording(usage, usage_at(usage, start, end, poll), cycle, poll)


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """A finished job as the losses count it."""

    entity: str
    usage: float
    start: int
    end: int


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
        found = job_recording(run.usage, run.start, run.end, recording)
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
    return sum(job_recording(r.usage, r.start, r.end, recording).recorded for r in runs)
