"""The health endpoints: /healthz/db, /healthz/broker, /healthz/worker, /healthz/beat.

For a site's monitoring, without a login: 200 when the part is healthy, 503 when not, with
the check's JSON document either way (fairshare_site/health.py). Never cached: each poll is a
fresh look. (/healthz itself, that the application answers, is trees' and reads nothing.)
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_safe

from fairshare_site.health import (
    Health,
    beat_health,
    broker_health,
    database_health,
    worker_health,
)


def _answer(health: Health) -> HttpResponse:
    response = JsonResponse(health.document, status=200 if health.healthy else 503)
    response["Cache-Control"] = "no-store"
    return response


@login_not_required
@require_safe
def database(request: HttpRequest) -> HttpResponse:
    """The database answers a query."""
    return _answer(database_health())


@login_not_required
@require_safe
def broker(request: HttpRequest) -> HttpResponse:
    """The Celery broker takes a connection."""
    return _answer(broker_health())


@login_not_required
@require_safe
def worker(request: HttpRequest) -> HttpResponse:
    """A Celery worker answers a ping."""
    return _answer(worker_health())


@login_not_required
@require_safe
def beat(request: HttpRequest) -> HttpResponse:
    """Every cluster's cycles keep up with their slots."""
    return _answer(beat_health(now=timezone.now()))
