"""Usage in: accounting files parsed, each job run charged to its entity and stored.

Each file is one transaction, so a file killed half-way leaves nothing and the next run stores
it whole. A run already stored is a duplicate and adds nothing; a run stored as running is
completed by its end record. Reading and pricing is `accounting.preparation`'s (in a helper
process for big inputs); this module decides what is new and stores it.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F, Q
from django.utils import timezone

from accounting.copy_text import JOB_COLUMNS
from accounting.entities import SwfAccountFrom
from accounting.models import (
    Cycle,
    FilesUpload,
    IngestRejection,
    IngestRun,
    IngestSource,
    Job,
    NodeHistory,
    UploadRejection,
    UploadState,
)
from accounting.parsers.records import USAGE_RESOURCES, JobRecord, JobState
from accounting.preparation import (
    Batch,
    Preparation,
    PreparedRun,
    SourceKind,
    completed_row,
    prepared_files,
)
from accounting.selectors import cycle_period, last_cycle_at
from trees.bulk import collector_paused, rows_insert, rows_update
from trees.engine.cycle import Accrual, Run, cycle_slot, cycle_usage, kept_instants
from trees.engine.edit import standing_row
from trees.engine.fairtree import (
    ROOT_ACCOUNT,
    AssociationDef,
    SlurmTree,
    UsageResetPeriod,
    next_usage_reset,
)
from trees.engine.fairtree import decay_factor as slurm_decay_factor
from trees.engine.formula import FormulaError, FormulaValueError, parse_formula
from trees.engine.pbs import TREEROOT, UNKNOWN, GroupDef, PbsTree, UsageRecord, compute
from trees.engine.slurm_pass import SlurmPass, billable_tres, run_usage, slurm_pass
from trees.formats.pbsfs import UsageDatabase
from trees.formats.rejected import RejectedLine
from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.formats.usage_file import MAX_FILE_BYTES as USAGE_FILE_MAX_BYTES
from trees.formats.usage_file import read_usage_file
from trees.models import Cluster, Node, NodeKind, NodeOrigin, Scheduler
from trees.selectors import (
    epoch_seconds,
    epoch_time,
    pbs_state_get,
    resource_group_preview_get,
    slurm_node_ids_get,
    slurm_state_get,
)
from trees.services import (
    StoreSummary,
    cluster_get_or_create,
    pbs_database_store,
    pbs_entities_add,
    pbs_groups_add,
    pbs_usage_import,
    resource_group_import,
    sched_config_import,
    slurm_associations_add,
    slurm_numbers,
    slurm_usage_store,
)

logger = logging.getLogger(__name__)

Progress = Callable[[int], object]  # bytes of the current file consumed since the last call

_SCHEDULER = {
    IngestSource.PBS_ACCOUNTING: Scheduler.PBS,
    IngestSource.SACCT: Scheduler.SLURM,
    IngestSource.SWF: Scheduler.PBS,
}


@dataclass(frozen=True)
class IngestOptions:
    create_nodes: bool = False  # build missing users/projects in the tree (SWF, sacct)
    shares: int = 1  # the shares of a node --create-nodes builds
    swf_account_from: SwfAccountFrom = "group"
    time_zone: tzinfo = UTC  # sacct prints the cluster's local time without a zone
    max_decompressed: int | None = None  # None: settings.MAX_DECOMPRESSED_BYTES


@dataclass
class FileSummary:
    path: str
    read: int = 0
    ingested: int = 0
    duplicates: int = 0
    running: int = 0
    record_types: Counter[str] = field(default_factory=Counter)
    rejects: list[RejectedLine] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return len(self.rejects)

    def document(self) -> dict[str, object]:
        return {
            "path": self.path,
            "read": self.read,
            "ingested": self.ingested,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "running": self.running,
            "record_types": dict(sorted(self.record_types.items())),
        }


@dataclass
class IngestResult:
    run: IngestRun
    files: list[FileSummary]
    unknown_entities: list[str]
    created_nodes: list[str]

    @property
    def stored_anything(self) -> bool:
        """Whether the input held any job run, new or already stored."""
        return any(f.ingested or f.duplicates or f.running for f in self.files)


def ingest(
    *,
    cluster_name: str,
    source: IngestSource,
    paths: Sequence[str],
    options: IngestOptions | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Store the job runs of accounting files; each file is one transaction."""
    options = options or IngestOptions()
    cluster, created = _cluster(cluster_name, source)
    parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)  # a bad one fails here, early
    run = IngestRun.objects.create(cluster=cluster, source=source, started_at=timezone.now())
    charger = _Charger(cluster, options)
    preparation = Preparation(
        source=cast(SourceKind, source.value),
        # Plain str, not a model's choices: a helper process must not need Django.
        usage_formula=str(cluster.fairshare_usage_res),
        fairshare_entity=str(cluster.fairshare_entity),
        slurm=cluster.scheduler == Scheduler.SLURM,
        cluster_id=cluster.pk,
        ingest_id=run.pk,
        copy=connection.vendor == "postgresql",
        swf_account_from=options.swf_account_from,
        time_zone=options.time_zone,
        nodes=dict(charger.nodes),
        max_decompressed=options.max_decompressed or settings.MAX_DECOMPRESSED_BYTES,
    )
    store = _JobStore(cluster, charger)
    files = []
    with prepared_files(paths, preparation) as batches_of_files:
        for path, batches in batches_of_files:
            with transaction.atomic():
                summary = _ingest_file(path, batches, store, progress)
                _record_file(run, summary)
            files.append(summary)
    run.unknown_entities = sorted(charger.unknown)
    run.created_nodes = charger.created
    run.finished_at = timezone.now()
    run.save(update_fields=["unknown_entities", "created_nodes", "finished_at"])
    result = IngestResult(run, files, run.unknown_entities, charger.created)
    if created and not result.stored_anything and not charger.created:
        cluster.delete()  # an import that imports nothing leaves no cluster behind
    return result


def _cluster(name: str, source: IngestSource) -> tuple[Cluster, bool]:
    """The cluster, made when new (and whether it was); SWF goes into a cluster of any
    scheduler."""
    existing = Cluster.objects.filter(name=name).first()
    if existing is not None and source == IngestSource.SWF:
        return existing, False
    return cluster_get_or_create(name=name, scheduler=_SCHEDULER[source])


def _record_file(run: IngestRun, summary: FileSummary) -> None:
    IngestRejection.objects.bulk_create(
        (
            IngestRejection(
                run=run,
                file=summary.path,
                line=bad.line,
                field=bad.field,
                reason=bad.reason,
                text=bad.text,
            )
            for bad in summary.rejects
        ),
        batch_size=2000,
    )
    run.files = [*run.files, summary.document()]
    run.read += summary.read
    run.ingested += summary.ingested
    run.duplicates += summary.duplicates
    run.rejected += summary.rejected
    run.running += summary.running
    types = Counter(run.record_types)
    types.update(summary.record_types)
    run.record_types = dict(sorted(types.items()))
    run.save()


