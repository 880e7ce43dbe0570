"""Reads: each queued job's priority, its terms and its place, as the cluster's scheduler would
compute them at a moment from what is stored (PBS job_sort_formula and job order, Slurm
multifactor). Nothing here writes; the cycles store the priorities' history
(accounting.services.priorities)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from functools import cached_property
from itertools import accumulate
from typing import Any, overload

import numpy as np
from django.db.models import Count, Max, Sum
from django.db.models.functions import Coalesce

from accounting.models import IngestRun, Job, JobPriorityHistory
from accounting.parsers.records import JobRequest, JobState
from trees.bulk import EpochMicroseconds, collector_paused, rows_read
from trees.engine.formula import JOB_SORT_NAMES, Formula, FormulaError, parse_formula
from trees.engine.job_sort import (
    Entities,
    JobExplainer,
    JobOrder,
    QueuedJobs,
    SortPolicy,
    job_sort,
)
from trees.engine.multifactor import (
    Factors,
    MultifactorConfig,
    Partition,
    PriorityJob,
    Qos,
    job_factors,
    job_priority,
    partition_factor_max,
    priority_reachable,
    qos_priority_max,
)
from trees.engine.times import epoch_microseconds_time, epoch_seconds
from trees.formats.sprio import SprioRow, sprio_row
from trees.models import Cluster, Node, Queue, Scheduler, SettingChange
from trees.selectors.priority_config import multifactor_config_get, partitions_get, qos_get

QUEUED_FIELDS = (
    "pk", "job_id", "entity", "node_id", "user", "account", "project", "queue", "ncpus",
    "ngpus", "nodes", "requested_walltime", "mpiprocs", "submitted_us", "etime_us", "request",
)  # fmt: skip
_SEQUENCE = re.compile(r"(\d+)(?:\[(\d*)\]|_(\d+))?")
_PLAIN_SEQUENCE_DIGITS = 18  # a plain job id of at most this many digits is an int64


# Not frozen: a frozen dataclass's __init__ is five times slower. Nothing changes one once
# made (a web process shares them between pages).
@dataclass(slots=True)
class QueuedJob:
    """A queued job, its priority and where it stands; `position` None for a held job."""

    job_id: str
    entity: str
    node_id: int | None
    user: str
    account: str
    queue: str
    ncpus: int
    walltime: int | None  # requested, seconds
    submitted_us: int | None  # when it entered its queue, µs since the epoch
    held: bool
    reason: str  # the scheduler's own comment or pending reason
    priority: float | None  # PBS without a formula: None (the order alone says)
    position: int | None
    queue_position: int | None
    terms: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)  # what the formula was given
    error: str | None = None  # PBS: why the formula gave 0 for this job
    under_threshold: bool = False
    left_out: str = ""  # why the scheduler does not consider it though it waits (not held)

    @property
    def submitted(self) -> datetime | None:
        """When it entered its queue (qtime, else ctime)."""
        return None if self.submitted_us is None else epoch_microseconds_time(self.submitted_us)

    @property
    def core_hours(self) -> float:
        """What it asks for: cores × requested walltime, in core-hours."""
        return self.ncpus * (self.walltime or 0) / 3600

    def document(self) -> dict[str, Any]:
        """The job_priorities JSON object (DESIGN §6): job_id, entity, queue, priority,
        position, terms."""
        return {
            "job_id": self.job_id,
            "entity": self.entity,
            "queue": self.queue,
            "priority": self.priority,
            "position": self.position,
            "terms": self.terms,
        }


class QueuedRows:
    """A cluster's queued rows as the orders read them, a column per QUEUED_FIELDS name:
    `submitted_us` is its qtime, else its ctime, and `etime_us` its etime, in µs since the
    epoch."""

    def __init__(self, rows: Sequence[Sequence[Any]]) -> None:
        self.columns: dict[str, Sequence[Any]] = (
            dict(zip(QUEUED_FIELDS, zip(*rows, strict=True), strict=True))
            if rows
            else {name: () for name in QUEUED_FIELDS}
        )

    def __len__(self) -> int:
        return len(self.columns["pk"])

    def __getitem__(self, name: str) -> Sequence[Any]:
        return self.columns[name]

    def row(self, index: int) -> dict[str, Any]:
        """One row, by name."""
        return {name: column[index] for name, column in self.columns.items()}

    def rows(self) -> Iterator[dict[str, Any]]:
        return (self.row(index) for index in range(len(self)))

    def find(self, job_id: str) -> dict[str, Any] | None:
        """The row of that job id, if any."""
        try:
            return self.row(self.columns["job_id"].index(job_id))
        except ValueError:
            return None


class OrderedJobs(Sequence[QueuedJob]):
    """The jobs the scheduler considers, in its order. A page shows a few of a big queue: each
    job's QueuedJob (its terms worked out) is made when it is first asked for, and what the
    whole order is asked (who is where, how much is ahead) is read from columns, each taken
    from the rows when first asked for (`column` gives a QUEUED_FIELDS column in order)."""

    def __init__(
        self,
        *,
        priorities: Sequence[float | None],
        queue_positions: Sequence[int],
        column: Callable[[str], Sequence[Any]],
        make: Callable[[int], QueuedJob],
    ) -> None:
        self.priorities, self.queue_positions = priorities, queue_positions
        self._column, self._make = column, make
        self._made: list[QueuedJob | None] = [None] * len(priorities)

    @classmethod
    def of(cls, jobs: list[QueuedJob]) -> OrderedJobs:
        """Jobs already made, in order."""
        attributes = {"requested_walltime": "walltime"}

        def column(name: str) -> list[Any]:
            attribute = attributes.get(name, name)
            return [getattr(job, attribute) for job in jobs]

        return cls(
            priorities=[job.priority for job in jobs],
            queue_positions=[job.queue_position or 0 for job in jobs],
            column=column,
            make=jobs.__getitem__,
        )

    @cached_property
    def job_ids(self) -> Sequence[str]:
        return self._column("job_id")

    @cached_property
    def users(self) -> Sequence[str]:
        return self._column("user")

    @cached_property
    def queues(self) -> Sequence[str]:
        return self._column("queue")

    @cached_property
    def ncpus(self) -> Sequence[int]:
        return self._column("ncpus")

    @cached_property
    def walltimes(self) -> Sequence[int | None]:
        return self._column("requested_walltime")

    @cached_property
    def submitted_us(self) -> Sequence[int | None]:
        return self._column("submitted_us")

    def __len__(self) -> int:
        return len(self.priorities)

    @overload
    def __getitem__(self, index: int) -> QueuedJob: ...
    @overload
    def __getitem__(self, index: slice) -> list[QueuedJob]: ...
    def __getitem__(self, index: int | slice) -> QueuedJob | list[QueuedJob]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        job = self._made[index]
        if job is None:
            job = self._made[index] = self._make(index)
        return job

    def __iter__(self) -> Iterator[QueuedJob]:
        return (self[index] for index in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OrderedJobs | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<OrderedJobs of {len(self)}>"


@dataclass(frozen=True)
class QueueOrder:
    """A cluster's queued jobs at `at`: those the scheduler considers, in its order, and the
    ones it does not: held, or on Slurm not eligible yet (a begin time to come, a
    dependency)."""

    cluster: Cluster
    at: datetime
    ordered: OrderedJobs
    held: list[QueuedJob]
    formula: str  # PBS's job_sort_formula ("" for none; Slurm: "")
    problem: str = ""  # why the priorities could not be computed as configured

    # Worked out once for the order, which a web process keeps for the cycle: a page then
    # finds its job, its queue's size and what is ahead of it without walking the queue.
    @cached_property
    def _positions(self) -> dict[str, int]:
        return {job_id: index for index, job_id in enumerate(self.ordered.job_ids)}

    @cached_property
    def queue_sizes(self) -> dict[str, int]:
        """How many jobs of each queue are considered."""
        sizes: dict[str, int] = {}
        for queue in self.ordered.queues:
            sizes[queue] = sizes.get(queue, 0) + 1
        return sizes

    @cached_property
    def _sums(self) -> tuple[list[int], list[float]]:
        ordered = self.ordered
        cores = list(accumulate(ordered.ncpus, initial=0))
        core_hours = list(
            accumulate(
                (
                    n * (w or 0) / 3600
                    for n, w in zip(ordered.ncpus, ordered.walltimes, strict=True)
                ),
                initial=0.0,
            )
        )
        return cores, core_hours

    def ahead_sizes(self, job: QueuedJob) -> tuple[int, int, float]:
        """How many jobs are considered before this one, their cores and their core-hours
        (requested cores × requested walltime); a held job has every waiting job ahead."""
        before = len(self.ordered) if job.position is None else job.position - 1
        cores, core_hours = self._sums
        return before, cores[before], core_hours[before]

    def find(self, job_id: str) -> QueuedJob | None:
        index = self._positions.get(job_id)
        if index is not None:
            return self.ordered[index]
        return next((job for job in self.held if job.job_id == job_id), None)

    def jobs_of(self, user: str) -> list[QueuedJob]:
        """The scheduler user's jobs: the waiting ones in order, then the held ones."""
        mine = [self.ordered[i] for i, owner in enumerate(self.ordered.users) if owner == user]
        return [*mine, *(job for job in self.held if job.user == user)]


