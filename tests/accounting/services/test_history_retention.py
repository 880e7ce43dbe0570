"""The history's retention (HISTORY_RETENTION_DAYS): whole months past it go, on any database
(on PostgreSQL as partitions dropped: tests/accounting/services/test_history_partitions.py)."""

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from accounting import tasks
from accounting.models import Cycle, NodeHistory
from accounting.selectors import node_history_get
from accounting.services.cycles import cycle_run
from accounting.services.history import history_expire
from tests.accounting.services.test_cycles import site
from trees.models import Cluster, Node

pytestmark = pytest.mark.django_db

CYCLES = (
    datetime(2030, 1, 10, tzinfo=UTC),
    datetime(2030, 2, 10, tzinfo=UTC),
    datetime(2030, 3, 10, tzinfo=UTC),
)
NOW = datetime(2030, 3, 15, tzinfo=UTC)  # 30 days before: 13 February


def three_months() -> Cluster:
    cluster = site()
    for moment in CYCLES:
        cycle_run(cluster=cluster, now=moment)
    return cluster


def test_the_retention_removes_every_month_that_ended_before_it() -> None:
    cluster = three_months()
    nodes = Node.objects.filter(cluster=cluster).count()

    expired = history_expire(now=NOW, days=30)

    # January ended before 13 February; February has rows since, so it stays whole.
    assert sorted(set(NodeHistory.objects.values_list("at", flat=True))) == list(CYCLES[1:])
    if connection.vendor == "postgresql":
        assert "accounting_nodehistory_y2030m01" in expired.partitions_dropped
    else:
        assert (expired.partitions_dropped, expired.rows_removed) == ([], nodes)
    assert dict(Cycle.objects.values_list("at", "history_kept")) == {
        CYCLES[0]: False,
        CYCLES[1]: True,
        CYCLES[2]: True,
    }
    node = Node.objects.get(cluster=cluster, name="ann")
    assert [point.at for point in node_history_get(node=node)] == list(CYCLES[1:])


def test_no_retention_keeps_everything() -> None:
    three_months()
    rows = NodeHistory.objects.count()
    assert history_expire(now=NOW, days=0).partitions_dropped == []
    assert NodeHistory.objects.count() == rows


def test_the_daily_task_applies_the_retention_setting(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_months()
    settings.HISTORY_RETENTION_DAYS = 30
    monkeypatch.setattr(timezone, "now", lambda: NOW)

    done = tasks.roll_up_history.delay().get()

    assert done["roll_ups_sent"] == ["site"]
    assert sorted(set(NodeHistory.objects.values_list("at", flat=True))) == list(CYCLES[1:])


def test_the_daily_task_sends_each_clusters_roll_up_to_its_queue(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = three_months()
    settings.CYCLE_QUEUES = {"site": "cycles.big"}
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    sent: list[tuple[list[Any], str | None]] = []
    monkeypatch.setattr(
        tasks.roll_up_cluster_history, "apply_async", lambda args, queue: sent.append((args, queue))
    )

    tasks.roll_up_history.delay().get()

    assert sent == [([cluster.pk, NOW.isoformat()], "cycles.big")]


def test_a_clusters_roll_up_thins_its_history_as_of_the_time_sent() -> None:
    cluster = site()
    for hour in range(3):  # three cycles in one hour, two days before
        cycle_run(cluster=cluster, now=datetime(2030, 3, 13, 0, 10 * hour, tzinfo=UTC))
    nodes = Node.objects.filter(cluster=cluster).count()

    done = tasks.roll_up_cluster_history.delay(cluster.pk, NOW.isoformat()).get()

    assert done == {"cluster": "site", "cycles_thinned": 2, "rows_removed": 2 * nodes}
    assert set(NodeHistory.objects.values_list("at", flat=True)) == {
        datetime(2030, 3, 13, 0, 20, tzinfo=UTC)
    }
    assert tasks.roll_up_cluster_history.delay(0, NOW.isoformat()).get() == {"cluster": None}
