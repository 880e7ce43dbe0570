"""heartbeat: while the work runs, a thread of its own marks its rows alive, committed at once
even while the work holds a transaction open; it stops with the work."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from accounting.models import Scenario, ScenarioState
from accounting.services.heartbeats import heartbeat
from trees.models import Cluster

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_rows_beat_while_the_work_runs_and_stop_after(settings: Any) -> None:
    settings.WORK_HEARTBEAT_SECONDS = 0.05
    cluster = Cluster.objects.create(name="hpc", scheduler="pbs")
    scenario = Scenario.objects.create(cluster=cluster, parameters={}, state=ScenarioState.RUNNING)
    rows = Scenario.objects.filter(pk=scenario.pk)
    beats: set[object] = set()
    with heartbeat(rows):
        deadline = time.monotonic() + 30
        while len(beats) < 3 and time.monotonic() < deadline:
            beats.add(rows.values_list("heartbeat_at", flat=True).get())
            time.sleep(0.02)
    assert len(beats - {None}) >= 2  # it moved, more than once
    assert not [thread for thread in threading.enumerate() if thread.name == "heartbeat"]
    last = rows.values_list("heartbeat_at", flat=True).get()
    time.sleep(0.2)
    assert rows.values_list("heartbeat_at", flat=True).get() == last


def test_it_beats_outside_the_transaction_the_work_holds(settings: Any) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has one writer: there a beat waits for the work's transaction")
    settings.WORK_HEARTBEAT_SECONDS = 0.05
    cluster = Cluster.objects.create(name="hpc", scheduler="pbs")
    scenario = Scenario.objects.create(cluster=cluster, parameters={})
    rows = Scenario.objects.filter(pk=scenario.pk)
    seen = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if rows.values_list("heartbeat_at", flat=True).get() is not None:
                seen.set()
                break
            time.sleep(0.02)
        connection.close()  # this thread's own

    with heartbeat(rows), transaction.atomic():
        Cluster.objects.filter(pk=cluster.pk).update(cores=8)  # the work's own writes
        watcher = threading.Thread(target=watch)
        watcher.start()
        watcher.join()
    assert seen.is_set()