# The last order computed for each cluster, with what it was computed from: pages and the API
# ask at the cycle instants (accounting.job_priority.priorities_at), so a web process orders a
# big queue once a cycle, not once a request. The queued rows it was read from are kept apart:
# they change only when jobs come, go or are re-entered, not at each cycle.
_ORDERS: dict[int, tuple[tuple[object, ...], QueueOrder]] = {}
_ROWS: dict[int, tuple[tuple[object, ...], QueuedRows]] = {}


def queue_order_get(*, cluster: Cluster, at: datetime) -> QueueOrder:
    """Every queued job of the cluster with its priority and place at `at`."""
    rows_key = _rows_key(cluster)
    key = (_order_key(cluster, at), rows_key)
    kept = _ORDERS.get(cluster.pk)
    if kept is not None and kept[0] == key:
        return kept[1]
    order = _queue_order(cluster, at, rows_key)
    _ORDERS[cluster.pk] = (key, order)
    return order


def _rows_key(cluster: Cluster) -> tuple[object, ...]:
    """What the queued rows depend on: how many, the newest, the entities they are charged to
    (a node removed from the tree leaves its jobs without one), and the last ingestion (a
    snapshot's requests, a job that left the queue)."""
    queued = Job.objects.filter(cluster=cluster, state=JobState.QUEUED).aggregate(
        count=Count("pk"), newest=Max("pk"), nodes=Sum("node_id"), charged=Count("node_id")
    )
    last_ingest = IngestRun.objects.filter(cluster=cluster).aggregate(last=Max("pk"))["last"]
    return (*queued.values(), last_ingest)


