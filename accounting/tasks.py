"""Celery tasks: thin calls of the cycle services, safe to run twice (acks_late, retries)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from celery import shared_task
from django.utils import timezone

from accounting.selectors import clusters_due, cycle_slot_of
from accounting.services.cycles import cycle_run
from accounting.services.history import history_roll_up
from accounting.services.upload_runs import files_upload_run, uploads_clean
from fairshare_site.celery import RETRIED
from trees.models import Cluster


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def run_cycle(cluster_id: int, at: str | None = None) -> dict[str, Any]:
    """The cluster's cycle at `at` (ISO 8601), by default of the current slot; nothing when
    that cycle is already done."""
    cluster = Cluster.objects.get(pk=cluster_id)
    now = datetime.fromisoformat(at) if at else cycle_slot_of(cluster, timezone.now())
    cycle = cycle_run(cluster=cluster, now=now)
    if cycle is None:
        return {"cluster": cluster.name, "done_before": True}
    return {
        "cluster": cluster.name,
        "at": cycle.at.isoformat(),
        "jobs_accrued": cycle.jobs_accrued,
        "usage_added": cycle.usage_added,
        "decays_applied": cycle.decays_applied,
    }


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def run_due_cycles() -> list[str]:
    """Queue the cycle of every cluster whose slot is due (the beat calls this every minute)."""
    due = clusters_due(timezone.now())
    for cluster, _slot in due:
        run_cycle.delay(cluster.pk)
    return [cluster.name for cluster, _ in due]


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def roll_up_history() -> dict[str, int]:
    """Thin every cluster's history (the beat calls this daily): rows removed per cluster."""
    now = timezone.now()
    return {
        cluster.name: history_roll_up(cluster=cluster, now=now).rows_removed
        for cluster in Cluster.objects.order_by("name")
    }


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def import_files(upload_id: int) -> dict[str, Any]:
    """Import an upload's files (the import page queues this); nothing when it is done."""
    upload = files_upload_run(upload_id=upload_id)
    if upload is None:
        return {"upload": upload_id, "done_before": True}
    return {"upload": upload_id, "state": upload.state, "rejected": upload.rejected}


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def clean_uploads() -> dict[str, int]:
    """Remove what uploads left behind (the beat calls this hourly)."""
    cleaned = uploads_clean(now=timezone.now())
    return {"folders_removed": cleaned.folders_removed, "uploads_failed": cleaned.uploads_failed}
