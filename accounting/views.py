"""The accounting pages: the upload of a site's PBS files (admins), imported off the request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from accounting.forms import ConfirmForm, SiteFilesForm
from accounting.models import FilesUpload, UploadState
from accounting.selectors import upload_get, upload_rejections_get
from accounting.services.site_files import SiteFile
from accounting.services.uploads import (
    UploadRefused,
    files_upload_confirm,
    files_upload_discard,
    files_upload_start,
)
from fairshare_site.errors import error_response
from trees.access import is_admin
from trees.downloads import CsvWriter, download_header
from trees.explanations import EXPLANATIONS
from trees.models import Cluster
from trees.services.tree_edit import TreeChanged
from trees.views.lookup import cluster_or_404

FIGURES = {
    "entries": "Entries imported",
    "keys": "Keys read",
    "records": "Records imported",
    "read": "Read",
    "ingested": "Ingested",
    "running": "Running",
    "queued": "Queued",
    "duplicates": "Duplicates",
    "rejected": "Rejected",
    "nodes_added": "Nodes added",
    "nodes_updated": "Updated",
    "nodes_removed": "Removed",
    "unknown_entities": "Entities under unknown",
}
WORKING = (UploadState.QUEUED, UploadState.RUNNING)


class BoundedUploadHandler(FileUploadHandler):
    """Counts each file's bytes and the request's as they stream in: past UPLOAD_MAX_FILE_BYTES
    or UPLOAD_MAX_REQUEST_BYTES it stops the upload (Django drops what it kept of it) and says
    why in `refused`. Before every other handler: it passes each chunk on."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.total = self.in_file = 0
        self.refused = ""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.in_file = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.total += len(raw_data)
        self.in_file += len(raw_data)
        file_limit = settings.UPLOAD_MAX_FILE_BYTES
        request_limit = settings.UPLOAD_MAX_REQUEST_BYTES
        if self.in_file > file_limit:
            self.refused = (
                f"{self.file_name} is more than the {file_limit:,} bytes a file may have"
                " (UPLOAD_MAX_FILE_BYTES)"
            )
        elif self.total > request_limit:
            self.refused = (
                f"the files are more than the {request_limit:,} bytes an upload may have"
                " (UPLOAD_MAX_REQUEST_BYTES)"
            )
        if self.refused:
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


@csrf_exempt  # checked by _files_import, once the upload's limits are in place
def files_import_page(request: HttpRequest, name: str | None = None) -> HttpResponse:
    """Admins only (others 403): a resource_group, sched_config, PBS usage file or accounting
    logs into the cluster `name`, or the one the form names (a new one only when asked).

    The request body is bounded before it is read (Content-Length) and as it streams; the
    files are kept for the import task, and the answer is the upload's page, which follows it.
    """
    if not is_admin(request.user):
        raise PermissionDenied("importing files is for admins")
    cluster = cluster_or_404(name) if name is not None else None
    bounded = BoundedUploadHandler(request)
    if request.method == "POST":
        announced = request.META.get("CONTENT_LENGTH") or "0"
        limit = settings.UPLOAD_MAX_REQUEST_BYTES
        if not announced.isascii() or not announced.isdigit() or int(announced) > limit:
            message = f"an upload may have at most {limit:,} bytes (UPLOAD_MAX_REQUEST_BYTES)"
            return error_response(request, 413, message)
        request.upload_handlers = [bounded, *request.upload_handlers]
    return _files_import(request, cluster, bounded)


@csrf_protect
def _files_import(
    request: HttpRequest, cluster: Cluster | None, bounded: BoundedUploadHandler
) -> HttpResponse:
    if request.method == "POST":
        form = SiteFilesForm(request.POST, request.FILES, cluster=cluster)
        if bounded.refused:
            return error_response(request, 413, f"Nothing was uploaded: {bounded.refused}.")
        if form.is_valid():
            data = form.cleaned_data
            try:
                upload = files_upload_start(
                    cluster_name=data["cluster"],
                    new_cluster=data["created"],
                    kind=SiteFile(data["kind"]),
                    files=data["upload"],
                    strict=data["strict"],
                    user=request.user if isinstance(request.user, User) else None,
                )
            except UploadRefused as refused:
                return error_response(request, 413, f"Nothing was uploaded: {refused}.")
            return redirect("accounting:upload", upload.pk)
    else:
        form = SiteFilesForm(cluster=cluster)
    limits = {
        "file": settings.UPLOAD_MAX_FILE_BYTES,
        "request": settings.UPLOAD_MAX_REQUEST_BYTES,
        "decompressed": settings.MAX_DECOMPRESSED_BYTES,
    }
    return render(
        request, "accounting/import.html", {"cluster": cluster, "form": form, "limits": limits}
    )


