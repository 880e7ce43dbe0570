"""Altair Accelerator (vovserver) FairShare: the FS_* fields of each FairShare group.

Follows Altair's Accelerator manual (https://help.altair.com/accelerator/html/, 2021-2024
editions), cited by page: accel/topics/shared/fairshare_groups.htm (targets over active groups,
fstokens), fairshare_configure_via_file.htm (weights, windows, `-t 0`), fairshare_weights.htm
(weights up to 100,000), fairshare_multiple_token_accounting.htm (fstokens up to 50,000),
fairshare_tuning.htm (`fairshare.relative`, `fairshare.relative_alpha`) and
accel/topics/accelerator/preemption_rules_fairshare.htm, "Preemption Rules to Speed Up
FairShare", for the FS_* fields. FS_RANK9 and FS_EXCESS_RUNNING_LOCAL come from the full text of
Altair's 'Preemption Rules to Speed Up FairShare' page, which no other page describes.

Groups are slash paths under the root "/"; a job submitted to G runs in the user leaf G.<user>,
whose parent is G (`parent_of`). Every share is a fraction scaled by SCALE (8000 = 80 %).

Choices where the manual is silent, stated once:
* FS_TARGET is the group's weight over its active siblings' total weight (itself included),
  times its parent's target; the root's is 1, and 0 when the active siblings weigh nothing.
* Every FS_* share is computed from unrounded doubles and rounded once, to the nearest integer,
  halves away from zero: FS_EXCESS_RUNNING is round(r - t), not FS_RUNNING - FS_TARGET. A half
  that a double cannot hold exactly rounds as the double's value does.
* FS_HISTORY counts a job's execution overlap with [now - window, now]: from `started` to
  `ended`, or to `now` for a running job without an end. A suspended job without an end counts
  nothing (the time it was suspended is not known, and billing it up to `now` would charge the
  time it sits preempted); with an end it counts like a finished job. A job without `started`,
  or done or failed without `ended`, counts nothing. The sums are exact integer token-seconds.
* A window of 0 turns FairShare off for the whole subtree, windows set below it included:
  those groups have window 0, history 0, distance None, and are ranked after every
  fairshare-ordered group, first come first served. Their targets and running shares are still
  computed from the weights (the manual only takes them out of the ordering).
* FS_EXCESS_RUNNING_LOCAL of the root, which has no siblings, is its FS_EXCESS_RUNNING.
* Ranks: distance ascending (with `relative` 1 a target of 0 goes after every positive target),
  then the submission time of the group's oldest queued job, then the path. `distance` is given
  for every group under FairShare, ranked or not; `FsJob.priority` orders jobs within a group,
  not groups, and is not used here.
* Groups come out depth first, siblings by path. A `default` sibling supplying defaults is not
  modelled: groups created for a job weigh DEFAULT_WEIGHT and inherit their window.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

ROOT = "/"
SCALE = 10_000
NO_RANK = -1
NO_RANK9 = 9_999_999
DEFAULT_WEIGHT = 100
DEFAULT_WINDOW = 7200
STATUSES = ("queued", "running", "suspended", "done", "failed")

_MAX_WEIGHT = 100_000  # fairshare_weights.htm: an integer scale up to 100,000
_MAX_FSTOKENS = 50_000  # fairshare_multiple_token_accounting.htm
_RELATIVE_MODES = (0, 1, 2)
_STATUSES = frozenset(STATUSES)


@dataclass(frozen=True, slots=True)
class FsGroup:
    path: str  # "/class/vcs"; the root "/" may be omitted by callers (it is implied)
    weight: int = DEFAULT_WEIGHT
    window: int | None = None  # seconds; None: inherited from the parent (the root's: 7200)


@dataclass(frozen=True, slots=True)
class FsJob:
    job_id: str
    group: str  # the group the job is in, usually a user leaf "/class/vcs.u1"
    status: str  # one of STATUSES
    submitted: int  # epoch seconds
    started: int | None = None
    ended: int | None = None
    priority: int = 0
    fstokens: int = 1


@dataclass(frozen=True, slots=True)
class FsFields:
    group: str
    active: bool
    target: int
    running: int
    running_count: int
    excess_running: int
    excess_running_local: int
    history: int
    excess_history: int
    rank: int
    rank9: int
    window: int  # the effective window, seconds (0: FairShare off)
    distance: float | None  # None for groups not ranked by fairshare (window 0)
    share: float  # unscaled: its weight's part of its active siblings' (the root's: 1)
    target_share: float  # unscaled FS_TARGET: the product of the shares down its path


@dataclass(slots=True)
class _Tree:
    """The groups depth first (position 0 the root): parallel lists by position. A group's
    subtree is the positions [pos, ends[pos])."""

    paths: list[str]
    parents: list[int]
    weights: list[int]
    windows: list[int]
    ends: list[int]


def _check_path(path: str) -> None:
    """A group path: "/" or "/"-separated non-empty names."""
    if path != ROOT and (not path.startswith(ROOT) or "" in path[1:].split("/")):
        raise ValueError(f"bad FairShare group path {path!r}: expected '/' or '/a/b'")


def parent_of(path: str) -> str:
    """The parent group: a user leaf "G.<user>" hangs under G (the last dot of its last name),
    any other group under the path before its last slash."""
    _check_path(path)
    if path == ROOT:
        raise ValueError("the root '/' has no parent")
    head, _, last = path.rpartition("/")
    base, dot, _ = last.rpartition(".")
    if dot and base:
        return f"{head}/{base}"
    return head or ROOT


def _declared(groups: Iterable[FsGroup]) -> dict[str, FsGroup]:
    """The caller's groups by path, checked."""
    declared: dict[str, FsGroup] = {}
    for group in groups:
        _check_path(group.path)
        if not 0 <= group.weight <= _MAX_WEIGHT:
            raise ValueError(f"{group.path}: weight {group.weight} is not in 0..{_MAX_WEIGHT}")
        if group.window is not None and group.window < 0:
            raise ValueError(f"{group.path}: negative window {group.window}")
        if group.path in declared:
            raise ValueError(f"{group.path}: group given twice")
        declared[group.path] = group
    return declared


