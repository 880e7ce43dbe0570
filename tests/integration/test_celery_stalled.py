"""Real workers killed (SIGKILL) in the middle of a what-if, an upload's import and a cycle:
the beat's sweep finds the work whose heartbeat stopped and sends it again, and the cycle is
queued again by the beat's next tick, long before the broker's visibility timeout (an hour
here) would give the task back. PostgreSQL and Redis as test_celery_cycles says."""

from __future__ import annotations

import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from accounting.models import Cycle, FilesUpload, Job, Scenario, ScenarioState, UploadState
from accounting.parsers.records import JobState
from accounting.services.cycles import cycle_run
from accounting.services.scenarios import scenario_start
from accounting.services.site_files import SiteFile
from accounting.services.stalled import stalled_work_sweep
from accounting.services.uploads import files_upload_start
from accounting.services.whatif import WhatIfParameters
from accounting.tasks import run_due_cycles
from tests.integration.test_celery_cycles import (
    T0,
    Worker,
    at,
    only_the_cycle_queued,
    tree_site,
    usages,
    wait_for,
)
from trees.models import Cluster

pytestmark = pytest.mark.django_db(transaction=True)

# The broker gives nothing back within a test; heartbeats each second.
LONG_LIVED = {"CELERY_VISIBILITY_TIMEOUT": "3600", "WORK_HEARTBEAT_SECONDS": "1"}


def heard(model: Any, pk: int) -> datetime | None:
    value: datetime | None = model.objects.values_list("heartbeat_at", flat=True).get(pk=pk)
    return value


def killed_while_it_beats(process: Any, model: Any, pk: int) -> datetime:
    """Wait until the work runs and its heartbeat has moved, kill its worker, and return the
    last beat once it is plain that none follows."""
    wait_for(lambda: model.objects.get(pk=pk).state == "running", 120)
    first = heard(model, pk)
    wait_for(lambda: heard(model, pk) != first, 30)  # the thread beats in a real worker
    process.send_signal(signal.SIGKILL)
    process.wait()
    last = heard(model, pk)
    time.sleep(2.5)  # more than two beats
    assert heard(model, pk) == last
    assert model.objects.get(pk=pk).state == "running"  # what the page said for ever
    assert last is not None
    return last


def busy_site(jobs: int) -> Cluster:
    """A PBS site whose what-if takes seconds: `jobs` ended runs of four users on 64 cores,
    about 37 of them busy on average (a queue kept short, so the replay's time is linear)."""
    cluster = tree_site("whatif", users=4)
    Cluster.objects.filter(pk=cluster.pk).update(cores=64)
    Job.objects.bulk_create(
        (
            Job(
                cluster=cluster, job_id=f"w{n}", state=JobState.ENDED, entity=f"u{n % 4}",
                ncpus=1 + n % 4, walltime=600 + n % 600, qtime=at(T0 + 60 * n),
                start=at(T0 + 60 * n), end=at(T0 + 60 * n + 600 + n % 600),
                usage=1.0, source_file="test", source_line=n,
            )
            for n in range(jobs)
        ),
        batch_size=10_000,
    )  # fmt: skip
    return Cluster.objects.get(pk=cluster.pk)


def test_a_what_if_whose_worker_is_killed_is_sent_again_by_the_sweep_and_done(
    worker: Worker,
) -> None:
    cluster = busy_site(100_000)
    doomed = worker("doomed", **LONG_LIVED)
    scenario = scenario_start(
        cluster=cluster,
        parameters=WhatIfParameters(settings=("shares:u0=5",)),
        user=None,
        title="killed",
    )

    last = killed_while_it_beats(doomed, Scenario, scenario.pk)
    assert stalled_work_sweep(now=last + timedelta(minutes=4)).scenarios_sent_again == []
    swept = stalled_work_sweep(now=last + timedelta(minutes=6))

    assert swept.scenarios_sent_again == [scenario.pk]
    assert Scenario.objects.get(pk=scenario.pk).state == ScenarioState.QUEUED
    worker("after", **LONG_LIVED)
    wait_for(lambda: Scenario.objects.get(pk=scenario.pk).state == "done", 300)
    done = Scenario.objects.get(pk=scenario.pk)
    assert (done.retries, done.message) == (1, "")
    assert done.result is not None
    assert done.result["trace"]["jobs"] == 100_000 + 4


