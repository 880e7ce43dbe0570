"""Usage in: accounting files parsed, each job run charged to its entity and stored.

Each file is one transaction, so a file killed half-way leaves nothing and the next run stores
it whole. Reading and pricing is `accounting.job_rows`'s (in a helper process for big
inputs); which node each run is charged to and what is new is `accounting.services.job_store`'s.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import cast

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounting.entities import SwfAccountFrom
from accounting.job_rows import (
    Batch,
    Preparation,
    SourceKind,
    prepared_files,
)
from accounting.models import (
    IngestRejection,
    IngestRun,
    IngestSource,
)
from accounting.parsers.records import USAGE_RESOURCES
from accounting.services.accelerator import accelerator_jobs_imported
from accounting.services.heartbeats import heartbeat
from accounting.services.job_store import Charger, FileSummary, JobStore
from trees.engine.formula import parse_formula
from trees.engine.times import epoch_time
from trees.models import Cluster, Scheduler
from trees.services.clusters import cluster_get_or_create

logger = logging.getLogger(__name__)


Progress = Callable[[int], object]  # bytes of the current file consumed since the last call


_SCHEDULER = {
    IngestSource.PBS_ACCOUNTING: Scheduler.PBS,
    IngestSource.SACCT: Scheduler.SLURM,
    IngestSource.SWF: Scheduler.PBS,
    IngestSource.QSTAT: Scheduler.PBS,
    IngestSource.SQUEUE: Scheduler.SLURM,
    IngestSource.ACCELERATOR: Scheduler.ACCELERATOR,
}


@dataclass(frozen=True)
class IngestOptions:
    create_nodes: bool = False  # build missing users/projects in the tree (SWF, sacct)
    shares: int = 1  # the shares of a node --create-nodes builds
    swf_account_from: SwfAccountFrom = "group"
    time_zone: tzinfo = UTC  # sacct prints the cluster's local time without a zone
    max_decompressed: int | None = None  # None: settings.MAX_DECOMPRESSED_BYTES


@dataclass
class IngestResult:
    run: IngestRun
    files: list[FileSummary]
    unknown_entities: list[str]
    created_nodes: list[str]

    def document(self, *, files_named: dict[str, str] | None = None) -> dict[str, object]:
        """The counts and every rejected line, as `--json` and the API answer them;
        `files_named`: the names to give the files read (a pushed request's temporary one)."""
        run = self.run
        named = files_named or {}
        return {
            "read": run.read,
            "ingested": run.ingested,
            "duplicates": run.duplicates,
            "rejected": run.rejected,
            "running": run.running,
            "queued": run.queued,
            "rejects": [
                {
                    "file": named.get(s.path, s.path),
                    "line": bad.line,
                    "field": bad.field,
                    "reason": bad.reason,
                }
                for s in self.files
                for bad in s.rejects
            ],
            "record_types": run.record_types,
            "unknown_entities": self.unknown_entities,
            "created_nodes": self.created_nodes,
            "files": [
                {**summary.document(), "path": named.get(summary.path, summary.path)}
                for summary in self.files
            ],
            "cluster": run.cluster.name,
            "ingest_run": run.pk,
            "seconds": round(run.duration or 0.0, 3),
        }

    @property
    def stored_anything(self) -> bool:
        """Whether the input held any job run, new or already stored."""
        return any(f.ingested or f.duplicates or f.running or f.queued for f in self.files)


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
    charger = Charger(cluster, create_nodes=options.create_nodes, shares=options.shares)
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
    store = JobStore(cluster, charger)
    files = []
    beating = IngestRun.objects.filter(pk=run.pk, finished_at__isnull=True)
    with heartbeat(beating), prepared_files(paths, preparation) as batches_of_files:
        for path, batches in batches_of_files:
            with transaction.atomic():
                summary = _ingest_file(path, batches, store, progress)
                _record_file(run, summary)
            files.append(summary)
    if cluster.scheduler == Scheduler.ACCELERATOR and any(s.read for s in files):
        # The groups the jobs are in, made once for all files, and the FS_* fields, which
        # are the jobs': stored with them, not at the next cycle only.
        charger.created += accelerator_jobs_imported(
            cluster=cluster, groups=sorted(charger.groups_to_make), now=timezone.now()
        )
    run.unknown_entities = sorted(charger.unknown)
    run.created_nodes = charger.created
    run.finished_at = timezone.now()
    run.save(update_fields=["unknown_entities", "created_nodes", "finished_at", "failure"])
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
    run.queued += summary.queued
    types = Counter(run.record_types)
    types.update(summary.record_types)
    run.record_types = dict(sorted(types.items()))
    run.heartbeat_at = timezone.now()  # saved whole: the heartbeat's thread's value with it
    run.save()


def _ingest_file(
    path: str, batches: Iterator[Batch], store: JobStore, progress: Progress | None
) -> FileSummary:
    summary = store.summary = FileSummary(path)
    snapshot_at = None
    for batch in batches:
        summary.read += batch.read
        summary.record_types.update(batch.record_types)
        summary.rejects += batch.rejects
        store.charger.parents.update(batch.parents)
        store.add(batch)
        snapshot_at = batch.snapshot_at if batch.snapshot_at is not None else snapshot_at
        if progress is not None:
            progress(batch.consumed)
    if snapshot_at is not None:
        summary.left_queue = store.snapshot_close(epoch_time(snapshot_at))
    return summary