def _tree(declared: dict[str, FsGroup], job_groups: Iterable[str]) -> _Tree:
    """Every group, the root and missing ancestors created, depth first with siblings by path."""
    children: dict[str, list[str]] = {}
    known = {ROOT}
    for path in (*declared, *job_groups):
        _check_path(path)
        while path not in known:  # each path is added once, so this walks the tree once
            known.add(path)
            parent_path = parent_of(path)
            children.setdefault(parent_path, []).append(path)
            path = parent_path
    tree = _Tree([], [], [], [], [])
    stack: list[tuple[str, int]] = [(ROOT, -1)]
    while stack:
        path, parent_pos = stack.pop()
        group = declared.get(path)
        if parent_pos < 0:
            window = DEFAULT_WINDOW if group is None or group.window is None else group.window
        elif tree.windows[parent_pos] == 0:
            window = 0  # FairShare is off for the whole subtree
        elif group is None or group.window is None:
            window = tree.windows[parent_pos]
        else:
            window = group.window
        pos = len(tree.paths)
        tree.paths.append(path)
        tree.parents.append(parent_pos)
        tree.weights.append(DEFAULT_WEIGHT if group is None else group.weight)
        tree.windows.append(window)
        stack.extend((child, pos) for child in sorted(children.get(path, ()), reverse=True))
    tree.ends = list(range(1, len(tree.paths) + 1))
    for pos in range(len(tree.paths) - 1, 0, -1):
        parent = tree.parents[pos]
        tree.ends[parent] = max(tree.ends[parent], tree.ends[pos])
    return tree


