"""A cluster's settings page (admins): who reads its usage, how usage decays, how often the
cycle runs; each change audited with its reason."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from trees.access import access_get
from trees.forms import ClusterSettingsForm
from trees.selectors.audit import setting_changes_get
from trees.services.clusters import cluster_settings_set
from trees.views.lookup import cluster_or_404

RECENT_CHANGES = 20


def cluster_settings_page(request: HttpRequest, name: str) -> HttpResponse:
    cluster = cluster_or_404(name)
    if not access_get(user=request.user, cluster=cluster).admin:
        raise PermissionDenied("a cluster's settings are for admins")
    form = ClusterSettingsForm(request.POST or None, cluster=cluster)
    if request.method == "POST" and form.is_valid():
        try:
            changes = cluster_settings_set(
                cluster=cluster,
                values=form.settings(),
                reason=form.cleaned_data["reason"],
                user=request.user if isinstance(request.user, User) else None,
            )
        except ValidationError as invalid:
            form.add_error(None, invalid)
        else:
            said = ", ".join(change.setting for change in changes) or "nothing (all as they were)"
            messages.success(request, f"Saved: {said}, with the reason in the audit trail.")
            return redirect("trees:settings", cluster.name)
    return render(
        request,
        "trees/settings.html",
        {
            "cluster": cluster,
            "form": form,
            "changes": setting_changes_get(cluster=cluster)[:RECENT_CHANGES],
        },
        status=400 if form.is_bound else 200,
    )
