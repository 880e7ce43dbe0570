"""What a scheduling cycle does to usage over time: accrual of job usage and due decays.

Times are epoch seconds. A run's usage accrues evenly from its start to its end, so that the
cycles it spans share it by the time each covers and the last one adds the remainder; PBS
decays every usage once per elapsed `decay_interval` (pbsfs-behaviour.md, decay).
"""

from __future__ import annotations

import math

__all__ = ["accrued_usage", "cycle_slot", "decay_instants", "half_life_factor"]


def accrued_usage(usage: float, start: int, end: int, until: int) -> float:
    """The part of a run's usage accrued by `until`: all of it from its end on, none before
    its start, in proportion to the time run in between (seed 003: usage = ncpus * walltime).
    """
    if until >= end:
        return usage
    if until <= start:
        return 0.0
    return usage * (until - start) / (end - start)


def decay_instants(last_decay: int, interval: int, now: int) -> list[int]:
    """The decays due in (last_decay, now]: one per whole `decay_interval` elapsed (PBS
    decays when `last_decay + decay_time <= now`, and sets last_decay to that instant's time).
    """
    if interval <= 0:
        raise ValueError(f"decay interval must be positive, not {interval} s")
    count = max(0, (now - last_decay) // interval)
    return [last_decay + interval * step for step in range(1, count + 1)]


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
