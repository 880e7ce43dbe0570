"""Celery's task_failure signal, kept as TaskFailure rows (counted on /metrics).

Connected in AccountingConfig.ready(). Celery sends the signal in the worker once a task has
raised for good (a retry sends task_retry instead). Tasks run eagerly with their errors
propagated (the setup without a broker) raise into their caller instead: nothing is recorded.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounting.models import TaskFailure

logger = logging.getLogger(__name__)

ERROR_CHARS = 1000
TASK_CHARS = 255  # TaskFailure.task's max_length


def task_failure_record(
    sender: Any = None, exception: BaseException | None = None, **_: Any
) -> None:
    """Store the failure: the task's name, now, and the exception's class and message.

    Never raises: a failure being recorded is no reason to fail more (a database that is down
    is often why the task failed), so a write that fails is logged instead.
    """
    try:
        task = str(getattr(sender, "name", None) or sender or "unknown")[:TASK_CHARS]
        error = _described(exception)[:ERROR_CHARS]
        # A savepoint: when the task ran eagerly inside a transaction, a failed insert must
        # not break it.
        with transaction.atomic():
            TaskFailure.objects.create(task=task, failed_at=timezone.now(), error=error)
    except Exception:
        logger.exception("could not record the failure of task %r", sender)


def _described(exception: BaseException | None) -> str:
    if exception is None:
        return "unknown error"
    kind = type(exception)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    message = str(exception)
    return f"{name}: {message}" if message else name
