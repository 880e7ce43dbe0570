"""Celery tasks: thin calls of the cycle services, safe to run twice (acks_late, retries)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from celery import shared_task
from django.utils import timezone

from accounting.selectors import clusters_due, cycle_slot_of
from accounting.services.cycles import cycle_run
from accounting.services.history import history_roll_up, history_upkeep
from accounting.services.stalled import stalled_work_sweep
from accounting.services.upload_runs import files_upload_run, uploads_clean
from accounting.services.whatif import scenario_run
from fairshare_site.celery import RETRIED
from trees.models import Cluster
from trees.selectors.clusters import cluster_queue_get


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
    """Queue the cycle of every cluster whose slot is due, each to its cluster's queue
    (settings.CYCLE_QUEUES; the beat calls this every minute)."""
    due = clusters_due(timezone.now())
    for cluster, _slot in due:
        run_cycle.apply_async(args=[cluster.pk], queue=cluster_queue_get(cluster=cluster))
    return [cluster.name for cluster, _ in due]


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def roll_up_history() -> dict[str, Any]:
    """The history's daily care (the beat calls this daily): partitions made ahead, the months
    past the retention removed, and each cluster's roll-up sent to the cluster's queue (a big
    site's thinning is hours of deletes: spread over the workers, each within its time limit)."""
    now = timezone.now()
    upkeep = history_upkeep(now=now)
    clusters = list(Cluster.objects.order_by("name"))
    for cluster in clusters:
        roll_up_cluster_history.apply_async(
            args=[cluster.pk, now.isoformat()], queue=cluster_queue_get(cluster=cluster)
        )
    return {**asdict(upkeep), "roll_ups_sent": [cluster.name for cluster in clusters]}


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def roll_up_cluster_history(cluster_id: int, now: str) -> dict[str, Any]:
    """Thin one cluster's history as of `now` (ISO 8601); a retry goes on where it stopped."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return {"cluster": None}  # deleted since the roll-up was sent
    rolled = history_roll_up(cluster=cluster, now=datetime.fromisoformat(now))
    return {"cluster": cluster.name, **asdict(rolled)}


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


# A year of a big site's jobs replays in minutes (docs/whatif.md): more than the default limits,
# still within the broker's visibility timeout, after which the message would be sent again.
WHATIF_TIME_LIMIT = 1800


@shared_task(  # type: ignore[untyped-decorator]
    **RETRIED, time_limit=WHATIF_TIME_LIMIT, soft_time_limit=WHATIF_TIME_LIMIT - 60
)
def run_scenario(scenario_id: int) -> dict[str, Any]:
    """Run a saved what-if (the What-if page and the API queue it); a done one is not run
    again."""
    scenario = scenario_run(scenario_id=scenario_id)
    return {"scenario": scenario.pk, "state": scenario.state, "message": scenario.message}


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def sweep_stalled_work() -> dict[str, Any]:
    """Send again or fail the what-ifs, uploads and ingestions whose worker is gone or whose
    message was lost (the beat calls this every minute)."""
    return asdict(stalled_work_sweep(now=timezone.now()))
