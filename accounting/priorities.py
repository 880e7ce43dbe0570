"""Reads: each queued job's priority, its terms and its place, as the cluster's scheduler would
compute them at a moment from what is stored (PBS job_sort_formula and job order, Slurm
multifactor). Nothing here writes; the cycles store the priorities' history
(accounting.services.priorities)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, Sum
from django.db.models.functions import Coalesce

from accounting.models import IngestRun, Job, JobPriorityHistory
from accounting.parsers.records import JobRequest, JobState
from trees.bulk import EpochMicroseconds, collector_paused, rows_read
from trees.engine.formula import JOB_SORT_NAMES, Formula, FormulaError, parse_formula
from trees.engine.job_sort import PbsJob, SortPolicy, Standing, job_order
from trees.engine.multifactor import (
    Factors,
    MultifactorConfig,
    Partition,
    PriorityJob,
    Qos,
    job_factors,
    job_priority,
    partition_factor_max,
    qos_priority_max,
)
from trees.engine.pbs import deserving_keys
from trees.engine.times import epoch_microseconds_time, epoch_seconds
from trees.formats.sprio import SprioRow, sprio_row
from trees.models import Cluster, Node, Queue, Scheduler, SettingChange
from trees.selectors.priority_config import multifactor_config_get, partitions_get, qos_get

QUEUED_FIELDS = (
    "pk", "job_id", "entity", "node_id", "user", "account", "project", "queue", "ncpus",
    "ngpus", "nodes", "requested_walltime", "mpiprocs", "submitted_us", "etime_us", "request",
)  # fmt: skip
_SEQUENCE = re.compile(r"(\d+)(?:\[(\d*)\]|_(\d+))?")


# Not frozen: 100,000 are made for a big queue's order, and a frozen dataclass's __init__ is
# five times slower. Nothing changes one once made (a web process shares them between pages).
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


@dataclass(frozen=True)
class QueueOrder:
    """A cluster's queued jobs at `at`: those the scheduler considers, in its order, and the
    held ones it does not."""

    cluster: Cluster
    at: datetime
    ordered: list[QueuedJob]
    held: list[QueuedJob]
    formula: str  # PBS's job_sort_formula ("" for none; Slurm: "")
    problem: str = ""  # why the priorities could not be computed as configured
    _by_id: dict[str, QueuedJob] = field(init=False, repr=False, compare=False)
    queue_sizes: dict[str, int] = field(init=False, repr=False, compare=False)  # jobs a queue
    _sums: tuple[list[int], list[float]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Worked out once for the order, which a web process keeps for the cycle: a page then
        # finds its job, its queue's size and what is ahead of it without walking the queue.
        jobs = {job.job_id: job for job in (*self.ordered, *self.held)}
        sizes: dict[str, int] = {}
        cores, core_hours = [0], [0.0]
        for job in self.ordered:
            sizes[job.queue] = sizes.get(job.queue, 0) + 1
            cores.append(cores[-1] + job.ncpus)
            core_hours.append(core_hours[-1] + job.core_hours)
        object.__setattr__(self, "_by_id", jobs)
        object.__setattr__(self, "queue_sizes", sizes)
        object.__setattr__(self, "_sums", (cores, core_hours))

    def ahead_sizes(self, job: QueuedJob) -> tuple[int, int, float]:
        """How many jobs are considered before this one, their cores and their core-hours
        (requested cores × requested walltime); a held job has every waiting job ahead."""
        before = len(self.ordered) if job.position is None else job.position - 1
        cores, core_hours = self._sums
        return before, cores[before], core_hours[before]

    def find(self, job_id: str) -> QueuedJob | None:
        return self._by_id.get(job_id)


# The last order computed for each cluster, with what it was computed from: pages and the API
# ask at the cycle instants (accounting.job_priority.priorities_at), so a web process orders a
# big queue once a cycle, not once a request. The queued rows it was read from are kept apart:
# they change only when jobs come, go or are re-entered, not at each cycle.
_ORDERS: dict[int, tuple[tuple[object, ...], QueueOrder]] = {}
_ROWS: dict[int, tuple[tuple[object, ...], list[dict[str, Any]]]] = {}


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
            changed)  # fmt: skip


def queue_orders_forget() -> None:
    """Drop the orders and rows kept (tests that rewrite rows in place between two reads)."""
    _ORDERS.clear()
    _ROWS.clear()


def queued_rows_get(*, cluster: Cluster) -> list[dict[str, Any]]:
    """The cluster's queued rows as the orders read them: QUEUED_FIELDS, with `submitted_us`
    its qtime, else its ctime, and `etime_us` its etime, in µs since the epoch."""
    jobs = Job.objects.filter(cluster=cluster, state=JobState.QUEUED).annotate(
        submitted_us=EpochMicroseconds(Coalesce("qtime", "ctime")),
        etime_us=EpochMicroseconds("etime"),
    )
    rows = rows_read(jobs.values_list(*QUEUED_FIELDS))
    return [dict(zip(QUEUED_FIELDS, row, strict=True)) for row in rows]


# 100,000 jobs' objects made at once, none in a reference cycle: see trees/bulk.py.
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


def job_request(row: Mapping[str, Any]) -> JobRequest:
    """The stored request of a queued row (an empty one where none was stored)."""
    text = row["request"]
    if not text:
        return JobRequest()
    stored = json.loads(text)
    if stored.keys() <= _REQUEST_FIELDS:
        return JobRequest(**stored)
    return JobRequest(**{key: value for key, value in stored.items() if key in _REQUEST_FIELDS})


def job_requests(rows: Iterable[Mapping[str, Any]]) -> list[JobRequest]:
    """Each row's job_request; rows storing the same text share one (read-only) request, as the
    jobs of a batch often ask for the same."""
    parsed: dict[str | None, JobRequest] = {}
    requests = []
    for row in rows:
        text = row["request"]
        request = parsed.get(text)
        if request is None:
            request = parsed[text] = job_request(row)
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


def _pbs_resources(row: Mapping[str, Any], request: JobRequest) -> dict[str, float]:
    """The Resource_List amounts: the request's, else what the row says it asked for."""
    if request.resources:
        return request.resources  # shared by the jobs of one request text: read, never changed
    resources: dict[str, float] = {"ncpus": row["ncpus"], "ngpus": row["ngpus"]}
    if row["nodes"]:
        resources["nodect"] = row["nodes"]
    if row["requested_walltime"] is not None:
        resources["walltime"] = row["requested_walltime"]
    if row["mpiprocs"] is not None:
        resources["mpiprocs"] = row["mpiprocs"]
    return resources


