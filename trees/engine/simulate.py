"""A cluster's workload replayed under a scheduling policy: discrete events, pools of cores,
and of GPUs and nodes when they are given.

Times are whole epoch seconds. Events are submits and ends; at each instant the ends are taken
first, then the submits, then one scheduling pass. A job runs exactly its recorded run time and
holds its cores (GPUs, nodes) over [start, end). A pool is a count: a job fits when each pool
enforced has its count free, wherever that is (no placement on nodes). What a pass may start
depends on the queue's order (a `QueueOrder`: submit order, or a policy's) and the backfill
discipline:

- "none": start jobs in order; stop at the first that does not fit;
- "greedy": start every job, in order, that fits now (PBS without strict_ordering);
- "easy": EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", 1995): the first job that
  does not fit gets a shadow time, the earliest estimated end (start + walltime limit) of the
  running jobs by which it fits in every pool; the extra of each pool is what is free in it
  then (every running job estimated to end by then released) minus the job's count; a later
  job starts now if it fits and either its walltime limit ends by the shadow time or it takes
  no more than the extra in every pool, which it then uses up;
- N (an int >= 1): the first N jobs that do not fit each get a reservation, at the earliest
  time the running jobs' estimated ends and the earlier reservations leave them room (PBS
  backfill_depth); a later job starts now only if it delays none of them. N = 1 is EASY.

Reservations and EASY's shadow are made afresh at every pass, from the running jobs' estimated
ends, as PBS and Maui plan each cycle anew. The passes are written once over an amount: an int
with cores alone (the common case, in plain int arithmetic) or a `_Counts` of several pools,
which compares by `<=` alone ("fits in every pool"). In submit order (`FifoOrder`) with cores
alone the replay takes two shortcuts that change no start (property tests hold them to the
plain passes): jobs arriving between two ends are weighed against what the last full pass left
(`_Standing`), and a full pass finds the jobs that may backfill by their core counts (`_Sizes`)
instead of walking the queue.
"""

from __future__ import annotations

import bisect
import gc
import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from operator import add, attrgetter, le, sub
from typing import Generic, Literal, NamedTuple, Protocol, TypeVar

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
    the walltime it asked for (None: not recorded), when it really started, if known, and the
    GPUs and nodes it held (counted only where the replay is given those pools)."""

    job_id: str
    entity: str
    submit: int
    run_time: int
    cores: int
    requested_walltime: int | None = None
    real_start: int | None = None
    queue: str = ""
    group: str = ""
    gpus: int = 0
    nodes: int = 0


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
    ("run_time": none or negative, "cores": none, "capacity": more than the pool of cores,
    "gpus" and "nodes": a negative count or more than that pool, where it is enforced)."""

    capacity: int
    jobs: list[Scheduled] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    first_submit: int | None = None  # of the jobs kept; None when none is
    last_end: int | None = None
    gpus: int | None = None  # the pools enforced beside the cores; None: not counted
    nodes: int | None = None


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

    The simulator knows it: it keeps the queue in this order anyway, never calls `order`, and,
    over cores alone, looks for the jobs that may backfill by their core counts instead of
    walking the queue.
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


class _Counts:
    """A job's counts in several pools, or what is free in them, cores first. `a <= b` when a
    fits in b in every pool: a partial order, so no other comparison is defined, and `not a <= b`
    is how "does not fit" is written for ints too. Immutable: `+=` makes a new one."""

    __slots__ = ("counts",)

    def __init__(self, counts: tuple[int, ...]) -> None:
        self.counts = counts

    def __le__(self, other: _Counts) -> bool:
        mine, others = self.counts, other.counts
        # Cores first: most jobs a pass looks at and passes over are too big for the free cores.
        return mine[0] <= others[0] and all(map(le, mine, others))

    def __add__(self, other: _Counts) -> _Counts:
        return _Counts(tuple(map(add, self.counts, other.counts)))

    def __sub__(self, other: _Counts) -> _Counts:
        return _Counts(tuple(map(sub, self.counts, other.counts)))

    def __repr__(self) -> str:
        return f"_Counts({self.counts})"


