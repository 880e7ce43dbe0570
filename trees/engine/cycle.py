"""What a scheduling cycle does to usage over time: accrual of job usage and due decays.

Times are epoch seconds. A run's usage accrues evenly from its start to its end, so that the
cycles it spans share it by the time each covers and the last one adds the remainder; PBS
decays every usage once per elapsed `decay_interval` (pbsfs-behaviour.md, decay).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from trees.engine.formula import Formula, FormulaValueError
from trees.engine.pbs import (
    FAIRSHARE_MIN_USAGE,
    GroupDef,
    PbsTree,
    UsageRecord,
    is_readable_record,
)
from trees.engine.recording import PbsRecording

__all__ = [
    "Accrual",
    "Run",
    "accrued_by",
    "cycle_slot",
    "cycle_usage",
    "decay_instants",
    "decayed_at",
    "decayed_records",
    "half_life_factor",
    "kept_instants",
    "scheduler_decayed",
    "stored_records",
]


def accrued_by(usage: float, start: int, end: int, until: int) -> float:
    """The part of a run's usage accrued by `until`: all of it from its end on, none before
    its start, in proportion to the time run in between (seed 003: usage = ncpus * walltime).
    """
    if until >= end:
        return usage
    if until <= start:
        return 0.0
    return usage * (until - start) / (end - start)


def decay_instants(last_decay: int, interval: int, now: int) -> list[int]:
    """The decays a cycle at `now` makes: one per `decay_interval` while more than one is left
    of the time since last_decay (fifo.cpp:398-412: `while (t - last_decay) > decay_time`, a
    strict >), at the instants they fell due.
    """
    if interval <= 0:
        raise ValueError(f"decay interval must be positive, not {interval} s")
    count = max(0, (now - last_decay - 1) // interval)
    return [last_decay + interval * step for step in range(1, count + 1)]


def decayed_at(last_decay: int, interval: int, now: int) -> int:
    """last_decay after a cycle at `now` that decayed: the instant the last half-life should
    have fallen (fifo.cpp:414-420: `now - (now - last_decay) % decay_time`)."""
    return now - (now - last_decay) % interval


def half_life_factor(half_life: float, interval: float) -> float:
    """The decay_factor per `interval` that halves usage every `half_life` (seed 003: 168 h
    half-life, decayed every 168 h, is decay_factor 0.5).
    """
    if half_life <= 0 or interval <= 0:
        raise ValueError("half-life and decay interval must be positive")
    return math.pow(0.5, interval / half_life)


def cycle_slot(now: int, iteration: int) -> int:
    """The cycle `now` falls in: the last multiple of `scheduler_iteration` at or before it, so
    that two ticks of one slot (a duplicated beat, a retry) name the same cycle.
    """
    if iteration <= 0:
        raise ValueError(f"scheduler iteration must be positive, not {iteration} s")
    return now - now % iteration


@dataclass(slots=True)
class Run:
    """One job run as the cycles accrue it (epoch seconds)."""

    key: int  # the job's id
    entity: str
    start: int
    end: int | None  # None while it runs
    usage: float  # its fairshare_usage_res (0 while it runs: the cycles price it)
    accrued: float  # what the cycles have added for it so far
    ncpus: int = 0
    resources: dict[str, float] | None = None  # what the formula prices a running run on
    billable: float = 0.0  # Slurm: the billable TRES a pass charges per second
    closed: bool = False  # the cycles add nothing more for it (PBS recording: it ended)
    walltime: int | None = None  # an ended run's walltime (PBS recording: when it exited)
    mom: str = ""  # the host of its MoM (PBS recording: whose samples it has)

    @property
    def exit(self) -> int | None:
        """When an ended run's processes ended: its start plus its walltime (its end when
        that is not known)."""
        if self.end is None:
            return None
        return self.end if self.walltime is None else self.start + self.walltime


class Accrual:
    """What cycles add to the usage database for the runs: each run's usage once in all, or,
    with a `recording`, what PBS would have recorded of it (trees.engine.recording)."""

    def __init__(self, formula: Formula, recording: PbsRecording | None = None) -> None:
        self.formula = formula
        self.recording = recording
        self.changed: dict[int, Run] = {}
        self.added = 0.0

    def add_until(self, runs: Iterable[Run], moment: int, records: dict[str, float]) -> None:
        """Add to each entity's record what its runs used up to `moment` and had not added;
        a new entity starts at 1, as PBS's find_alloc_ginfo makes it, and none goes below 1.
        """
        for run in runs:
            if run.start >= moment or run.closed:
                continue
            due = self.due(run, moment)
            delta = due - run.accrued
            if self.recording is not None and run.end is not None and moment >= run.end:
                run.closed = True  # PBS records nothing of it from its end on
                self.changed[run.key] = run
            if delta == 0:
                continue
            run.accrued = due
            self.changed[run.key] = run
            self.added += delta
            usage = records.get(run.entity, FAIRSHARE_MIN_USAGE) + delta
            records[run.entity] = max(usage, FAIRSHARE_MIN_USAGE)

    def due(self, run: Run, moment: int) -> float:
        """What the run has used by `moment`: its share of an ended run's usage, or a running
        run priced by the formula on its elapsed walltime with every core busy; with a
        recording, what it had used by the sample PBS last read (nothing before one), its
        usage spread over its walltime.
        """
        if self.recording is not None:
            read = self.recording.reading(run.mom, run.start, run.exit, run.end, moment)
            if read is None:
                return 0.0
            moment = read.sample
            if run.end is not None:
                return accrued_by(run.usage, run.start, run.exit or run.end, moment)
        if run.end is not None:
            return accrued_by(run.usage, run.start, run.end, moment)
        resources = dict(run.resources or {})
        elapsed = moment - run.start
        resources["walltime"] = elapsed
        resources["cput"] = float(elapsed * max(run.ncpus, 1))
        try:
            return max(self.formula.evaluate(resources), 0.0)
        except FormulaValueError:
            return run.accrued


def decayed_records(
    groups: Sequence[GroupDef], records: dict[str, float], factor: float, unknown_shares: int
) -> dict[str, float]:
    """The usage database after `pbsfs -d`: every usage × factor, floor 1, records at 1 gone,
    in the order PBS writes them.
    """
    pbs = PbsTree.build(
        groups,
        [UsageRecord(name, usage) for name, usage in records.items()],
        unknown_shares=unknown_shares,
    )
    pbs.decay(factor)
    return {record.name: record.usage for record in pbs.records()}


def scheduler_decayed(records: dict[str, float], factor: float) -> dict[str, float]:
    """The records after one of pbs_sched's decays: every usage × factor, floor 1, each where
    it was (fairshare.cpp:451-462 decays the tree in memory; its order stays)."""
    return {name: max(usage * factor, FAIRSHARE_MIN_USAGE) for name, usage in records.items()}


def kept_instants(instants: Iterable[int], now: int, every_cycle: int, hourly: int) -> set[int]:
    """The cycle times whose history the roll-up keeps at `now`: every one of the last
    `every_cycle` seconds, the last of each (UTC) hour of the last `hourly` seconds, the last
    of each day before.
    """
    kept: set[int] = set()
    last_of: dict[tuple[int, int], int] = {}
    for instant in sorted(instants):
        if instant >= now - every_cycle:
            kept.add(instant)
            continue
        width = 3600 if instant >= now - hourly else 86_400
        last_of[width, instant // width] = instant
    return kept | set(last_of.values())


def stored_records(records: dict[str, float]) -> dict[str, float]:
    """The records a store keeps: those PBS reads back, in their order."""
    return {name: usage for name, usage in records.items() if is_readable_record(name, usage)}


def cycle_usage(
    accrual: Accrual,
    runs: Sequence[Run],
    records: dict[str, float],
    *,
    now: int,
    last_decay: int,
    groups: Sequence[GroupDef],
    decay_interval: int,
    decay_factor: float,
    unknown_shares: int,
    decayed: Callable[[dict[str, float]], dict[str, float]] | None = None,
) -> tuple[dict[str, float], int, list[int]]:
    """One cycle on the usage database: the runs' usage accrued up to `now` and the decays due
    since `last_decay` (decay_instants). Exact accrual applies each decay where it falls, so
    that what ran before a decay is decayed with it (pbsfs -d); with a PBS recording the
    usage is added first and the decays follow, as pbs_sched does (fifo.cpp:370-412). Returns
    the records as stored, the new last_decay and the decays' times; a first cycle
    (last_decay 0) starts the decay clock, as PBS does.

    `decayed`, if given, stands for decayed_records(groups, records, decay_factor,
    unknown_shares) and must return the same: a caller that keeps the tree built (a replay's
    order) decays it there instead of building it again.
    """
    last_decay = last_decay or now
    decays = decay_instants(last_decay, decay_interval, now)
    as_pbs = accrual.recording is not None
    if as_pbs:
        accrual.add_until(runs, now, records)
    for instant in decays:
        if as_pbs:
            records = scheduler_decayed(records, decay_factor)
            continue
        accrual.add_until(runs, instant, records)
        if decayed is None:
            records = decayed_records(groups, records, decay_factor, unknown_shares)
        else:
            records = decayed(records)
    if decays:
        last_decay = decayed_at(last_decay, decay_interval, now)
    if not as_pbs:
        accrual.add_until(runs, now, records)
    return stored_records(records), last_decay, decays
