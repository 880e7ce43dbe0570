"""What a schedule, simulated or real, gave each entity and the cluster (issue 26): waits and
bounded slowdown, delivered against target share over time, utilization, Jain's fairness index,
how well a baseline replay matches what really happened, and how a variant moved the waits.

Times are whole epoch seconds and a job holds its cores over [start, end). Every function takes
the jobs as a sequence of `ScheduledJob` or, to build the columns once for several results, as
the `JobArrays` of `job_arrays`; nothing loops over jobs in Python after that. Core-seconds are
summed in int64, so they are exact. Percentiles are numpy's default, linear interpolation
between the closest ranks (Hyndman and Fan's type 7): the q-th of n sorted values sits at
position (n - 1) * q / 100, counted from 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

SLOWDOWN_BOUND = 10  # seconds: a shorter job's slowdown is taken over 10 s (Feitelson's tau)
TWO_WEEKS = 1_209_600  # seconds: the calibration's moving-average window
WITHIN_AN_HOUR = 3600  # seconds: a simulated start this close to the real one counts as right

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
By = Literal["entity", "group"]


class ScheduledJob(Protocol):
    """A job as a schedule placed it (the simulator's jobs are ones): `start` is where this
    schedule started it, `real_start` where the real scheduler did, if known."""

    @property
    def job_id(self) -> str: ...
    @property
    def entity(self) -> str: ...
    @property
    def group(self) -> str: ...  # the entity's project; "" when it has none
    @property
    def submit(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def cores(self) -> int: ...
    @property
    def real_start(self) -> int | None: ...


@dataclass(frozen=True)
class JobArrays:
    """The jobs as int64 columns; `entity` and `group` are codes into the sorted names."""

    entity: IntArray
    entities: tuple[str, ...]
    group: IntArray
    groups: tuple[str, ...]
    submit: IntArray
    start: IntArray
    end: IntArray
    cores: IntArray
    real_start: IntArray  # 0 where `has_real` is False
    has_real: BoolArray

    def __len__(self) -> int:
        return len(self.submit)

    def keys(self, by: By) -> tuple[IntArray, tuple[str, ...]]:
        """Each job's code and the names the codes index, by entity or by group (project)."""
        return (self.entity, self.entities) if by == "entity" else (self.group, self.groups)

    def subset(self, mask: BoolArray) -> JobArrays:
        """The jobs where `mask` holds, with the same names."""
        return JobArrays(
            self.entity[mask],
            self.entities,
            self.group[mask],
            self.groups,
            self.submit[mask],
            self.start[mask],
            self.end[mask],
            self.cores[mask],
            self.real_start[mask],
            self.has_real[mask],
        )


Jobs = Sequence[ScheduledJob] | JobArrays


def _codes(names: list[str]) -> tuple[IntArray, tuple[str, ...]]:
    """Each name's index among the sorted distinct names, and those names."""
    distinct = sorted(dict.fromkeys(names))
    index = {name: code for code, name in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, names), np.int64, len(names)), tuple(distinct)


def _column(jobs: Sequence[ScheduledJob], name: str) -> IntArray:
    return np.fromiter(map(attrgetter(name), jobs), np.int64, len(jobs))


def job_arrays(jobs: Sequence[ScheduledJob]) -> JobArrays:
    """The jobs' columns, built once; a job that ends before it starts or holds negative cores
    is refused with a ValueError naming it."""
    entity, entities = _codes(list(map(attrgetter("entity"), jobs)))
    group, groups = _codes(list(map(attrgetter("group"), jobs)))
    real = list(map(attrgetter("real_start"), jobs))
    has_real = np.fromiter((start is not None for start in real), np.bool_, len(jobs))
    real_start = np.zeros(len(jobs), np.int64)
    real_start[has_real] = [start for start in real if start is not None]
    arrays = JobArrays(
        entity,
        entities,
        group,
        groups,
        _column(jobs, "submit"),
        _column(jobs, "start"),
        _column(jobs, "end"),
        _column(jobs, "cores"),
        real_start,
        has_real,
    )
    bad = np.flatnonzero((arrays.end < arrays.start) | (arrays.cores < 0))
    if len(bad):
        raise ValueError(f"job {jobs[int(bad[0])].job_id} ends before it starts or has cores < 0")
    return arrays


def _as_arrays(jobs: Jobs) -> JobArrays:
    return jobs if isinstance(jobs, JobArrays) else job_arrays(jobs)


@dataclass(frozen=True)
class WaitStats:
    """How long an entity's (or project's) jobs waited, in seconds, and their bounded slowdown."""

    jobs: int
    mean_wait: float
    median_wait: float
    p90_wait: float
    bounded_slowdown: float  # the mean over the jobs


