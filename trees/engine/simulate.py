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

Reservations and EASY's shadow are made afresh at every pass, from the running jobs' estimated
ends, as PBS and Maui plan each cycle anew. In submit order (`FifoOrder`) the replay takes two
shortcuts that change no start (property tests hold them to the plain passes): jobs arriving
between two ends are weighed against what the last full pass left (`_Standing`), and a full
pass finds the jobs that may backfill by their core counts (`_Sizes`) instead of walking the
queue.
"""

from __future__ import annotations

import bisect
import gc
import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Literal, NamedTuple, Protocol

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


class Scheduled(NamedTuple):
    """A job where the replay placed it (a named tuple: made twice as fast as a frozen
    dataclass, and the replay makes one per job)."""

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
    first_submit: int | None = None  # of the jobs kept; None when none is
    last_end: int | None = None


class QueueOrder(Protocol):
    """The order a pass considers the queued jobs in, and what a policy is told as jobs run.

    The simulator calls `order` only when a job could start (free cores and a queue); a policy
    that keeps usage accrues its running jobs' usage up to `now` there, and learns of each start
    and end from the two hooks, called at the start and end times in event order.
    """

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        """The queued jobs (given in submit order, then job id) in the order to consider them
        at `now`; the same jobs, `queued` itself if it is already in that order."""
        ...

    def job_started(self, job: SimJob, now: int) -> None:
        """`job` started at `now` (after this pass's `order`)."""
        ...

    def job_ended(self, job: SimJob, now: int) -> None:
        """`job` ended at `now` (before the pass at `now`, if there is one)."""
        ...


class FifoOrder:
    """First come, first served: submit time, then job id (job_id_key).

    The simulator knows it: it keeps the queue in this order anyway, never calls `order`, and
    looks for the jobs that may backfill by their core counts instead of walking the queue.
    """

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        return queued  # the simulator keeps the queue in submit order

    def job_started(self, job: SimJob, now: int) -> None:
        pass

    def job_ended(self, job: SimJob, now: int) -> None:
        pass


def job_id_key(job_id: str) -> tuple[int, int, str]:
    """Job ids compared as numbers when both are all (ASCII) digits (SWF's job numbers, PBS's
    sequence numbers), else as text. Numbers sort before text: comparing a number and a text
    as text instead would not be a total order (2 < 10 as numbers, 10 < 1a < 2 as text)."""
    if job_id.isascii() and job_id.isdigit():
        return (0, int(job_id), "")
    return (1, 0, job_id)


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


_SUBMIT = attrgetter("submit")


def _job_id_of(job: SimJob) -> tuple[int, int, str]:
    return job_id_key(job.job_id)


def simulate(
    jobs: Iterable[SimJob],
    *,
    capacity: int,
    order: QueueOrder | None = None,
    backfill: Backfill = "easy",
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 10_000,
) -> Schedule:
    """Replay the jobs on `capacity` cores; the schedule each started job got. `progress`, if
    given, hears (jobs started, jobs to start) every `progress_every` starts and at the end."""
    if capacity <= 0:
        raise ValueError(f"the pool needs at least one core, not {capacity}")
    depth = _depth(backfill)
    policy = order if order is not None else FifoOrder()
    # A subclass may keep usage or reorder: only FifoOrder itself takes the shortcuts.
    fifo = type(policy) is FifoOrder
    if not fifo:
        return _replay(jobs, capacity, policy, depth, fifo, progress, progress_every)
    with _collector_paused():
        return _replay(jobs, capacity, policy, depth, fifo, progress, progress_every)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector held off: a replay in submit order makes a million small tuples
    and no cycles, and the collector's passes over them took a third of its time. Not for a
    policy's order, whose own objects may need it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replay(
    jobs: Iterable[SimJob],
    capacity: int,
    policy: QueueOrder,
    depth: int,
    fifo: bool,
    progress: Callable[[int, int], None] | None,
    progress_every: int,
) -> Schedule:
    """`simulate`, its arguments checked."""
    shortcut = fifo and depth in (_NONE, _GREEDY, _EASY)
    planning = depth not in (_NONE, _GREEDY)  # whether passes read the estimated ends
    schedule = Schedule(capacity)
    kept: list[SimJob] = []
    for job in jobs:
        reason = _left_out_reason(job, capacity)
        if reason is None:
            kept.append(job)
        else:
            schedule.left_out[reason] = schedule.left_out.get(reason, 0) + 1
    # By submit time; jobs submitted together are put in job id order as they arrive (sorting
    # every job by its id would cost a tenth of a replay).
    kept.sort(key=_SUBMIT)
    submits = [job.submit for job in kept]
    total, started = len(kept), 0
    started_jobs = schedule.jobs
    # (end, sequence, estimated end, job) of each running job; the sequence breaks end ties.
    ends: list[tuple[int, int, int, SimJob]] = []
    # The running jobs' estimated ends, (limit, sequence, cores), kept sorted for backfilling.
    releases: list[tuple[int, int, int]] = []
    # The queue: its jobs' ranks, their places in `kept` (submit order, then job id), ascending.
    queue: list[int] = []
    rank_of: dict[int, int] = {}  # id(job) -> its rank, for an order that returns jobs
    sizes = _Sizes() if shortcut and depth != _NONE else None
    free = capacity
    upcoming = 0
    now = 0
    report = progress_every if progress is not None else -1
    # In submit order, what the last full pass left stands until a job ends: jobs arriving
    # meanwhile are weighed alone against it (`_Standing`), not the whole queue again.
    standing: _Standing | None = None
    while upcoming < total or ends:
        now = submits[upcoming] if upcoming < total else ends[0][0]
        if ends and ends[0][0] <= now:
            now = ends[0][0]
            standing = None
            while ends and ends[0][0] == now:
                _, sequence, limit, job = heapq.heappop(ends)
                if planning:
                    del releases[bisect.bisect_left(releases, (limit, sequence))]
                free += job.cores
                if not fifo:
                    policy.job_ended(job, now)
        arrived = upcoming
        while upcoming < total and submits[upcoming] == now:
            upcoming += 1
        if upcoming - arrived > 1:
            kept[arrived:upcoming] = sorted(kept[arrived:upcoming], key=_job_id_of)
        for rank in range(arrived, upcoming):
            queue.append(rank)
            if not shortcut:
                rank_of[id(kept[rank])] = rank
        if not queue or free == 0:
            continue
        chosen: Iterable[int]
        if shortcut and standing is not None:
            chosen = standing.behind(now, kept, range(arrived, upcoming), depth)
        elif shortcut and len(queue) == 1 and kept[queue[0]].cores <= free:
            chosen = (queue[0],)  # a job alone in the queue, and it fits: most jobs
        elif shortcut:
            chosen, standing = _fifo_pass(now, queue, free, releases, depth, sizes, kept)
        else:
            waiting = list(map(kept.__getitem__, queue))
            considered = waiting if fifo else policy.order(now, waiting)
            chosen = [rank_of.pop(id(job)) for job in _pass(now, considered, free, releases, depth)]
        for rank in chosen:
            del queue[bisect.bisect_left(queue, rank)]
            job = kept[rank]
            cores, run, asked = job.cores, job.run_time, job.requested_walltime
            free -= cores
            end = now + run
            limit = now + (asked if asked and asked >= run else run)  # walltime_limit: hot
            heapq.heappush(ends, (end, started, limit, job))
            if planning:
                bisect.insort(releases, (limit, started, cores))
            if sizes is not None and rank < sizes.indexed:
                sizes.remove(cores, rank)
            started_jobs.append(
                Scheduled(
                    job.job_id, job.entity, job.group, job.submit, now, end, cores,
                    job.real_start,
                )
            )  # fmt: skip
            started += 1
            if not fifo:
                policy.job_started(job, now)
            if started == report and progress is not None:
                report += progress_every
                progress(started, total)
        if not queue:
            standing = None
    if progress is not None:
        progress(started, total)
    if kept:  # every job ends after its submit: the last instant is the last end
        schedule.first_submit, schedule.last_end = kept[0].submit, now
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

    def behind(
        self,
        now: int,
        jobs: Sequence[SimJob],
        indices: Iterable[int],
        depth: int,
        stop_below: int = 0,
    ) -> list[int]:
        """Which of the `jobs` at `indices` (in order, all behind the blocked first job) start
        now, their indices; it stops after a start that leaves fewer than `stop_below` free."""
        chosen: list[int] = []
        if depth == _NONE:
            return chosen  # nothing passes the blocked first job
        free, shadow, extra = self.free, self.shadow, self.extra
        backfill_by = shadow - now if shadow is not None else -1  # the longest limit that fits
        for index in indices:
            job = jobs[index]
            cores = job.cores
            if cores > free:
                continue
            run, asked = job.run_time, job.requested_walltime  # walltime_limit, inlined: hot
            if depth == _GREEDY or (asked if asked and asked >= run else run) <= backfill_by:
                free -= cores
            elif cores <= extra:
                free -= cores
                extra -= cores
            else:
                continue
            chosen.append(index)
            if free < stop_below or free == 0:
                break
        self.free, self.extra = free, extra
        return chosen