def upload_page(request: HttpRequest, upload_id: int) -> HttpResponse:
    """An upload: its import's progress, then the figures and the first rejected lines; for a
    resource_group into a tree, the preview and the form that applies it (or discards it)."""
    upload = _upload(request, upload_id)
    form = ConfirmForm()
    status = 200
    note = ""
    if request.method == "POST" and upload.state == UploadState.PREVIEW:
        if request.POST.get("action") == "discard":
            files_upload_discard(upload_id=upload.pk)
            return redirect("accounting:upload", upload.pk)
        form = ConfirmForm(request.POST)
        if form.is_valid():
            try:
                files_upload_confirm(
                    upload_id=upload.pk,
                    reason=form.cleaned_data["reason"],
                    user=request.user if isinstance(request.user, User) else None,
                )
            except TreeChanged:
                note = (
                    "The tree changed since this preview (an edit, an import or a command):"
                    " nothing was applied. Upload the file again to see what it would do now."
                )
                status = 409
            except ValidationError as invalid:
                form.add_error("reason", " ".join(invalid.messages))
            else:
                return redirect("accounting:upload", upload.pk)
    return render(request, "accounting/upload.html", _context(upload, form, note), status=status)


def upload_state_json(request: HttpRequest, upload_id: int) -> HttpResponse:
    """What the upload's page polls while the import runs."""
    upload = _upload(request, upload_id)
    return JsonResponse(
        {"state": upload.state, "label": upload.get_state_display(), "working": _working(upload)}
    )


def upload_rejects_csv(request: HttpRequest, upload_id: int) -> StreamingHttpResponse:
    """Every rejected line of the upload (the page shows the first UPLOAD_REJECTS_SHOWN)."""
    upload = _upload(request, upload_id)

    class _Echo:
        def write(self, value: str) -> str:
            return value

    def rows() -> Iterator[str]:
        out = CsvWriter(_Echo())
        yield out.writerow(["file", "line", "byte", "field", "reason", "text"])
        for bad in upload_rejections_get(upload=upload):
            yield out.writerow(
                [bad.file, bad.line, "" if bad.byte is None else bad.byte, bad.field,
                 bad.reason, bad.text]
            )  # fmt: skip

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = download_header(
        "upload", upload.pk, "rejected", extension="csv"
    )
    return response


def _upload(request: HttpRequest, upload_id: int) -> FilesUpload:
    if not is_admin(request.user):
        raise PermissionDenied("imports are for admins")
    try:
        return upload_get(upload_id=upload_id)
    except FilesUpload.DoesNotExist as exc:
        raise Http404("no such upload") from exc


def _working(upload: FilesUpload) -> bool:
    return upload.state in WORKING


def _context(upload: FilesUpload, form: ConfirmForm, note: str) -> dict[str, Any]:
    shown = settings.UPLOAD_REJECTS_SHOWN
    result = upload.result
    totals = result.get("totals") or {}
    keys = result.get("order") or list(totals)
    preview = upload.preview if upload.state == UploadState.PREVIEW else {}
    standing = preview.get("standing", [])
    return {
        "upload": upload,
        "working": _working(upload),
        "kind": SiteFile(upload.kind).label,
        "result": result,
        "columns": [(FIGURES[key], EXPLANATIONS[f"import_{key}"]) for key in keys],
        "rows": [(file, [counts[key] for key in keys]) for file, counts in result.get("files", [])],
        "totals": [totals[key] for key in keys],
        "rejects": list(upload_rejections_get(upload=upload, limit=shown)),
        "shown": shown,
        "preview": preview,
        "entities": [row for row in standing if row["leaf"]],
        "groups": [row for row in standing if not row["leaf"]],
        "form": form,
        "note": note,
        "explain": EXPLANATIONS,
    }
