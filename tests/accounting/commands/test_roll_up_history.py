"""roll_up_history: the beat's daily care of the history, for sites without a broker."""

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from accounting.models import NodeHistory
from accounting.services.cycles import cycle_run
from tests.accounting.services.test_cycles import site
from tests.conftest import Run
from trees.models import Node

pytestmark = pytest.mark.django_db


def test_it_thins_and_applies_the_retention(
    run: Run, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = site()
    for moment in (datetime(2030, 1, 10, tzinfo=UTC), datetime(2030, 3, 10, tzinfo=UTC)):
        cycle_run(cluster=cluster, now=moment)
    settings.HISTORY_RETENTION_DAYS = 30
    monkeypatch.setattr(timezone, "now", lambda: datetime(2030, 3, 15, tzinfo=UTC))

    ran = run("roll_up_history")

    assert ran.status == 0
    assert "site: 0 history rows thinned" in ran.out
    if connection.vendor == "postgresql":
        assert "partition accounting_nodehistory_y2030m01 dropped (past the retention)" in ran.out
        assert "partition accounting_nodehistory_y2030m04 made" in ran.out  # next month's
    else:
        nodes = Node.objects.filter(cluster=cluster).count()
        assert f"{nodes} history rows past the retention removed" in ran.out
    assert set(NodeHistory.objects.values_list("at", flat=True)) == {
        datetime(2030, 3, 10, tzinfo=UTC)
    }