def _order_key(cluster: Cluster, at: datetime) -> tuple[object, ...]:
    """What an order depends on besides the rows: the moment, the tree's numbers as last
    stored, the policy, and the last setting change (a queue's Priority, a partition)."""
    changed = SettingChange.objects.filter(cluster=cluster).aggregate(last=Max("pk"))["last"]
    return (at, cluster.metrics_updated_at, cluster.job_sort_formula, cluster.fair_share,
            cluster.by_queue, json.dumps(cluster.job_sort_key), cluster.eligible_time_enable,
            cluster.job_sort_formula_threshold, json.dumps(cluster.slurm_priority),
            cluster.preemptive_sched, cluster.preempt_queue_prio, cluster.enforce_no_shares,
            changed)  # fmt: skip


def queue_orders_forget() -> None:
    """Drop the orders and rows kept (tests that rewrite rows in place between two reads)."""
    _ORDERS.clear()
    _ROWS.clear()


def queued_rows_get(*, cluster: Cluster) -> QueuedRows:
    """The cluster's queued rows as the orders read them."""
    jobs = Job.objects.filter(cluster=cluster, state=JobState.QUEUED).annotate(
        submitted_us=EpochMicroseconds(Coalesce("qtime", "ctime")),
        etime_us=EpochMicroseconds("etime"),
    )
    # In no order: the orders do not depend on it, and a big queue's sort spills to disk.
    return QueuedRows(rows_read(jobs.order_by().values_list(*QUEUED_FIELDS)))


# A big queue's columns and objects made at once, none in a reference cycle: see trees/bulk.py.
@collector_paused()
def _queue_order(cluster: Cluster, at: datetime, rows_key: tuple[object, ...]) -> QueueOrder:
    kept = _ROWS.get(cluster.pk)
    if kept is not None and kept[0] == rows_key:
        rows = kept[1]
    else:
        rows = queued_rows_get(cluster=cluster)
        _ROWS[cluster.pk] = (rows_key, rows)
    if cluster.scheduler == Scheduler.SLURM:
        return _slurm_order(cluster, at, rows)
    return pbs_order(cluster, at, rows)


_REQUEST_FIELDS = frozenset(f.name for f in fields(JobRequest))


def job_request(text: str | None) -> JobRequest:
    """A queued row's stored request (an empty one where none was stored)."""
    if not text:
        return JobRequest()
    stored = json.loads(text)
    if stored.keys() <= _REQUEST_FIELDS:
        return JobRequest(**stored)
    return JobRequest(**{key: value for key, value in stored.items() if key in _REQUEST_FIELDS})


