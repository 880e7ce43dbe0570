"""The checks behind the health endpoints (docs/deploy.md, "Health and monitoring").

Each looks at one part of a running site, cheaply (a query, a connection, a ping), and says
whether it is healthy in a small JSON document. The documents go to anyone who asks, monitoring
without a login: they hold states and numbers only. Host names, addresses, URLs and error texts
go to the log, where a site's staff read them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection

from accounting.selectors import cycle_lags_get
from fairshare_site.celery import app

logger = logging.getLogger(__name__)

BROKER_SECONDS = 2.0  # to connect to the broker, and for each of its answers
PING_SECONDS = 1.0  # for the first worker to answer the ping
# The beat is late when a cluster's last cycle is this many cycle periods behind its slot. A
# healthy site is at most about one behind: the slot turns, the beat's next tick (each minute)
# queues its cycle, a worker runs it.
LATE_PERIODS = 3
EAGER = "no broker: tasks run in the web process"


@dataclass(frozen=True)
class Health:
    healthy: bool
    document: dict[str, Any]


def _health(healthy: bool, **document: Any) -> Health:
    return Health(healthy, {"status": "ok" if healthy else "failing", **document})


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def database_health() -> Health:
    """One query on the default database."""
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.warning("health: the database did not answer", exc_info=True)
        return _health(False, detail="the database did not answer")
    return _health(True, vendor=connection.vendor, ms=_ms(started))


def _broker_connection() -> Any:
    """A connection to CELERY_BROKER_URL that gives up in seconds, where Celery's own would
    retry for minutes."""
    options = {
        **app.conf.broker_transport_options,
        "socket_connect_timeout": BROKER_SECONDS,
        "socket_timeout": BROKER_SECONDS,
    }
    return app.connection_for_read(
        url=settings.CELERY_BROKER_URL,
        connect_timeout=BROKER_SECONDS,
        transport_options=options,
    )


@contextmanager
def _broker_reached() -> Iterator[Any]:
    """A connection to the broker, made at once (kombu connects lazily) or raising."""
    with _broker_connection() as broker:
        broker.ensure_connection(max_retries=0)
        yield broker


def broker_health() -> Health:
    """A connection to the broker (for Redis, a PING on connecting)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return _health(True, detail=EAGER)
    started = time.perf_counter()
    try:
        with _broker_reached() as broker:
            transport = broker.transport_cls
    except Exception:  # kombu's errors, and the transport library's beneath them
        logger.warning("health: the broker did not answer", exc_info=True)
        return _health(False, detail="the broker did not answer")
    return _health(True, transport=str(transport), ms=_ms(started))


def worker_health() -> Health:
    """A Celery ping, healthy when a worker answers within PING_SECONDS. A worker's pool
    answers while its processes run tasks; a worker started with the solo pool does not."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return _health(True, detail=EAGER)
    started = time.perf_counter()
    try:
        with _broker_reached() as broker:
            answers = app.control.ping(timeout=PING_SECONDS, limit=1, connection=broker)
    except Exception:
        logger.warning("health: the broker did not answer the ping", exc_info=True)
        return _health(False, detail="the broker did not answer")
    if not answers:
        return _health(False, detail=f"no worker answered a ping in {PING_SECONDS:g} s")
    return _health(True, detail="a worker answered a ping", ms=_ms(started))


def beat_health(*, now: datetime) -> Health:
    """How far behind its cycle slot each cycled cluster's last cycle is, against
    LATE_PERIODS periods (at least the beat's tick each)."""
    tick = timedelta(seconds=_beat_tick_seconds())
    try:
        lags = cycle_lags_get(now=now)
    except DatabaseError:
        logger.warning("health: the database did not answer", exc_info=True)
        return _health(False, detail="the database did not answer")
    clusters, late = [], []
    for lag in lags:
        limit = LATE_PERIODS * max(lag.period, tick)
        clusters.append(
            {
                "cluster": lag.cluster,
                "period_seconds": lag.period.total_seconds(),
                "last_cycle": lag.last_cycle.isoformat() if lag.last_cycle else None,
                "behind_seconds": lag.behind.total_seconds(),
                "late_after_seconds": limit.total_seconds(),
            }
        )
        if lag.behind > limit:
            late.append(lag.cluster)
    if late:
        return _health(False, detail=f"cycles late: {', '.join(late)}", clusters=clusters)
    return _health(True, clusters=clusters)


def _beat_tick_seconds() -> float:
    """How often the beat queues the due cycles (settings' beat schedule; a minute)."""
    schedule = settings.CELERY_BEAT_SCHEDULE.get("due-cycles", {}).get("schedule", 60.0)
    if isinstance(schedule, timedelta):
        return schedule.total_seconds()
    return float(schedule) if isinstance(schedule, int | float) else 60.0