def pbs_log(jobs: int) -> bytes:
    lines = []
    for n in range(jobs):
        start, end = T0 + 10 * n, T0 + 10 * n + 3600
        lines.append(
            f"03/01/2026 09:00:00;E;{1000 + n}.pbs01;user=u{n % 2} group=chem project=chem"
            f" queue=work ctime={start} qtime={start} etime={start} start={start} exec_host=n1/0*4"
            f" Resource_List.ncpus=4 session=1 end={end} Exit_status=0"
            " resources_used.walltime=01:00:00 resources_used.ncpus=4 run_count=1"
        )
    return ("\n".join(lines) + "\n").encode()


def test_an_upload_whose_worker_is_killed_is_sent_again_by_the_sweep_and_imported(
    worker: Worker, settings: Any
) -> None:
    tree_site("site")
    folder = str(settings.UPLOAD_DIR)
    doomed = worker("doomed", UPLOAD_DIR=folder, **LONG_LIVED)
    upload = files_upload_start(
        cluster_name="site", new_cluster=False, kind=SiteFile.PBS_ACCOUNTING,
        files=[SimpleUploadedFile("20260301", pbs_log(400_000))], strict=False, user=None,
    )  # fmt: skip

    last = killed_while_it_beats(doomed, FilesUpload, upload.pk)
    assert not Job.objects.filter(cluster__name="site", job_id="1000").exists()  # rolled back
    swept = stalled_work_sweep(now=last + timedelta(minutes=6))

    assert swept.uploads_sent_again == [upload.pk]
    (killed_ingestion,) = Cluster.objects.get(name="site").ingest_runs.all()
    assert killed_ingestion.failure.startswith("it stopped before the end")  # the same sweep
    worker("after", UPLOAD_DIR=folder, **LONG_LIVED)
    wait_for(lambda: FilesUpload.objects.get(pk=upload.pk).state == UploadState.DONE, 300)
    done = FilesUpload.objects.get(pk=upload.pk)
    assert done.retries == 1
    assert done.result["totals"]["ingested"] == 400_000
    wait_for(lambda: not (Path(folder) / f"upload-{upload.pk}").exists(), 30)  # then removed


def test_a_cycle_whose_worker_is_killed_is_queued_again_by_the_beat_s_next_tick(
    worker: Worker,
) -> None:
    """A cycle has no row while it runs: its transaction dies with its worker, and the beat's
    minute tick finds the slot not done and queues it again (no sweep is needed)."""
    users = 5000
    cluster = tree_site("disturbed", users)
    cycle_run(cluster=cluster, now=at(T0))
    only_the_cycle_queued(cluster)
    first = worker("doomed", **LONG_LIVED)
    assert run_due_cycles.apply().get() == ["disturbed"]

    def in_cycle() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
            )
            return bool(cursor.fetchone()[0])

    wait_for(in_cycle)
    first.send_signal(signal.SIGKILL)
    first.wait()
    wait_for(lambda: not in_cycle(), 10)
    assert Cycle.objects.filter(cluster=cluster).count() == 1

    assert run_due_cycles.apply().get() == ["disturbed"]  # the next tick
    worker("after", **LONG_LIVED)
    wait_for(lambda: Cycle.objects.filter(cluster=cluster).count() == 2, 120)
    again = Cycle.objects.filter(cluster=cluster).latest("at")
    # Each user's hour accrued once, then months of daily decays to the floor of 1.
    assert (again.jobs_accrued, again.usage_added) == (users, users * 14_400.0)
    assert again.at > datetime(2026, 3, 2, tzinfo=UTC)
    assert usages(cluster)["u0"] == 1.0
