"""Work whose worker is gone, or whose message the broker lost: found by the beat each minute
from the heartbeats (accounting.services.heartbeats), sent to a worker once more, then failed
with why, so that no what-if, upload or ingestion says "running" or "queued" for ever."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import DateTimeField, F, Q
from django.db.models.functions import Coalesce

from accounting.models import (
    FilesUpload,
    IngestRun,
    Scenario,
    ScenarioState,
    UploadState,
)
from accounting.services.scenarios import scenario_queue
from accounting.services.uploads import upload_queue
from trees.selectors.clusters import cluster_queue_get

RETRIES = 1  # times a piece of work is sent again before it is failed


@dataclass
class StalledWork:
    scenarios_sent_again: list[int] = field(default_factory=list)
    scenarios_failed: list[int] = field(default_factory=list)
    uploads_sent_again: list[int] = field(default_factory=list)
    uploads_failed: list[int] = field(default_factory=list)
    ingest_runs_failed: int = 0


def stalled_work_sweep(*, now: datetime) -> StalledWork:
    """Send again, or fail, the what-ifs and uploads running without a heartbeat for
    WORK_SILENT_MINUTES or queued untaken for WORK_QUEUED_MINUTES; fail the ingestions
    silent that long. Each change is a conditional UPDATE on what was read, so a worker
    that beats or takes the work meanwhile (or a second sweep) wins."""
    silent = now - timedelta(minutes=settings.WORK_SILENT_MINUTES)
    waited = now - timedelta(minutes=settings.WORK_QUEUED_MINUTES)
    swept = StalledWork()
    _scenarios_swept(swept, now, silent, waited)
    _uploads_swept(swept, now, silent, waited)
    # What a run last wrote is when it was last heard from: its finish, as far as is known.
    last_heard = Coalesce("heartbeat_at", "started_at", output_field=DateTimeField())
    unheard = IngestRun.objects.filter(finished_at__isnull=True).annotate(heard=last_heard)
    failed = unheard.filter(heard__lt=silent)
    for heard in sorted(set(failed.values_list("heard", flat=True))):
        swept.ingest_runs_failed += failed.filter(heard=heard).update(
            finished_at=heard,
            failure=(
                "it stopped before the end: nothing was heard from its process after"
                f" {_when(heard)} (a push cut off, a killed command or worker); sending the"
                " same lines again stores only what is missing"
            ),
        )
    return swept


def _stalled(silent: datetime, waited: datetime) -> Q:
    return Q(state=ScenarioState.RUNNING, heard__lt=silent) | Q(
        state=ScenarioState.QUEUED, heard__lt=waited
    )


def _verdict(state: str, heard: datetime, retries: int) -> tuple[bool, str]:
    """Whether to send it again, and what happened, said as the pages say it."""
    again = retries < RETRIES
    if state == ScenarioState.QUEUED:
        return again, (
            f"no worker took it in {settings.WORK_QUEUED_MINUTES} minutes, nor when it was sent"
            " again (are the workers running?)"
        )
    return again, (
        f"its worker stopped answering (nothing heard from it since {_when(heard)}), and again"
        " when it was sent to a worker once more"
    )


def _scenarios_swept(swept: StalledWork, now: datetime, silent: datetime, waited: datetime) -> None:
    heard = Coalesce("heartbeat_at", "created_at", output_field=DateTimeField())
    stalled = Scenario.objects.alias(heard=heard).filter(_stalled(silent, waited))
    rows = stalled.select_related("cluster").annotate(last=heard).order_by("pk")
    for scenario in list(rows):
        again, said = _verdict(scenario.state, scenario.last, scenario.retries)
        same = stalled.filter(pk=scenario.pk, state=scenario.state, retries=scenario.retries)
        if again:
            if same.update(state=ScenarioState.QUEUED, retries=F("retries") + 1, heartbeat_at=now):
                swept.scenarios_sent_again.append(scenario.pk)
                scenario_queue(
                    scenario_id=scenario.pk, queue=cluster_queue_get(cluster=scenario.cluster)
                )
        elif same.update(
            state=ScenarioState.FAILED, finished_at=now, message=f"{said}: start it again"
        ):
            swept.scenarios_failed.append(scenario.pk)


def _uploads_swept(swept: StalledWork, now: datetime, silent: datetime, waited: datetime) -> None:
    heard = Coalesce("heartbeat_at", "uploaded_at", output_field=DateTimeField())
    stalled = FilesUpload.objects.alias(heard=heard).filter(_stalled(silent, waited))
    for upload in list(stalled.annotate(last=heard).order_by("pk")):
        again, said = _verdict(upload.state, upload.last, upload.retries)
        same = stalled.filter(pk=upload.pk, state=upload.state, retries=upload.retries)
        if again:
            if same.update(state=UploadState.QUEUED, retries=F("retries") + 1, heartbeat_at=now):
                swept.uploads_sent_again.append(upload.pk)
                upload_queue(upload_id=upload.pk)
        elif same.update(
            state=UploadState.FAILED,
            finished_at=now,
            result={
                "imported": False,
                "outcome": f"the import stopped: {said}; upload the files again",
            },
        ):
            swept.uploads_failed.append(upload.pk)


def _when(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
