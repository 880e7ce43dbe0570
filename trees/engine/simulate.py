"""A cluster's workload replayed under a scheduling policy: discrete events, one pool of cores.

Times are whole epoch seconds. Events are submits and ends; at each instant the ends are taken
first, then the submits, then one scheduling pass. A job runs exactly its recorded run time and
holds its cores over [start, end). What a pass may start depends on the queue's order (a
`QueueOrder`: submit order, or a policy's) and the backfill discipline:

- "none": start jobs in order; stop at the first that does not fit;
- "greedy": start every job, in order, that fits now (PBS without strict_ordering);
- "easy": EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", 1995): the first job that
  does not fit gets a shadow time, the earliest estimated end (start + walltime limit) of the
  running jobs by which enough cores are free; the extra cores are those free then (every
  running job estimated to end by then released) minus its cores; a later job starts now if
  it fits and either its walltime limit ends by the shadow time or it takes no more than the
  extra cores, which it then uses up;
- N (an int >= 1): the first N jobs that do not fit each get a reservation, at the earliest
  time the running jobs' estimated ends and the earlier reservations leave them room (PBS
  backfill_depth); a later job starts now only if it delays none of them. N = 1 is EASY.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Backfill",
    "FifoOrder",
    "QueueOrder",
    "Schedule",
    "Scheduled",
    "SimJob",
    "job_id_key",
    "simulate",
    "walltime_limit",
]

Backfill = Literal["none", "greedy", "easy"] | int
# The disciplines as numbers (`_depth`): reservation depths are 1 and more.
_NONE, _GREEDY, _EASY = -1, 0, -2


@dataclass(frozen=True, slots=True)
class SimJob:
    """A job as the replay knows it: when it was submitted, how long it ran, on how many cores,
    the walltime it asked for (None: not recorded), and when it really started, if known."""

    job_id: str
    entity: str
    submit: int
    run_time: int
    cores: int
    requested_walltime: int | None = None
    real_start: int | None = None
    queue: str = ""
    group: str = ""


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A job where the replay placed it."""

    job_id: str
    entity: str
    group: str
    submit: int
    start: int
    end: int
    cores: int
    real_start: int | None


@dataclass
class Schedule:
    """The replay's result: each job started, in start order, and the jobs left out by reason
    ("run_time": none or negative, "cores": none, "capacity": more than the pool)."""

    capacity: int
    jobs: list[Scheduled] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)


class QueueOrder(Protocol):
    """The order a pass considers the queued jobs in, and what a policy is told as they run."""

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        """The queued jobs (given in submit order) in the order to consider them at `now`."""
        ...

    def job_started(self, job: SimJob, now: int) -> None: ...

    def job_ended(self, job: SimJob, now: int) -> None: ...


class FifoOrder:
    """First come, first served: submit time, then job id (job_id_key)."""

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        return queued  # the simulator keeps the queue in submit order

    def job_started(self, job: SimJob, now: int) -> None:
        pass

    def job_ended(self, job: SimJob, now: int) -> None:
        pass


def job_id_key(job_id: str) -> tuple[int, int, str]:
    """Job ids compared as numbers when both are all digits (SWF's job numbers, PBS's sequence
    numbers), else as text; numbers sort first."""
    return (0, int(job_id), "") if job_id.isdigit() else (1, 0, job_id)


def walltime_limit(run_time: int, requested: int | None) -> int:
    """The walltime a job is estimated to hold its cores for: its request, or its run time when
    none is recorded or the request is shorter than the run."""
    return run_time if not requested or requested < run_time else requested


def _left_out_reason(job: SimJob, capacity: int) -> str | None:
    if job.run_time <= 0:
        return "run_time"
    if job.cores <= 0:
        return "cores"
    if job.cores > capacity:
        return "capacity"
    return None