def _ingest_file(
    path: str, batches: Iterator[Batch], store: _JobStore, progress: Progress | None
) -> FileSummary:
    summary = store.summary = FileSummary(path)
    for batch in batches:
        summary.read += batch.read
        summary.record_types.update(batch.record_types)
        summary.rejects += batch.rejects
        store.charger.parents.update(batch.parents)
        store.add(batch)
        if progress is not None:
            progress(batch.consumed)
    return summary


class _Charger:
    """Which tree node each run is charged to; makes the nodes the tree lacks.

    PBS puts an entity it does not know under `unknown` (with usage 1, as find_alloc_ginfo
    does); with --create-nodes it is defined in the tree instead. A Slurm association that
    does not exist is left unlinked and listed, unless --create-nodes builds it.
    """

    def __init__(self, cluster: Cluster, options: IngestOptions) -> None:
        self.cluster = cluster
        self.options = options
        self.slurm = cluster.scheduler == Scheduler.SLURM
        self.unknown: set[str] = set()
        self.created: list[str] = []
        self.nodes: dict[str, int] = {}
        # Where --create-nodes puts each entity met (PBS): its account or group, or the root.
        self.parents: dict[str, str | None] = {}
        self._load()

    def _load(self) -> None:
        rows = Node.objects.filter(cluster=self.cluster).values_list(
            "id", "parent_id", "name", "kind"
        )
        if not self.slurm:
            self.nodes = {name: pk for pk, _, name, _ in rows}
            return
        names = {pk: name for pk, _, name, _ in rows}
        self.nodes = {
            f"{names.get(parent, '')}:{name}": pk
            for pk, parent, name, kind in rows
            if kind == NodeKind.USER
        }

    def node_ids(self, entities: Sequence[str]) -> list[int | None]:
        """The node of each entity, after making those the tree lacks (one tree write)."""
        missing = sorted({entity for entity in entities if entity not in self.nodes})
        if missing:
            self._add(missing)
        return [self.nodes.get(entity) for entity in entities]

    def _add(self, missing: list[str]) -> None:
        reason = "met in accounting data"
        if self.slurm:
            if self.options.create_nodes:
                self.created += slurm_associations_add(
                    cluster=self.cluster,
                    associations=self._associations(missing),
                    reason=f"{reason} (--create-nodes)",
                )
            else:
                self.unknown.update(missing)
        elif self.options.create_nodes:
            self.created += pbs_groups_add(
                cluster=self.cluster,
                groups=self._groups(missing),
                reason=f"{reason} (--create-nodes)",
            )
        else:
            self.unknown.update(
                pbs_entities_add(cluster=self.cluster, names=missing, reason=reason)
            )
        self._load()

    def _associations(self, missing: list[str]) -> list[AssociationDef]:
        shares = self.options.shares
        associations = []
        for entity in missing:
            account, _, user = entity.partition(":")
            account = account or ROOT_ACCOUNT
            if account != ROOT_ACCOUNT:
                associations.append(AssociationDef(account=account, shares=shares))
            associations.append(
                AssociationDef(account=account, parent=account, user=user, shares=shares)
            )
        return associations

    def _groups(self, missing: list[str]) -> list[tuple[str, str | None, int]]:
        shares = self.options.shares
        groups: list[tuple[str, str | None, int]] = []
        for entity in missing:
            parent = self.parents.get(entity)
            if parent is not None and parent not in self.nodes:
                groups.append((parent, None, shares))
            groups.append((entity, parent, shares))
        return groups


class _JobStore:
    """Writes batches of runs: new ones stored, running ones completed, the rest duplicates.

    Most runs of a batch are new: they are written at once in a savepoint, and only when the
    unique (cluster, job_id, run) refuses one is the batch checked run by run against what is
    stored. Running rows, the ends of jobs stored as running and runs of entities the tree
    lacks are always checked.
    """

    def __init__(self, cluster: Cluster, charger: _Charger) -> None:
        self.cluster = cluster
        self.charger = charger
        self.summary = FileSummary("")
        self.copy = connection.vendor == "postgresql"
        # The jobs with a running row: what a cluster runs at once, not its history.
        self.running: set[str] = set(
            Job.objects.filter(cluster=cluster, state=JobState.RUNNING).values_list(
                "job_id", flat=True
            )
        )

    def add(self, batch: Batch) -> None:
        self.summary.duplicates += batch.duplicates
        checked = list(batch.others)
        fresh = list(zip(batch.fresh_ids, batch.fresh_runs, batch.fresh_rows, strict=True))
        if not self.running.isdisjoint(batch.fresh_ids):  # ends of jobs stored as running
            checked += _runs_of(item for item in fresh if item[0] in self.running)
            fresh = [item for item in fresh if item[0] not in self.running]
        if fresh:
            try:
                with transaction.atomic():
                    self._write([row for _, _, row in fresh])
                self.summary.ingested += len(fresh)
            except IntegrityError:  # some were stored before: check them one by one
                checked += _runs_of(fresh)
        if checked:
            self._add_checked(checked)

    def _add_checked(self, batch: list[PreparedRun]) -> None:
        """Store what is new of runs that may have been stored, or complete a running row."""
        existing = _stored_runs(self.cluster.pk, [run.job_id for run in batch])
        to_insert: list[PreparedRun] = []
        to_delete: list[int] = []
        superseding: dict[str, int] = {}  # job id -> the run whose end replaces a running row
        for run in batch:
            stored = existing.get(run.job_id, {})
            held = stored.get(run.run)
            if run.state == JobState.RUNNING:
                # A running row is news only when no run of that job has been stored yet since.
                if held is not None or any(number > run.run for number in stored):
                    self.summary.duplicates += 1
                    continue
                self.summary.running += 1
                self.running.add(run.job_id)
            else:
                if held is not None and held[1] != JobState.RUNNING:
                    self.summary.duplicates += 1
                    continue
                # Its end supersedes the job's running row (whatever run it was guessed to be).
                running = [pk for pk, state in stored.values() if state == JobState.RUNNING]
                if running:
                    to_delete += running
                    superseding[run.job_id] = run.run
                self.running.discard(run.job_id)
                self.summary.ingested += 1
            to_insert.append(run)
        carried: dict[str, float] = {}
        if to_delete:
            # What the cycles accrued for a running row stays accrued for the run that ends it.
            superseded = Job.objects.filter(pk__in=to_delete)
            carried = dict(superseded.filter(accrued__gt=0).values_list("job_id", "accrued"))
            superseded.delete()
        placing = [run for run in to_insert if not run.complete]
        nodes = iter(self.charger.node_ids([run.entity for run in placing]))
        self._write(
            [run.row if run.complete else completed_row(run.row, next(nodes)) for run in to_insert]
        )
        for job_id, accrued in carried.items():
            Job.objects.filter(cluster=self.cluster, job_id=job_id, run=superseding[job_id]).update(
                accrued=accrued
            )

    def _write(self, rows: list[Any]) -> None:
        """Store complete rows: COPY text lines (PostgreSQL) or tuples of values."""
        if not rows:
            return
        quote = connection.ops.quote_name
        columns = ", ".join(quote(column) for column in JOB_COLUMNS)
        table = quote(Job._meta.db_table)
        with connection.cursor() as cursor:
            if not self.copy:
                marks = ", ".join(["%s"] * len(JOB_COLUMNS))
                cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
                return
            # wrap_database_errors: psycopg's errors as Django's, IntegrityError included.
            with (
                connection.wrap_database_errors,
                cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
            ):
                copy.write("".join(rows))


