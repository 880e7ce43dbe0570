"""Celery tasks, run eagerly (no broker in the tests): the cycle of the current slot, once."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.utils import timezone

from accounting import tasks
from accounting.models import Cycle
from tests.accounting.services.test_ingest import TREE
from tests.conftest import Run, write_file

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