def job_requests(texts: Iterable[str | None]) -> list[JobRequest]:
    """Each stored request text's job_request; the same text gives one (read-only) request,
    as the jobs of a batch often ask for the same."""
    parsed: dict[str | None, JobRequest] = {}
    requests = []
    for text in texts:
        request = parsed.get(text)
        if request is None:
            request = parsed[text] = job_request(text)
        requests.append(request)
    return requests


def _rank_key(job_id: str) -> tuple[int, int, str]:
    """Job ids in the order servers number them: the sequence, then the array index."""
    if job_id.isdigit():  # most are a plain sequence number
        return (int(job_id), 0, job_id)
    match = _SEQUENCE.match(job_id)
    if match is None:
        return (2**63, 0, job_id)
    index = match.group(2) or match.group(3) or "0"
    return (int(match.group(1)), int(index), job_id)


def _ranks(job_ids: Sequence[str], pks: Sequence[int]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each job's 1-based place when the ids are in the order servers number them (rows of
    the same id, which a server never has at once, by their primary key)."""
    size = len(job_ids)
    plain = all(
        job_id.isdigit()
        and len(job_id) <= _PLAIN_SEQUENCE_DIGITS
        and (job_id[0] != "0" or job_id == "0")
        for job_id in job_ids
    )
    if plain:  # each id is its own number
        numbers = np.fromiter(map(int, job_ids), dtype=np.int64, count=size)
        order = np.lexsort((np.asarray(pks, dtype=np.int64), numbers))
    else:
        order = np.array(
            sorted(range(size), key=lambda i: (_rank_key(job_ids[i]), pks[i])), dtype=np.int64
        )
    ranks = np.empty(size, dtype=np.int64)
    ranks[order] = np.arange(1, size + 1)
    return ranks


def eligible_times(
    etime_us: Sequence[int | None], requests: Sequence[JobRequest], now: int, *, enabled: bool
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """PBS eligible_time at `now` of each job: 0 unless eligible_time_enable; qstat's accrued
    value plus the time since its snapshot while the job accrues as eligible (accrue_type 2);
    else the time since etime (stat_job.c:264-279)."""
    size = len(requests)
    if not enabled:
        return np.zeros(size, dtype=np.int64)
    known = np.fromiter((e is not None for e in etime_us), dtype=np.bool_, count=size)
    etime = np.fromiter((e or 0 for e in etime_us), dtype=np.int64, count=size)
    times = np.where(known, np.maximum(0, now - etime // 1_000_000), 0)
    for index, request in enumerate(requests):
        if request.eligible_time is not None:
            since = (now - request.sampled) if request.sampled is not None else 0
            growing = request.accrue_type in (None, 2)
            times[index] = max(0, request.eligible_time + (max(since, 0) if growing else 0))
    return times


@dataclass(frozen=True)
class NodeStandings:
    """Every node of a cluster as the scheduler holds it this cycle, as job_sort's entities
    (a row per node, and the row of an entity outside the tree), and each node id's row."""

    rows: dict[int, int]
    entities: Entities

    def rows_of(self, node_ids: Iterable[int | None]) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The row of each job's node; a job without one (or of a node gone) is an outsider."""
        rows, outsider = self.rows, self.entities.outsider
        found = [outsider if pk is None else rows.get(pk, outsider) for pk in node_ids]
        return np.array(found, dtype=np.int64)


def node_standings_get(*, cluster: Cluster) -> NodeStandings:
    """The cluster's nodes as stored: their numbers and the deserving order of their paths."""
    rows = rows_read(
        Node.objects.filter(cluster=cluster)
        .order_by()
        .values_list("id", "parent_id", "fairshare_perc", "fairshare_tree_usage", "usage")
    )
    ids, parents, perc, tree_usage, usage = zip(*rows, strict=True) if rows else ((),) * 5
    index = {pk: row for row, pk in enumerate(ids)}
    parent = np.array([-1 if pk is None else index[pk] for pk in parents], dtype=np.int64)

    def doubles(column: Sequence[float]) -> np.ndarray[Any, np.dtype[np.float64]]:
        return np.array(column, dtype=np.float64)

    entities = Entities.of_tree(parent, doubles(perc), doubles(tree_usage), doubles(usage))
    return NodeStandings(index, entities)