def _runs_of(fresh: Iterable[tuple[str, int, Any]]) -> list[PreparedRun]:
    """Fresh runs, (job id, run, complete row), as PreparedRun to be checked.

    Their state reads "ended" for requeued runs too: the check tells only running from not.
    """
    return [
        PreparedRun(job_id, run, JobState.ENDED.value, "", row, complete=True)
        for job_id, run, row in fresh
    ]


def _stored_runs(cluster_id: int, job_ids: list[str]) -> dict[str, dict[int, tuple[int, str]]]:
    """The stored runs of these jobs: job id → run → (row id, state), by the unique index."""
    rows: Iterable[tuple[str, int, int, str]]
    if connection.vendor != "postgresql":
        jobs = Job.objects.filter(cluster_id=cluster_id, job_id__in=job_ids)
        rows = jobs.values_list("job_id", "run", "pk", "state")
    else:
        # One array parameter, not one per id; and the unique (cluster, job_id, run) index by
        # name of its columns: within a big file's transaction the statistics still describe
        # a smaller table, and the planner would scan the whole cluster through (cluster, end).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT job_id, run, id, state FROM accounting_job"
                " WHERE (cluster_id, job_id) = ANY(SELECT %s, unnest(%s::varchar[]))",
                [cluster_id, job_ids],
            )
            rows = cursor.fetchall()
    found: dict[str, dict[int, tuple[int, str]]] = {}
    for job_id, number, pk, state in rows:
        found.setdefault(job_id, {})[number] = (pk, state)
    return found


# What a usage formula may price a stored run on (job_resources reads them).
_RESOURCE_FIELDS = (
    "source_line", "job_id", "ncpus", "ngpus", "nodes", "memory", "walltime", "cput",
    "vmem", "mpiprocs", "cpupercent", "billing",
)  # fmt: skip


def jobs_usage_recompute(*, cluster: Cluster) -> int:
    """Price every stored run again with the cluster's current `fairshare_usage_res` (Slurm:
    billable TRES × elapsed, which does not change)."""
    formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
    slurm = cluster.scheduler == Scheduler.SLURM
    changed = []
    with transaction.atomic():
        jobs = Job.objects.filter(cluster=cluster).exclude(state=JobState.RUNNING)
        for job in jobs.values("pk", "usage", *_RESOURCE_FIELDS).iterator(chunk_size=5000):
            try:
                resources = job_resources(job)
                usage = run_usage(resources) if slurm else max(formula.evaluate(resources), 0.0)
            except FormulaValueError:
                usage = 0.0  # the line was taken under a formula that could price it
            if usage != job["usage"]:
                changed.append((job["pk"], usage))
        rows_update(Job, ["usage"], changed)
    return len(changed)


def job_resources(job: Mapping[str, Any]) -> dict[str, float]:
    """What the usage formula sees of a stored run (its _RESOURCE_FIELDS), as it saw the
    record at ingestion."""
    extra = {
        name: float(value)
        for name in ("vmem", "mpiprocs", "cpupercent", "billing")
        if (value := job[name]) is not None
    }
    record = JobRecord(
        line=job["source_line"],
        job_id=job["job_id"],
        ncpus=job["ncpus"],
        ngpus=job["ngpus"],
        nodes=job["nodes"],
        memory=job["memory"],
        walltime=job["walltime"],
        cput=job["cput"],
        extra=extra,
    )
    return record.usage_resources()


class CycleRefused(ValueError):
    """A cycle that cannot run as asked (the message says why and what to do)."""


# Paused around the call, so that what the cycle made is freed before the collector restarts.
@collector_paused()
def cycle_run(*, cluster: Cluster, now: datetime) -> Cycle | None:
    """One scheduling cycle up to `now`: accrue job usage, apply the decays due, store metrics;
    None when the cycle at `now` was done before.

    One transaction holding the cluster's row: two workers on the same cluster run one after
    the other, and the second, finding `now` done, does nothing; a cycle that dies leaves
    nothing and the next one catches up.
    """
    started, clock = timezone.now(), time.perf_counter()
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        last_at = last_cycle_at(cluster)
        if last_at is not None and now <= last_at:
            if now == last_at:
                return None
            raise CycleRefused(
                f"cluster {cluster.name}: {now.isoformat()} is before its last cycle at"
                f" {last_at.isoformat()}; a cycle cannot go back in time"
            )
        _check_cycle_policy(cluster)
        if cluster.scheduler == Scheduler.SLURM:
            cycle, changed = _slurm_cycle(cluster, now, last_at)
        else:
            cycle, changed = _pbs_cycle(cluster, now)
        _accruals_save(changed)
        _history_write(cluster, now)
        cycle.cluster, cycle.at, cycle.started_at = cluster, now, started
        cycle.duration = time.perf_counter() - clock
        cycle.save(force_insert=True)
        return cycle


def _pbs_cycle(cluster: Cluster, now: datetime) -> tuple[Cycle, Iterable[Run]]:
    """The PBS scheduler's cycle at `now` on the stored usage database, stored with its
    metrics: its ledger row (unsaved) and the runs whose accrual moved."""
    state = pbs_state_get(cluster=cluster)
    accrual = Accrual(parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES))
    records, last_decay, decays = cycle_usage(
        accrual,
        _accruing(cluster, now),
        {record.name: record.usage for record in state.database.records},
        now=epoch_seconds(now),
        last_decay=state.database.last_decay,
        groups=state.groups,
        **_decay_policy(cluster),
    )
    database = UsageDatabase(
        exists=True,
        last_decay=last_decay,
        records=tuple(UsageRecord(name, usage) for name, usage in records.items()),
    )
    pbs_database_store(cluster=cluster, state=state, database=database, reason="cycle")
    return _pbs_ledger(accrual, decays), accrual.changed.values()


def _pbs_ledger(accrual: Accrual, decays: Sequence[int]) -> Cycle:
    """The ledger row of a PBS cycle (live or replayed), without its cluster and times."""
    return Cycle(
        jobs_accrued=len(accrual.changed),
        usage_added=accrual.added,
        decays_applied=len(decays),
        decay_times=[epoch_time(instant).isoformat() for instant in decays],
    )


def _decay_policy(cluster: Cluster) -> dict[str, Any]:
    """cycle_usage's arguments of the cluster's decay policy."""
    return {
        "decay_interval": int(cluster.decay_interval.total_seconds()),
        "decay_factor": cluster.decay_factor,
        "unknown_shares": cluster.unknown_shares,
    }


