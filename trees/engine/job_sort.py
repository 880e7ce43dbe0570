"""The order in which the OpenPBS scheduler considers queued jobs, and each job's priority.

Follows pbs-job-priority-and-polling.md §A and §B (OpenPBS commit cd7ab5ed):

* `formula_evaluate()` (job_info.cpp:3975-4087) writes a `globals_dict` as Python text, so every
  number the formula sees has been printed and read back: resource amounts with `%.*f` and
  `float_digits(amount, 4)` decimals (an int literal when that is 0), the keywords as C ints,
  the entity's float32 `tree_percentage` and `usage_factor` with `%f` (6 decimals).
  `formula_values()` rebuilds that dict, ints as ints.
* The answer is stored in a C `float` (data_types.h:618): value, log line and threshold test use
  the float32 rounding. A failed evaluation is logged and counts 0 (job_info.cpp:4073-4083).
* `cmp_sort()` (sort.cpp:705-770): formula value descending, then (with `fair_share`) the
  entity's `compare_path()` order, then the `job_sort_key` lines, then `qrank` and `rank`.
  With `by_queue` the scheduler walks the queues by Priority descending (server_info.cpp:280-281,
  fifo.cpp:2018-2186), each queue's jobs in `cmp_sort()` order.

Out of scope, taken as off: preemption (`preemptive_sched`), so every job's preemption priority
is 0 and none was preempted (`cmp_sort()` steps 2 and 3), and `preempt_priority` as a sort key
is 0; `round_robin`; prime-time sort keys. Only runnable jobs are passed in (step 1): the caller
leaves held jobs out.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from trees.engine.formula import (
    JOB_SORT_KEYWORDS,
    Formula,
    FormulaValueError,
    evaluate_terms,
    term_texts,
)
from trees.engine.pbs import f32

ULONG_MAX = 2**64 - 1
INT_MIN = -(2**31)  # job_sort_formula_threshold when unset (fifo.cpp:2204)
FLOAT_DIGITS_ERROR_FACTOR = 1000.0
FLOAT_NUM_DIGITS = 4
THRESHOLD_DIGITS = 2

THRESHOLD_COMMENT = "Not Running: Job is under job_sort_formula threshold value"
FORMULA_ERROR = "Formula evaluation for job had an error.  Zero value will be used: "

# job_sort_key names that are no resource (sort.cpp:902-939, config.h:182-185).
SORT_JOB_PRIORITY = "job_priority"
SORT_FAIR_SHARE = "fair_share_perc"
SORT_PREEMPT = "preempt_priority"
SORT_PRIORITY = "sort_priority"  # read as job_priority (parse.cpp:438-442)

_ULONG_MAX_AS_DOUBLE = float(ULONG_MAX)  # 2**64: what C compares and subtracts
_KEYWORDS = frozenset(JOB_SORT_KEYWORDS)
# The smallest magnitude a C double -> float conversion turns into inf (FLT_MAX rounds up
# past the midpoint to the next power of two).
_F32_OVERFLOW = math.ldexp(2.0**24 - 0.5, 104)


@dataclass(frozen=True, slots=True)
class Standing:
    """The job's fairshare entity as the scheduler holds it this cycle."""

    fairshare_perc: float  # float32 tree_percentage
    fairshare_tree_usage: float  # float32 usage_factor
    # trees.engine.pbs.deserving_key of its root path (smaller: more deserving)
    deserving: tuple[tuple[int, float], ...]


@dataclass(frozen=True, slots=True)
class PbsJob:
    """A queued job as the scheduler sees it in one cycle."""

    job_id: str
    entity: str
    queue: str
    resources: Mapping[str, float]  # Resource_List amounts as PBS passes them (sizes kB, times s)
    eligible_time: int  # seconds (the caller computes it)
    queue_priority: int
    job_priority: int
    accrue_type: int
    qrank: int  # queue_rank: µs since the epoch when it entered its queue
    rank: int  # the order the scheduler built the job objects (the caller: by job id)
    standing: Standing


@dataclass(frozen=True, slots=True)
class SortPolicy:
    """The scheduler settings that order jobs."""

    formula: Formula | None  # parsed with the python dialect over the job_sort names
    fair_share: bool
    job_sort_key: tuple[tuple[str, bool], ...]  # (resource or special key, descending)
    by_queue: bool
    queue_priorities: Mapping[str, int]  # queue name -> Priority (missing: 0)
    threshold: float | None = None  # job_sort_formula_threshold


