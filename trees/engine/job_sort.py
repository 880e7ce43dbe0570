"""The order in which the OpenPBS scheduler considers queued jobs, and each job's priority.

Follows pbs-job-priority-and-polling.md §A and §B (OpenPBS commit cd7ab5ed):

* `formula_evaluate()` (job_info.cpp:3975-4087) writes a `globals_dict` as Python text, so every
  number the formula sees has been printed and read back: resource amounts with `%.*f` and
  `float_digits(amount, 4)` decimals (an int literal when that is 0), the keywords as C ints,
  the entity's float32 `tree_percentage` and `usage_factor` with `%f` (6 decimals).
  `formula_values()` rebuilds that dict, ints as ints.
* The answer is stored in a C `float` (data_types.h:618): value, log line and threshold test use
  the float32 rounding. A failed evaluation is logged and counts 0 (job_info.cpp:4073-4083).
  A formula whose evaluation over a queue takes more than FORMULA_SECONDS is refused, every job
  then counting 0 as a failed one does: pbs_sched would spend that time in every cycle, and the
  cycles and pages that order the queue here must not wait on it.
* `cmp_sort()` (sort.cpp:705-770): formula value descending, then (with `fair_share`) the
  entity's `compare_path()` order, then the `job_sort_key` lines, then `qrank` and `rank`.
  With `by_queue` the scheduler walks the queues by Priority descending (server_info.cpp:280-281,
  fifo.cpp:2018-2186), each queue's jobs in `cmp_sort()` order.

The jobs are ordered as columns (`QueuedJobs`, `Entities`, `job_sort`): a cycle's queue is
100,000 jobs, and the formula is evaluated over all of them at once where numpy's doubles give
Python's numbers (`formula.evaluate_columns`), job by job where they may not. What a job's
priority is made of (its terms, the formula's inputs) is worked out for the jobs shown
(`job_explained`). `job_priorities` is the same on a list of `PbsJob`s.

With `preemptive_sched` a job's preemption priority (`cmp_sort()` step 2, set_preempt_prio,
job_info.cpp:3592-3657) is that of the default `preempt_prio` "express_queue, normal_jobs":
99000 plus its queue's Priority in an express queue (Priority at least `preempt_queue_prio`),
98000 otherwise; express jobs go first, before by_queue's queues (fifo.cpp:1983-2000). Other
`preempt_prio` lists, preempted jobs (step 3) and `preempt_priority` as a sort key (0 here) are
not modelled; nor `round_robin` or prime-time sort keys.

Jobs the scheduler never considers are given their value but no place: with `fair_share` and
`fairshare_enforce_no_shares`, those of an entity of 0 shares (job_info.cpp:516-522, "Job has
zero shares for fairshare"), and those at or under `job_sort_formula_threshold` (fifo.cpp:466).
Only runnable jobs are passed in (step 1): the caller leaves held jobs out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from trees.engine.formula import (
    JOB_SORT_KEYWORDS,
    Column,
    Formula,
    FormulaValueError,
    evaluate_columns,
    evaluate_terms,
    term_texts,
)
from trees.engine.pbs import (
    deserving_ranks,
    deserving_ranks_of_tree,
    fairshare_factors,
    key_rows,
)

ULONG_MAX = 2**64 - 1
INT_MIN = -(2**31)  # job_sort_formula_threshold when unset (fifo.cpp:2204)
PREEMPT_QUEUE_PRIO = 150  # pbs_sched.h:67
PREEMPT_EXPRESS = 99000  # preempt_prio "express_queue, normal_jobs" (fifo.cpp:2360-2378)
PREEMPT_NORMAL = 98000
FLOAT_DIGITS_ERROR_FACTOR = 1000.0
FLOAT_NUM_DIGITS = 4
THRESHOLD_DIGITS = 2

THRESHOLD_COMMENT = "Not Running: Job is under job_sort_formula threshold value"
FORMULA_ERROR = "Formula evaluation for job had an error.  Zero value will be used: "
# How long one queue's formula values may take before the formula is refused. A sane formula
# with calls takes about 13 µs a job (1.3 s for 100,000 jobs); one job's evaluation is bounded
# (trees.engine.formula), so the refusal comes at most milliseconds past the budget.
FORMULA_SECONDS = 10.0

# job_sort_key names that are no resource (sort.cpp:902-939, config.h:182-185).
SORT_JOB_PRIORITY = "job_priority"
SORT_FAIR_SHARE = "fair_share_perc"
SORT_PREEMPT = "preempt_priority"
SORT_PRIORITY = "sort_priority"  # read as job_priority (parse.cpp:438-442)

FAIR_SHARE_CRITERION = "usage/perc (fair_share)"

_ULONG_MAX_AS_DOUBLE = float(ULONG_MAX)  # 2**64: what C compares and subtracts
_KEYWORDS = frozenset(JOB_SORT_KEYWORDS)
_FAIRSHARE_KEYWORDS = (
    "fairshare_perc",
    "fair_share_perc",
    "fairshare_tree_usage",
    "fairshare_factor",
)
_F32 = np.float32
# The level that ends a key: an entity under a group of perc <= 0 (pbs.deserving_key).
_ENDED_LEVEL = (1, 0.0)

Int64Array = npt.NDArray[np.int64]
Float32Array = npt.NDArray[np.float32]
Float64Array = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(slots=True)  # not frozen, as PbsJob below
class Standing:
    """The job's fairshare entity as the scheduler holds it this cycle."""

    fairshare_perc: float  # float32 tree_percentage
    fairshare_tree_usage: float  # float32 usage_factor
    # trees.engine.pbs.deserving_key of its root path (smaller: more deserving)
    deserving: tuple[tuple[int, float], ...]


