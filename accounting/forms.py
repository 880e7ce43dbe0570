"""The upload of a site's PBS files: which kind, which file(s), into which cluster."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from accounting.services import SiteFile
from trees.models import Cluster


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class _MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented way); none is a missing field."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(widget=_MultipleFileInput(), **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple) and data:
            return [single(item, initial) for item in data]
        return [single(data or None, initial)]


class SiteFilesForm(forms.Form):
    cluster = forms.SlugField(
        max_length=Cluster._meta.get_field("name").max_length,
        help_text="Created when new, as the import commands do.",
    )
    kind = forms.ChoiceField(choices=SiteFile.choices, widget=forms.RadioSelect)
    upload = _MultipleFileField(
        help_text="One file; several at once for accounting logs (read in name order, so that"
        " a job started in one day's log and ended in the next pairs up)."
    )
    strict = forms.BooleanField(
        required=False,
        label="Import nothing when a line is rejected (resource_group, as --strict)",
    )

    def __init__(self, *args: Any, cluster: Cluster | None = None, **kwargs: Any) -> None:
        """On a cluster's page the cluster is that one, not a field."""
        super().__init__(*args, **kwargs)
        self.fixed_cluster = cluster
        if cluster is not None:
            del self.fields["cluster"]

    def clean(self) -> dict[str, Any]:
        data = self.cleaned_data
        if self.fixed_cluster is not None:
            data["cluster"] = self.fixed_cluster.name
        files = data.get("upload") or []
        if len(files) > 1 and data.get("kind") not in (None, SiteFile.PBS_ACCOUNTING):
            self.add_error(
                "upload", f"a {data['kind']} import takes one file; give several for logs only"
            )
        return data