def _scaled(fraction: float) -> int:
    """A fraction as an FS_* integer: times SCALE, to the nearest, halves away from zero."""
    whole = math.floor(abs(fraction) * SCALE + 0.5)
    return whole if fraction >= 0 else -whole


def _distance(relative: int, alpha: float, target: float, running: float, history: float) -> float:
    """`fairshare.relative` (fairshare_tuning.htm): how far above its target a group is; smaller is
    further behind. Mode 1 with a target of 0 is +inf: after every positive target."""
    if relative == 0:
        return (running - target) + (history - target)
    if relative == 1:
        if target <= 0:
            return math.inf
        return ((running - target) + (history - target)) / target
    return (running - target) + alpha * (history - target)


def _ramp_sums(points: list[tuple[int, int]]) -> tuple[list[int], list[int], list[int]]:
    """Sorted points with prefix sums of tokens and tokens * point, for `_ramp`."""
    points.sort()
    at = [point for point, _ in points]
    tokens = list(accumulate((t for _, t in points), initial=0))
    weighted = list(accumulate((p * t for p, t in points), initial=0))
    return at, tokens, weighted


def _ramp(sums: tuple[list[int], list[int], list[int]], window: int) -> int:
    """The sum of tokens * max(window - point, 0) over the points."""
    at, tokens, weighted = sums
    k = bisect_left(at, window)
    return window * tokens[k] - weighted[k]


def _histories(
    tree: _Tree, spans: list[list[tuple[int, int, int]]], now: int
) -> tuple[list[int], list[int]]:
    """Each group's FS_HISTORY numerator and denominator: its subtree's and every job's
    token-seconds within the group's own window.

    A job that ended `age` seconds before `now` after running `length` seconds overlaps a
    window W for min(max(W - age, 0), length) seconds. Jobs are laid out depth first, so a
    subtree's jobs are one slice: one prefix sum per distinct window gives every group using
    it. The system totals are ramps, max(W - age, 0) - max(W - age - length, 0), summed for any
    W from two sorted lists."""
    offsets = list(accumulate((len(own) for own in spans), initial=0))
    flat = [span for own in spans for span in own]
    starts = _ramp_sums([(age, tokens) for age, _, tokens in flat])
    stops = _ramp_sums([(age + length, tokens) for age, length, tokens in flat])
    by_window: dict[int, list[int]] = {}
    for pos, window in enumerate(tree.windows):
        if window > 0:
            by_window.setdefault(window, []).append(pos)
    numerators = [0] * len(tree.paths)
    denominators = [0] * len(tree.paths)
    for window, positions in by_window.items():
        total = _ramp(starts, window) - _ramp(stops, window)
        lo = min(offsets[pos] for pos in positions)
        hi = max(offsets[tree.ends[pos]] for pos in positions)
        prefix = list(
            accumulate(
                (min(max(window - age, 0), length) * tokens for age, length, tokens in flat[lo:hi]),
                initial=0,
            )
        )
        for pos in positions:
            numerators[pos] = prefix[offsets[tree.ends[pos]] - lo] - prefix[offsets[pos] - lo]
            denominators[pos] = total
    return numerators, denominators