# PbsJob and JobPriority are not frozen: a frozen dataclass's __init__ is five times slower.
# Nothing changes one once made.
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
    preemption: bool = False  # preemptive_sched
    preempt_queue_prio: int = PREEMPT_QUEUE_PRIO  # an express queue's least Priority
    enforce_no_shares: bool = True  # fairshare_enforce_no_shares


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
    position: int | None  # 1-based place in the order the scheduler considers jobs; None: never
    queue_position: int | None  # 1-based place among the jobs of its queue considered
    under_threshold: bool
    zero_shares: bool = False  # its entity has no share (fairshare_enforce_no_shares)


@dataclass(frozen=True, slots=True)
class Entities:
    """The fairshare entities of a cycle's jobs as the scheduler holds them, a row each."""

    fairshare_perc: Float32Array  # tree_percentage
    fairshare_tree_usage: Float32Array  # usage_factor
    deserving: Int64Array  # rank in compare_path() order (pbs.deserving_ranks): lower first
    usage_perc: Float64Array  # the entity's own level of its key: -1 after perc <= 0; nan: none

    @classmethod
    def of_rows(cls, perc: Float64Array, tree_usage: Float64Array, rows: Float64Array) -> Entities:
        """The entities of these numbers and deserving rows (pbs.key_rows)."""
        levels = (rows[:, 0::2] >= 0).sum(axis=1)  # a padded level's flag is -1
        last = np.maximum(levels - 1, 0)
        at = np.arange(len(rows))
        if rows.shape[1]:
            ended = rows[at, 2 * last] == _ENDED_LEVEL[0]
            own = np.where(ended, -1.0, rows[at, 2 * last + 1])
        else:
            own = np.zeros(len(rows))
        return cls.of_numbers(
            perc, tree_usage, deserving_ranks(rows), np.where(levels > 0, own, math.nan)
        )

    @classmethod
    def of_numbers(
        cls, perc: Float64Array, tree_usage: Float64Array, ranks: Int64Array, own: Float64Array
    ) -> Entities:
        with np.errstate(over="ignore"):  # a C float past its range is inf
            return cls(
                np.asarray(perc, dtype=np.float64).astype(_F32),
                np.asarray(tree_usage, dtype=np.float64).astype(_F32),
                ranks,
                own,
            )

    @classmethod
    def of(cls, standings: Sequence[Standing]) -> Entities:
        """The entities of these standings."""
        return cls.of_rows(
            np.array([s.fairshare_perc for s in standings], dtype=np.float64),
            np.array([s.fairshare_tree_usage for s in standings], dtype=np.float64),
            key_rows([s.deserving for s in standings]),
        )

    @classmethod
    def of_tree(
        cls, parent: Int64Array, perc: Float64Array, tree_usage: Float64Array, usage: Float64Array
    ) -> Entities:
        """Every node of a tree (its parent's index, -1 for the root) and, in one row more
        (`outsider`), the entity of a job the tree lacks: no share, so after every entity with
        one, as PBS puts a job of an unknown entity."""
        if not len(parent):
            return cls.of_numbers(np.zeros(1), np.zeros(1), np.ones(1, np.int64), np.full(1, -1.0))
        # The outsider as a child of the root of perc 0, which ends its key at once.
        root = int(np.flatnonzero(parent < 0)[0])
        parent, perc = np.append(parent, root), np.append(perc, 0.0)
        tree_usage, usage = np.append(tree_usage, 0.0), np.append(usage, 0.0)
        order = deserving_ranks_of_tree(parent, perc, usage)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(order.ended, -1.0, usage / perc)
        return cls.of_numbers(
            perc, tree_usage, order.ranks, np.where(order.depth > 0, own, math.nan)
        )

    def __len__(self) -> int:
        return len(self.deserving)

    @property
    def outsider(self) -> int:
        """of_tree's row for a job whose entity the tree lacks."""
        return len(self) - 1