def job_sort_formula_parse(cluster: Cluster) -> Formula | None:
    """The cluster's job_sort_formula compiled as PBS reads it (Python, the math names, the
    server's numeric resources); None without one. Raises FormulaError."""
    text = cluster.job_sort_formula.strip()
    if not text:
        return None
    names = (*JOB_SORT_NAMES, *cluster.custom_resources)
    return parse_formula(text, names, python=True)


def pbs_order(
    cluster: Cluster, at: datetime, rows: QueuedRows, standings: NodeStandings | None = None
) -> QueueOrder:
    """PBS's order of these queued rows at `at`; with `standings`, the entities stand as those
    say (a what-if) instead of as stored."""
    now = epoch_seconds(at)
    problem = ""
    try:
        formula = job_sort_formula_parse(cluster)
    except FormulaError as exc:
        formula, problem = None, f"job_sort_formula {cluster.job_sort_formula!r}: {exc}"
    queues = dict(Queue.objects.filter(cluster=cluster).values_list("name", "priority"))
    policy = SortPolicy(
        formula=formula,
        fair_share=cluster.fair_share,
        job_sort_key=tuple((name, order.upper() == "HIGH") for name, order in cluster.job_sort_key),
        by_queue=cluster.by_queue,
        queue_priorities=queues,
        threshold=cluster.job_sort_formula_threshold,
        preemption=cluster.preemptive_sched,
        preempt_queue_prio=cluster.preempt_queue_prio,
        enforce_no_shares=cluster.enforce_no_shares,
    )
    requests = job_requests(rows["request"])
    if standings is None:
        standings = node_standings_get(cluster=cluster)
    waiting = [index for index, request in enumerate(requests) if not request.held]
    jobs = _pbs_jobs(cluster, rows, requests, waiting, standings, queues, now)
    sorted_jobs = job_sort(jobs, standings.entities, policy)
    if sorted_jobs.refused:
        problem = f"job_sort_formula {cluster.job_sort_formula!r}: {sorted_jobs.refused}"
    explain = JobExplainer(jobs, standings.entities, policy, sorted_jobs.errors)
    ordered = _pbs_ordered(rows, requests, waiting, sorted_jobs, explain)
    held = [
        _queued(rows.row(index), request) for index, request in enumerate(requests) if request.held
    ]
    held += _pbs_left_out(rows, requests, waiting, sorted_jobs, explain)
    held.sort(key=lambda job: _rank_key(job.job_id))
    return QueueOrder(cluster, at, ordered, held, cluster.job_sort_formula, problem)


def _pbs_jobs(
    cluster: Cluster,
    rows: QueuedRows,
    requests: Sequence[JobRequest],
    waiting: Sequence[int],
    standings: NodeStandings,
    queues: Mapping[str, int],
    now: int,
) -> QueuedJobs:
    """The waiting rows as the scheduler sees its jobs."""

    def taken(column: Sequence[Any]) -> list[Any]:
        return [column[index] for index in waiting]

    def ints(values: Iterable[int]) -> np.ndarray[Any, np.dtype[np.int64]]:
        return np.fromiter(values, dtype=np.int64, count=len(waiting))

    chosen = [requests[index] for index in waiting]
    etime_us, queue = taken(rows["etime_us"]), taken(rows["queue"])
    return QueuedJobs(
        job_id=taken(rows["job_id"]),
        queue=queue,
        resources=_pbs_resources(rows, requests, waiting),
        eligible_time=eligible_times(etime_us, chosen, now, enabled=cluster.eligible_time_enable),
        queue_priority=ints(queues.get(name, 0) for name in queue),
        job_priority=ints(request.job_priority for request in chosen),
        accrue_type=ints(
            (2 if etime is not None else 1) if request.accrue_type is None else request.accrue_type
            for request, etime in zip(chosen, etime_us, strict=True)
        ),
        qrank=ints(submitted or 0 for submitted in taken(rows["submitted_us"])),
        rank=_ranks(rows["job_id"], rows["pk"])[waiting],
        entity=standings.rows_of(taken(rows["node_id"])),
    )


