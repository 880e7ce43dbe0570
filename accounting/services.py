"""Usage in: accounting files parsed, each job run charged to its entity and stored.

Each file is one transaction, so a file killed half-way leaves nothing and the next run stores
it whole. A run already stored is a duplicate and adds nothing; a run stored as running is
completed by its end record.
"""

from __future__ import annotations

import gzip
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import IO, Any, cast

from django.db import connection, transaction
from django.utils import timezone

from accounting.entities import (
    SwfAccountFrom,
    pbs_entity,
    pbs_placement,
    slurm_entity,
    swf_named,
)
from accounting.models import IngestRejection, IngestRun, IngestSource, Job
from accounting.parsers.pbs import read_pbs_accounting
from accounting.parsers.pbs import record_type as pbs_record_type
from accounting.parsers.records import USAGE_RESOURCES, JobRecord, JobState, Parsed, Recognised
from accounting.parsers.sacct import read_sacct
from accounting.parsers.swf import SwfReader
from trees.engine.fairtree import ROOT_ACCOUNT, AssociationDef
from trees.engine.formula import Formula, FormulaValueError, parse_formula
from trees.formats.rejected import RejectedLine
from trees.models import Cluster, Node, NodeKind, Scheduler
from trees.services import (
    cluster_get_or_create,
    pbs_entities_add,
    pbs_groups_add,
    slurm_associations_add,
)

BATCH = 5000
# A file whose first lines are all rejected is not of this format: stop reading it there.
WRONG_FORMAT_AFTER = 100
_INT_MAX = 2**31 - 1
_BIG_MAX = 2**63 - 1
_LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z, the last time a database stores
# What the job table's columns hold; the parsers refuse absurd values well before these.
_LIMITS = (
    ("ncpus", _INT_MAX),
    ("ngpus", _INT_MAX),
    ("nodes", _INT_MAX),
    ("requested_walltime", _INT_MAX),
    ("walltime", _INT_MAX),
    ("memory", _BIG_MAX),
    ("vmem", _BIG_MAX),
    ("mpiprocs", _INT_MAX),
    ("cpupercent", _INT_MAX),
)
_GZIP_MAGIC = b"\x1f\x8b"

Progress = Callable[[int], object]  # bytes of the current file consumed since the last call

JOB_COLUMNS = (
    "cluster_id", "job_id", "run", "state", "server", "entity", "node_id", "user", "group",
    "account", "project", "queue", "partition", "jobname", "ncpus", "ngpus", "nodes", "memory",
    "vmem", "mpiprocs", "cpupercent", "billing", "requested_walltime", "walltime", "cput",
    "ctime", "qtime", "etime", "start", "end", "exit_status", "usage", "source_file",
    "source_line", "ingest_id",
)  # fmt: skip
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
    cluster = _cluster(cluster_name, source)
    run = IngestRun.objects.create(cluster=cluster, source=source, started_at=timezone.now())
    charger = _Charger(cluster, options)
    files = []
    for path in paths:
        with transaction.atomic():
            summary = _ingest_file(cluster, run, source, path, charger, options, progress)
            _record_file(run, summary)
        files.append(summary)
    run.unknown_entities = sorted(charger.unknown)
    run.created_nodes = charger.created
    run.finished_at = timezone.now()
    run.save(update_fields=["unknown_entities", "created_nodes", "finished_at"])
    return IngestResult(run, files, run.unknown_entities, charger.created)