@dataclass(frozen=True, slots=True)
class QueuedJobs:
    """A cycle's queued jobs as the scheduler sees them, a column each attribute."""

    job_id: Sequence[str]
    queue: Sequence[str]
    # Resource_List amounts as PBS passes them (sizes kB, times s): jobs asking alike may share
    # one mapping, which is then read once.
    resources: Sequence[Mapping[str, float]]
    eligible_time: Int64Array  # seconds
    queue_priority: Int64Array
    job_priority: Int64Array
    accrue_type: Int64Array
    qrank: Int64Array  # queue_rank: µs since the epoch when it entered its queue
    rank: Int64Array  # the order the scheduler built the job objects
    entity: Int64Array  # the job's row of Entities

    def __len__(self) -> int:
        return len(self.job_id)

    @classmethod
    def of(cls, jobs: Sequence[PbsJob]) -> tuple[QueuedJobs, Entities]:
        """The columns of these jobs, and their entities (a row per distinct Standing)."""
        rows: dict[int, int] = {}
        standings: list[Standing] = []
        for job in jobs:
            if rows.setdefault(id(job.standing), len(rows)) == len(standings):
                standings.append(job.standing)

        def column(values: Iterable[int]) -> Int64Array:
            return np.fromiter(values, dtype=np.int64, count=len(jobs))

        columns = cls(
            [job.job_id for job in jobs],
            [job.queue for job in jobs],
            [job.resources for job in jobs],
            column(job.eligible_time for job in jobs),
            column(job.queue_priority for job in jobs),
            column(job.job_priority for job in jobs),
            column(job.accrue_type for job in jobs),
            column(job.qrank for job in jobs),
            column(job.rank for job in jobs),
            column(rows[id(job.standing)] for job in jobs),
        )
        return columns, Entities.of(standings)


@dataclass(frozen=True, slots=True)
class JobOrder:
    """What job_sort() makes of a QueuedJobs: the order, and each job's numbers by its index."""

    order: Int64Array  # the jobs' indices, the first considered first, then those never
    position: Int64Array  # 1-based place in that order; 0 for a job never considered
    queue_position: Int64Array  # 1-based place among its queue's jobs considered; 0: never
    value: Float32Array | None  # the formula value stored as float32; None without a formula
    errors: Mapping[int, str]  # a job whose formula failed -> what PBS logs after FORMULA_ERROR
    under_threshold: BoolArray
    zero_shares: BoolArray  # never considered: its entity has no share
    refused: str | None = None  # why the formula was refused (past FORMULA_SECONDS): every job 0

    @property
    def considered(self) -> int:
        """How many jobs the scheduler considers (the first of `order`)."""
        return int(np.count_nonzero(self.position))


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