def eligible_seconds(
    row: Mapping[str, Any], request: JobRequest, now: int, *, enabled: bool
) -> int:
    """PBS eligible_time at `now`: 0 unless eligible_time_enable; qstat's accrued value plus
    the time since its snapshot while the job accrues as eligible (accrue_type 2); else the
    time since etime (stat_job.c:264-279)."""
    if not enabled:
        return 0
    if request.eligible_time is not None:
        since = (now - request.sampled) if request.sampled is not None else 0
        growing = request.accrue_type in (None, 2)
        return max(0, request.eligible_time + (max(since, 0) if growing else 0))
    etime_us = row["etime_us"]
    return max(0, now - etime_us // 1_000_000) if etime_us is not None else 0


def _standings(cluster: Cluster, node_ids: Iterable[int]) -> dict[int, Standing]:
    """Each entity node's numbers as the scheduler holds them, with its path's deserving key."""
    rows = rows_read(
        Node.objects.filter(cluster=cluster).values_list(
            "id", "parent_id", "fairshare_perc", "fairshare_tree_usage", "usage"
        )
    )
    parents, levels, tree_usages = {}, {}, {}
    for pk, parent, perc, tree_usage, usage in rows:
        parents[pk] = parent
        levels[pk] = (perc, usage)
        tree_usages[pk] = tree_usage
    keys = deserving_keys(parents, levels, {pk for pk in node_ids if pk in parents})
    return {
        pk: Standing(
            fairshare_perc=levels[pk][0], fairshare_tree_usage=tree_usages[pk], deserving=key
        )
        for pk, key in keys.items()
    }


_NO_STANDING = Standing(fairshare_perc=0.0, fairshare_tree_usage=0.0, deserving=((1, 0.0),))


def job_sort_formula_parse(cluster: Cluster) -> Formula | None:
    """The cluster's job_sort_formula compiled as PBS reads it (Python, the math names, the
    server's numeric resources); None without one. Raises FormulaError."""
    text = cluster.job_sort_formula.strip()
    if not text:
        return None
    names = (*JOB_SORT_NAMES, *cluster.custom_resources)
    return parse_formula(text, names, python=True)


def pbs_order(
    cluster: Cluster,
    at: datetime,
    rows: list[dict[str, Any]],
    standings: Mapping[int, Standing] | None = None,
) -> QueueOrder:
    """PBS's order of these queued rows (QUEUED_FIELDS) at `at`; with `standings`, the
    entities stand as those say (a what-if) instead of as stored."""
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
    )
    requests = job_requests(rows)
    if standings is None:
        standings = _standings(cluster, (row["node_id"] for row in rows if row["node_id"]))
    ranks = {
        job_id: rank
        for rank, job_id in enumerate(sorted((row["job_id"] for row in rows), key=_rank_key), 1)
    }
    enabled = cluster.eligible_time_enable
    waiting: list[PbsJob] = []
    considered: list[tuple[dict[str, Any], JobRequest]] = []
    held = []
    for row, request in zip(rows, requests, strict=True):
        if request.held:
            held.append(_queued(row, request, None))
            continue
        submitted_us = row["submitted_us"]
        accrue_type = request.accrue_type
        waiting.append(
            PbsJob(
                job_id=row["job_id"],
                entity=row["entity"],
                queue=row["queue"],
                resources=_pbs_resources(row, request),
                eligible_time=eligible_seconds(row, request, now, enabled=enabled),
                queue_priority=queues.get(row["queue"], 0),
                job_priority=request.job_priority,
                accrue_type=accrue_type
                if accrue_type is not None
                else (2 if row["etime_us"] is not None else 1),
                qrank=submitted_us or 0,
                rank=ranks[row["job_id"]],
                standing=standings.get(row["node_id"], _NO_STANDING),
            )
        )
        considered.append((row, request))
    results, order = job_order(waiting, policy)
    made = [
        _queued(row, request, result)
        for (row, request), result in zip(considered, results, strict=True)
    ]
    ordered = [made[index] for index in order]
    held.sort(key=lambda job: _rank_key(job.job_id))
    return QueueOrder(cluster, at, ordered, held, cluster.job_sort_formula, problem)


