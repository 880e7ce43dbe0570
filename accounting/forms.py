"""The upload of a site's PBS files: which kind, which file(s), into which cluster."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from accounting.services.site_files import SiteFile
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


NEW_CLUSTER = "+new"  # the cluster choice that makes one (no slug starts with +)


class SiteFilesForm(forms.Form):
    cluster = forms.ChoiceField(
        help_text="An existing cluster, or a new one named below: a typo makes none."
    )
    new_cluster = forms.SlugField(
        required=False,
        max_length=Cluster._meta.get_field("name").max_length,
        label="New cluster's name",
    )
    kind = forms.ChoiceField(choices=SiteFile.choices, widget=forms.RadioSelect)
    upload = _MultipleFileField(
        help_text="One file; several at once for accounting logs (read in name order, so that"
        " a job started in one day's log and ended in the next pairs up)."
    )
    skip_rejected = forms.BooleanField(
        required=False,
        label="Import the good lines of a resource_group and skip the rejected ones"
        " (by default one rejected line stops the import, as --strict)",
    )

    def __init__(self, *args: Any, cluster: Cluster | None = None, **kwargs: Any) -> None:
        """On a cluster's page the cluster is that one, not a field."""
        super().__init__(*args, **kwargs)
        self.fixed_cluster = cluster
        if cluster is not None:
            del self.fields["cluster"]
            del self.fields["new_cluster"]
        else:
            names = Cluster.objects.order_by("name").values_list("name", flat=True)
            cluster_field = self.fields["cluster"]
            assert isinstance(cluster_field, forms.ChoiceField)
            cluster_field.choices = [
                ("", "Choose a cluster"),
                *((name, name) for name in names),
                (NEW_CLUSTER, "A new cluster, named below"),
            ]

    def clean(self) -> dict[str, Any]:
        data = self.cleaned_data
        data["strict"] = not data.get("skip_rejected")
        data["created"] = False
        if self.fixed_cluster is not None:
            data["cluster"] = self.fixed_cluster.name
        elif data.get("cluster") == NEW_CLUSTER:
            name = data.get("new_cluster")
            if not name:
                self.add_error("new_cluster", "name the new cluster")
            elif Cluster.objects.filter(name=name).exists():
                self.add_error("new_cluster", f"cluster {name} exists: choose it above")
            else:
                data["cluster"], data["created"] = name, True
        files = data.get("upload") or []
        if len(files) > 1 and data.get("kind") not in (None, SiteFile.PBS_ACCOUNTING):
            self.add_error(
                "upload", f"a {data['kind']} import takes one file; give several for logs only"
            )
        return data


class ConfirmForm(forms.Form):
    """The admin's go-ahead for a previewed resource_group, with the audit trail's reason."""

    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Kept with every change in the audit trail.",
    )