def bounded_slowdown(wait: IntArray, run: IntArray) -> FloatArray:
    """Each job's bounded slowdown, max(1, (wait + run) / max(run, 10 s)) (Feitelson, "Metrics
    for parallel job scheduling and their convergence", 2001)."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, SLOWDOWN_BOUND))


def _sorted_by_code(codes: IntArray, values: IntArray, size: int) -> IntArray:
    """The values sorted by code, then by value: one sort of code * range + value when that
    fits in int64 (eight times faster than np.lexsort on a million jobs)."""
    if len(values) == 0:
        return values
    low = int(values.min())
    spread = int(values.max()) - low + 1
    if size * spread >= 2**62:
        return values[np.lexsort((values, codes))]
    ordered: IntArray = np.sort(codes * spread + (values - low)) % spread + low
    return ordered


def _sorted_percentile(
    values: FloatArray, offsets: IntArray, counts: IntArray, percent: int
) -> FloatArray:
    """The `percent`-th percentile of each group of `values` (each group sorted, at `offsets`,
    none empty) by linear interpolation, numpy's default; the position is kept in integers."""
    scaled = (counts - 1) * percent
    below = offsets + scaled // 100
    above = offsets + np.minimum(scaled // 100 + 1, counts - 1)
    fraction = (scaled % 100) / 100
    low = values[below]
    percentile: FloatArray = low + fraction * (values[above] - low)
    return percentile


def wait_stats(jobs: Jobs, *, by: By = "entity") -> dict[str, WaitStats]:
    """Each entity's (or, by "group", project's: "" gathers the jobs of none) job count, mean,
    median and 90th-percentile wait (start - submit) and mean bounded slowdown, by name."""
    arrays = _as_arrays(jobs)
    codes, names = arrays.keys(by)
    wait = arrays.start - arrays.submit
    counts = np.bincount(codes, minlength=len(names))
    wait_sums = np.zeros(len(names), np.int64)
    np.add.at(wait_sums, codes, wait)
    slowdowns = np.bincount(
        codes, weights=bounded_slowdown(wait, arrays.end - arrays.start), minlength=len(names)
    )
    ordered = _sorted_by_code(codes, wait, len(names)).astype(np.float64)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    present = counts > 0
    median = np.zeros(len(names))
    p90 = np.zeros(len(names))
    median[present] = _sorted_percentile(ordered, offsets[present], counts[present], 50)
    p90[present] = _sorted_percentile(ordered, offsets[present], counts[present], 90)
    return {
        name: WaitStats(
            int(counts[code]),
            float(wait_sums[code] / counts[code]),
            float(median[code]),
            float(p90[code]),
            float(slowdowns[code] / counts[code]),
        )
        for code, name in enumerate(names)
        if counts[code]
    }


@dataclass(frozen=True)
class WaitChange:
    """How a variant moved an entity's waits from the baseline's: variant - baseline, seconds."""

    median: float
    p90: float


def wait_changes(
    baseline: Mapping[str, WaitStats], variant: Mapping[str, WaitStats]
) -> dict[str, WaitChange]:
    """The change of each entity's median and 90th-percentile wait from the baseline to the
    variant (variant - baseline, seconds), for the entities with jobs in both."""
    return {
        name: WaitChange(
            variant[name].median_wait - before.median_wait, variant[name].p90_wait - before.p90_wait
        )
        for name, before in baseline.items()
        if name in variant
    }


def _check_targets(targets: Mapping[str, float]) -> None:
    if any(share < 0 for share in targets.values()) or sum(targets.values()) > 1 + 1e-9:
        raise ValueError("target shares must be fractions >= 0 summing to at most 1")


def _core_seconds_by(codes: IntArray, cores: IntArray, run: IntArray, size: int) -> IntArray:
    totals = np.zeros(size, np.int64)
    np.add.at(totals, codes, cores * run)
    return totals


def delivered_share(jobs: Jobs, *, by: By = "entity") -> dict[str, float]:
    """Each entity's (or project's) part of all the core-seconds (cores * (end - start)) the
    trace delivered; empty when it delivered none."""
    arrays = _as_arrays(jobs)
    codes, names = arrays.keys(by)
    totals = _core_seconds_by(codes, arrays.cores, arrays.end - arrays.start, len(names))
    whole = int(totals.sum())
    if whole == 0:
        return {}
    return {name: int(totals[code]) / whole for code, name in enumerate(names)}


@dataclass(frozen=True)
class ShareSeries:
    """The core-seconds each entity received in each time bin [bin_start, bin_start + width)
    and its part of the bin's delivered core-seconds, beside its target share."""

    bin_starts: IntArray
    bin_seconds: int
    core_seconds: dict[str, IntArray]  # each entity's row of one (entities x bins) array
    share: dict[str, FloatArray]  # NaN in a bin that delivered nothing
    target: dict[str, float]  # 0.0 for an entity with jobs and no target
    delivered: dict[str, float]  # over the whole trace; empty when it delivered nothing


def share_over_time(
    jobs: Jobs,
    *,
    targets: Mapping[str, float],
    bin_seconds: int,
    origin: int | None = None,
    by: By = "entity",
) -> ShareSeries:
    """Each entity's (with jobs or a target) delivered core-seconds and share per time bin, a
    job's cores spread over [start, end) and split exactly at the bin edges.

    The bins start at `origin`, by default the first start rounded down to a multiple of the
    width (so runs of one trace line up), and cover the last end. A job gives cores * (width -
    start's offset) to its first bin, cores * width to each bin between and cores * (end's
    offset) to its last, and cores * (end - start) when both are one bin: as a difference array
    that is four entries per job, whatever the number of bins it spans, and one cumulative sum
    along each entity's row. Memory is one (entities x bins) int64 array and one float64.
    """
    _check_targets(targets)
    if bin_seconds <= 0:
        raise ValueError("bin_seconds must be positive")
    arrays = _as_arrays(jobs)
    codes, job_names = arrays.keys(by)
    names = tuple(sorted(set(job_names) | set(targets)))
    row_of = {name: row for row, name in enumerate(names)}
    rows = np.array([row_of[name] for name in job_names], np.int64)[codes]
    if len(arrays) == 0:
        first = last = 0 if origin is None else origin
    else:
        first, last = int(arrays.start.min()), int(arrays.end.max())
    if origin is None:
        origin = first - first % bin_seconds
    elif origin > first:
        raise ValueError("origin must not be after the first start")
    bins = -(-(last - origin) // bin_seconds)
    width = bins + 2  # room past the last bin for the jobs ending exactly on its end
    first_bin, first_offset = np.divmod(arrays.start - origin, bin_seconds)
    last_bin, last_offset = np.divmod(arrays.end - origin, bin_seconds)
    first_at = rows * width + first_bin
    last_at = rows * width + last_bin
    cores = arrays.cores
    differences = np.zeros(len(names) * width, np.int64)
    np.add.at(
        differences,
        np.concatenate((first_at, first_at + 1, last_at, last_at + 1)),
        np.concatenate(
            (
                cores * (bin_seconds - first_offset),
                cores * first_offset,
                -cores * (bin_seconds - last_offset),
                -cores * last_offset,
            )
        ),
    )
    received = differences.reshape(len(names), width)
    np.cumsum(received, axis=1, out=received)
    received = received[:, :bins]
    in_bin = received.sum(axis=0)
    share = np.full(received.shape, np.nan)
    np.divide(received, in_bin, out=share, where=in_bin > 0)
    per_name = received.sum(axis=1)
    total = int(per_name.sum())
    return ShareSeries(
        bin_starts=origin + bin_seconds * np.arange(bins, dtype=np.int64),
        bin_seconds=bin_seconds,
        core_seconds={name: received[row] for row, name in enumerate(names)},
        share={name: share[row] for row, name in enumerate(names)},
        target={name: float(targets.get(name, 0.0)) for name in names},
        delivered={name: int(per_name[row]) / total for row, name in enumerate(names)}
        if total
        else {},
    )


def utilization(jobs: Jobs, *, capacity: int) -> float | None:
    """The part of the cluster's core-seconds the jobs used: sum(cores * run) / (capacity *
    (last end - first submit)); None with no jobs or an empty span."""
    if capacity <= 0:
        raise ValueError("capacity must be a positive number of cores")
    arrays = _as_arrays(jobs)
    if len(arrays) == 0:
        return None
    span = int(arrays.end.max() - arrays.submit.min())
    if span <= 0:
        return None
    used = int((arrays.cores * (arrays.end - arrays.start)).sum())
    return used / (capacity * span)


def share_attainment(
    delivered: Mapping[str, float], targets: Mapping[str, float]
) -> dict[str, float]:
    """Each entity's delivered share over its target share, for the entities with a target
    above 0 (one with no delivered share attains 0)."""
    return {
        name: delivered.get(name, 0.0) / target for name, target in targets.items() if target > 0
    }


def jain_index(values: Iterable[float]) -> float | None:
    """Jain's fairness index, (sum x)^2 / (n * sum x^2), between 1/n and 1 (Jain, Chiu and
    Hawe, "A quantitative measure of fairness", DEC-TR-301, 1984); None for no values or all 0."""
    x = np.fromiter(values, np.float64)
    if np.any(x < 0):
        raise ValueError("Jain's index is defined for values >= 0")
    if len(x) == 0 or not x.any():
        return None
    x = x / x.max()  # the index is scale-free; this keeps tiny values' squares from underflowing
    return float(x.sum()) ** 2 / (len(x) * float((x * x).sum()))


@dataclass(frozen=True)
class Calibration:
    """How close a baseline replay's starts came to the real ones, over the jobs with both."""

    mape: float | None  # percent; None with no job or no real moving average above 0
    mean_wait_ratio: dict[str, float | None]  # simulated / real mean wait; None when real is 0
    within_1h: float | None  # a fraction of the jobs; None with no job
    window_seconds: int
    jobs: int


def calibration_window(span: int) -> int:
    """The moving average's window: two weeks, or a tenth of the trace's span (last submit -
    first submit, seconds) when two weeks is more than that, rounded down to whole seconds."""
    return min(TWO_WEEKS, span // 10)


def trailing_mean(times: IntArray, values: IntArray, window: int) -> FloatArray:
    """At each of the sorted `times`, the mean of the values whose time lies in [time - window,
    time]: a trailing moving average that takes every value of that very second, ties included."""
    sums = np.concatenate(([0], np.cumsum(values)))
    low = np.searchsorted(times, times - window, side="left")
    high = np.searchsorted(times, times, side="right")
    means: FloatArray = (sums[high] - sums[low]) / (high - low)
    return means


def calibrate(jobs: Jobs, *, by: By = "entity") -> Calibration:
    """How a baseline replay (`start`) matches reality (`real_start`) over the jobs with a real
    start: the MAPE of the moving-average wait, each entity's simulated / real mean wait, and the
    fraction of jobs starting within an hour (3600 s exactly included) of their real start.

    The moving averages (`trailing_mean`, window `calibration_window` of the span of submits) of
    the simulated and the real waits are taken at every job's submit, so a second with many
    submits weighs as many points; MAPE = 100 * mean(|simulated - real| / real) over the points
    where the real average is above 0.
    """
    arrays = _as_arrays(jobs)
    arrays = arrays.subset(arrays.has_real)
    if len(arrays) == 0:
        return Calibration(None, {}, None, 0, 0)
    order = np.argsort(arrays.submit, kind="stable")
    submit = arrays.submit[order]
    simulated = arrays.start[order] - submit
    real = arrays.real_start[order] - submit
    window = calibration_window(int(submit[-1] - submit[0]))
    simulated_mean = trailing_mean(submit, simulated, window)
    real_mean = trailing_mean(submit, real, window)
    scored = real_mean > 0
    mape = (
        float(100 * np.mean(np.abs(simulated_mean - real_mean)[scored] / real_mean[scored]))
        if scored.any()
        else None
    )
    codes, names = arrays.keys(by)
    counts = np.bincount(codes, minlength=len(names))
    simulated_sums = np.zeros(len(names), np.int64)
    real_sums = np.zeros(len(names), np.int64)
    np.add.at(simulated_sums, codes[order], simulated)
    np.add.at(real_sums, codes[order], real)
    ratios: dict[str, float | None] = {
        # the ratio of the means is the ratio of the sums: both over the same jobs
        name: int(simulated_sums[code]) / int(real_sums[code]) if real_sums[code] > 0 else None
        for code, name in enumerate(names)
        if counts[code]
    }
    within = float(np.mean(np.abs(arrays.start - arrays.real_start) <= WITHIN_AN_HOUR))
    return Calibration(mape, ratios, within, window, len(arrays))


def _window_words(seconds: int) -> str:
    """A window as an adjective: "two-week", "3.5-day", "12-hour", "100-second"."""
    if seconds == TWO_WEEKS:
        return "two-week"
    for unit, name in ((86400, "day"), (3600, "hour")):
        if seconds >= unit:
            return f"{seconds / unit:.3g}-{name}"
    return f"{seconds}-second"


def calibration_sentence(calibration: Calibration) -> str:
    """The calibration in one English sentence for the pages, with its units."""
    if calibration.jobs == 0 or calibration.within_1h is None:
        return "No job of the replay has a real start to compare it with."
    window = _window_words(calibration.window_seconds)
    within = (
        f"{100 * calibration.within_1h:.1f} % of jobs start within an hour of their real start."
    )
    if calibration.mape is None:
        return (
            f"Against what really happened, the real {window} moving-average wait is 0 "
            f"throughout, so the baseline's error on it (MAPE) is not defined; {within}"
        )
    return (
        f"Against what really happened, the baseline's {window} moving-average wait is off by "
        f"{calibration.mape:.1f} % on average (MAPE); {within}"
    )