def _cluster(name: str, source: IngestSource) -> Cluster:
    """The cluster, made when new; SWF goes into a cluster of any scheduler."""
    existing = Cluster.objects.filter(name=name).first()
    if existing is not None and source == IngestSource.SWF:
        return existing
    cluster, _ = cluster_get_or_create(name=name, scheduler=_SCHEDULER[source])
    return cluster


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
    cluster: Cluster,
    run: IngestRun,
    source: IngestSource,
    path: str,
    charger: _Charger,
    options: IngestOptions,
    progress: Progress | None,
) -> FileSummary:
    summary = FileSummary(path)
    try:
        handle = _open(path)
    except OSError as exc:
        summary.rejects.append(RejectedLine(0, "file", f"cannot read: {exc.strerror or exc}", ""))
        return summary
    store = _JobStore(cluster, run, path, charger, summary)
    last_line = -1
    batch: list[JobRecord] = []
    with handle:
        lines = _TrackedLines(handle, progress)
        try:
            for item in _read(source, lines, options):
                if item.line != last_line:
                    summary.read += 1
                    last_line = item.line
                if isinstance(item, JobRecord):
                    summary.record_types[_record_type(source, item)] += 1
                    batch.append(item)
                    if len(batch) >= BATCH:
                        store.add(batch)
                        batch = []
                elif isinstance(item, Recognised):
                    summary.record_types[item.kind] += 1
                else:
                    summary.rejects.append(item)
                    if summary.read == len(summary.rejects) == WRONG_FORMAT_AFTER:
                        summary.rejects.append(_not_this_format(source, lines.number))
                        break
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            reason = f"the compressed file ends early or is damaged ({exc}); lines before kept"
            summary.rejects.append(RejectedLine(lines.number + 1, "file", reason, ""))
        store.add(batch)
        lines.finish()
    if summary.read == 0 and not summary.rejects:
        summary.rejects.append(RejectedLine(0, "file", "empty: no records in the file", ""))
    return summary


def _not_this_format(source: IngestSource, line: int) -> RejectedLine:
    reason = (
        f"not a {source.label}: its first {WRONG_FORMAT_AFTER} lines are all rejected;"
        " the rest of the file is not read"
    )
    return RejectedLine(line, "file", reason, "")


def _record_type(source: IngestSource, record: JobRecord) -> str:
    if record.kind:
        return record.kind
    if source == IngestSource.PBS_ACCOUNTING:
        return pbs_record_type(record)
    return record.state.value


def _read(source: IngestSource, lines: Iterable[bytes], options: IngestOptions) -> Iterator[Parsed]:
    if source == IngestSource.PBS_ACCOUNTING:
        return read_pbs_accounting(lines)
    if source == IngestSource.SACCT:
        return read_sacct(lines, tz=options.time_zone)
    return _swf_named(SwfReader(lines), options.swf_account_from)


def _swf_named(reader: SwfReader, account_from: SwfAccountFrom) -> Iterator[Parsed]:
    for item in reader:
        yield swf_named(item, account_from=account_from) if isinstance(item, JobRecord) else item


def _open(path: str) -> IO[bytes]:
    """The file's bytes, gunzipped when it is gzip (by its magic number, not its name)."""
    handle = Path(path).open("rb")  # noqa: SIM115  (closed by the caller's with)
    if handle.peek(2)[:2] == _GZIP_MAGIC:
        return cast(IO[bytes], gzip.GzipFile(fileobj=handle, mode="rb"))
    return handle


class _TrackedLines:
    """The lines of a file, counted, telling `progress` how many source bytes went by."""

    def __init__(self, handle: IO[bytes], progress: Progress | None) -> None:
        self.handle = handle
        self.raw = getattr(handle, "fileobj", None) or handle
        self.progress = progress
        self.number = 0
        self.reported = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.handle:
            self.number += 1
            if self.progress is not None and self.number % 10000 == 0:
                self._report()
            yield line

    def _report(self) -> None:
        assert self.progress is not None
        position = self.raw.tell()
        self.progress(position - self.reported)
        self.reported = position

    def finish(self) -> None:
        if self.progress is not None:
            self._report()


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
        self.formula: Formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
        self.unknown: set[str] = set()
        self.created: list[str] = []
        self.nodes: dict[str, int] = {}
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

    def entity(self, record: JobRecord) -> str:
        if self.slurm:
            return slurm_entity(record)
        return pbs_entity(record, self.cluster.fairshare_entity)

    def node_ids(self, records: Sequence[JobRecord], entities: Sequence[str]) -> list[int | None]:
        """The node of each entity, after making those the tree lacks (one tree write)."""
        missing = {e: r for e, r in zip(entities, records, strict=True) if e not in self.nodes}
        if missing:
            self._add(missing)
        return [self.nodes.get(entity) for entity in entities]

    def _add(self, missing: dict[str, JobRecord]) -> None:
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
                pbs_entities_add(cluster=self.cluster, names=list(missing), reason=reason)
            )
        self._load()

    def _associations(self, missing: dict[str, JobRecord]) -> list[AssociationDef]:
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

    def _groups(self, missing: dict[str, JobRecord]) -> list[tuple[str, str | None, int]]:
        shares = self.options.shares
        groups: list[tuple[str, str | None, int]] = []
        for record in missing.values():
            placement = pbs_placement(record, self.cluster.fairshare_entity)
            parent = placement.parent
            if parent is not None and parent not in self.nodes:
                groups.append((parent, None, shares))
            groups.append((placement.entity, parent, shares))
        return groups