def _check_cycle_policy(cluster: Cluster) -> None:
    if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
        raise CycleRefused(
            f"cluster {cluster.name}: cycles run for PBS and Slurm clusters;"
            f" this one is {cluster.scheduler}"
        )
    slurm = cluster.scheduler == Scheduler.SLURM
    if not slurm and cluster.decay_interval.total_seconds() < 1:
        raise CycleRefused(f"cluster {cluster.name}: decay_interval must be at least 1 s")
    if not Node.objects.filter(cluster=cluster, origin=NodeOrigin.DEFINED).exists():
        how = (
            "its associations first (manage.py import_sshare FILE --cluster NAME)"
            if slurm
            else "its resource_group first (manage.py import_resource_group FILE --cluster NAME)"
        )
        raise CycleRefused(f"cluster {cluster.name} has no tree: import {how}")


# A stored run as _run reads it: rows, not model instances (a cycle reads every running job).
_RUN_FIELDS = ("pk", "state", "entity", "start", "end", "usage", "accrued", *_RESOURCE_FIELDS)


def _accruing(cluster: Cluster, now: datetime) -> list[Run]:
    """The runs started before `now` that the cycles have not fully accrued, in start order."""
    jobs = (
        Job.objects.filter(cluster=cluster, start__lt=now)
        .filter(Q(state=JobState.RUNNING) | ~Q(accrued=F("usage")))
        .order_by("start", "pk")
    )
    return [_run(job) for job in jobs.values(*_RUN_FIELDS)]


def _run(job: Mapping[str, Any]) -> Run:
    running = job["state"] == JobState.RUNNING
    start = epoch_seconds(job["start"])
    end = job["end"]
    return Run(
        key=job["pk"],
        entity=job["entity"],
        start=start,
        end=None if running else (epoch_seconds(end) if end is not None else start),
        usage=job["usage"],
        accrued=job["accrued"],
        ncpus=job["ncpus"],
        resources=job_resources(job) if running else None,
        billable=billable_tres(job["billing"], job["ncpus"]),
    )


def _accruals_save(runs: Iterable[Run]) -> None:
    rows_update(Job, ["accrued"], [(run.key, run.accrued) for run in runs])


def _slurm_cycle(
    cluster: Cluster, now: datetime, last_at: datetime | None
) -> tuple[Cycle, Iterable[Run]]:
    """slurmctld's pass at `now` on the stored associations, stored with its metrics: its
    ledger row (unsaved) and the runs whose ledger moved."""
    state = slurm_state_get(cluster=cluster)
    done = slurm_pass(
        state.tree,
        _accruing(cluster, now),
        now=epoch_seconds(now),
        last_ran=None if last_at is None else epoch_seconds(last_at),
        association=_association_finder(state.tree),
        **_slurm_policy(cluster, now, last_at),
    )
    slurm_usage_store(cluster=cluster, state=state, reason="cycle")
    return _slurm_ledger(done), done.changed.values()


def _slurm_ledger(done: SlurmPass) -> Cycle:
    """The ledger row of a Slurm pass (live or replayed), without its cluster and times."""
    return Cycle(
        jobs_accrued=len(done.changed),
        usage_added=done.added,
        decays_applied=int(done.decayed),
        usage_reset=done.reset,
    )


def _slurm_policy(cluster: Cluster, now: datetime, last_at: datetime | None) -> dict[str, Any]:
    """slurm_pass's arguments of the cluster's usage policy for the pass at `now`."""
    period = UsageResetPeriod(cluster.priority_usage_reset_period)
    reset_at = None if last_at is None else next_usage_reset(timezone.localtime(last_at), period)
    return {
        "factor": slurm_decay_factor(cluster.priority_decay_half_life),
        "reset": reset_at is not None and reset_at <= now,
        "charge_job_end": cluster.charge_job_end,
    }


def _association_finder(tree: SlurmTree) -> Callable[[str], int | None]:
    """The association a run's `account:user` entity is charged to, None if there is none."""

    def association(entity: str) -> int | None:
        account, _, user = entity.partition(":")
        return tree.find(account or ROOT_ACCOUNT, user)

    return association


_HISTORY_COLUMNS = (
    "node_id", "at", "usage", "fairshare_perc", "fairshare_tree_usage", "fairshare_factor",
    "level_fs", "fairshare_rank",
)  # fmt: skip
# The roll-up: every cycle for a day, the last of each hour for a week, the last of each day.
HISTORY_EVERY_CYCLE = timedelta(days=1)
HISTORY_HOURLY = timedelta(days=7)
_HISTORY_WINDOWS = (int(HISTORY_EVERY_CYCLE.total_seconds()), int(HISTORY_HOURLY.total_seconds()))


def _history_write(cluster: Cluster, at: datetime) -> None:
    """Every node's numbers, as just stored, as history at `at` (copied in the database)."""
    quote = connection.ops.quote_name
    values = ", ".join(quote(column) for column in _HISTORY_COLUMNS[2:])
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(NodeHistory._meta.db_table)}"
            f" ({', '.join(quote(column) for column in _HISTORY_COLUMNS)})"
            f" SELECT {quote('id')}, %s, {values} FROM {quote(Node._meta.db_table)}"
            f" WHERE {quote('cluster_id')} = %s",
            [connection.ops.adapt_datetimefield_value(at), cluster.pk],
        )


@dataclass(frozen=True)
class RollUp:
    cycles_thinned: int  # cycles whose history rows were removed
    rows_removed: int


def history_roll_up(*, cluster: Cluster, now: datetime) -> RollUp:
    """Thin the cluster's history: keep every cycle of the last day, the last cycle of each
    hour of the last week and the last cycle of each day before that (UTC hours and days).
    """
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        kept = Cycle.objects.filter(
            cluster=cluster, history_kept=True, at__lt=now - HISTORY_EVERY_CYCLE
        )
        times = {int(at.timestamp()): at for at in kept.values_list("at", flat=True)}
        keep = kept_instants(times, int(now.timestamp()), *_HISTORY_WINDOWS)
        thinned = sorted(at for moment, at in times.items() if moment not in keep)
        removed = 0
        for start in range(0, len(thinned), 500):
            chunk = thinned[start : start + 500]
            removed += NodeHistory.objects.filter(node__cluster=cluster, at__in=chunk).delete()[0]
            Cycle.objects.filter(cluster=cluster, at__in=chunk).update(history_kept=False)
    return RollUp(len(thinned), removed)


@dataclass(frozen=True)
class ReplayResult:
    first: datetime
    last: datetime
    cycles: int
    decays: int
    runs: int  # job runs accrued
    usage_added: float
    history_rows: int


ReplayProgress = Callable[[int, int], object]  # (cycles done, cycles in all)
MAX_REPLAY_CYCLES = 5_000_000  # 95 years of 10-minute cycles


