"""Celery tasks, run eagerly (no broker in the tests): the cycle of the current slot, once."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from accounting import tasks
from accounting.models import Cycle
from tests.accounting.services.test_ingest import TREE
from tests.conftest import Run, write_file
from trees.models import Cluster

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 7, 31, tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timezone, "now", lambda: NOW)


@pytest.mark.usefixtures("clock")
def test_the_beat_queues_each_due_cluster_once_per_slot(run: Run, tmp_path: Path) -> None:
    tree = write_file(tmp_path, "resource_group", TREE)
    for name in ("alpha", "beta"):
        assert run("import_resource_group", tree, "--cluster", name).status == 0

    assert tasks.run_due_cycles.delay().get() == ["alpha", "beta"]
    slots = set(Cycle.objects.values_list("at", flat=True))
    assert slots == {datetime(2026, 3, 1, 12, 0, tzinfo=UTC)}  # the 10-minute slot of 12:07:31
    assert tasks.run_due_cycles.delay().get() == []  # a duplicated tick finds nothing due

    alpha = Cycle.objects.get(cluster__name="alpha").cluster_id
    assert tasks.run_cycle.delay(alpha).get() == {"cluster": "alpha", "done_before": True}
    assert Cycle.objects.count() == 2


def _three_clusters(run: Run, tmp_path: Path) -> dict[str, int]:
    tree = write_file(tmp_path, "resource_group", TREE)
    for name in ("alpha", "beta", "gamma"):
        assert run("import_resource_group", tree, "--cluster", name).status == 0
    return dict(Cluster.objects.values_list("name", "pk"))


def _sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], str | None]]:
    """What run_due_cycles sends, instead of running it: each cycle's arguments and queue."""
    sent: list[tuple[list[int], str | None]] = []
    monkeypatch.setattr(
        tasks.run_cycle, "apply_async", lambda args, queue: sent.append((args, queue))
    )
    return sent


@pytest.mark.usefixtures("clock")
def test_the_beat_sends_the_cycles_of_the_clusters_cycle_queues_names_to_their_queues(
    run: Run, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _three_clusters(run, tmp_path)
    settings.CYCLE_QUEUES = {"beta": "cycles.big", "gamma": "cycles.gpu"}
    sent = _sent(monkeypatch)

    assert tasks.run_due_cycles.delay().get() == ["alpha", "beta", "gamma"]

    assert sent == [
        ([ids["alpha"]], None),  # the default queue
        ([ids["beta"]], "cycles.big"),
        ([ids["gamma"]], "cycles.gpu"),
    ]


@pytest.mark.usefixtures("clock")
def test_without_cycle_queues_every_cycle_goes_to_the_default_queue(
    run: Run, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _three_clusters(run, tmp_path)
    settings.CYCLE_QUEUES = {}
    sent = _sent(monkeypatch)

    tasks.run_due_cycles.delay().get()

    assert sent == [([ids[name]], None) for name in ("alpha", "beta", "gamma")]