def _pbs_resources(
    rows: QueuedRows, requests: Sequence[JobRequest], waiting: Sequence[int]
) -> list[Mapping[str, float]]:
    """Each job's Resource_List amounts: its request's, else what its row says it asked for
    (jobs asking alike share one mapping, read, never changed)."""
    alike: dict[tuple[Any, ...], dict[str, float]] = {}
    columns = [rows[name] for name in ("ncpus", "ngpus", "nodes", "requested_walltime", "mpiprocs")]
    found: list[Mapping[str, float]] = []
    for index in waiting:
        request = requests[index]
        if request.resources:
            found.append(request.resources)
            continue
        asked = tuple(column[index] for column in columns)
        resources = alike.get(asked)
        if resources is None:
            ncpus, ngpus, nodes, walltime, mpiprocs = asked
            resources = alike[asked] = {"ncpus": ncpus, "ngpus": ngpus}
            if nodes:
                resources["nodect"] = nodes
            if walltime is not None:
                resources["walltime"] = walltime
            if mpiprocs is not None:
                resources["mpiprocs"] = mpiprocs
        found.append(resources)
    return found


def _pbs_ordered(
    rows: QueuedRows,
    requests: Sequence[JobRequest],
    waiting: Sequence[int],
    sorted_jobs: JobOrder,
    explain: JobExplainer,
) -> OrderedJobs:
    """The sorted jobs the scheduler considers, each made of its row and the engine's numbers
    when asked for."""
    order = sorted_jobs.order[: sorted_jobs.considered].tolist()
    row_of = [waiting[index] for index in order]
    values = sorted_jobs.value

    def column(name: str) -> list[Any]:
        taken = rows[name]
        return [taken[index] for index in row_of]

    priorities = [None] * len(order) if values is None else values[order].tolist()
    queue_positions = sorted_jobs.queue_position[order].tolist()

    def make(place: int) -> QueuedJob:
        index, row = order[place], row_of[place]
        terms, inputs = explain(index)
        return _queued(
            rows.row(row),
            requests[row],
            priority=priorities[place],
            position=place + 1,
            queue_position=queue_positions[place],
            terms=terms,
            values=inputs,
            error=sorted_jobs.errors.get(index),
            under_threshold=bool(sorted_jobs.under_threshold[index]),
        )

    return OrderedJobs(
        priorities=priorities, queue_positions=queue_positions, column=column, make=make
    )


ZERO_SHARES = "its entity has no shares (fairshare_enforce_no_shares)"
NOT_ELIGIBLE = "its begin time has not come, or it waits on a dependency"
UNDER_THRESHOLD = "its formula value is at or under job_sort_formula_threshold"


def _pbs_left_out(
    rows: QueuedRows,
    requests: Sequence[JobRequest],
    waiting: Sequence[int],
    sorted_jobs: JobOrder,
    explain: JobExplainer,
) -> list[QueuedJob]:
    """The jobs the scheduler values but never considers, with their numbers and why."""
    left = []
    values = sorted_jobs.value
    for index in sorted_jobs.order[sorted_jobs.considered :].tolist():
        row = waiting[index]
        terms, inputs = explain(index)
        under = bool(sorted_jobs.under_threshold[index])
        # A job of no shares is marked never to run before the threshold is tested
        # (job_info.cpp:516-522, fifo.cpp:466): it says that.
        zero = bool(sorted_jobs.zero_shares[index])
        left.append(
            _queued(
                rows.row(row),
                requests[row],
                priority=None if values is None else float(values[index]),
                terms=terms,
                values=inputs,
                error=sorted_jobs.errors.get(index),
                under_threshold=under,
                left_out=ZERO_SHARES if zero else UNDER_THRESHOLD,
            )
        )
    return left


def _queued(
    row: Mapping[str, Any],
    request: JobRequest,
    *,
    priority: float | None = None,
    position: int | None = None,
    queue_position: int | None = None,
    terms: dict[str, float] | None = None,
    values: dict[str, float] | None = None,
    error: str | None = None,
    under_threshold: bool = False,
    left_out: str = "",
) -> QueuedJob:
    """A QueuedJob of a stored row and, for a job considered, its numbers."""
    return QueuedJob(
        row["job_id"], row["entity"], row["node_id"], row["user"],
        row["account"] or row["project"], row["queue"], row["ncpus"],
        row["requested_walltime"], row["submitted_us"], request.held, request.reason,
        priority, position, queue_position, terms or {}, values or {}, error, under_threshold,
        left_out,
    )  # fmt: skip


def slurm_terms(factors: Factors) -> dict[str, float]:
    """The weighted terms a Slurm priority is the sum of, as sprio names them (nice
    subtracted: negative)."""
    if factors.direct_priority is not None:
        return {"set directly": float(factors.direct_priority)}
    terms = {
        "site": float(factors.site),
        "age": factors.age,
        "assoc": factors.assoc,
        "fairshare": factors.fairshare,
        "jobsize": factors.jobsize,
        "partition": factors.partition,
        "qos": factors.qos,
    }
    terms.update({f"tres {name}": value for name, value in factors.tres.items()})
    terms["nice"] = -float(factors.nice)
    return terms