def fs_fields(
    groups: Sequence[FsGroup],
    jobs: Sequence[FsJob],
    now: int,
    *,
    relative: int = 2,
    alpha: float = 10.0,
) -> list[FsFields]:
    """Every group's fields at `now`, parents before children (the root first)."""
    if relative not in _RELATIVE_MODES:
        raise ValueError(f"fairshare.relative must be 0, 1 or 2, not {relative!r}")
    if not math.isfinite(alpha):
        raise ValueError(f"fairshare.relative_alpha must be finite, not {alpha!r}")
    tree = _tree(_declared(groups), {job.group for job in jobs})
    size = len(tree.paths)
    index = {path: pos for pos, path in enumerate(tree.paths)}

    active = [False] * size
    run_tokens = [0] * size
    run_count = [0] * size
    oldest: list[int | None] = [None] * size  # the oldest queued job's submission
    spans: list[list[tuple[int, int, int]]] = [[] for _ in range(size)]
    for job in jobs:
        status = job.status
        if status not in _STATUSES:
            raise ValueError(f"job {job.job_id}: status {status!r} is not one of {STATUSES}")
        if not 0 <= job.fstokens <= _MAX_FSTOKENS:
            raise ValueError(f"job {job.job_id}: fstokens {job.fstokens} not in 0..{_MAX_FSTOKENS}")
        pos = index[job.group]
        if status == "running":
            active[pos] = True
            run_tokens[pos] += job.fstokens
            run_count[pos] += 1
        elif status == "queued":
            active[pos] = True
            first = oldest[pos]
            oldest[pos] = job.submitted if first is None else min(first, job.submitted)
        elif status == "suspended":
            active[pos] = True
        end = now if job.ended is None and status == "running" else job.ended
        if job.started is not None and end is not None and job.fstokens:
            end = min(end, now)  # a job's future does not count
            if end > job.started:
                spans[pos].append((now - end, end - job.started, job.fstokens))

    for pos in range(size - 1, 0, -1):  # children after parents: sum the subtrees upwards
        parent = tree.parents[pos]
        active[parent] = active[parent] or active[pos]
        run_tokens[parent] += run_tokens[pos]
        run_count[parent] += run_count[pos]
    active_weight = [0] * size  # each group's active children's total weight
    for pos in range(1, size):
        if active[pos]:
            active_weight[tree.parents[pos]] += tree.weights[pos]

    numerators, denominators = _histories(tree, spans, now)
    all_running = run_tokens[0]
    targets = [1.0] * size
    shares = [1.0] * size
    rows: list[tuple[float, float, float, float, float | None]] = []
    for pos in range(size):
        parent = tree.parents[pos]
        running = run_tokens[pos] / all_running if all_running else 0.0
        if parent < 0:
            local = running - 1.0
        else:
            total = active_weight[parent]
            share = shares[pos] = tree.weights[pos] / total if active[pos] and total else 0.0
            targets[pos] = targets[parent] * share
            parent_running = run_tokens[parent]
            local = (run_tokens[pos] / parent_running if parent_running else 0.0) - share
        target = targets[pos]
        history = numerators[pos] / denominators[pos] if denominators[pos] else 0.0
        distance = None
        if tree.windows[pos]:
            distance = _distance(relative, alpha, target, running, history)
        rows.append((target, running, local, history, distance))

    ranks = _ranks(tree, oldest, [row[4] for row in rows])
    fields = []
    for pos, (target, running, local, history, distance) in enumerate(rows):
        rank = ranks.get(pos, NO_RANK)
        fields.append(
            FsFields(
                group=tree.paths[pos],
                active=active[pos],
                target=_scaled(target),
                running=_scaled(running),
                running_count=run_count[pos],
                excess_running=_scaled(running - target),
                excess_running_local=_scaled(local),
                history=_scaled(history),
                excess_history=_scaled(history - target),
                rank=rank,
                rank9=NO_RANK9 if rank == NO_RANK else rank,
                window=tree.windows[pos],
                distance=distance,
                share=shares[pos],
                target_share=target,
            )
        )
    return fields


def _ranks(tree: _Tree, oldest: list[int | None], distances: list[float | None]) -> dict[int, int]:
    """FS_RANK of the groups holding queued jobs: fairshare groups by distance, then those with
    FairShare off, first come first served; ties by oldest queued job, then path."""
    keys = []
    for pos, first in enumerate(oldest):
        if first is not None:
            distance = distances[pos]
            off = distance is None  # FairShare off: after every fairshare group
            keys.append((off, distance or 0.0, first, tree.paths[pos], pos))
    keys.sort()
    return {key[-1]: rank for rank, key in enumerate(keys)}