class _JobStore:
    """Writes batches of runs: new ones stored, running ones completed, the rest duplicates."""

    def __init__(
        self, cluster: Cluster, run: IngestRun, path: str, charger: _Charger, summary: FileSummary
    ) -> None:
        self.cluster = cluster
        self.run = run
        self.path = path
        self.charger = charger
        self.summary = summary
        self.postgres = connection.vendor == "postgresql"
        self.moment: Callable[[int | None], object] = _utc if self.postgres else _stored_utc

    def add(self, records: Sequence[JobRecord]) -> None:
        if not records:
            return
        priced: list[tuple[JobRecord, float]] = []
        for record in records:
            usage = self._usage(record)
            if usage is not None:
                priced.append((record, usage))
        batch = self._unique(priced)
        existing = self._existing([record.job_id for record, _ in batch])
        to_insert: list[tuple[JobRecord, float]] = []
        to_delete: list[int] = []
        for record, usage in batch:
            runs = existing.get(record.job_id, {})
            held = runs.get(record.run)
            if record.state == JobState.RUNNING:
                # A running row is news only when no run of that job has been stored yet since.
                if held is not None or any(number > record.run for number in runs):
                    self.summary.duplicates += 1
                    continue
                self.summary.running += 1
            else:
                if held is not None and held[1] != JobState.RUNNING:
                    self.summary.duplicates += 1
                    continue
                # Its end supersedes the job's running row (whatever run it was guessed to be).
                to_delete += [pk for pk, state in runs.values() if state == JobState.RUNNING]
                self.summary.ingested += 1
            to_insert.append((record, usage))
        if to_delete:
            Job.objects.filter(pk__in=to_delete).delete()
        entities = [self.charger.entity(record) for record, _ in to_insert]
        nodes = self.charger.node_ids([record for record, _ in to_insert], entities)
        rows = [
            self._row(record, usage, entity, node)
            for (record, usage), entity, node in zip(to_insert, entities, nodes, strict=True)
        ]
        self._insert(rows)

    def _usage(self, record: JobRecord) -> float | None:
        """The run's fairshare_usage_res; None (and the line rejected) when it has none."""
        problem = _out_of_range(record)
        if problem is not None:
            self._reject(record, *problem)
            return None
        if record.state == JobState.RUNNING:
            return 0.0  # what a running job uses is accrued by the cycles, not priced here
        try:
            usage = self.charger.formula.evaluate(record.usage_resources())
        except FormulaValueError as exc:
            self._reject(record, "fairshare_usage_res", str(exc))
            return None
        if usage < 0:
            formula = self.charger.formula.text
            self._reject(record, "fairshare_usage_res", f"{formula} gives {usage} < 0")
            return None
        return usage

    def _reject(self, record: JobRecord, field_name: str, reason: str) -> None:
        self.summary.rejects.append(RejectedLine(record.line, field_name, reason, ""))

    def _unique(self, priced: list[tuple[JobRecord, float]]) -> list[tuple[JobRecord, float]]:
        """One record per run within the batch: an end beats a start; later copies repeat."""
        chosen: dict[tuple[str, int], tuple[JobRecord, float]] = {}
        for record, usage in priced:
            key = (record.job_id, record.run)
            held = chosen.get(key)
            if held is None or (
                held[0].state == JobState.RUNNING and record.state != JobState.RUNNING
            ):
                chosen[key] = (record, usage)
            else:
                self.summary.duplicates += 1
        return list(chosen.values())

    def _existing(self, job_ids: list[str]) -> dict[str, dict[int, tuple[int, str]]]:
        """The stored runs of these jobs: job id → run → (row id, state)."""
        found: dict[str, dict[int, tuple[int, str]]] = {}
        rows = Job.objects.filter(cluster=self.cluster, job_id__in=job_ids).values_list(
            "job_id", "run", "pk", "state"
        )
        for job_id, number, pk, state in rows:
            found.setdefault(job_id, {})[number] = (pk, state)
        return found

    def _row(
        self, record: JobRecord, usage: float, entity: str, node: int | None
    ) -> tuple[Any, ...]:
        extra, moment = record.extra, self.moment
        return (
            self.cluster.pk, record.job_id, record.run, record.state.value, record.server[:255],
            entity[:255], node, record.user[:255], record.group[:255], record.account[:255],
            record.project[:255], record.queue[:255], record.partition[:255],
            record.jobname[:255], record.ncpus, record.ngpus, record.nodes, record.memory,
            _int(extra.get("vmem")), _int(extra.get("mpiprocs")), _int(extra.get("cpupercent")),
            extra.get("billing"), record.requested_walltime, record.walltime, record.cput,
            moment(record.ctime), moment(record.qtime), moment(record.etime),
            moment(record.start), moment(record.end), record.exit_status, usage,
            self.path[:1024], record.line, self.run.pk,
        )  # fmt: skip

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        quote = connection.ops.quote_name
        columns = ", ".join(quote(column) for column in JOB_COLUMNS)
        table = quote(Job._meta.db_table)
        with connection.cursor() as cursor:
            if self.postgres:
                with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                return
            marks = ", ".join(["%s"] * len(JOB_COLUMNS))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def _out_of_range(record: JobRecord) -> tuple[str, str] | None:
    """The first value the job table cannot hold, as (field, reason); None when all fit."""
    counts = (record.ncpus, record.ngpus, record.nodes, record.walltime or 0)
    times = (record.ctime or 0, record.qtime or 0, record.etime or 0, record.start or 0)
    if (
        min(counts) >= 0
        and max(counts) <= _INT_MAX
        and 0 <= (record.requested_walltime or 0) <= _INT_MAX
        and 0 <= (record.memory or 0) <= _BIG_MAX
        and min(times) >= 0
        and max(times) <= _LAST_SECOND
        and 0 <= (record.end or 0) <= _LAST_SECOND
        and _extra_fits(record.extra)
    ):
        return None
    for name, limit in _LIMITS:
        value = getattr(record, name) if hasattr(record, name) else record.extra.get(name)
        if value is not None and not 0 <= value <= limit:
            return name, f"{value} is out of range (0 to {limit})"
    for name in ("ctime", "qtime", "etime", "start", "end"):
        moment = getattr(record, name)
        if moment is not None and not 0 <= moment <= _LAST_SECOND:
            return name, f"{moment} is not a time (seconds since 1970)"
    return None