@collector_paused()  # as cycle_run: a replay of the HPC2N trace ran a fifth faster
def replay(
    *,
    cluster: Cluster,
    start: datetime | None = None,
    until: datetime | None = None,
    step: timedelta | None = None,
    progress: ReplayProgress | None = None,
) -> ReplayResult:
    """The cluster's cycles every `step` (default: its cycle period) from `start` to `until`
    in simulated time, from no usage: the usage, metrics, history (as the roll-up leaves it at
    `until`) and cycle ledger a deployment running since `start` would have stored. The cycles
    are those of cycle_run, on runs kept in memory; only the kept history is computed.
    Replaces the cluster's cycles.
    """
    seconds = int((cycle_period(cluster) if step is None else step).total_seconds())
    if seconds < 1:
        raise CycleRefused(f"the replay step must be at least 1 s, not {step}")
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        _check_cycle_policy(cluster)
        jobs = Job.objects.filter(cluster=cluster, start__isnull=False)
        runs = [_run(job) for job in jobs.values(*_RUN_FIELDS)]
        runs.sort(key=lambda run: (run.start, run.key))
        first, last = _replay_span(cluster, runs, start, until, seconds)
        instants = range(first, last + 1, seconds)
        if len(instants) > MAX_REPLAY_CYCLES:
            raise CycleRefused(
                f"{len(instants):,} cycles of {timedelta(seconds=seconds)} is more than a replay"
                f" does ({MAX_REPLAY_CYCLES:,}): give a longer --step or a shorter span"
            )
        NodeHistory.objects.filter(node__cluster=cluster).delete()
        Cycle.objects.filter(cluster=cluster).delete()
        kept = kept_instants(instants, last, *_HISTORY_WINDOWS)
        simulation: _Simulation = (
            _SlurmSimulation(cluster, runs, kept)
            if cluster.scheduler == Scheduler.SLURM
            else _PbsSimulation(cluster, runs, kept)
        )
        for done, moment in enumerate(instants, 1):
            simulation.cycle(moment)
            if progress is not None:
                progress(done, len(instants))
        return simulation.store(cluster)