# What the passes count: cores alone as ints, or several pools as _Counts.
_Amount = TypeVar("_Amount", int, _Counts)
_Release = tuple[int, int, _Amount]  # a running job's (estimated end, sequence, count)


@dataclass(frozen=True, slots=True)
class _Pools(Generic[_Amount]):
    """The pools a replay enforces: their sizes, a job's count in them, and one core (every job
    needs one, so with less free nothing starts)."""

    size: _Amount
    need_of: Callable[[SimJob], _Amount]
    core: _Amount


_CORES: Callable[[SimJob], int] = attrgetter("cores")


def _several_pools(
    capacity: int, gpus: int | None, nodes: int | None, jobs: list[SimJob]
) -> _Pools[_Counts]:
    """The pools of cores and of whichever of GPUs and nodes are given, for the `jobs`."""
    enforced = [("cores", capacity), ("gpus", gpus), ("nodes", nodes)]
    fields = tuple(name for name, size in enforced if size is not None)
    sizes = tuple(size for _, size in enforced if size is not None)
    counts = attrgetter(*fields)  # two names or more: it gives a tuple
    # Made once, by id: `jobs` holds every job through the replay, so no id is reused.
    needs = {id(job): _Counts(counts(job)) for job in jobs}

    def need_of(job: SimJob) -> _Counts:
        return needs[id(job)]

    return _Pools(_Counts(sizes), need_of, _Counts((1,) + (0,) * (len(sizes) - 1)))


def _left_out_reason(job: SimJob, capacity: int, gpus: int | None, nodes: int | None) -> str | None:
    if job.run_time <= 0:
        return "run_time"
    if job.cores <= 0:
        return "cores"
    if job.cores > capacity:
        return "capacity"
    if gpus is not None and not 0 <= job.gpus <= gpus:
        return "gpus"
    if nodes is not None and not 0 <= job.nodes <= nodes:
        return "nodes"
    return None


_SUBMIT = attrgetter("submit")


def _job_id_of(job: SimJob) -> tuple[int, int, str]:
    return job_id_key(job.job_id)


def simulate(
    jobs: Iterable[SimJob],
    *,
    capacity: int,
    gpus: int | None = None,
    nodes: int | None = None,
    order: QueueOrder | None = None,
    backfill: Backfill = "easy",
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 10_000,
) -> Schedule:
    """Replay the jobs on `capacity` cores, and on `gpus` GPUs and `nodes` nodes where given (a
    pool not given is not counted: the jobs' counts for it are ignored); the schedule each
    started job got. `progress`, if given, hears (jobs started, jobs to start) every
    `progress_every` starts and at the end."""
    if capacity <= 0:
        raise ValueError(f"the pool needs at least one core, not {capacity}")
    for name, size in (("GPU", gpus), ("node", nodes)):
        if size is not None and size <= 0:
            raise ValueError(f"the {name} pool needs at least one {name}, not {size}")
    depth = _depth(backfill)
    policy = order if order is not None else FifoOrder()
    # A subclass may keep usage or reorder: only FifoOrder itself takes the shortcuts.
    fifo = type(policy) is FifoOrder
    schedule = Schedule(capacity, gpus=gpus, nodes=nodes)
    kept = _runnable(jobs, schedule)
    with _collector_paused() if fifo else nullcontext():
        if gpus is None and nodes is None:
            pools = _Pools(capacity, _CORES, 1)
            _replay(schedule, kept, pools, policy, depth, fifo, progress, progress_every)
        else:
            several = _several_pools(capacity, gpus, nodes, kept)
            _replay(schedule, kept, several, policy, depth, fifo, progress, progress_every)
    return schedule


