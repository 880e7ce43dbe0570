"""Files uploaded through the import page: kept, queued for a worker, and a previewed
resource_group confirmed by an admin.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from accounting.models import (
    FilesUpload,
    UploadState,
)
from accounting.services.site_files import FileCounts, FilesImport, SiteFile
from accounting.services.upload_runs import result_document, upload_failed, upload_folder
from fairshare_site.celery import app
from trees.engine.pbs import GroupDef
from trees.services.pbs import (
    resource_group_import,
)

logger = logging.getLogger(__name__)


class UploadRefused(ValueError):
    """An upload that is not taken at all (a limit, a cluster that is not there): nothing is
    kept of it; the message says why."""


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
        heartbeat_at=timezone.now(),
    )
    folder = upload_folder(upload)
    # A new row's folder can only be a leftover (a database made afresh numbers from 1 again).
    shutil.rmtree(folder, ignore_errors=True)
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
    transaction.on_commit(lambda: upload_queue(upload_id=upload_id))
    return upload


def upload_queue(*, upload_id: int) -> None:
    """Send the upload's import to a worker; fail it, saying so, when the broker does not
    take it."""
    # By name: accounting.tasks calls the sweep, which calls this.
    import_files = app.tasks["accounting.tasks.import_files"]
    try:
        import_files.delay(upload_id)
    except Exception as exc:  # the broker refused: say so on the upload's page
        logger.exception("upload %s could not be queued", upload_id)
        upload_failed(upload_id, f"the import could not be queued ({exc}); upload again")


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
        upload.result = result_document(
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


def files_upload_discard(*, upload_id: int) -> None:
    """Drop a previewed resource_group unapplied: the tree stays as it is."""
    FilesUpload.objects.filter(pk=upload_id, state=UploadState.PREVIEW).update(
        state=UploadState.DONE,
        result={"imported": False, "outcome": "discarded: the tree is unchanged"},
    )