@dataclass(frozen=True, slots=True)
class JobPriority:
    """One job's priority and its place in the order the scheduler considers jobs."""

    job: PbsJob
    value: float | None  # the formula value stored as float32 (None without a formula)
    error: str | None  # what PBS logs after FORMULA_ERROR; the value is then 0.0
    # formula: each top-level term's text -> signed value ({} when the evaluation failed);
    # no formula: the sort criteria, e.g. {"usage/perc (fair_share)": x, "queue_priority": 100}
    terms: dict[str, float]
    values: dict[str, float]  # the formula inputs (formula_values) the job was evaluated on
    position: int  # 1-based place in the order the scheduler considers jobs
    queue_position: int  # 1-based place among the jobs of its queue
    under_threshold: bool


def float_digits(x: float, n: int = FLOAT_NUM_DIGITS) -> int:
    """float_digits() of misc_utils.c:747-774: how many decimals PBS prints of `x` (at most n)."""
    if math.isnan(x):
        return 0  # C truncates NaN to an unspecified integer; no decimals is the sane reading
    x = abs(x)
    for i in range(n):
        fraction = x - _truncate(x)
        if not 1 <= _truncate(fraction * FLOAT_DIGITS_ERROR_FACTOR) < 999:
            return i
        x *= 10.0
    return n


def _truncate(x: float) -> float:
    """TRUNCATE() of misc_utils.c for x >= 0: (unsigned long) x, or ULONG_MAX above it."""
    return _ULONG_MAX_AS_DOUBLE if x > _ULONG_MAX_AS_DOUBLE else float(int(x))


def pbs_decimal(x: float) -> str:
    """`%.*f` with float_digits(x, 4) decimals, as the scheduler prints numbers (fifo.cpp:463)."""
    return f"{x:.{float_digits(x)}f}"


def formula_log_line(value: float) -> str:
    """The scheduler's DEBUG2 log message for a job's formula value (fifo.cpp:463-464)."""
    return f"Formula Evaluation = {pbs_decimal(value)}"


def threshold_log_line(value: float, threshold: float) -> str:
    """The DEBUG2 log message for a job under job_sort_formula_threshold (fifo.cpp:466-473)."""
    limit = f"{threshold:.{float_digits(threshold, THRESHOLD_DIGITS)}f}"
    return f"Job's formula value {pbs_decimal(value)} is under threshold {limit}"


def error_log_line(error: str) -> str:
    """The DEBUG2 log message for a formula that failed on a job (job_info.cpp:4073-4083)."""
    return FORMULA_ERROR + error


def formula_values(job: PbsJob, resources_names: Collection[str]) -> dict[str, float]:
    """The globals_dict formula_evaluate() builds for a job (job_info.cpp:4016-4048)."""
    values: dict[str, float] = {
        name: _printed_amount(job.resources[name]) if name in job.resources else 0
        for name in resources_names
    }
    _add_keywords(values, job, _standing_values(job.standing))
    return values


def _printed_amount(amount: float) -> float:
    """An amount printed `%.*f` into globals_dict and read back by Python (job_info.cpp:4020)."""
    text = pbs_decimal(amount)
    if "." in text:
        return float(text)
    try:
        return int(text)  # no decimals: Python reads an int literal
    except ValueError:
        return float(text)  # inf, -inf, nan: names `from math import *` defines


def _percent(value: float) -> float:
    """A float32 number printed `%f` (6 decimals) and read back (job_info.cpp:4034-4040)."""
    return float(f"{value:f}")


def _c_float(value: float) -> float:
    """A double stored into a C float: rounded to float32, inf past its range."""
    return math.copysign(math.inf, value) if abs(value) >= _F32_OVERFLOW else f32(value)


def _standing_values(standing: Standing) -> dict[str, float]:
    """The fairshare keywords of the job's entity, as globals_dict gets them."""
    perc = _c_float(standing.fairshare_perc)
    usage = _c_float(standing.fairshare_tree_usage)
    # usage_factor / tree_percentage is a float division; pow() then works in double.
    factor = 0.0 if perc == 0 else _pow2(-_c_float(usage / perc))
    shown = _percent(perc)
    return {
        "fairshare_perc": shown,
        "fair_share_perc": shown,
        "fairshare_tree_usage": _percent(usage),
        "fairshare_factor": _percent(factor),
    }


