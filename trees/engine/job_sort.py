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
import numpy.typing as npt

from trees.engine.formula import (
    JOB_SORT_KEYWORDS,
    Formula,
    FormulaValueError,
    evaluate_terms,
    term_texts,
)
from trees.engine.pbs import fairshare_factors

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
_F32 = np.float32


@dataclass(slots=True)  # not frozen, as PbsJob below
class Standing:
    """The job's fairshare entity as the scheduler holds it this cycle."""

    fairshare_perc: float  # float32 tree_percentage
    fairshare_tree_usage: float  # float32 usage_factor
    # trees.engine.pbs.deserving_key of its root path (smaller: more deserving)
    deserving: tuple[tuple[int, float], ...]


# PbsJob and JobPriority are not frozen: a big queue makes 100,000 of each per order, and a
# frozen dataclass's __init__ is five times slower. Nothing changes one once made.
@dataclass(slots=True)
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


@dataclass(slots=True)
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
    values = _amounts(job.resources, list(resources_names), {})
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
    """A float32 number printed `%f` (6 decimals) and read back (job_info.cpp:4034-4040).
    round(x, 6) is that exactly: both round the double's exact value to 6 decimals."""
    return round(value, 6)


def _standing_values(standing: Standing) -> dict[str, float]:
    """The fairshare keywords of the job's entity, as globals_dict gets them."""
    return _standings_values([standing])[0]


def _standings_values(standings: Sequence[Standing]) -> list[dict[str, float]]:
    """_standing_values of many entities at once (a big queue's jobs belong to thousands)."""
    with np.errstate(over="ignore"):  # a C float past its range is inf
        perc = np.array([s.fairshare_perc for s in standings], dtype=np.float64).astype(_F32)
        usage = np.array([s.fairshare_tree_usage for s in standings], dtype=np.float64).astype(_F32)
    # usage_factor / tree_percentage is a float division, then pow() in double.
    factors = fairshare_factors(perc, usage).tolist()
    values = []
    for p, u, factor in zip(perc.tolist(), usage.tolist(), factors, strict=True):
        shown = _percent(p)
        values.append(
            {
                "fairshare_perc": shown,
                "fair_share_perc": shown,
                "fairshare_tree_usage": _percent(u),
                "fairshare_factor": _percent(factor),
            }
        )
    return values


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
    priorities, order = job_order(jobs, policy)
    return [priorities[index] for index in order]


def job_order(jobs: Iterable[PbsJob], policy: SortPolicy) -> tuple[list[JobPriority], list[int]]:
    """job_priorities() as the jobs were given, with the order: their indices, first first. A
    caller building its own object per job builds it faster in the jobs' own order."""
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

    order = _order(listed, stored, policy)

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
    return priorities, order


def _evaluate(
    jobs: list[PbsJob], formula: Formula
) -> tuple[list[dict[str, float]], list[float], list[str | None], list[dict[str, float]]]:
    """Each job's formula inputs, value (double), error and terms; the formula evaluated once."""
    resources = [name for name in formula.names if name not in _KEYWORDS]
    texts = term_texts(formula)
    unique = len(set(texts)) == len(texts)
    printed: dict[float, float] = {}  # amount -> as read back; few distinct amounts recur
    amounts: dict[int, dict[str, float]] = {}  # id(job.resources) -> the formula's amounts
    distinct = {id(job.standing): job.standing for job in jobs}
    standings = dict(zip(distinct, _standings_values(list(distinct.values())), strict=True))
    all_values: list[dict[str, float]] = []
    raw: list[float] = []
    errors: list[str | None] = []
    all_terms: list[dict[str, float]] = []
    for job in jobs:
        # Jobs asking alike often share one resources mapping: its amounts are printed once.
        shown = amounts.get(id(job.resources))
        if shown is None:
            shown = amounts[id(job.resources)] = _amounts(job.resources, resources, printed)
        values = dict(shown)
        _add_keywords(values, job, standings[id(job.standing)])
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


def _amounts(
    resources: Mapping[str, float], names: Sequence[str], printed: dict[float, float]
) -> dict[str, float]:
    """The amounts of `names` as globals_dict holds them (0 for one not requested), `printed`
    remembering each amount's printed value."""
    values: dict[str, float] = {}
    for name in names:
        amount = resources.get(name)
        if amount is None:
            values[name] = 0
            continue
        shown = printed.get(amount)
        if shown is None:
            shown = printed[amount] = _printed_amount(amount)
        values[name] = shown
    return values


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


def _order(jobs: list[PbsJob], stored: list[float | None], policy: SortPolicy) -> list[int]:
    """The jobs' indices in the order the scheduler considers them: by_queue's queues, then
    cmp_sort()'s keys (steps 4 to 8), each a column sorted on at once."""
    columns: list[Sequence[float] | npt.NDArray[np.int64]] = []  # the first decides first
    if policy.by_queue:
        columns.append(_queue_places(jobs, policy.queue_priorities))
    if policy.formula is not None:
        columns.append([_descending(value) for value in stored])
    if policy.fair_share:
        columns.append(_deserving_ranks(jobs))
    for name, descending in policy.job_sort_key:
        amounts = [sort_key_value(job, name) for job in jobs]
        columns.append([-amount for amount in amounts] if descending else amounts)
    columns.append([job.qrank for job in jobs])
    columns.append([job.rank for job in jobs])
    # lexsort sorts on its last column first; rank is unique, so the order is total.
    order: list[int] = np.lexsort([np.asarray(column) for column in reversed(columns)]).tolist()
    return order


def _deserving_ranks(jobs: list[PbsJob]) -> npt.NDArray[np.int64]:
    """Each job's entity's place in compare_path() order (fairshare.cpp:481-512), equal keys
    equal places. The keys are laid out as rows of numbers and sorted at once: a level is its
    two numbers, and a key that ends early is padded with -1, which sorts before any level, as
    a shorter key sorts before the longer keys it begins."""
    standings = {id(job.standing): job.standing for job in jobs}
    keys = [standing.deserving for standing in standings.values()]
    width = 2 * max(map(len, keys), default=0)
    rows = np.array(
        [[number for level in key for number in level] + [-1.0] * (width - 2 * len(key))
         for key in keys],
        dtype=np.float64,
    ).reshape(len(keys), width)  # fmt: skip
    order = np.lexsort(rows.T[::-1]) if width else np.arange(len(keys))
    ordered = rows[order]
    # A new place wherever a row differs from the one before it.
    changes = np.any(ordered[1:] != ordered[:-1], axis=1) if len(keys) else np.empty(0, bool)
    places = np.empty(len(keys), dtype=np.int64)
    places[order] = np.concatenate(([0], np.cumsum(changes))) if len(keys) else []
    by_standing = dict(zip(standings, places.tolist(), strict=True))
    return np.array([by_standing[id(job.standing)] for job in jobs], dtype=np.int64)


def _descending(value: float | None) -> float:
    """A formula value as an ascending key. NaN, which cmp_job_sort_formula() ties with every
    value (so qsort puts it anywhere), goes with -inf, after every number."""
    if value is None:
        return 0.0
    return math.inf if value != value else -value


def _queue_places(jobs: list[PbsJob], queue_priorities: Mapping[str, int]) -> list[int]:
    """by_queue: each job's queue's place, queues by Priority descending. std::sort leaves
    queues of equal Priority in no set order (server_info.cpp:280-281); here they go by name."""
    names = sorted(
        {job.queue for job in jobs}, key=lambda queue: (-queue_priorities.get(queue, 0), queue)
    )
    places = {queue: place for place, queue in enumerate(names)}
    return [places[job.queue] for job in jobs]