def _replay_span(
    cluster: Cluster, runs: list[Run], start: datetime | None, until: datetime | None, step: int
) -> tuple[int, int]:
    """The first and last cycle times: by default from the first start to the first slot after
    every run ended (or now, with runs still running), on the step's grid."""
    if (start is None or until is None) and not runs:
        raise CycleRefused(f"cluster {cluster.name} has no job runs to replay: ingest some first")
    first = epoch_seconds(start) if start is not None else cycle_slot(runs[0].start, step)
    if until is not None:
        last = epoch_seconds(until)
    elif any(run.end is None for run in runs):
        last = epoch_seconds(timezone.now())
    else:
        last = max(run.end or run.start for run in runs)
    last = first + -(-(last - first) // step) * step  # the first slot at or after it
    if last < first:
        raise CycleRefused(f"--until {until} is before --from {start}")
    return first, last


class _Simulation:
    """Cycles in memory, on runs that start with nothing accrued: the history kept and the
    ledger; a scheduler's simulation adds its usage and what a cycle does to it."""

    def __init__(self, runs: list[Run], kept: set[int]) -> None:
        for run in runs:
            run.accrued = 0.0
        self.runs = runs
        self.pending = 0  # runs[pending:] have not started yet
        self.active: list[Run] = []
        self.kept = kept
        self.history: dict[Hashable, list[tuple[Any, ...]]] = {}  # by node key
        self.cycles: list[Cycle] = []
        self.decays = 0
        self.added = 0.0

    def cycle(self, moment: int) -> None:
        clock = time.perf_counter()
        while self.pending < len(self.runs) and self.runs[self.pending].start < moment:
            run = self.runs[self.pending]
            if run.end is None or run.accrued != run.usage:
                self.active.append(run)
            self.pending += 1
        cycle = self.usage_cycle(moment)
        self.active = [run for run in self.active if run.end is None or run.accrued != run.usage]
        if moment in self.kept:
            at = epoch_time(moment)
            for key, values in self.numbers():
                self.history.setdefault(key, []).append((at, *values))
        cycle.at, cycle.history_kept = epoch_time(moment), moment in self.kept
        cycle.duration = time.perf_counter() - clock
        self.cycles.append(cycle)
        self.decays += cycle.decays_applied
        self.added += cycle.usage_added

    def usage_cycle(self, moment: int) -> Cycle:
        """What the cycle at `moment` does to the usage, as its ledger row."""
        raise NotImplementedError

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        """Each node's key and its history values (_HISTORY_COLUMNS after node and time)."""
        raise NotImplementedError

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        """Store the usage and metrics the last cycle left; the node id of each key."""
        raise NotImplementedError

    def store(self, cluster: Cluster) -> ReplayResult:
        ids = self.store_usage(cluster)
        adapt = connection.ops.adapt_datetimefield_value
        rows = [
            (ids[key], adapt(at), *values)
            for key, points in self.history.items()
            for at, *values in points
        ]
        rows_insert(NodeHistory, _HISTORY_COLUMNS, rows)
        started = timezone.now()
        for cycle in self.cycles:
            cycle.cluster = cluster
            cycle.started_at = started
        Cycle.objects.bulk_create(self.cycles, batch_size=5000)
        rows_update(Job, ["accrued"], [(run.key, run.accrued) for run in self.runs if run.accrued])
        return ReplayResult(
            first=self.cycles[0].at,
            last=self.cycles[-1].at,
            cycles=len(self.cycles),
            decays=self.decays,
            runs=sum(1 for run in self.runs if run.accrued),
            usage_added=self.added,
            history_rows=len(rows),
        )


class _PbsSimulation(_Simulation):
    """PBS cycles: cycle_run's accrual and decays on a usage database in memory."""

    def __init__(self, cluster: Cluster, runs: list[Run], kept: set[int]) -> None:
        super().__init__(runs, kept)
        self.formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
        self.policy = _decay_policy(cluster)
        self.state = pbs_state_get(cluster=cluster)  # the tree the replay stores its usage into
        self.groups = self.state.groups
        self.defined = {group.name for group in self.groups}
        self.records: dict[str, float] = {}
        self.last_decay = 0

    def usage_cycle(self, moment: int) -> Cycle:
        accrual = Accrual(self.formula)
        self.records, self.last_decay, decays = cycle_usage(
            accrual,
            self.active,
            self.records,
            now=moment,
            last_decay=self.last_decay,
            groups=self.groups,
            **self.policy,
        )
        if decays:
            self._forget_removed()
        return _pbs_ledger(accrual, decays)

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        pbs = PbsTree.build(
            self.groups,
            [UsageRecord(name, usage) for name, usage in self.records.items()],
            unknown_shares=self.policy["unknown_shares"],
        )
        metrics = compute(pbs)
        for index in pbs.preorder():
            yield (
                pbs.name(index),
                (
                    float(metrics.usage[index]),
                    float(metrics.fairshare_perc[index]),
                    float(metrics.fairshare_tree_usage[index]),
                    metrics.fairshare_factor(index),
                    None,
                    None,
                ),
            )

    def _forget_removed(self) -> None:
        """An entity the tree only knew from its usage leaves with it, and its history too."""
        for name in [name for name in self.history if name not in self.defined]:
            if name not in self.records and name not in (TREEROOT, UNKNOWN):
                del self.history[name]

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        database = UsageDatabase(
            exists=True,
            last_decay=self.last_decay,
            records=tuple(UsageRecord(name, usage) for name, usage in self.records.items()),
        )
        pbs_database_store(cluster=cluster, state=self.state, database=database, reason="replay")
        return dict(Node.objects.filter(cluster=cluster).values_list("name", "id"))


class _SlurmSimulation(_Simulation):
    """Slurm passes (slurm_pass) on the cluster's associations, their usage from zero."""

    def __init__(self, cluster: Cluster, runs: list[Run], kept: set[int]) -> None:
        super().__init__(runs, kept)
        self.cluster = cluster
        self.state = slurm_state_get(cluster=cluster)
        self.tree = self.state.tree
        self.tree.tree.usage = [0.0] * len(self.tree)
        self.association = _association_finder(self.tree)
        self.last_ran: int | None = None

    def usage_cycle(self, moment: int) -> Cycle:
        last_at = None if self.last_ran is None else epoch_time(self.last_ran)
        done = slurm_pass(
            self.tree,
            self.active,
            now=moment,
            last_ran=self.last_ran,
            association=self.association,
            **_slurm_policy(self.cluster, epoch_time(moment), last_at),
        )
        self.last_ran = moment
        return _slurm_ledger(done)

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        for index, values in enumerate(slurm_numbers(self.cluster, self.tree)):
            yield (
                self.tree.key(index),
                tuple(values[column] for column in _HISTORY_COLUMNS[2:]),
            )

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        slurm_usage_store(cluster=cluster, state=self.state, reason="replay")
        return slurm_node_ids_get(cluster=cluster)


class SiteFile(models.TextChoices):
    """The PBS files an admin may upload, each read as its import command reads it."""

    RESOURCE_GROUP = "resource_group", "resource_group (the fairshare tree)"
    SCHED_CONFIG = "sched_config", "sched_config (the fairshare policy)"
    PBS_USAGE = "pbs_usage", "PBS usage file (sched_priv/usage, binary)"
    PBS_ACCOUNTING = "pbs_accounting", "PBS accounting logs (one or several days)"


@dataclass(frozen=True)
class ImportReject:
    """A line (in a usage file, a record) that was not taken, as the commands print it."""

    file: str  # as uploaded
    line: int  # 1-based; in a usage file the record, 0 for its header
    field: str
    reason: str
    text: str = ""  # the line as read, where the parser keeps it
    byte: int | None = None  # in a usage file, where the record starts


@dataclass(frozen=True)
class FileCounts:
    file: str
    counts: dict[str, int]  # figure -> value, in the order the page shows them


@dataclass(frozen=True)
class FilesImport:
    """What one upload did: the figures per file and in all, every rejected line."""

    kind: SiteFile
    cluster: str
    imported: bool  # False: nothing was stored, `outcome` says why
    outcome: str
    cluster_created: bool
    files: list[FileCounts]
    totals: dict[str, int]
    rejects: list[ImportReject]
    unknown_entities: list[str] = field(default_factory=list)


def site_files_import(
    *,
    cluster_name: str,
    kind: SiteFile,
    files: Sequence[tuple[str, Path]],
    user: User | None = None,
    strict: bool = False,
) -> FilesImport:
    """Uploaded files (name as uploaded, where it was saved) through the parser and the service
    of their import command, with the same rejected lines and the same reasons to refuse.

    Each of those services keeps its own transactions (accounting logs: one per file), so this
    adds none of its own; a refusal (a Slurm cluster, a bad formula) stores nothing.
    """
    if kind == SiteFile.PBS_ACCOUNTING:
        return _accounting_import(cluster_name, files)
    ((name, path),) = files
    if kind == SiteFile.RESOURCE_GROUP:
        return _resource_group_import(cluster_name, name, path, user, strict)
    if kind == SiteFile.SCHED_CONFIG:
        return _sched_config_import(cluster_name, name, path)
    return _pbs_usage_import(cluster_name, name, path)


def _resource_group_import(
    cluster_name: str, name: str, path: Path, user: User | None, strict: bool
) -> FilesImport:
    with path.open("rb") as stream:
        parsed = parse_resource_group(stream)
    rejects = [
        ImportReject(name, bad.line, bad.field, bad.reason, bad.text) for bad in parsed.rejected
    ]
    counts = {"entries": len(parsed.entries), "rejected": len(rejects)}
    refused = parsed.refused
    if not refused and rejects and (strict or not parsed.entries):
        refused = f"{len(rejects)} lines rejected"
        refused += ", and any stops the import" if strict else ""
    summary = None
    if not refused:
        try:
            summary = resource_group_import(
                cluster_name=cluster_name,
                groups=parsed.groups,
                pbs_messages=parsed.pbs_messages,
                source=name,
                user=user,
            )
        except ValidationError as exc:
            refused = "; ".join(exc.messages)
    if summary is None:
        return _refused(SiteFile.RESOURCE_GROUP, cluster_name, name, refused, counts, rejects)
    counts |= {
        "nodes_added": summary.entries_added,
        "nodes_updated": summary.entries_changed,
        "nodes_removed": summary.entries_removed,
        "unknown_entities": summary.unknown_entities,
    }
    outcome = f"the tree of {cluster_name} is now the one in {name}"
    return _done(SiteFile.RESOURCE_GROUP, cluster_name, name, outcome, summary, counts, rejects)


def _sched_config_import(cluster_name: str, name: str, path: Path) -> FilesImport:
    with path.open("rb") as stream:
        config = parse_sched_config(stream)
    rejects = [ImportReject(name, bad.line, bad.key, bad.reason) for bad in config.problems]
    counts = {"keys": len(config.found), "rejected": len(rejects)}
    try:
        summary = sched_config_import(cluster_name=cluster_name, config=config)
    except ValidationError as exc:
        refused = "; ".join(exc.messages)
        return _refused(SiteFile.SCHED_CONFIG, cluster_name, name, refused, counts, rejects)
    outcome = (
        f"fairshare_usage_res {config.fairshare_usage_res}, fairshare_entity"
        f" {config.fairshare_entity}, decay_time {config.decay_time} s, decay_factor"
        f" {config.decay_factor}, unknown_shares {config.unknown_shares}"
    )
    return _done(SiteFile.SCHED_CONFIG, cluster_name, name, outcome, summary, counts, rejects)


def _pbs_usage_import(cluster_name: str, name: str, path: Path) -> FilesImport:
    size = path.stat().st_size
    if size > USAGE_FILE_MAX_BYTES:
        refused = f"{size:,} bytes is more than a usage file of 4 million entities"
        return _refused(SiteFile.PBS_USAGE, cluster_name, name, refused, {}, [])
    usage = read_usage_file(path.read_bytes())  # the format is read whole, as PBS does
    rejects = [
        ImportReject(name, bad.record, bad.field, bad.reason, byte=bad.offset)
        for bad in usage.rejected
    ]
    counts = {"records": 0, "rejected": len(rejects)}
    if usage.refused:
        counts["rejected"] = 0  # the file is refused whole, not line by line
        return _refused(SiteFile.PBS_USAGE, cluster_name, name, usage.refused, counts, [])
    if not usage.header_ok:
        refused = "PBS reads no usage from a file with this header"
        return _refused(SiteFile.PBS_USAGE, cluster_name, name, refused, counts, rejects)
    try:
        result = pbs_usage_import(cluster_name=cluster_name, usage=usage)
    except ValidationError as exc:
        refused = "; ".join(exc.messages)
        return _refused(SiteFile.PBS_USAGE, cluster_name, name, refused, counts, rejects)
    rejects += [
        ImportReject(name, bad.record, bad.field, bad.reason, byte=bad.offset)
        for bad in result.screened
    ]
    counts["rejected"] = len(rejects)
    if result.summary is None:
        refused = "no record could be read"
        return _refused(SiteFile.PBS_USAGE, cluster_name, name, refused, counts, rejects)
    counts |= {"records": result.imported, "unknown_entities": result.summary.unknown_entities}
    outcome = f"the usage of {cluster_name} is now the one in {name} (v{usage.version})"
    return _done(SiteFile.PBS_USAGE, cluster_name, name, outcome, result.summary, counts, rejects)


def _accounting_import(cluster_name: str, files: Sequence[tuple[str, Path]]) -> FilesImport:
    """In name order, as the command reads a directory of day files: a job's start in one
    day's log and its end in a later one pair up."""
    ordered = sorted(files)
    names = {str(path): name for name, path in ordered}
    existed = Cluster.objects.filter(name=cluster_name).exists()
    try:
        result = ingest(
            cluster_name=cluster_name,
            source=IngestSource.PBS_ACCOUNTING,
            paths=[str(path) for _, path in ordered],
        )
    except ValidationError as exc:
        refused = "; ".join(exc.messages)
        return _refused(SiteFile.PBS_ACCOUNTING, cluster_name, "", refused, {}, [])
    except FormulaError as exc:
        refused = f"fairshare_usage_res: {exc}"
        return _refused(SiteFile.PBS_ACCOUNTING, cluster_name, "", refused, {}, [])
    per_file = [
        FileCounts(
            names[summary.path],
            {
                "read": summary.read,
                "ingested": summary.ingested,
                "running": summary.running,
                "duplicates": summary.duplicates,
                "rejected": summary.rejected,
            },
        )
        for summary in result.files
    ]
    run = result.run
    totals = {
        "read": run.read,
        "ingested": run.ingested,
        "running": run.running,
        "duplicates": run.duplicates,
        "rejected": run.rejected,
    }
    rejects = [
        ImportReject(names[summary.path], bad.line, bad.field, bad.reason, bad.text)
        for summary in result.files
        for bad in summary.rejects
    ]
    stored = result.stored_anything
    # Files refused whole (another kind of file, unreadable) say why in one line each.
    refusals = [f"{bad.file}: {bad.reason}" for bad in rejects if bad.field == "file"]
    return FilesImport(
        kind=SiteFile.PBS_ACCOUNTING,
        cluster=cluster_name,
        imported=stored,
        outcome=f"ingest run {run.pk}"
        if stored
        else "; ".join(["no job run in the input", *refusals]),
        # ingest leaves no new cluster behind when it stores nothing
        cluster_created=not existed and Cluster.objects.filter(name=cluster_name).exists(),
        files=per_file,
        totals=totals,
        rejects=rejects,
        unknown_entities=result.unknown_entities,
    )


def _done(
    kind: SiteFile,
    cluster_name: str,
    name: str,
    outcome: str,
    summary: StoreSummary,
    counts: dict[str, int],
    rejects: list[ImportReject],
) -> FilesImport:
    return FilesImport(
        kind=kind,
        cluster=cluster_name,
        imported=True,
        outcome=outcome,
        cluster_created=summary.cluster_created,
        files=[FileCounts(name, counts)],
        totals=counts,
        rejects=rejects,
    )


def _refused(
    kind: SiteFile,
    cluster_name: str,
    name: str,
    reason: str,
    counts: dict[str, int],
    rejects: list[ImportReject],
) -> FilesImport:
    files = [FileCounts(name, counts)] if name else []
    return FilesImport(kind, cluster_name, False, reason, False, files, counts, rejects)


class UploadRefused(ValueError):
    """An upload that is not taken at all (a limit, a cluster that is not there): nothing is
    kept of it; the message says why."""


def upload_folder(upload: FilesUpload) -> Path:
    return Path(settings.UPLOAD_DIR) / f"upload-{upload.pk}"


def files_upload_start(
    *,
    cluster_name: str,
    new_cluster: bool,
    kind: SiteFile,
    files: Sequence[UploadedFile],
    strict: bool,
    user: User | None,
) -> FilesUpload:
    """Keep the uploaded files in the upload's folder and queue their import (the task
    import_files, at once without a broker). Each file is copied in chunks, so that memory
    stays flat whatever its size; one past UPLOAD_MAX_FILE_BYTES is refused."""
    limit = settings.UPLOAD_MAX_FILE_BYTES
    for upload_file in files:
        if (upload_file.size or 0) > limit:
            raise UploadRefused(
                f"{upload_file.name}: {upload_file.size:,} bytes is more than the"
                f" {limit:,} bytes a file may have (UPLOAD_MAX_FILE_BYTES)"
            )
    names = [Path(upload_file.name or "").name or "upload" for upload_file in files]
    upload = FilesUpload.objects.create(
        cluster_name=cluster_name,
        new_cluster=new_cluster,
        kind=kind,
        files=names,
        size=sum(upload_file.size or 0 for upload_file in files),
        strict=strict,
        uploaded_by=user,
        uploaded_at=timezone.now(),
    )
    folder = upload_folder(upload)
    try:
        for index, (name, upload_file) in enumerate(zip(names, files, strict=True)):
            path = folder / str(index) / name  # one folder each: two files may share a name
            path.parent.mkdir(parents=True)
            with path.open("wb") as out:
                for chunk in upload_file.chunks():
                    out.write(chunk)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        upload.delete()
        raise
    upload_id = upload.pk
    transaction.on_commit(lambda: _import_queued(upload_id))
    return upload


def _import_queued(upload_id: int) -> None:
    from accounting.tasks import import_files  # the task calls back into this module

    try:
        import_files.delay(upload_id)
    except Exception as exc:  # the broker refused: say so on the upload's page
        logger.exception("upload %s could not be queued", upload_id)
        _upload_failed(upload_id, f"the import could not be queued ({exc}); upload again")


def files_upload_run(*, upload_id: int) -> FilesUpload | None:
    """Import an upload's files, once: through site_files_import, or for a resource_group into
    a cluster that has a tree, as far as its preview (applied by files_upload_confirm). The
    files are removed afterwards, whatever happens; None if another worker has it."""
    claimed = FilesUpload.objects.filter(pk=upload_id, state=UploadState.QUEUED).update(
        state=UploadState.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return None  # done, or running in another worker: a duplicate delivery
    upload = FilesUpload.objects.get(pk=upload_id)
    folder = upload_folder(upload)
    paths = [(name, folder / str(index) / name) for index, name in enumerate(upload.files)]
    try:
        return _upload_import(upload, paths)
    except Exception as exc:
        logger.exception("upload %s failed", upload_id)
        return _upload_failed(upload_id, f"the import failed: {exc}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _upload_import(upload: FilesUpload, paths: list[tuple[str, Path]]) -> FilesUpload:
    kind = SiteFile(upload.kind)
    existing = Cluster.objects.filter(name=upload.cluster_name).first()
    if existing is None and not upload.new_cluster:
        return _upload_failed(upload.pk, f"cluster {upload.cluster_name} is no longer there")
    if kind == SiteFile.RESOURCE_GROUP and existing is not None and _has_tree(existing):
        preview = _resource_group_previewed(upload, existing, paths)
        if preview is not None:
            return preview
    result = site_files_import(
        cluster_name=upload.cluster_name,
        kind=kind,
        files=paths,
        user=upload.uploaded_by,
        strict=upload.strict,
    )
    return _upload_done(upload, result)


def _has_tree(cluster: Cluster) -> bool:
    return cluster.nodes.filter(origin=NodeOrigin.DEFINED).exists()


def _resource_group_previewed(
    upload: FilesUpload, cluster: Cluster, paths: list[tuple[str, Path]]
) -> FilesUpload | None:
    """The file's changes to the tree, kept for the admin to confirm; None when the file is
    refused as it is (its refusal is then the upload's result)."""
    ((name, path),) = paths
    if cluster.scheduler != Scheduler.PBS:
        return None  # refused by site_files_import, which says why
    with path.open("rb") as stream:
        parsed = parse_resource_group(stream)
    rejects = [
        ImportReject(name, bad.line, bad.field, bad.reason, bad.text) for bad in parsed.rejected
    ]
    if parsed.refused or (rejects and (upload.strict or not parsed.entries)):
        return None
    preview = resource_group_preview_get(cluster=cluster, groups=parsed.groups)
    _rejections_store(upload, rejects)
    upload.preview = {
        "version": preview.version,
        "file": name,
        "groups": [[g.name, g.cgroup, g.parent, g.shares] for g in parsed.groups],
        "pbs_messages": parsed.pbs_messages,
        "entries": [vars(change) for change in preview.entries],
        "standing": [standing_row(change) for change in preview.changes],
        "memberships_removed": preview.memberships_removed,
        "counts": {"entries": len(parsed.entries), "rejected": len(rejects)},
    }
    upload.state = UploadState.PREVIEW
    upload.rejected = len(rejects)
    upload.save(update_fields=["preview", "state", "rejected"])
    return upload


def files_upload_confirm(*, upload_id: int, reason: str, user: User | None) -> FilesUpload:
    """Apply a previewed resource_group as one audited change, with the admin's reason; the
    tree must still be the one it was previewed on (TreeChanged otherwise)."""
    if not reason.strip():
        raise ValidationError({"reason": "a reason is required to apply the file"})
    with transaction.atomic():
        upload = FilesUpload.objects.select_for_update().get(pk=upload_id)
        if upload.state != UploadState.PREVIEW:
            raise ValidationError("this upload is not waiting for confirmation")
        preview = upload.preview
        summary = resource_group_import(
            cluster_name=upload.cluster_name,
            groups=[GroupDef(*group) for group in preview["groups"]],
            pbs_messages=preview["pbs_messages"],
            source=preview["file"],
            user=user,
            reason=reason,
            version=preview["version"],
        )
        counts = {
            **preview["counts"],
            "nodes_added": summary.entries_added,
            "nodes_updated": summary.entries_changed,
            "nodes_removed": summary.entries_removed,
            "unknown_entities": summary.unknown_entities,
        }
        name = preview["file"]
        upload.result = _result_document(
            FilesImport(
                kind=SiteFile.RESOURCE_GROUP,
                cluster=upload.cluster_name,
                imported=True,
                outcome=f"the tree of {upload.cluster_name} is now the one in {name}",
                cluster_created=False,
                files=[FileCounts(name, counts)],
                totals=counts,
                rejects=[],
            )
        )
        upload.state = UploadState.DONE
        upload.finished_at = timezone.now()
        upload.save(update_fields=["result", "state", "finished_at"])
    return upload


def _upload_done(upload: FilesUpload, result: FilesImport) -> FilesUpload:
    with transaction.atomic():
        _rejections_store(upload, result.rejects)
        upload.result = _result_document(result)
        upload.rejected = len(result.rejects)
        upload.state = UploadState.DONE
        upload.finished_at = timezone.now()
        upload.save(update_fields=["result", "rejected", "state", "finished_at"])
    return upload


def _upload_failed(upload_id: int, outcome: str) -> FilesUpload:
    FilesUpload.objects.filter(pk=upload_id).update(
        state=UploadState.FAILED,
        finished_at=timezone.now(),
        result={"imported": False, "outcome": outcome},
    )
    return FilesUpload.objects.get(pk=upload_id)


def _result_document(result: FilesImport) -> dict[str, Any]:
    return {
        "kind": result.kind,
        "cluster": result.cluster,
        "imported": result.imported,
        "outcome": result.outcome,
        "cluster_created": result.cluster_created,
        "files": [[row.file, row.counts] for row in result.files],
        "totals": result.totals,
        "order": list(result.totals),  # PostgreSQL's jsonb keeps no key order
        "unknown_entities": result.unknown_entities,
    }


def _rejections_store(upload: FilesUpload, rejects: Sequence[ImportReject]) -> None:
    UploadRejection.objects.filter(upload=upload).delete()
    UploadRejection.objects.bulk_create(
        (
            UploadRejection(
                upload=upload, file=bad.file[:255], line=max(bad.line, 0), byte=bad.byte,
                field=bad.field[:64], reason=bad.reason, text=bad.text,
            )
            for bad in rejects
        ),
        batch_size=2000,
    )  # fmt: skip


@dataclass(frozen=True)
class UploadsCleaned:
    folders_removed: int
    uploads_failed: int  # left running by a worker that died


def uploads_clean(*, now: datetime) -> UploadsCleaned:
    """Remove what uploads left behind past UPLOAD_STALE_HOURS: their folders (a worker killed
    mid-import never removed its own; an upload never queued), and Django's temporary files of
    uploads cut off mid-request; an upload still running by then died with its worker."""
    stale = now - timedelta(hours=settings.UPLOAD_STALE_HOURS)
    died = FilesUpload.objects.filter(
        state__in=[UploadState.QUEUED, UploadState.RUNNING], uploaded_at__lt=stale
    )
    failed = 0
    for upload_id in list(died.values_list("pk", flat=True)):
        _upload_failed(upload_id, "the import stopped before it finished (its worker died)")
        failed += 1
    live = set(
        FilesUpload.objects.filter(state__in=[UploadState.QUEUED, UploadState.RUNNING])
        .values_list("pk", flat=True)
    )  # fmt: skip
    removed = 0
    root = Path(settings.UPLOAD_DIR)
    for path in [*root.glob("upload-*"), *root.glob("incoming/*")]:
        try:
            changed = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        except FileNotFoundError:
            continue
        number = path.name.removeprefix("upload-")
        if changed >= stale or (number.isdigit() and int(number) in live):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed += 1
    return UploadsCleaned(removed, failed)
