"""A heartbeat for work a worker runs: its row marked alive every WORK_HEARTBEAT_SECONDS, so
that the stalled-work sweep (accounting.services.stalled) can tell a worker gone from one
that is busy."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)


@contextmanager
def heartbeat(rows: QuerySet[Any]) -> Iterator[None]:
    """Set `heartbeat_at` of `rows` to the time, every WORK_HEARTBEAT_SECONDS, until the block
    ends. A thread of its own does it, on its own database connection: the work's transaction
    would hide a beat written on the work's connection until it commits (an upload's file, an
    ingestion's). `rows` says which rows are still this work's (a state, say), so a row taken
    over by the sweep is not beaten by a worker thought gone."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.WORK_HEARTBEAT_SECONDS):
                try:
                    rows.update(heartbeat_at=timezone.now())
                except DatabaseError:
                    # Tried again at the next beat; a database away for long is the sweep's.
                    logger.warning("heartbeat not written", exc_info=True)
        finally:
            connection.close()  # the thread's own (connections are per thread)

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