def _pow2(exponent: float) -> float:
    """C's pow(2, x): HUGE_VAL where Python's math.pow raises OverflowError."""
    try:
        return math.pow(2.0, exponent)
    except OverflowError:
        return math.inf


def _add_keywords(values: dict[str, float], job: PbsJob, standing: dict[str, float]) -> None:
    """The keywords after the amounts, in globals_dict's order: the job's own are C ints
    printed `%ld`/`%d` (job_info.cpp:4033-4041); a keyword wins over a resource of its name,
    as a later key of a dict literal does."""
    values["eligible_time"] = int(job.eligible_time)
    values["queue_priority"] = int(job.queue_priority)
    values["job_priority"] = int(job.job_priority)
    values.update(standing)
    values["accrue_type"] = int(job.accrue_type)


def sort_key_value(job: PbsJob, name: str) -> float:
    """find_resresv_amount() (sort.cpp:902-939): what a job_sort_key line sorts a job on."""
    if name == SORT_PRIORITY:
        name = SORT_JOB_PRIORITY
    if name == SORT_JOB_PRIORITY:
        return float(job.job_priority)
    amount = job.resources.get(name)
    if amount is not None:
        return amount
    if name == SORT_FAIR_SHARE:
        return job.standing.fairshare_perc
    if name == SORT_PREEMPT:
        return 0.0  # preemption is off: every job's preempt is 0
    # Any other name is 0, the man page's `fairshare_perc` included (the code's constant is
    # fair_share_perc), and a resource the job did not request.
    return 0.0


def job_priorities(jobs: Iterable[PbsJob], policy: SortPolicy) -> list[JobPriority]:
    """The jobs valued and in the scheduler's order: cmp_sort() (sort.cpp:705-770), by_queue."""
    listed = list(jobs)
    formula = policy.formula
    stored: list[float | None]
    if formula is None:
        values: list[dict[str, float]] = [{} for _ in listed]
        errors: list[str | None] = [None] * len(listed)
        terms = _criteria(listed, policy)
        stored = [None] * len(listed)
    else:
        values, raw, errors, terms = _evaluate(listed, formula)
        stored = list(_to_float32(raw))

    keys = _sort_keys(listed, stored, policy)
    order = sorted(range(len(listed)), key=keys.__getitem__)
    if policy.by_queue:
        order = _queue_by_queue(order, listed, policy.queue_priorities)

    # Places are worked out in order from plain lists, then every JobPriority is built in the
    # jobs' own order: walking 100,000 job objects in sorted order costs cache misses.
    queues = [job.queue for job in listed]
    positions = [0] * len(listed)
    queue_positions = [0] * len(listed)
    queue_counts: dict[str, int] = {}
    for position, index in enumerate(order, start=1):
        queue = queues[index]
        queue_counts[queue] = queue_position = queue_counts.get(queue, 0) + 1
        positions[index] = position
        queue_positions[index] = queue_position
    # fifo.cpp:466: the float value compared with a double threshold, INT_MIN when unset.
    threshold = INT_MIN if policy.threshold is None else policy.threshold
    priorities = [
        JobPriority(
            job,
            value,
            error,
            described,
            inputs,
            position,
            queue_position,
            value is not None and value <= threshold,
        )
        for job, value, error, described, inputs, position, queue_position in zip(
            listed, stored, errors, terms, values, positions, queue_positions, strict=True
        )
    ]
    return [priorities[index] for index in order]


def _evaluate(
    jobs: list[PbsJob], formula: Formula
) -> tuple[list[dict[str, float]], list[float], list[str | None], list[dict[str, float]]]:
    """Each job's formula inputs, value (double), error and terms; the formula evaluated once."""
    resources = [name for name in formula.names if name not in _KEYWORDS]
    texts = term_texts(formula)
    unique = len(set(texts)) == len(texts)
    printed: dict[float, float] = {}  # amount -> as read back; few distinct amounts recur
    standings: dict[int, dict[str, float]] = {}  # id(Standing) -> its keywords
    all_values: list[dict[str, float]] = []
    raw: list[float] = []
    errors: list[str | None] = []
    all_terms: list[dict[str, float]] = []
    for job in jobs:
        values: dict[str, float] = {}
        for name in resources:
            amount = job.resources.get(name)
            if amount is None:
                values[name] = 0
                continue
            shown = printed.get(amount)
            if shown is None:
                shown = printed[amount] = _printed_amount(amount)
            values[name] = shown
        standing = standings.get(id(job.standing))
        if standing is None:
            standing = standings[id(job.standing)] = _standing_values(job.standing)
        _add_keywords(values, job, standing)
        all_values.append(values)
        try:
            value, signed = evaluate_terms(formula, values)
        except FormulaValueError as exc:
            raw.append(0.0)
            errors.append(exc.reason)
            all_terms.append({})
            continue
        raw.append(value)
        errors.append(None)
        all_terms.append(
            dict(zip(texts, signed, strict=True)) if unique else _merged(texts, signed)
        )
    return all_values, raw, errors, all_terms