def _queued(row: Mapping[str, Any], request: JobRequest, result: Any) -> QueuedJob:
    """A QueuedJob of a stored row and, for a job considered, the engine's result."""
    if result is None:
        return QueuedJob(
            row["job_id"], row["entity"], row["node_id"], row["user"],
            row["account"] or row["project"], row["queue"], row["ncpus"],
            row["requested_walltime"], row["submitted_us"], request.held, request.reason,
            None, None, None, {}, {}, None, False,
        )  # fmt: skip
    return QueuedJob(
        row["job_id"], row["entity"], row["node_id"], row["user"],
        row["account"] or row["project"], row["queue"], row["ncpus"],
        row["requested_walltime"], row["submitted_us"], request.held, request.reason,
        result.value, result.position, result.queue_position, result.terms, result.values,
        result.error, result.under_threshold,
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


def slurm_job(row: Mapping[str, Any], request: JobRequest, fs_factor: float) -> PriorityJob:
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
        fs_factor=fs_factor,
    )


def _slurm_order(cluster: Cluster, at: datetime, rows: list[dict[str, Any]]) -> QueueOrder:
    now = epoch_seconds(at)
    queue = SlurmQueue.of(cluster)
    fs_factors = dict(
        Node.objects.filter(
            cluster=cluster, pk__in={row["node_id"] for row in rows if row["node_id"]}
        ).values_list("pk", "fairshare_factor")
    )
    scored = []
    held = []
    for row, request in zip(rows, job_requests(rows), strict=True):
        if request.held:
            held.append(_queued(row, request, None))
            continue
        factors = queue.factors(slurm_job(row, request, fs_factors.get(row["node_id"], 0.0)), now)
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
        result = SlurmResult(
            float(priority), position, in_queue[row["queue"]], slurm_terms(factors)
        )
        ordered.append(_queued(row, request, result))
    held.sort(key=lambda job: _rank_key(job.job_id))
    return QueueOrder(cluster, at, ordered, held, "")


@dataclass(frozen=True)
class SlurmResult:
    """A Slurm job's place, in the shape _queued reads of the PBS engine's JobPriority."""

    value: float
    position: int
    queue_position: int
    terms: dict[str, float]
    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    under_threshold: bool = False


def priority_history_get(*, cluster: Cluster, job_id: str) -> list[JobPriorityHistory]:
    """The priority and place the cycles recorded for a job while it waited, oldest first."""
    return list(JobPriorityHistory.objects.filter(cluster=cluster, job_id=job_id).order_by("at"))


def sprio_rows_get(*, cluster: Cluster, at: datetime) -> tuple[MultifactorConfig, list[SprioRow]]:
    """What slurmctld sends sprio at `at`: a row per pending job (not held) and partition it
    may run in, with the factors as of that moment."""
    now = epoch_seconds(at)
    queue = SlurmQueue.of(cluster)
    rows = queued_rows_get(cluster=cluster)
    fs_factors = dict(
        Node.objects.filter(
            cluster=cluster, pk__in={row["node_id"] for row in rows if row["node_id"]}
        ).values_list("pk", "fairshare_factor")
    )
    sent = []
    for row, request in zip(rows, job_requests(rows), strict=True):
        if request.held:
            continue
        job = slurm_job(row, request, fs_factors.get(row["node_id"], 0.0))
        for partition in request.partitions or [job.partition]:
            in_partition = replace(job, partition=partition)
            sent.append(sprio_row(in_partition, queue.factors(in_partition, now)))
    return queue.config, sent
