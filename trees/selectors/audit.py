"""The audit trail of share changes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db.models import Q, QuerySet

from trees.engine.pbs import resource_group_parent
from trees.models import Cluster, Node, SettingChange, ShareChange


def share_changes_get(
    *,
    cluster: Cluster,
    name: str = "",
    since: datetime | None = None,
    around: Node | None = None,
) -> QuerySet[ShareChange]:
    """The audit trail, newest first: every change, or those of nodes whose name (now or
    before a rename) contains `name`, those since a time, or those of a node and of its
    children (what editing its children changes, removed and moved-away ones included)."""
    changes = ShareChange.objects.filter(cluster=cluster).select_related("changed_by")
    if name:
        changes = changes.filter(Q(node_name__icontains=name) | Q(old_name__icontains=name))
    if around is not None:
        parent = resource_group_parent(around.name)
        changes = changes.filter(
            Q(node=around) | Q(node__parent=around) | Q(old_parent=parent) | Q(new_parent=parent)
        )
    if since is not None:
        changes = changes.filter(changed_at__gte=since)
    return changes


def setting_changes_get(*, cluster: Cluster) -> QuerySet[SettingChange]:
    """The cluster's settings changes, newest first."""
    return SettingChange.objects.filter(cluster=cluster).select_related("changed_by")


def setting_latest_changes_get(
    *, cluster: Cluster, settings: Sequence[str]
) -> dict[str, SettingChange]:
    """The last change of each of these settings of the cluster; a setting never changed
    since the cluster was made has none."""
    latest: dict[str, SettingChange] = {}
    for change in setting_changes_get(cluster=cluster).filter(setting__in=settings):
        latest.setdefault(change.setting, change)  # newest first
    return latest


def share_changes_since_get(*, cluster: Cluster, since: datetime) -> list[ShareChange]:
    """The changes made since a time (an edit's opening), oldest first: what an editor missed."""
    return list(share_changes_get(cluster=cluster, since=since).order_by("changed_at", "id"))