class _Sizes:
    """The queued jobs' ranks by core count, for full passes in submit order: the few jobs that
    may backfill into a few free cores are found without walking a queue of thousands.

    A job is indexed only once a pass finds the queue blocked (`catch_up`): most jobs start as
    they arrive and are never indexed. Every queued job of a rank below `indexed` is.
    """

    __slots__ = ("indexed", "ranks", "sizes")

    def __init__(self) -> None:
        self.indexed = 0
        self.ranks: dict[int, list[int]] = {}  # ascending: jobs are indexed in rank order
        self.sizes: list[int] = []  # the core counts indexed, ascending

    def catch_up(self, queue: list[int], kept: list[SimJob]) -> None:
        """Index the queued jobs not yet indexed."""
        for rank in queue[bisect.bisect_left(queue, self.indexed) :]:
            cores = kept[rank].cores
            ranks = self.ranks.get(cores)
            if ranks is None:
                self.ranks[cores] = [rank]
                bisect.insort(self.sizes, cores)
            else:
                ranks.append(rank)
        self.indexed = queue[-1] + 1

    def remove(self, cores: int, rank: int) -> None:
        ranks = self.ranks[cores]
        if len(ranks) == 1:
            del self.ranks[cores]
            del self.sizes[bisect.bisect_left(self.sizes, cores)]
        else:
            del ranks[bisect.bisect_left(ranks, rank)]

    def fitting(self, free: int, after: int) -> tuple[list[int], int]:
        """The ranks after `after` of the queued jobs of at most `free` cores, ascending, and
        the largest of their core counts (0 when there are none)."""
        found: list[int] = []
        ranks_of = self.ranks
        sizes = self.sizes[: bisect.bisect_right(self.sizes, free)]
        for cores in sizes:
            ranks = ranks_of[cores]
            found += ranks[bisect.bisect_right(ranks, after) :]
        found.sort()
        return found, sizes[-1] if sizes else 0