def simulate(
    jobs: Iterable[SimJob],
    *,
    capacity: int,
    order: QueueOrder | None = None,
    backfill: Backfill = "easy",
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 10_000,
) -> Schedule:
    """Replay the jobs on `capacity` cores; the schedule each started job got."""
    if capacity <= 0:
        raise ValueError(f"the pool needs at least one core, not {capacity}")
    depth = _depth(backfill)
    policy = order if order is not None else FifoOrder()
    fifo = isinstance(policy, FifoOrder)
    schedule = Schedule(capacity)
    kept: list[SimJob] = []
    for job in jobs:
        reason = _left_out_reason(job, capacity)
        if reason is None:
            kept.append(job)
        else:
            schedule.left_out[reason] = schedule.left_out.get(reason, 0) + 1
    kept.sort(key=lambda job: (job.submit, job_id_key(job.job_id)))
    total, started = len(kept), 0
    started_jobs = schedule.jobs
    # (end, sequence, estimated end, job) of each running job; the sequence breaks end ties.
    ends: list[tuple[int, int, int, SimJob]] = []
    # The running jobs' estimated ends, (limit, sequence, cores), kept sorted for EASY.
    releases: list[tuple[int, int, int]] = []
    queue: dict[int, SimJob] = {}  # by id(job), in submit order
    free = capacity
    upcoming = 0
    # In submit order, what the last full pass left stands until a job ends: jobs arriving
    # meanwhile are weighed alone against it (`_Standing`), not the whole queue again.
    standing: _Standing | None = None
    while upcoming < total or ends:
        now = kept[upcoming].submit if upcoming < total else ends[0][0]
        if ends and ends[0][0] <= now:
            now = ends[0][0]
            standing = None
            while ends and ends[0][0] == now:
                _, sequence, limit, job = heapq.heappop(ends)
                del releases[bisect.bisect_left(releases, (limit, sequence))]
                free += job.cores
                policy.job_ended(job, now)
        arrived = upcoming
        while upcoming < total and kept[upcoming].submit == now:
            queue[id(kept[upcoming])] = kept[upcoming]
            upcoming += 1
        if not queue or free == 0:
            continue
        if fifo and standing is not None and depth in (_NONE, _GREEDY, _EASY):
            chosen = standing.arrivals(now, kept[arrived:upcoming], depth)
        else:
            waiting = list(queue.values())
            considered = waiting if fifo else policy.order(now, waiting)
            chosen, standing = _pass(now, considered, free, releases, depth)
        if not chosen:
            continue
        for job in chosen:
            free -= job.cores
            end = now + job.run_time
            limit = now + walltime_limit(job.run_time, job.requested_walltime)
            heapq.heappush(ends, (end, started, limit, job))
            bisect.insort(releases, (limit, started, job.cores))
            del queue[id(job)]
            started_jobs.append(
                Scheduled(
                    job.job_id, job.entity, job.group, job.submit, now, end, job.cores,
                    job.real_start,
                )
            )  # fmt: skip
            started += 1
            policy.job_started(job, now)
            if progress is not None and started % progress_every == 0:
                progress(started, total)
        if not queue:
            standing = None
    if progress is not None:
        progress(started, total)
    return schedule


def _depth(backfill: Backfill) -> int:
    """The discipline as a number: _NONE, _GREEDY, _EASY, or N reservations."""
    if backfill == "none":
        return _NONE
    if backfill == "greedy":
        return _GREEDY
    if backfill == "easy":
        return _EASY
    if isinstance(backfill, int) and not isinstance(backfill, bool) and backfill >= 1:
        return backfill
    raise ValueError(
        f"backfill must be none, greedy, easy or a depth of 1 or more, not {backfill!r}"
    )


@dataclass(slots=True)
class _Standing:
    """What a full pass left, in submit order, for the jobs that arrive before the next end:
    the free cores; with EASY, the shadow time and the extra cores (no shadow: the head of the
    queue fits no more than it did, and none may pass it)."""

    free: int
    shadow: int | None = None
    extra: int = 0

    def arrivals(self, now: int, arrived: Sequence[SimJob], depth: int) -> list[SimJob]:
        """Which of the jobs that just arrived start now, behind the blocked queue."""
        chosen: list[SimJob] = []
        if depth == _NONE:
            return chosen  # nothing passes the blocked head
        free, shadow, extra = self.free, self.shadow, self.extra
        backfill_by = shadow - now if shadow is not None else -1  # the longest limit that fits
        for job in arrived:
            cores = job.cores
            if cores > free:
                continue
            run, asked = job.run_time, job.requested_walltime  # walltime_limit, inlined: hot
            if depth == _GREEDY or (asked if asked and asked >= run else run) <= backfill_by:
                chosen.append(job)
                free -= cores
            elif cores <= extra:
                chosen.append(job)
                free -= cores
                extra -= cores
        self.free, self.extra = free, extra
        return chosen


