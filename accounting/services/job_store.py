"""Job runs stored once: each charged to its tree node (made where the tree lacks it), a run
already stored is a duplicate and adds nothing, a run stored as running is completed by its
end record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from accounting.copy_text import JOB_COLUMNS
from accounting.job_rows import (
    Batch,
    PreparedRun,
    completed_row,
)
from accounting.models import (
    Job,
)
from accounting.parsers.records import JobState
from trees.bulk import rows_update
from trees.engine.slurm import (
    ROOT_ACCOUNT,
    AssociationDef,
)
from trees.formats.rejected import RejectedLine
from trees.models import Cluster, Node, NodeKind, Scheduler
from trees.services.pbs import (
    pbs_entities_add,
    pbs_groups_add,
)
from trees.services.slurm import slurm_associations_add


@dataclass
class FileSummary:
    path: str
    read: int = 0
    ingested: int = 0
    duplicates: int = 0
    running: int = 0
    queued: int = 0
    left_queue: int = 0  # queued rows a snapshot of the queue no longer lists
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
            "queued": self.queued,
            "left_queue": self.left_queue,
            "record_types": dict(sorted(self.record_types.items())),
        }


class Charger:
    """Which tree node each run is charged to; makes the nodes the tree lacks.

    PBS puts an entity it does not know under `unknown` (with usage 1, as find_alloc_ginfo
    does); with --create-nodes it is defined in the tree instead. A Slurm association that
    does not exist is left unlinked and listed, unless --create-nodes builds it. An
    Accelerator job's group that the tree lacks is made once the ingestion has read every file
    (`groups_to_make`), as Accelerator makes a user's leaf `G.user` when a job is submitted to
    G: one store of the tree for all of them, then their jobs are linked to them.
    """

    def __init__(self, cluster: Cluster, *, create_nodes: bool, shares: int) -> None:
        self.cluster = cluster
        self.create_nodes, self.shares = create_nodes, shares
        self.slurm = cluster.scheduler == Scheduler.SLURM
        self.accelerator = cluster.scheduler == Scheduler.ACCELERATOR
        self.unknown: set[str] = set()
        self.groups_to_make: set[str] = set()  # Accelerator
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
        if self.accelerator:
            self.groups_to_make.update(missing)
            return
        if self.slurm:
            if self.create_nodes:
                self.created += slurm_associations_add(
                    cluster=self.cluster,
                    associations=self._associations(missing),
                    reason=f"{reason} (--create-nodes)",
                )
            else:
                self.unknown.update(missing)
        elif self.create_nodes:
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
        shares = self.shares
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
        shares = self.shares
        groups: list[tuple[str, str | None, int]] = []
        for entity in missing:
            parent = self.parents.get(entity)
            if parent is not None and parent not in self.nodes:
                groups.append((parent, None, shares))
            groups.append((entity, parent, shares))
        return groups


class JobStore:
    """Writes batches of runs: new ones stored, running ones completed, the rest duplicates.

    Most runs of a batch are new: they are written at once in a savepoint, and only when the
    unique (cluster, job_id, run) refuses one is the batch checked run by run against what is
    stored. Running and queued rows, the ends and starts of jobs stored as running or queued
    and runs of entities the tree lacks are always checked. A queued row (run 0) goes when any
    run of its job is stored, or when the job is deleted or aborted (`Batch.withdrawn`).
    """

    def __init__(self, cluster: Cluster, charger: Charger) -> None:
        self.cluster = cluster
        self.charger = charger
        self.summary = FileSummary("")
        self.copy = connection.vendor == "postgresql"
        # The jobs with a running or queued row: what a cluster runs and holds at once, not
        # its history.
        self.listed: set[str] = set()  # the jobs the snapshot being read lists
        self.running: set[str] = set(
            Job.objects.filter(cluster=cluster, state__in=_NOT_OVER).values_list(
                "job_id", flat=True
            )
        )

    def add(self, batch: Batch) -> None:
        if batch.withdrawn:
            Job.objects.filter(
                cluster=self.cluster, job_id__in=batch.withdrawn, state=JobState.QUEUED
            ).delete()
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
        self._requests_write(batch.requests)
        self.listed.update(batch.listed)

    def _requests_write(self, requests: list[tuple[str, str]]) -> None:
        """Each queued or running job's request onto its row (the last one read wins: a
        newer snapshot's eligible_time, or Accelerator's suspension, replaces the older's)."""
        if not requests:
            return
        latest = dict(requests)
        rows = Job.objects.filter(
            cluster=self.cluster, job_id__in=list(latest), state__in=_NOT_OVER
        ).values_list("pk", "job_id")
        rows_update(Job, ["request"], [(pk, latest[job_id]) for pk, job_id in rows])

    def snapshot_close(self, at: datetime) -> int:
        """After a snapshot of the queue taken at `at` (qstat, squeue): the jobs queued before
        it that it does not list have left the queue (started, deleted or ended; their
        accounting records say which); their queued rows go. How many went."""
        queued = Job.objects.filter(cluster=self.cluster, state=JobState.QUEUED).filter(
            Q(qtime__lte=at) | Q(qtime__isnull=True)
        )
        gone = {
            pk: job_id
            for pk, job_id in queued.values_list("pk", "job_id")
            if job_id not in self.listed
        }
        keys = list(gone)
        for start in range(0, len(keys), 5000):
            Job.objects.filter(pk__in=keys[start : start + 5000]).delete()
        self.running.difference_update(gone.values())
        self.listed.clear()
        return len(gone)

    def _add_checked(self, batch: list[PreparedRun]) -> None:
        """Store what is new of runs that may have been stored, or complete a running row."""
        existing = _stored_runs(self.cluster.pk, [run.job_id for run in batch])
        to_insert: list[PreparedRun] = []
        to_delete: list[int] = []
        superseding: dict[str, int] = {}  # job id -> the run whose end replaces a running row
        for run in batch:
            stored = existing.get(run.job_id, {})
            held = stored.get(run.run)
            if run.state == JobState.QUEUED:
                # Waiting is news only for a job of which nothing is stored yet.
                if stored:
                    self.summary.duplicates += 1
                    continue
                self.summary.queued += 1
                self.running.add(run.job_id)
                existing[run.job_id] = {run.run: (0, run.state)}  # a second Q of it: a duplicate
                to_insert.append(run)
                continue
            waiting = [pk for pk, state in stored.values() if state == JobState.QUEUED]
            to_delete += waiting  # a start or an end of a queued job: it waits no more
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


_NOT_OVER = (JobState.RUNNING, JobState.QUEUED)


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