def _fairshare_keywords(
    perc: Float32Array, tree_usage: Float32Array, names: Collection[str]
) -> dict[str, list[float]]:
    """The fairshare keywords among `names` of each of these entities, as globals_dict gets
    them: each float32 printed %f; the factor's usage_factor / tree_percentage is a float
    division, then pow() in double."""
    shown: dict[str, list[float]] = {}
    if {"fairshare_perc", "fair_share_perc"} & set(names):
        shown["fairshare_perc"] = shown["fair_share_perc"] = [_percent(p) for p in perc.tolist()]
    if "fairshare_tree_usage" in names:
        shown["fairshare_tree_usage"] = [_percent(u) for u in tree_usage.tolist()]
    if "fairshare_factor" in names:
        factors = fairshare_factors(perc, tree_usage).tolist()
        shown["fairshare_factor"] = [_percent(f) for f in factors]
    return shown


class _Inputs:
    """The globals_dict formula_evaluate() builds for a job (job_info.cpp:4016-4048), made job
    by job; the amounts of a resources mapping and an entity's keywords worked out once."""

    def __init__(self, jobs: QueuedJobs, entities: Entities, resources: Sequence[str]) -> None:
        self.jobs, self.entities, self.resources = jobs, entities, list(resources)
        self.printed: dict[float, float] = {}  # amount -> as read back
        self.amounts: dict[int, dict[str, float]] = {}  # id(resources) -> the formula's amounts
        self.keywords: dict[int, dict[str, float]] = {}  # entity row -> its keywords

    def __call__(self, index: int) -> dict[str, float]:
        jobs = self.jobs
        mapping = jobs.resources[index]
        amounts = self.amounts.get(id(mapping))
        if amounts is None:
            amounts = self.amounts[id(mapping)] = _amounts(mapping, self.resources, self.printed)
        values = dict(amounts)
        # The keywords after the amounts, in globals_dict's order: the job's own are C ints
        # printed `%ld`/`%d`; a keyword wins over a resource of its name, as a later key of a
        # dict literal does.
        values["eligible_time"] = int(jobs.eligible_time[index])
        values["queue_priority"] = int(jobs.queue_priority[index])
        values["job_priority"] = int(jobs.job_priority[index])
        values.update(self._keywords(int(jobs.entity[index])))
        values["accrue_type"] = int(jobs.accrue_type[index])
        return values

    def _keywords(self, row: int) -> dict[str, float]:
        keywords = self.keywords.get(row)
        if keywords is None:
            entities = self.entities
            shown = _fairshare_keywords(
                entities.fairshare_perc[row : row + 1],
                entities.fairshare_tree_usage[row : row + 1],
                _FAIRSHARE_KEYWORDS,
            )
            keywords = self.keywords[row] = {name: shown[name][0] for name in _FAIRSHARE_KEYWORDS}
        return keywords


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


def _resource_names(formula: Formula | None, names: Iterable[str] = ()) -> list[str]:
    """The resources a formula reads (the keywords come apart), or these names."""
    chosen = names if formula is None else formula.names
    return [name for name in chosen if name not in _KEYWORDS]


def formula_values(job: PbsJob, resources_names: Collection[str]) -> dict[str, float]:
    """The globals_dict formula_evaluate() builds for a job (job_info.cpp:4016-4048)."""
    jobs, entities = QueuedJobs.of([job])
    return _Inputs(jobs, entities, _resource_names(None, resources_names))(0)


def sort_key_value(job: PbsJob, name: str) -> float:
    """find_resresv_amount() (sort.cpp:902-939): what a job_sort_key line sorts a job on."""
    return _sort_key_amount(job.resources, job.job_priority, job.standing.fairshare_perc, name)


