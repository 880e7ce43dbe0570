"""The accounting pages: the upload of a site's PBS files (admins)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from tempfile import TemporaryDirectory

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounting.forms import SiteFilesForm
from accounting.services import FilesImport, site_files_import
from trees.explanations import EXPLANATIONS
from trees.models import Cluster

FIGURES = {
    "entries": "Entries imported",
    "keys": "Keys read",
    "records": "Records imported",
    "read": "Read",
    "ingested": "Ingested",
    "running": "Running",
    "duplicates": "Duplicates",
    "rejected": "Rejected",
    "nodes_added": "Nodes added",
    "nodes_updated": "Updated",
    "nodes_removed": "Removed",
    "unknown_entities": "Entities under unknown",
}


def files_import_page(request: HttpRequest, name: str | None = None) -> HttpResponse:
    """Admins only (others 403): a resource_group, sched_config, PBS usage file or accounting
    logs into the cluster `name`, or into the one the form names (made when new, as the
    commands do); the answer shows the figures and every rejected line.

    Django streams a file above FILE_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) to a temporary file; each
    upload is copied in chunks under its own name into a folder removed after the import, and
    the parsers read it from there as they read the commands' paths.
    """
    if not request.user.is_staff:
        raise PermissionDenied("importing files is for admins")
    cluster = get_object_or_404(Cluster, name=name) if name is not None else None
    result = None
    if request.method == "POST":
        form = SiteFilesForm(request.POST, request.FILES, cluster=cluster)
        if form.is_valid():
            data = form.cleaned_data
            with TemporaryDirectory(prefix="fairshare-upload-") as folder:
                result = site_files_import(
                    cluster_name=data["cluster"],
                    kind=data["kind"],
                    files=_saved(data["upload"], Path(folder)),
                    user=request.user if isinstance(request.user, User) else None,
                    strict=data["strict"],
                )
    else:
        form = SiteFilesForm(cluster=cluster)
    return render(
        request,
        "accounting/import.html",
        {"cluster": cluster, "form": form, "result": result, **_figures(result)},
    )


def _saved(uploads: Iterable[UploadedFile], folder: Path) -> list[tuple[str, Path]]:
    """Each upload on disk under the name it was uploaded with (one folder each: two may share
    a name), so that a `.gz` is read as one and rejected lines name it."""
    saved = []
    for index, upload in enumerate(uploads):
        name = Path(upload.name or "").name or "upload"
        path = folder / str(index) / name
        path.parent.mkdir()
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        saved.append((name, path))
    return saved


def _figures(result: FilesImport | None) -> dict[str, object]:
    """The figures' columns (label and explanation) and each file's row of them."""
    if result is None:
        return {}
    keys = list(result.totals)
    return {
        "columns": [(FIGURES[key], EXPLANATIONS[f"import_{key}"]) for key in keys],
        "rows": [(row.file, [row.counts[key] for key in keys]) for row in result.files],
        "totals": [result.totals[key] for key in keys],
    }