@dataclass(frozen=True)
class SlurmQueue:
    """What the multifactor priority of a cluster's jobs reads besides the jobs."""

    config: MultifactorConfig
    partitions: dict[str, Partition]
    qos: dict[str, Qos]
    active_nodes: int
    cluster_cpus: int

    @classmethod
    def of(cls, cluster: Cluster) -> SlurmQueue:
        partitions = partitions_get(cluster)
        return cls(
            config=multifactor_config_get(cluster),
            partitions=partitions,
            qos=qos_get(cluster),
            # The biggest partition stands for the cluster (scontrol show partition is all
            # that is imported of its nodes).
            active_nodes=max((p.total_nodes for p in partitions.values()), default=0),
            cluster_cpus=max((p.total_cpus for p in partitions.values()), default=0),
        )

    def by_tier(self, partitions: Sequence[str]) -> list[str]:
        """A job's partitions as slurmctld keeps them: highest PriorityTier first, equal tiers
        in the order the job gave (list_sort of part_ptr_list by priority_sort_part_tier)."""

        def tier(name: str) -> int:
            partition = self.partitions.get(name)
            return -(partition.priority_tier if partition is not None else 1)

        return sorted(partitions, key=tier)

    def settled(self, job: PriorityJob, partitions: Sequence[str], now: int) -> PriorityJob:
        """The job with the priority slurmctld reported for it taken as set directly when its
        factors cannot give it in any of its partitions (priority_reachable): the report is
        of the partition the job holds, which the scheduler moves it through (the last it
        tried); sprio shows such a job's factors as 0."""
        for partition in partitions or [job.partition]:
            in_partition = replace(job, partition=partition)
            if priority_reachable(
                in_partition,
                self.config,
                self.partitions.get(partition),
                self.qos.get(job.qos),
                active_nodes=self.active_nodes,
                cluster_cpus=self.cluster_cpus,
                max_partition_factor=partition_factor_max(self.partitions.values()),
                max_qos_priority=qos_priority_max(self.qos.values()),
                now=now,
            ):
                return job
        return replace(job, direct_priority=job.reported_priority)

    def factors(self, job: PriorityJob, now: int) -> Factors:
        return job_factors(
            job,
            self.config,
            self.partitions.get(job.partition),
            self.qos.get(job.qos),
            now=now,
            active_nodes=self.active_nodes,
            cluster_cpus=self.cluster_cpus,
            max_partition_factor=partition_factor_max(self.partitions.values()),
            max_qos_priority=qos_priority_max(self.qos.values()),
        )


@dataclass(frozen=True)
class AssociationStanding:
    """What a job's association gives its priority: its FairShare factor as stored, and its
    Priority as slurmctld holds it with that over the highest of the cluster."""

    fs_factor: float = 0.0
    priority: int = 0
    priority_norm: float = 0.0


NO_ASSOCIATION = AssociationStanding()  # a job charged to no node of the tree


def slurm_job(
    row: Mapping[str, Any], request: JobRequest, association: AssociationStanding
) -> PriorityJob:
    """What the factors read of a stored pending job."""
    submitted_us = row["submitted_us"]
    sequence = _SEQUENCE.match(row["job_id"])
    return PriorityJob(
        job_id=int(sequence.group(1)) if sequence else 0,
        user=row["user"],
        account=row["account"],
        partition=request.partitions[0] if request.partitions else row["queue"],
        qos=request.qos,
        min_nodes=request.min_nodes or row["nodes"] or 1,
        cpu_cnt=row["ncpus"],
        time_limit=request.time_limit,
        accrue_time=request.accrue_time or 0,
        submit_time=submitted_us // 1_000_000 if submitted_us is not None else 0,
        nice=request.nice,
        site_factor=request.site_factor,
        tres={name: int(value) for name, value in request.resources.items()},
        fs_factor=association.fs_factor,
        assoc_priority_norm=association.priority_norm,
        assoc_priority=association.priority,
        reported_priority=request.reported_priority,
    )