def _merged(texts: tuple[str, ...], signed: list[float]) -> dict[str, float]:
    """Terms by text, the values of terms written alike (`ncpus + ncpus`) added up."""
    merged: dict[str, float] = {}
    for text, value in zip(texts, signed, strict=True):
        merged[text] = merged.get(text, 0.0) + value
    return merged


def _to_float32(values: list[float]) -> list[float]:
    """Doubles stored into C floats: pbs.f32 for a whole list at once (inf past the range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        converted: list[float] = np.asarray(values, dtype=np.float64).astype(np.float32).tolist()
    return converted


def _criteria(jobs: list[PbsJob], policy: SortPolicy) -> list[dict[str, float]]:
    """What orders each job when there is no formula, in the order the scheduler weighs it."""
    labels = [
        (f"job_sort_key {name} {'HIGH' if descending else 'LOW'}", name)
        for name, descending in policy.job_sort_key
    ]
    described = []
    for job in jobs:
        criteria: dict[str, float] = {}
        if policy.by_queue:
            criteria["queue_priority"] = float(policy.queue_priorities.get(job.queue, 0))
        if policy.fair_share and job.standing.deserving:
            flag, ratio = job.standing.deserving[-1]
            criteria["usage/perc (fair_share)"] = -1.0 if flag else ratio  # pbsfs: -1, perc 0
        for label, name in labels:
            criteria[label] = sort_key_value(job, name)
        described.append(criteria)
    return described


def _sort_keys(
    jobs: list[PbsJob], stored: list[float | None], policy: SortPolicy
) -> list[tuple[float, ...]]:
    """Each job's cmp_sort() key (steps 4 to 8): a smaller key comes first."""
    columns: list[Sequence[float]] = []
    if policy.formula is not None:
        columns.append([_descending(value) for value in stored])
    if policy.fair_share:
        columns.append(_deserving_ranks(jobs))
    for name, descending in policy.job_sort_key:
        amounts = [sort_key_value(job, name) for job in jobs]
        columns.append([-amount for amount in amounts] if descending else list(amounts))
    columns.append([job.qrank for job in jobs])
    columns.append([job.rank for job in jobs])
    return list(zip(*columns, strict=True))


def _deserving_ranks(jobs: list[PbsJob]) -> list[int]:
    """Each job's entity's place in compare_path() order (fairshare.cpp:481-512), equal keys
    equal places: an int compares far faster than the nested key, and entities are few."""
    keys: dict[int, tuple[tuple[int, float], ...]] = {}  # id(Standing) -> its key
    for job in jobs:
        keys.setdefault(id(job.standing), job.standing.deserving)
    places = {key: place for place, key in enumerate(sorted(set(keys.values())))}
    by_standing = {standing: places[key] for standing, key in keys.items()}
    return [by_standing[id(job.standing)] for job in jobs]


def _descending(value: float | None) -> float:
    """A formula value as an ascending key. NaN, which cmp_job_sort_formula() ties with every
    value (so qsort puts it anywhere), goes with -inf, after every number."""
    if value is None:
        return 0.0
    return math.inf if value != value else -value


def _queue_by_queue(
    order: list[int], jobs: list[PbsJob], queue_priorities: Mapping[str, int]
) -> list[int]:
    """The sorted jobs queue by queue, queues by Priority descending. std::sort leaves queues of
    equal Priority in no set order (server_info.cpp:280-281); here they go by name."""
    by_queue: dict[str, list[int]] = {}
    for index in order:
        by_queue.setdefault(jobs[index].queue, []).append(index)
    queues = sorted(by_queue, key=lambda queue: (-queue_priorities.get(queue, 0), queue))
    return [index for queue in queues for index in by_queue[queue]]