def _sort_key_amount(
    resources: Mapping[str, float], job_priority: int, fairshare_perc: float, name: str
) -> float:
    if name == SORT_PRIORITY:
        name = SORT_JOB_PRIORITY
    if name == SORT_JOB_PRIORITY:
        return float(job_priority)
    amount = resources.get(name)
    if amount is not None:
        return amount
    if name == SORT_FAIR_SHARE:
        return fairshare_perc
    if name == SORT_PREEMPT:
        return 0.0  # preemption is off: every job's preempt is 0
    # Any other name is 0, the man page's `fairshare_perc` included (the code's constant is
    # fair_share_perc), and a resource the job did not request.
    return 0.0


def job_priorities(jobs: Iterable[PbsJob], policy: SortPolicy) -> list[JobPriority]:
    """The jobs valued and in the scheduler's order: cmp_sort() (sort.cpp:705-770), by_queue."""
    listed = list(jobs)
    columns, entities = QueuedJobs.of(listed)
    sorted_jobs = job_sort(columns, entities, policy)
    explain = JobExplainer(columns, entities, policy, sorted_jobs.errors)
    priorities = []
    for index in sorted_jobs.order.tolist():
        terms, values = explain(index)
        value = None if sorted_jobs.value is None else float(sorted_jobs.value[index])
        position = int(sorted_jobs.position[index])
        priorities.append(
            JobPriority(
                listed[index],
                value,
                sorted_jobs.errors.get(index),
                terms,
                values,
                position or None,
                int(sorted_jobs.queue_position[index]) or None,
                bool(sorted_jobs.under_threshold[index]),
                bool(sorted_jobs.zero_shares[index]),
            )
        )
    return priorities


def job_sort(jobs: QueuedJobs, entities: Entities, policy: SortPolicy) -> JobOrder:
    """Each job's formula value and the order the scheduler considers the jobs in:
    cmp_sort() (sort.cpp:705-770) within by_queue's queues."""
    size = len(jobs)
    value: Float32Array | None = None
    errors: dict[int, str] = {}
    refused = None
    if policy.formula is not None:
        raw, errors, refused = _formula_values(jobs, entities, policy.formula, FORMULA_SECONDS)
        with np.errstate(over="ignore", invalid="ignore"):  # past a float's range: inf
            value = raw.astype(_F32)
    order = _order(jobs, entities, value, policy)
    # fifo.cpp:466: the float value compared with a double threshold, INT_MIN when unset.
    threshold = INT_MIN if policy.threshold is None else policy.threshold
    under = (
        np.zeros(size, dtype=np.bool_)
        if value is None
        else value.astype(np.float64) <= float(threshold)
    )
    zero = np.zeros(size, dtype=np.bool_)
    if policy.fair_share and policy.enforce_no_shares:
        zero = entities.fairshare_perc[jobs.entity] == 0
        under &= ~zero  # marked never to run first: the threshold is not tested (fifo.cpp:466)
    never = under | zero
    order = np.concatenate([order[~never[order]], order[never[order]]])
    considered = order[: size - int(np.count_nonzero(never))]
    position = np.zeros(size, dtype=np.int64)
    position[considered] = np.arange(1, len(considered) + 1)
    queue_position = np.zeros(size, dtype=np.int64)
    if len(considered):
        queue_position[considered] = _queue_positions(
            [jobs.queue[index] for index in considered.tolist()], np.arange(len(considered))
        )
    return JobOrder(order, position, queue_position, value, errors, under, zero, refused)


def _formula_values(
    jobs: QueuedJobs, entities: Entities, formula: Formula, seconds: float
) -> tuple[Float64Array, dict[int, str], str | None]:
    """Each job's formula value as a double (0 where it failed) and why it failed: all jobs at
    once where numpy gives Python's numbers, the others one by one with their globals_dict.
    Once the jobs have taken `seconds`, the formula is refused: every job 0, and the reason."""
    start = time.monotonic()
    size = len(jobs)
    evaluated = evaluate_columns(formula, _formula_columns(jobs, entities, formula), size)
    alone: Iterable[int]
    if evaluated is None:
        raw, alone = np.zeros(size), range(size)
    else:
        raw, inexact = evaluated
        alone = np.flatnonzero(inexact).tolist()
    errors = {}
    inputs = _Inputs(jobs, entities, _resource_names(formula))
    for index in alone:
        try:
            raw[index] = formula.evaluate(inputs(index))
        except FormulaValueError as exc:
            raw[index] = 0.0
            errors[index] = exc.reason
        if time.monotonic() - start >= seconds:
            refusal = (
                f"formula refused: evaluating it over the queue's {size} jobs took more than"
                f" {seconds:g} s"
            )
            return np.zeros(size), dict.fromkeys(range(size), refusal), refusal
    return raw, errors, None


