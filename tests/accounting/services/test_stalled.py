"""stalled_work_sweep: what-ifs and uploads whose worker is gone (no heartbeat for
WORK_SILENT_MINUTES) or whose message is lost (queued for WORK_QUEUED_MINUTES) are sent again
once, then failed with why; ingestions nothing is heard from are failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from accounting import tasks
from accounting.models import (
    FilesUpload,
    IngestRun,
    IngestSource,
    Scenario,
    ScenarioState,
    UploadState,
)
from accounting.services.stalled import stalled_work_sweep
from trees.models import Cluster

pytestmark = pytest.mark.django_db

T = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


@pytest.fixture(autouse=True)
def limits(settings: Any) -> None:
    settings.WORK_SILENT_MINUTES = 5
    settings.WORK_QUEUED_MINUTES = 60
    settings.CYCLE_QUEUES = {"hpc": "cycles.big"}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, str | None]]:
    """What the sweep sends to the broker, instead of running it eagerly."""
    queued: list[tuple[str, int, str | None]] = []
    monkeypatch.setattr(
        tasks.run_scenario,
        "apply_async",
        lambda args, queue: queued.append(("scenario", args[0], queue)),
    )
    monkeypatch.setattr(
        tasks.import_files, "delay", lambda upload_id: queued.append(("upload", upload_id, None))
    )
    return queued


def scenario(state: str, heard: datetime | None, **fields: Any) -> Scenario:
    cluster, _ = Cluster.objects.get_or_create(name="hpc", defaults={"scheduler": "pbs"})
    made = Scenario.objects.create(
        cluster=cluster, parameters={}, state=state, heartbeat_at=heard, **fields
    )
    Scenario.objects.filter(pk=made.pk).update(created_at=T - 3 * 60 * MINUTE)
    return made


def upload(state: str, heard: datetime | None, **fields: Any) -> FilesUpload:
    return FilesUpload.objects.create(
        cluster_name="hpc", kind="pbs_accounting", files=["20261201"], state=state,
        uploaded_at=T - 3 * 60 * MINUTE, heartbeat_at=heard, **fields,
    )  # fmt: skip


def test_a_running_what_if_whose_worker_is_silent_is_sent_again_once(sent: list[Any]) -> None:
    silent = scenario(ScenarioState.RUNNING, T - 6 * MINUTE, progress=0.5)
    beating = scenario(ScenarioState.RUNNING, T - 4 * MINUTE, progress=0.5)
    done = scenario(ScenarioState.DONE, T - 60 * MINUTE)

    swept = stalled_work_sweep(now=T)

    assert swept.scenarios_sent_again == [silent.pk]
    assert sent == [("scenario", silent.pk, "cycles.big")]
    silent.refresh_from_db()
    assert (silent.state, silent.retries, silent.heartbeat_at) == ("queued", 1, T)
    for untouched in (beating, done):
        before = untouched.state
        untouched.refresh_from_db()
        assert (untouched.state, untouched.retries) == (before, 0)


def test_a_what_if_silent_again_after_its_retry_fails_saying_why(sent: list[Any]) -> None:
    twice = scenario(ScenarioState.RUNNING, T - 6 * MINUTE, retries=1)

    swept = stalled_work_sweep(now=T)

    assert (swept.scenarios_sent_again, swept.scenarios_failed) == ([], [twice.pk])
    assert sent == []
    twice.refresh_from_db()
    assert (twice.state, twice.finished_at) == ("failed", T)
    assert twice.message == (
        "its worker stopped answering (nothing heard from it since 2026-12-01 08:54:00 UTC),"
        " and again when it was sent to a worker once more: start it again"
    )


def test_a_what_if_no_worker_took_is_sent_again_then_failed(sent: list[Any]) -> None:
    lost = scenario(ScenarioState.QUEUED, T - 61 * MINUTE)
    waiting = scenario(ScenarioState.QUEUED, T - 59 * MINUTE)
    never_heard = scenario(ScenarioState.QUEUED, None)  # saved before heartbeats: its age

    swept = stalled_work_sweep(now=T)

    assert swept.scenarios_sent_again == sorted([lost.pk, never_heard.pk])
    assert Scenario.objects.get(pk=waiting.pk).retries == 0
    swept = stalled_work_sweep(now=T + 61 * MINUTE)
    assert swept.scenarios_failed == sorted([lost.pk, never_heard.pk])
    assert swept.scenarios_sent_again == [waiting.pk]
    lost.refresh_from_db()
    assert lost.state == "failed"
    assert lost.message == (
        "no worker took it in 60 minutes, nor when it was sent again (are the workers"
        " running?): start it again"
    )


def test_a_what_if_the_broker_refuses_to_take_again_is_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(args: list[int], queue: str | None) -> None:
        raise ConnectionRefusedError("Connection refused")

    monkeypatch.setattr(tasks.run_scenario, "apply_async", refused)
    silent = scenario(ScenarioState.RUNNING, T - 6 * MINUTE)
    stalled_work_sweep(now=T)
    silent.refresh_from_db()
    assert (silent.state, silent.message) == (
        "failed",
        "the what-if could not be queued (ConnectionRefusedError): start it again",
    )


def test_an_upload_whose_worker_is_silent_is_sent_again_then_failed(sent: list[Any]) -> None:
    silent = upload(UploadState.RUNNING, T - 6 * MINUTE)
    beating = upload(UploadState.RUNNING, T - 1 * MINUTE)
    lost = upload(UploadState.QUEUED, T - 61 * MINUTE)

    swept = stalled_work_sweep(now=T)

    assert swept.uploads_sent_again == [silent.pk, lost.pk]
    assert sent == [("upload", silent.pk, None), ("upload", lost.pk, None)]
    silent.refresh_from_db()
    assert (silent.state, silent.retries, silent.heartbeat_at) == ("queued", 1, T)
    assert FilesUpload.objects.get(pk=beating.pk).state == "running"

    FilesUpload.objects.filter(pk=silent.pk).update(state=UploadState.RUNNING)
    swept = stalled_work_sweep(now=T + 6 * MINUTE)
    assert swept.uploads_failed == [silent.pk]
    silent.refresh_from_db()
    assert (silent.state, silent.finished_at) == ("failed", T + 6 * MINUTE)
    assert silent.result == {
        "imported": False,
        "outcome": "the import stopped: its worker stopped answering (nothing heard from it"
        " since 2026-12-01 09:00:00 UTC), and again when it was sent to a worker once more;"
        " upload the files again",
    }


def test_an_ingestion_nothing_is_heard_from_is_failed_as_of_its_last_sign() -> None:
    cluster = Cluster.objects.create(name="hpc", scheduler="pbs")

    def run(heard: datetime | None, **fields: Any) -> IngestRun:
        return IngestRun.objects.create(
            cluster=cluster, source=IngestSource.PBS_ACCOUNTING, started_at=T - 30 * MINUTE,
            heartbeat_at=heard, **fields,
        )  # fmt: skip

    cut_off, never_heard = run(T - 6 * MINUTE), run(None)
    going = run(T - 1 * MINUTE)
    finished = run(T - 20 * MINUTE, finished_at=T - 20 * MINUTE)

    assert stalled_work_sweep(now=T).ingest_runs_failed == 2
    cut_off.refresh_from_db()
    assert (cut_off.finished_at, cut_off.duration) == (T - 6 * MINUTE, None)
    assert cut_off.failure == (
        "it stopped before the end: nothing was heard from its process after"
        " 2026-12-01 08:54:00 UTC (a push cut off, a killed command or worker); sending the"
        " same lines again stores only what is missing"
    )
    assert IngestRun.objects.get(pk=never_heard.pk).finished_at == T - 30 * MINUTE
    for untouched in (going, finished):
        before = untouched.finished_at
        untouched.refresh_from_db()
        assert (untouched.finished_at, untouched.failure) == (before, "")


def test_the_beat_s_task_sweeps_and_says_what_it_did(sent: list[Any]) -> None:
    silent = scenario(ScenarioState.RUNNING, datetime.now(UTC) - 6 * MINUTE)
    answer = tasks.sweep_stalled_work.delay().get()
    assert answer == {
        "scenarios_sent_again": [silent.pk],
        "scenarios_failed": [],
        "uploads_sent_again": [],
        "uploads_failed": [],
        "ingest_runs_failed": 0,
    }


def test_the_sweep_is_a_command_too(sent: list[Any], run: Any) -> None:
    scenario(ScenarioState.RUNNING, datetime.now(UTC) - 6 * MINUTE, retries=1)
    ran = run("sweep_stalled_work")
    assert (ran.status, ran.out) == (
        0,
        "what-ifs: 0 sent again, 1 failed; uploads: 0 sent again, 0 failed; ingestions failed: 0\n",
    )


def test_the_beat_sweeps_every_minute(settings: Any) -> None:
    assert settings.CELERY_BEAT_SCHEDULE["stalled-work"] == {
        "task": "accounting.tasks.sweep_stalled_work",
        "schedule": 60.0,
    }
