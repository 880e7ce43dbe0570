"""The health endpoints answer monitoring without a login: 200 healthy, 503 failing, JSON,
never cached. (What each check finds: test_health.py.)"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounting.selectors import cycle_slot_of
from accounting.services.cycles import cycle_run
from fairshare_site import health_views
from fairshare_site.health import Health
from tests.accounting.services.test_cycles import site

pytestmark = pytest.mark.django_db

CHECKS = {
    "/healthz/db": "database_health",
    "/healthz/broker": "broker_health",
    "/healthz/worker": "worker_health",
    "/healthz/beat": "beat_health",
}


@pytest.mark.parametrize("path", sorted(CHECKS))
def test_a_healthy_part_answers_200_with_its_document_to_anyone(path: str) -> None:
    answer = Client().get(path)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json"
    assert answer["Cache-Control"] == "no-store"
    assert answer.json()["status"] == "ok"


@pytest.mark.parametrize("path", sorted(CHECKS))
def test_a_failing_part_answers_503_with_its_document(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(**_: Any) -> Health:
        return Health(False, {"status": "failing", "detail": "why"})

    monkeypatch.setattr(health_views, CHECKS[path], failing)
    answer = Client().get(path)
    assert answer.status_code == 503
    assert answer.json() == {"status": "failing", "detail": "why"}
    assert answer["Cache-Control"] == "no-store"


@pytest.mark.parametrize("path", sorted(CHECKS))
def test_the_endpoints_only_read(path: str) -> None:
    assert Client().post(path).status_code == 405
    assert Client().head(path).status_code in (200, 503)


def test_the_beat_endpoint_reads_the_cycles_now() -> None:
    cluster = site()  # a cycle every 10 minutes
    slot = cycle_slot_of(cluster, timezone.now())
    cycle_run(cluster=cluster, now=slot - timedelta(minutes=40))
    assert Client().get("/healthz/beat").status_code == 503
    cycle_run(cluster=cluster, now=slot)
    answer = Client().get("/healthz/beat")
    assert answer.status_code == 200
    assert answer.json()["clusters"][0]["behind_seconds"] == 0.0