def _formula_columns(jobs: QueuedJobs, entities: Entities, formula: Formula) -> dict[str, Column]:
    """The formula's names over all jobs, as globals_dict holds them job by job."""
    columns: dict[str, Column] = {}
    resources = _resource_names(formula)
    if resources:
        # The amounts of each distinct resources mapping, then each job's from its mapping's.
        which: dict[int, int] = {}
        mappings: list[Mapping[str, float]] = []
        for mapping in jobs.resources:
            if which.setdefault(id(mapping), len(which)) == len(mappings):
                mappings.append(mapping)
        slot = np.fromiter(
            (which[id(mapping)] for mapping in jobs.resources), dtype=np.int64, count=len(jobs)
        )
        printed: dict[float, float] = {}
        amounts = [_amounts(mapping, resources, printed) for mapping in mappings]
        for name in resources:
            shown = [amount[name] for amount in amounts]
            columns[name] = Column(
                np.array([_double(v) for v in shown], dtype=np.float64)[slot],
                np.array([type(v) is int for v in shown], dtype=np.bool_)[slot],
            )
    ints = np.ones(len(jobs), dtype=np.bool_)
    for name, column in (
        ("eligible_time", jobs.eligible_time),
        ("queue_priority", jobs.queue_priority),
        ("job_priority", jobs.job_priority),
        ("accrue_type", jobs.accrue_type),
    ):
        if name in formula.names:
            columns[name] = Column(column.astype(np.float64), ints)
    present = np.unique(jobs.entity)
    keywords = _fairshare_keywords(
        entities.fairshare_perc[present], entities.fairshare_tree_usage[present], formula.names
    )
    floats = np.zeros(len(jobs), dtype=np.bool_)
    for name, shown in keywords.items():
        by_row = np.zeros(len(entities))
        by_row[present] = shown
        columns[name] = Column(by_row[jobs.entity], floats)
    return columns