def _slurm_order(cluster: Cluster, at: datetime, rows: QueuedRows) -> QueueOrder:
    now = epoch_seconds(at)
    queue = SlurmQueue.of(cluster)
    standings = association_standings(cluster, rows)
    scored = []
    held = []
    for row, request in zip(rows.rows(), job_requests(rows["request"]), strict=True):
        if not sprio_listed(row, request, queue.config, now):  # held, or not eligible yet
            held.append(_queued(row, request, left_out="" if request.held else NOT_ELIGIBLE))
            continue
        job = slurm_job(row, request, standings.get(row["node_id"], NO_ASSOCIATION))
        job = queue.settled(job, request.partitions, now)
        factors = queue.factors(job, now)
        scored.append((row, request, factors, job_priority(factors)))
    # Pending jobs by priority, then submission, then job id: the order of the main
    # scheduler's queue within one partition tier (job_scheduler.c sort_job_queue2).
    at_us = now * 1_000_000
    scored.sort(
        key=lambda item: (-item[3], item[0]["submitted_us"] or at_us,
                          _rank_key(item[0]["job_id"]))
    )  # fmt: skip
    in_queue: dict[str, int] = {}
    ordered = []
    for position, (row, request, factors, priority) in enumerate(scored, start=1):
        in_queue[row["queue"]] = in_queue.get(row["queue"], 0) + 1
        ordered.append(
            _queued(
                row,
                request,
                priority=float(priority),
                position=position,
                queue_position=in_queue[row["queue"]],
                terms=slurm_terms(factors),
            )
        )
    held.sort(key=lambda job: _rank_key(job.job_id))
    return QueueOrder(cluster, at, OrderedJobs.of(ordered), held, "")


def association_standings(cluster: Cluster, rows: QueuedRows) -> dict[int, AssociationStanding]:
    """The standing of each node the rows are charged to, as stored (assoc_mgr.c
    _set_assoc_norm_priority: Priority over the cluster's highest, 0 while that is 0)."""
    nodes = Node.objects.filter(cluster=cluster)
    highest = nodes.aggregate(highest=Max("assoc_priority_effective"))["highest"] or 0
    found = nodes.filter(pk__in={pk for pk in rows["node_id"] if pk}).values_list(
        "pk", "fairshare_factor", "assoc_priority_effective"
    )
    return {
        pk: AssociationStanding(fs, priority, priority / highest if highest else 0.0)
        for pk, fs, priority in found
    }


def priority_history_get(*, cluster: Cluster, job_id: str) -> list[JobPriorityHistory]:
    """The priority and place the cycles recorded for a job while it waited, oldest first."""
    return list(JobPriorityHistory.objects.filter(cluster=cluster, job_id=job_id).order_by("at"))


def sprio_rows_get(*, cluster: Cluster, at: datetime) -> tuple[MultifactorConfig, list[SprioRow]]:
    """What slurmctld sends sprio at `at`: a row per pending job it lists (not held, its
    begin time come: sprio_listed) and partition it may run in, highest PriorityTier first,
    with the factors as of that moment."""
    now = epoch_seconds(at)
    queue = SlurmQueue.of(cluster)
    rows = queued_rows_get(cluster=cluster)
    standings = association_standings(cluster, rows)
    sent = []
    for row, request in zip(rows.rows(), job_requests(rows["request"]), strict=True):
        if not sprio_listed(row, request, queue.config, now):
            continue
        job = slurm_job(row, request, standings.get(row["node_id"], NO_ASSOCIATION))
        job = queue.settled(job, request.partitions, now)
        for partition in queue.by_tier(request.partitions or [job.partition]):
            in_partition = replace(job, partition=partition)
            sent.append(sprio_row(in_partition, queue.factors(in_partition, now)))
    return queue.config, sent


def sprio_listed(
    row: Mapping[str, Any], request: JobRequest, config: MultifactorConfig, now: int
) -> bool:
    """Whether slurmctld lists a pending job for sprio (priority_p_get_priority_factors_list,
    priority_multifactor.c at slurm-22-05-8-1): not held (priority 0), and its begin time (its
    submit time with ACCRUE_ALWAYS) set and come. A job waiting on a dependency has no begin
    time yet (0); one submitted with --begin in the future has not reached it. A row that says
    nothing of it (not from squeue) is taken as listed."""
    if request.held:
        return False
    since: int | None
    if "ACCRUE_ALWAYS" in config.flags:
        since = None if row["submitted_us"] is None else row["submitted_us"] // 1_000_000
    elif request.begin_time is not None:
        since = request.begin_time
    else:  # a row stored before snapshots kept the begin time: its eligible time
        since = None if row["etime_us"] is None else row["etime_us"] // 1_000_000
    if since is None:  # nothing says when it may begin: as a job that may
        return True
    return 0 < since <= now