def _fifo_pass(
    now: int,
    queue: list[int],
    free: int,
    releases: list[tuple[int, int, int]],
    depth: int,
    sizes: _Sizes | None,
    kept: list[SimJob],
) -> tuple[list[int], _Standing | None]:
    """`_pass` in submit order for none, greedy and EASY, by rank: the same jobs, but past the
    first job that does not fit only those with few enough cores are looked at (`sizes`)."""
    chosen: list[int] = []
    for rank in queue:  # in order while they fit: every discipline does this
        job = kept[rank]
        if job.cores > free:
            break
        chosen.append(rank)
        free -= job.cores
    else:
        return chosen, None
    if sizes is None or free == 0:  # none, or nothing else fits
        return chosen, _Standing(free)
    if depth == _GREEDY:
        standing = _Standing(free)
    else:
        ahead = [kept[before] for before in chosen]
        shadow, extra = _shadow(job.cores, free, _with_started(now, releases, ahead))
        standing = _Standing(free, shadow, extra)
    sizes.catch_up(queue, kept)
    while standing.free:
        later, largest = sizes.fitting(standing.free, rank)
        # `behind` stops at a start that leaves fewer free cores than the largest job looked
        # at; looking again with that many skips the jobs that no longer fit.
        started = standing.behind(now, kept, later, depth, largest)
        chosen += started
        if not started or standing.free >= largest:
            break
        rank = started[-1]
    return chosen, standing


def _pass(
    now: int,
    considered: Sequence[SimJob],
    free: int,
    releases: list[tuple[int, int, int]],
    depth: int,
) -> list[SimJob]:
    """The jobs one pass starts at `now`, in the order it starts them."""
    chosen: list[SimJob] = []
    position = 0
    for job in considered:  # in order while they fit: every discipline does this
        if job.cores > free:
            break
        chosen.append(job)
        free -= job.cores
        position += 1
    rest = considered[position:]
    if not rest or depth == _NONE:
        return chosen
    if depth == _GREEDY:
        for job in rest:
            if job.cores <= free:
                chosen.append(job)
                free -= job.cores
                if free == 0:
                    break
        return chosen
    releases = _with_started(now, releases, chosen)
    if depth == _EASY:
        standing = _Standing(free, *_shadow(rest[0].cores, free, releases))
        chosen += [rest[index] for index in standing.behind(now, rest, range(1, len(rest)), depth)]
        return chosen
    chosen += _reserving(now, rest, free, releases, depth)
    return chosen


def _with_started(
    now: int, releases: list[tuple[int, int, int]], chosen: list[SimJob]
) -> list[tuple[int, int, int]]:
    """The running jobs' estimated ends, soonest first, with those of the jobs `chosen` to
    start now."""
    if not chosen:
        return releases
    return sorted(
        releases
        + [
            (now + walltime_limit(job.run_time, job.requested_walltime), -1, job.cores)
            for job in chosen
        ]
    )


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
