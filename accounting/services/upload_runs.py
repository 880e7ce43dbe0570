"""What a worker does with an upload: its files imported once (a resource_group into a tree as
far as its preview), its result kept; and what uploads leave behind, cleaned.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounting.models import (
    FilesUpload,
    UploadRejection,
    UploadState,
)
from accounting.services.heartbeats import heartbeat
from accounting.services.site_files import FilesImport, ImportReject, SiteFile, site_files_import
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, NodeOrigin, Scheduler
from trees.quantities import standing_row
from trees.selectors.edit import resource_group_preview_get

logger = logging.getLogger(__name__)


def upload_folder(upload: FilesUpload) -> Path:
    return Path(settings.UPLOAD_DIR) / f"upload-{upload.pk}"


def files_upload_run(*, upload_id: int) -> FilesUpload | None:
    """Import an upload's files, once: through site_files_import, or for a resource_group into
    a cluster that has a tree, as far as its preview (applied by files_upload_confirm). The
    files are removed afterwards, whatever happens; None if another worker has it. A worker
    killed leaves them for the stalled-work sweep's retry."""
    now = timezone.now()
    claimed = FilesUpload.objects.filter(pk=upload_id, state=UploadState.QUEUED).update(
        state=UploadState.RUNNING, started_at=now, heartbeat_at=now
    )
    if not claimed:
        return None  # done, or running in another worker: a duplicate delivery
    upload = FilesUpload.objects.get(pk=upload_id)
    folder = upload_folder(upload)
    paths = [(name, folder / str(index) / name) for index, name in enumerate(upload.files)]
    try:
        with heartbeat(FilesUpload.objects.filter(pk=upload_id, state=UploadState.RUNNING)):
            return _upload_import(upload, paths)
    except Exception as exc:
        logger.exception("upload %s failed", upload_id)
        return upload_failed(upload_id, f"the import failed: {exc}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _upload_import(upload: FilesUpload, paths: list[tuple[str, Path]]) -> FilesUpload:
    kind = SiteFile(upload.kind)
    existing = Cluster.objects.filter(name=upload.cluster_name).first()
    if existing is None and not upload.new_cluster:
        return upload_failed(upload.pk, f"cluster {upload.cluster_name} is no longer there")
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
    return upload_done(upload, result)


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
    rejections_store(upload, rejects)
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


def upload_done(upload: FilesUpload, result: FilesImport) -> FilesUpload:
    with transaction.atomic():
        rejections_store(upload, result.rejects)
        upload.result = result_document(result)
        upload.rejected = len(result.rejects)
        upload.state = UploadState.DONE
        upload.finished_at = timezone.now()
        upload.save(update_fields=["result", "rejected", "state", "finished_at"])
    return upload


def upload_failed(upload_id: int, outcome: str) -> FilesUpload:
    FilesUpload.objects.filter(pk=upload_id).update(
        state=UploadState.FAILED,
        finished_at=timezone.now(),
        result={"imported": False, "outcome": outcome},
    )
    return FilesUpload.objects.get(pk=upload_id)


def result_document(result: FilesImport) -> dict[str, Any]:
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


def rejections_store(upload: FilesUpload, rejects: Sequence[ImportReject]) -> None:
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
        upload_failed(upload_id, "the import stopped before it finished (its worker died)")
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
