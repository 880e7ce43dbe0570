"""A site's files imported whole: a resource_group, a sched_config, a usage file or
accounting logs, each refused or taken with its rejected lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models

from accounting.models import (
    IngestSource,
)
from accounting.services.ingest import ingest
from accounting.services.pricing import sched_config_import
from trees.engine.formula import FormulaError
from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.formats.usage_file import MAX_FILE_BYTES as USAGE_FILE_MAX_BYTES
from trees.formats.usage_file import read_usage_file
from trees.models import Cluster
from trees.services.pbs import (
    pbs_usage_import,
    resource_group_import,
)
from trees.services.pbs_store import StoreSummary


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
                "queued": summary.queued,
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
        "queued": run.queued,
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