def _runnable(jobs: Iterable[SimJob], schedule: Schedule) -> list[SimJob]:
    """The jobs the schedule's pools can run; the others counted in its `left_out`."""
    kept: list[SimJob] = []
    left_out = schedule.left_out
    capacity, gpus, nodes = schedule.capacity, schedule.gpus, schedule.nodes
    for job in jobs:
        reason = _left_out_reason(job, capacity, gpus, nodes)
        if reason is None:
            kept.append(job)
        else:
            left_out[reason] = left_out.get(reason, 0) + 1
    return kept


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
    schedule: Schedule,
    kept: list[SimJob],
    pools: _Pools[_Amount],
    policy: QueueOrder,
    depth: int,
    fifo: bool,
    progress: Callable[[int, int], None] | None,
    progress_every: int,
) -> None:
    """`simulate` on the runnable jobs `kept`, its arguments checked: fills in `schedule`."""
    # The shortcuts count cores alone: taken only when no other pool is enforced.
    shortcut = fifo and isinstance(pools.size, int) and depth in (_NONE, _GREEDY, _EASY)
    planning = depth not in (_NONE, _GREEDY)  # whether passes read the estimated ends
    need_of, core = pools.need_of, pools.core
    # By submit time; jobs submitted together are put in job id order as they arrive (sorting
    # every job by its id would cost a tenth of a replay).
    kept.sort(key=_SUBMIT)
    submits = [job.submit for job in kept]
    needs = list(map(need_of, kept))  # by rank, as `kept`: read far more often than made
    total, started = len(kept), 0
    started_jobs = schedule.jobs
    # (end, sequence, estimated end, rank) of each running job; the sequence breaks end ties.
    ends: list[tuple[int, int, int, int]] = []
    # The running jobs' estimated ends, (limit, sequence, count), kept sorted for backfilling.
    releases: list[_Release[_Amount]] = []
    # The queue: its jobs' ranks, their places in `kept` (submit order, then job id), ascending.
    queue: list[int] = []
    rank_of: dict[int, int] = {}  # id(job) -> its rank, for an order that returns jobs
    sizes = _Sizes() if shortcut and depth != _NONE else None
    free = pools.size
    upcoming = 0
    now = 0
    report = progress_every if progress is not None else -1
    # In submit order, what the last full pass left stands until a job ends: jobs arriving
    # meanwhile are weighed alone against it (`_Standing`), not the whole queue again.
    standing: _Standing[_Amount] | None = None
    while upcoming < total or ends:
        now = submits[upcoming] if upcoming < total else ends[0][0]
        if ends and ends[0][0] <= now:
            now = ends[0][0]
            standing = None
            while ends and ends[0][0] == now:
                _, sequence, limit, rank = heapq.heappop(ends)
                if planning:
                    del releases[bisect.bisect_left(releases, (limit, sequence))]
                free += needs[rank]
                if not fifo:
                    policy.job_ended(kept[rank], now)
        arrived = upcoming
        while upcoming < total and submits[upcoming] == now:
            upcoming += 1
        if upcoming - arrived > 1:
            kept[arrived:upcoming] = sorted(kept[arrived:upcoming], key=_job_id_of)
            needs[arrived:upcoming] = map(need_of, kept[arrived:upcoming])
        for rank in range(arrived, upcoming):
            queue.append(rank)
            if not shortcut:
                rank_of[id(kept[rank])] = rank
        if not queue or not core <= free:
            continue
        chosen: Iterable[int]
        if shortcut and standing is not None:
            chosen = standing.behind(now, kept, range(arrived, upcoming), depth, needs, core)
        elif shortcut and len(queue) == 1 and needs[queue[0]] <= free:
            chosen = (queue[0],)  # a job alone in the queue, and it fits: most jobs
        elif shortcut and isinstance(free, int):  # always so (cores alone): for mypy
            chosen, standing = _fifo_pass(now, queue, free, releases, depth, sizes, kept, needs)
        else:
            waiting = list(map(kept.__getitem__, queue))
            considered = waiting if fifo else policy.order(now, waiting)
            passed = _pass(now, considered, free, releases, depth, pools)
            chosen = [rank_of.pop(id(job)) for job in passed]
        for rank in chosen:
            del queue[bisect.bisect_left(queue, rank)]
            job = kept[rank]
            need, run, asked = needs[rank], job.run_time, job.requested_walltime
            free -= need
            end = now + run
            limit = now + (asked if asked and asked >= run else run)  # walltime_limit: hot
            heapq.heappush(ends, (end, started, limit, rank))
            if planning:
                bisect.insort(releases, (limit, started, need))
            if sizes is not None and rank < sizes.indexed:
                sizes.remove(job.cores, rank)
            started_jobs.append(
                Scheduled(
                    job.job_id, job.entity, job.group, job.submit, now, end, job.cores,
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
class _Standing(Generic[_Amount]):
    """What a pass left for the jobs behind the blocked first one (in submit order, also for
    those arriving before the next end): what is free; with EASY, the shadow time and the extra
    (no shadow: the head of the queue fits no more than it did, and none may pass it)."""

    free: _Amount
    shadow: int | None
    extra: _Amount

    def behind(
        self,
        now: int,
        jobs: Sequence[SimJob],
        indices: Iterable[int],
        depth: int,
        needs: Sequence[_Amount],
        least: _Amount,
    ) -> list[int]:
        """Which of the `jobs` at `indices` (in order, all behind the blocked first job; `needs`
        their counts, at the same places) start now, their indices; it stops after a start
        that leaves less than `least` free."""
        chosen: list[int] = []
        if depth == _NONE:
            return chosen  # nothing passes the blocked first job
        free, shadow, extra = self.free, self.shadow, self.extra
        backfill_by = shadow - now if shadow is not None else -1  # the longest limit that fits
        for index in indices:
            need = needs[index]
            if not need <= free:
                continue
            job = jobs[index]
            run, asked = job.run_time, job.requested_walltime  # walltime_limit, inlined: hot
            if depth == _GREEDY or (asked if asked and asked >= run else run) <= backfill_by:
                free -= need
            elif need <= extra:
                free -= need
                extra -= need
            else:
                continue
            chosen.append(index)
            if not least <= free:
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
    releases: list[_Release[int]],
    depth: int,
    sizes: _Sizes | None,
    kept: list[SimJob],
    cores: list[int],
) -> tuple[list[int], _Standing[int] | None]:
    """`_pass` in submit order for none, greedy and EASY, by rank (`cores` the jobs' cores, by
    rank): the same jobs, but past the first job that does not fit only those with few enough
    cores are looked at (`sizes`)."""
    chosen: list[int] = []
    for rank in queue:  # in order while they fit: every discipline does this
        if cores[rank] > free:
            break
        chosen.append(rank)
        free -= cores[rank]
    else:
        return chosen, None
    if sizes is None or free == 0:  # none, or nothing else fits
        return chosen, _Standing(free, None, 0)
    if depth == _GREEDY:
        standing = _Standing(free, None, 0)
    else:
        ahead = [kept[before] for before in chosen]
        shadow, extra = _shadow(cores[rank], free, _with_started(now, releases, ahead, _CORES))
        standing = _Standing(free, shadow, extra)
    sizes.catch_up(queue, kept)
    while standing.free:
        later, largest = sizes.fitting(standing.free, rank)
        # `behind` stops at a start that leaves fewer free cores than the largest job looked
        # at; looking again with that many skips the jobs that no longer fit.
        started = standing.behind(now, kept, later, depth, cores, largest)
        chosen += started
        if not started or standing.free >= largest:
            break
        rank = started[-1]
    return chosen, standing


def _pass(
    now: int,
    considered: Sequence[SimJob],
    free: _Amount,
    releases: list[_Release[_Amount]],
    depth: int,
    pools: _Pools[_Amount],
) -> list[SimJob]:
    """The jobs one pass starts at `now`, in the order it starts them."""
    need_of = pools.need_of
    chosen: list[SimJob] = []
    position = 0
    # In order while they fit: every discipline does this.
    for job, need in zip(considered, map(need_of, considered), strict=True):
        if not need <= free:
            break
        chosen.append(job)
        free -= need
        position += 1
    rest = considered[position:]
    if not rest or depth == _NONE:
        return chosen
    if depth == _GREEDY:
        for job, need in zip(rest, map(need_of, rest), strict=True):
            if need <= free:
                chosen.append(job)
                free -= need
                if not pools.core <= free:
                    break
        return chosen
    releases = _with_started(now, releases, chosen, need_of)
    if depth == _EASY:
        needs = list(map(need_of, rest))  # `behind` looks at nearly all of them
        standing = _Standing(free, *_shadow(needs[0], free, releases))
        later = standing.behind(now, rest, range(1, len(rest)), depth, needs, pools.core)
        chosen += [rest[index] for index in later]
        return chosen
    chosen += _reserving(now, rest, free, releases, depth, pools)
    return chosen


def _with_started(
    now: int,
    releases: list[_Release[_Amount]],
    chosen: list[SimJob],
    need_of: Callable[[SimJob], _Amount],
) -> list[_Release[_Amount]]:
    """The running jobs' estimated ends, soonest first, with those of the jobs `chosen` to
    start now (sequences below zero, each its own: ties never compare the counts)."""
    if not chosen:
        return releases
    return sorted(
        releases
        + [
            (now + walltime_limit(job.run_time, job.requested_walltime), -1 - n, need_of(job))
            for n, job in enumerate(chosen)
        ]
    )


def _shadow(need: _Amount, free: _Amount, releases: list[_Release[_Amount]]) -> tuple[int, _Amount]:
    """EASY's shadow time for a job of `need` that does not fit in `free`, the first estimated
    end by which it fits in every pool, and the extra: what is free at the shadow time (every
    job estimated to end by then released) minus its own."""
    available = free
    for index, (limit, _, released) in enumerate(releases):
        available += released
        if need <= available:
            for later, _, more in releases[index + 1 :]:
                if later > limit:
                    break
                available += more
            return limit, available - need
    raise ValueError(f"{need} is more than the pools hold")


def _reserving(
    now: int,
    rest: Sequence[SimJob],
    free: _Amount,
    releases: list[_Release[_Amount]],
    depth: int,
    pools: _Pools[_Amount],
) -> list[SimJob]:
    """backfill_depth N: reservations for the first N jobs that do not fit, in order; a job
    starts now only if it fits and leaves every reservation its counts, in every pool."""
    profile = _Profile(now, pools.size, pools.size - free, releases)
    chosen: list[SimJob] = []
    reservations = 0
    for job, need in zip(rest, map(pools.need_of, rest), strict=True):
        duration = walltime_limit(job.run_time, job.requested_walltime)
        if need <= free and profile.fits(0, now + duration, need):
            chosen.append(job)
            free -= need
            profile.hold(now, now + duration, need)
        elif reservations < depth:
            start = profile.earliest(duration, need)
            profile.hold(start, start + duration, need)
            reservations += 1
    return chosen


class _Profile(Generic[_Amount]):
    """What is in use from now on, as the running jobs' estimated ends and the reservations
    leave it: `used[k]` from `times[k]` until the next time (the last until forever)."""

    def __init__(
        self, now: int, capacity: _Amount, used: _Amount, releases: list[_Release[_Amount]]
    ) -> None:
        self.capacity: _Amount = capacity
        self.times = [now]
        self.used: list[_Amount] = [used]
        for limit, _, released in releases:  # sorted by estimated end
            if limit > self.times[-1]:
                self.times.append(limit)
                self.used.append(self.used[-1])
            self.used[-1] -= released

    def fits(self, first: int, until: int, need: _Amount) -> bool:
        """Whether `need` more fits from breakpoint `first` until the time `until`."""
        times, used, room = self.times, self.used, self.capacity - need
        index = first
        while index < len(times) and times[index] < until:
            if not used[index] <= room:
                return False
            index += 1
        return True

    def earliest(self, duration: int, need: _Amount) -> int:
        """The first breakpoint from which `need` fits for `duration` seconds."""
        for index, moment in enumerate(self.times):
            if self.fits(index, moment + duration, need):
                return moment
        raise ValueError(f"{need} is more than the pools hold")

    def hold(self, begin: int, end: int, need: _Amount) -> None:
        """`need` in use over [begin, end)."""
        first, last = self._breakpoint(begin), self._breakpoint(end)
        for index in range(first, last):
            self.used[index] += need

    def _breakpoint(self, moment: int) -> int:
        """The index of the breakpoint at `moment`, made if there is none."""
        index = bisect.bisect_left(self.times, moment)
        if index < len(self.times) and self.times[index] == moment:
            return index
        self.times.insert(index, moment)
        self.used.insert(index, self.used[index - 1])
        return index
