"""The health checks: each part healthy, and each failing, with nothing to hide in between.

The test settings have no broker (tasks run eagerly): the broker and the worker checks are
tried with CELERY_TASK_ALWAYS_EAGER off, on a broker that refuses connections (a real one, on
a closed port) or a stand-in connection and ping; the real broker and worker are
`make prod-smoke`'s (ops/prod_smoke.py).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

import pytest
from django.db import OperationalError, connection

from accounting.services.cycles import cycle_run
from fairshare_site import health
from fairshare_site.celery import app
from fairshare_site.health import (
    EAGER,
    beat_health,
    broker_health,
    database_health,
    worker_health,
)
from tests.accounting.services.test_cycles import site

pytestmark = pytest.mark.django_db

CLOSED_PORT = "redis://127.0.0.1:1/0"  # nothing listens on port 1: refused at once
BROKER_BOUND = 1.5  # seconds: no retries, where Celery's own connection retries for minutes
NOW = datetime(2026, 3, 1, 8, 47, tzinfo=UTC)  # in the 8:40 slot of a 10-minute period


class StandInBroker:
    """What the checks use of a kombu connection, connecting at once."""

    transport_cls = "redis"

    def __enter__(self) -> StandInBroker:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None

    def ensure_connection(self, **options: Any) -> StandInBroker:
        return self


@pytest.fixture
def broker_set(settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = CLOSED_PORT


@pytest.fixture
def broker_up(broker_set: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "_broker_connection", StandInBroker)


def pinged(answers: list[dict[str, Any]]) -> Any:
    def ping(**options: Any) -> list[dict[str, Any]]:
        assert options["limit"] == 1  # the first answer is enough
        return answers

    return ping


def test_the_database_is_healthy_when_it_answers_a_query() -> None:
    check = database_health()
    assert check.healthy
    assert check.document["status"] == "ok"
    assert check.document["vendor"] == connection.vendor


def test_the_database_is_failing_when_the_query_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> Any:
        raise OperationalError('connection to server at "db.example.org" failed')

    monkeypatch.setattr(connection, "cursor", refused)
    check = database_health()
    assert not check.healthy
    assert check.document == {"status": "failing", "detail": "the database did not answer"}


def test_the_beat_is_failing_when_the_database_is(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(**_: Any) -> Any:
        raise OperationalError("the database system is shutting down")

    monkeypatch.setattr(health, "cycle_lags_get", refused)
    check = beat_health(now=NOW)
    assert not check.healthy
    assert check.document == {"status": "failing", "detail": "the database did not answer"}


def test_without_a_broker_the_broker_and_the_worker_are_the_web_process() -> None:
    for check in (broker_health(), worker_health()):
        assert check.healthy
        assert check.document == {"status": "ok", "detail": EAGER}


def test_the_broker_is_healthy_when_it_takes_a_connection(broker_up: None) -> None:
    check = broker_health()
    assert check.healthy
    assert check.document["transport"] == "redis"


def test_a_broker_refusing_connections_is_failing_at_once(broker_set: None) -> None:
    started = time.monotonic()
    check = broker_health()
    assert time.monotonic() - started < BROKER_BOUND
    assert not check.healthy
    # Neither the address nor the error's text: those are in the log.
    assert check.document == {"status": "failing", "detail": "the broker did not answer"}


def test_a_worker_answering_the_ping_is_healthy(
    broker_up: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.control, "ping", pinged([{"celery@node1": {"ok": "pong"}}]))
    check = worker_health()
    assert check.healthy
    assert check.document["detail"] == "a worker answered a ping"
    assert "node1" not in json.dumps(check.document)  # no host names


def test_no_worker_answering_the_ping_is_failing(
    broker_up: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.control, "ping", pinged([]))
    check = worker_health()
    assert not check.healthy
    assert check.document == {"status": "failing", "detail": "no worker answered a ping in 1 s"}


def test_the_worker_is_failing_when_the_broker_is(broker_set: None) -> None:
    check = worker_health()
    assert not check.healthy
    assert check.document == {"status": "failing", "detail": "the broker did not answer"}


def test_the_beat_is_healthy_while_every_cluster_cycles_within_three_periods() -> None:
    assert beat_health(now=NOW).document == {"status": "ok", "clusters": []}  # none to cycle
    cycle_run(cluster=site(), now=datetime(2026, 3, 1, 8, 10, tzinfo=UTC))
    check = beat_health(now=NOW)
    assert check.healthy
    assert check.document["clusters"] == [
        {
            "cluster": "site",
            "period_seconds": 600.0,
            "last_cycle": "2026-03-01T08:10:00+00:00",
            "behind_seconds": 1800.0,
            "late_after_seconds": 1800.0,
        }
    ]


def test_the_beat_is_failing_when_a_cluster_is_more_than_three_periods_behind() -> None:
    cycle_run(cluster=site(), now=datetime(2026, 3, 1, 8, 0, tzinfo=UTC))
    check = beat_health(now=NOW)
    assert not check.healthy
    assert check.document["detail"] == "cycles late: site"
    assert check.document["clusters"][0]["behind_seconds"] == 2400.0


def test_a_period_shorter_than_the_beat_tick_is_late_after_three_ticks() -> None:
    cluster = site()
    cluster.scheduler_iteration = timedelta(seconds=20)
    cluster.save(update_fields=["scheduler_iteration"])
    cycle_run(cluster=cluster, now=NOW - timedelta(seconds=180))
    assert beat_health(now=NOW).healthy  # 180 s behind: three minutes, not nine periods
    assert not beat_health(now=NOW + timedelta(seconds=20)).healthy