def _extra_fits(extra: dict[str, float]) -> bool:
    if not extra:
        return True
    return (
        min(extra.values()) >= 0
        and extra.get("vmem", 0) <= _BIG_MAX
        and extra.get("mpiprocs", 0) <= _INT_MAX
        and extra.get("cpupercent", 0) <= _INT_MAX
    )


def _utc(epoch: int | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def _stored_utc(epoch: int | None) -> object:
    """The time as the backend stores it (SQLite: naive UTC text), without a datetime's cost."""
    if epoch is None:
        return None
    if connection.vendor == "sqlite":
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))
    return connection.ops.adapt_datetimefield_value(_utc(epoch))


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)


def jobs_usage_recompute(*, cluster: Cluster) -> int:
    """Price every stored run again with the cluster's current `fairshare_usage_res`."""
    formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
    changed = []
    with transaction.atomic():
        for job in Job.objects.filter(cluster=cluster).iterator(chunk_size=5000):
            if job.state == JobState.RUNNING:
                continue
            try:
                usage = max(formula.evaluate(job_resources(job)), 0.0)
            except FormulaValueError:
                usage = 0.0  # the line was taken under a formula that could price it
            if usage != job.usage:
                job.usage = usage
                changed.append(job)
        Job.objects.bulk_update(changed, ["usage"], batch_size=2000)
    return len(changed)


def job_resources(job: Job) -> dict[str, float]:
    """What the usage formula sees of a stored run, as it saw the record at ingestion."""
    extra = {
        name: float(value)
        for name in ("vmem", "mpiprocs", "cpupercent", "billing")
        if (value := getattr(job, name)) is not None
    }
    record = JobRecord(
        line=job.source_line,
        job_id=job.job_id,
        ncpus=job.ncpus,
        ngpus=job.ngpus,
        nodes=job.nodes,
        memory=job.memory,
        walltime=job.walltime,
        cput=job.cput,
        extra=extra,
    )
    return record.usage_resources()