def _double(number: float) -> float:
    """A Python number as a double: an int past a double's range is inf (and so inexact)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


class JobExplainer:
    """What each job's priority is made of, for the jobs a page shows: with a formula, its
    top-level terms' signed values ({} where it failed) and its inputs (formula_values);
    without, the criteria that order it, in the order the scheduler weighs them. A job in
    `failed` (JobOrder.errors) is not evaluated again: its terms are {}."""

    def __init__(
        self,
        jobs: QueuedJobs,
        entities: Entities,
        policy: SortPolicy,
        failed: Collection[int] = (),
    ) -> None:
        self.jobs, self.entities, self.policy, self.failed = jobs, entities, policy, failed
        formula = policy.formula
        self.inputs = _Inputs(jobs, entities, _resource_names(formula))
        self.texts = () if formula is None else term_texts(formula)

    def __call__(self, index: int) -> tuple[dict[str, float], dict[str, float]]:
        formula = self.policy.formula
        if formula is None:
            return self._criteria(index), {}
        values = self.inputs(index)
        if index in self.failed:
            return {}, values
        try:
            _, signed = evaluate_terms(formula, values)
        except FormulaValueError:
            return {}, values
        if len(set(self.texts)) == len(self.texts):
            return dict(zip(self.texts, signed, strict=True)), values
        merged: dict[str, float] = {}  # terms written alike (`ncpus + ncpus`) add up
        for text, term in zip(self.texts, signed, strict=True):
            merged[text] = merged.get(text, 0.0) + term
        return merged, values

    def _criteria(self, index: int) -> dict[str, float]:
        jobs, entities, policy = self.jobs, self.entities, self.policy
        queue, row = jobs.queue[index], int(jobs.entity[index])
        criteria: dict[str, float] = {}
        if policy.by_queue:
            criteria["queue_priority"] = float(policy.queue_priorities.get(queue, 0))
        own = float(entities.usage_perc[row])
        if policy.fair_share and own == own:  # nan: no level (the root)
            criteria[FAIR_SHARE_CRITERION] = own  # pbsfs: -1 under perc 0
        perc = float(entities.fairshare_perc[row])
        for name, descending in policy.job_sort_key:
            label = f"job_sort_key {name} {'HIGH' if descending else 'LOW'}"
            criteria[label] = _sort_key_amount(
                jobs.resources[index], int(jobs.job_priority[index]), perc, name
            )
        return criteria


def _order(
    jobs: QueuedJobs, entities: Entities, value: Float32Array | None, policy: SortPolicy
) -> Int64Array:
    """The jobs' indices in the order the scheduler considers them: by_queue's queues, then
    cmp_sort()'s keys (steps 4 to 8), each a column sorted on at once."""
    columns: list[npt.NDArray[np.generic]] = []  # the first decides first
    if policy.preemption:  # cmp_sort() step 2, before by_queue's queues
        columns.append(-_preempt_priorities(jobs.queue_priority, policy.preempt_queue_prio))
    if policy.by_queue:
        columns.append(_queue_places(jobs.queue, policy.queue_priorities))
    if value is not None:
        columns.append(_descending(value))
    if policy.fair_share:
        columns.append(entities.deserving[jobs.entity])
    for name, descending in policy.job_sort_key:
        amounts = np.array(
            [
                _sort_key_amount(resources, priority, perc, name)
                for resources, priority, perc in zip(
                    jobs.resources,
                    jobs.job_priority.tolist(),
                    entities.fairshare_perc[jobs.entity].tolist(),
                    strict=True,
                )
            ],
            dtype=np.float64,
        )
        columns.append(-amounts if descending else amounts)
    columns.append(jobs.qrank)
    columns.append(jobs.rank)
    # lexsort sorts on its last column first; rank is unique, so the order is total.
    return np.lexsort(columns[::-1]).astype(np.int64)


def _preempt_priorities(queue_priority: Int64Array, express_from: int) -> Int64Array:
    """set_preempt_prio() with the default preempt_prio: 99000 plus the queue's Priority in
    an express queue, 98000 otherwise (job_info.cpp:3613-3652)."""
    express = queue_priority >= express_from
    return np.where(express, PREEMPT_EXPRESS + queue_priority, PREEMPT_NORMAL)


def _descending(value: Float32Array) -> Float64Array:
    """Formula values as an ascending key. NaN, which cmp_job_sort_formula() ties with every
    value (so qsort puts it anywhere), goes with -inf, after every number."""
    doubles = value.astype(np.float64)
    return np.where(np.isnan(doubles), math.inf, -doubles)


def _queue_places(queues: Sequence[str], queue_priorities: Mapping[str, int]) -> Int64Array:
    """by_queue: each job's queue's place, queues by Priority descending. std::sort leaves
    queues of equal Priority in no set order (server_info.cpp:280-281); here they go by name."""
    names = sorted(set(queues), key=lambda queue: (-queue_priorities.get(queue, 0), queue))
    places = {queue: place for place, queue in enumerate(names)}
    return np.fromiter((places[queue] for queue in queues), dtype=np.int64, count=len(queues))


def _queue_positions(queues: Sequence[str], order: Int64Array) -> Int64Array:
    """Each job's 1-based place among the jobs of its queue, in `order`."""
    codes: dict[str, int] = {}
    queue_of = np.fromiter(
        (codes.setdefault(queue, len(codes)) for queue in queues), dtype=np.int64, count=len(queues)
    )
    in_order = queue_of[order]
    grouped = np.argsort(in_order, kind="stable")  # by queue, each queue's jobs in order
    counts = np.bincount(in_order, minlength=len(codes))
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    positions = np.empty(len(queues), dtype=np.int64)
    positions[order[grouped]] = np.arange(len(queues)) - starts + 1
    return positions