def _pass(
    now: int,
    considered: Sequence[SimJob],
    free: int,
    releases: list[tuple[int, int, int]],
    depth: int,
) -> tuple[list[SimJob], _Standing | None]:
    """The jobs one pass starts at `now`, in the order it starts them, and what it left for
    the jobs arriving before the next end (None: nothing to keep, or reservations)."""
    chosen: list[SimJob] = []
    position = 0
    for job in considered:  # in order while they fit: every discipline does this
        if job.cores > free:
            break
        chosen.append(job)
        free -= job.cores
        position += 1
    if position == len(considered):
        return chosen, None
    if depth == _NONE:
        return chosen, _Standing(free)
    rest = considered[position:]
    if depth == _GREEDY:
        for job in rest:
            if job.cores <= free:
                chosen.append(job)
                free -= job.cores
                if free == 0:
                    break
        return chosen, _Standing(free)
    # Estimated ends of the running jobs and of the ones this pass starts, soonest first.
    if chosen:
        releases = sorted(
            releases
            + [
                (now + walltime_limit(job.run_time, job.requested_walltime), -1, job.cores)
                for job in chosen
            ]
        )
    if depth == _EASY:
        standing = _Standing(free, *_shadow(rest[0].cores, free, releases))
        chosen.extend(standing.arrivals(now, rest[1:], depth))
        return chosen, standing
    chosen.extend(_reserving(now, rest, free, releases, depth))
    return chosen, None


def _shadow(cores: int, free: int, releases: list[tuple[int, int, int]]) -> tuple[int, int]:
    """EASY's shadow time for a job of `cores` that does not fit in `free`, and the extra
    cores: those free at the shadow time (every job estimated to end by then released) minus
    its own."""
    available = free
    for index, (limit, _, released) in enumerate(releases):
        available += released
        if available >= cores:
            for later, _, more in releases[index + 1 :]:
                if later > limit:
                    break
                available += more
            return limit, available - cores
    raise ValueError(f"{cores} cores are more than the pool holds")


def _reserving(
    now: int, rest: Sequence[SimJob], free: int, releases: list[tuple[int, int, int]], depth: int
) -> list[SimJob]:
    """backfill_depth N: reservations for the first N jobs that do not fit, in order; a job
    starts now only if it fits and leaves every reservation its cores."""
    profile = _Profile(now, free + sum(cores for _, _, cores in releases), releases)
    chosen: list[SimJob] = []
    reservations = 0
    for job in rest:
        duration = walltime_limit(job.run_time, job.requested_walltime)
        if job.cores <= free and profile.fits(0, now + duration, job.cores):
            chosen.append(job)
            free -= job.cores
            profile.hold(now, now + duration, job.cores)
        elif reservations < depth:
            start = profile.earliest(duration, job.cores)
            profile.hold(start, start + duration, job.cores)
            reservations += 1
    return chosen


class _Profile:
    """The cores in use from now on, as the running jobs' estimated ends and the reservations
    leave them: `used[k]` from `times[k]` until the next time (the last until forever)."""

    def __init__(self, now: int, capacity: int, releases: list[tuple[int, int, int]]) -> None:
        self.capacity = capacity
        self.times = [now]
        self.used = [sum(cores for _, _, cores in releases)]
        for limit, _, cores in releases:  # sorted by estimated end
            if limit > self.times[-1]:
                self.times.append(limit)
                self.used.append(self.used[-1])
            self.used[-1] -= cores

    def fits(self, first: int, until: int, cores: int) -> bool:
        """Whether `cores` more fit from breakpoint `first` until the time `until`."""
        times, used, room = self.times, self.used, self.capacity - cores
        index = first
        while index < len(times) and times[index] < until:
            if used[index] > room:
                return False
            index += 1
        return True

    def earliest(self, duration: int, cores: int) -> int:
        """The first breakpoint from which `cores` fit for `duration` seconds."""
        for index, moment in enumerate(self.times):
            if self.fits(index, moment + duration, cores):
                return moment
        raise ValueError(f"{cores} cores are more than the pool holds")

    def hold(self, begin: int, end: int, cores: int) -> None:
        """`cores` in use over [begin, end)."""
        first, last = self._breakpoint(begin), self._breakpoint(end)
        for index in range(first, last):
            self.used[index] += cores

    def _breakpoint(self, moment: int) -> int:
        """The index of the breakpoint at `moment`, made if there is none."""
        index = bisect.bisect_left(self.times, moment)
        if index < len(self.times) and self.times[index] == moment:
            return index
        self.times.insert(index, moment)
        self.used.insert(index, self.used[index - 1])
        return index
