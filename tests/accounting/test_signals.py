"""Celery's task_failure signal stores a TaskFailure (accounting.signals), and never raises."""

import logging
from unittest import mock

import pytest
from celery.signals import task_failure
from django.db import OperationalError

from accounting.models import TaskFailure
from accounting.signals import task_failure_record
from accounting.tasks import run_cycle
from trees.models import Cluster

pytestmark = pytest.mark.django_db


def test_a_failure_signal_stores_the_task_and_the_error() -> None:
    task_failure.send(sender=run_cycle, task_id="1", exception=ValueError("boom"))
    (failure,) = TaskFailure.objects.all()
    assert failure.task == "accounting.tasks.run_cycle"
    assert failure.error == "ValueError: boom"


def test_a_task_that_raises_is_recorded() -> None:
    # As a worker runs it: Celery sends task_failure when it does not propagate the error
    # (eager tasks that propagate, the setup without a broker, raise into their caller).
    result = run_cycle.apply(args=[987_654], throw=False)
    assert isinstance(result.result, Cluster.DoesNotExist)
    (failure,) = TaskFailure.objects.all()
    assert failure.task == "accounting.tasks.run_cycle"
    assert failure.error.startswith("trees.models.Cluster.DoesNotExist: ")


def test_a_long_message_is_cut_to_a_thousand_characters() -> None:
    task_failure_record(sender=run_cycle, exception=RuntimeError("x" * 5000))
    (failure,) = TaskFailure.objects.all()
    assert len(failure.error) == 1000
    assert failure.error.startswith("RuntimeError: xxx")


def test_a_database_error_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    locked = OperationalError("database is locked")
    with (
        mock.patch.object(TaskFailure.objects, "create", side_effect=locked),
        caplog.at_level(logging.ERROR, logger="accounting.signals"),
    ):
        task_failure_record(sender=run_cycle, exception=ValueError("boom"))
    assert TaskFailure.objects.count() == 0
    (record,) = caplog.records
    assert "accounting.tasks.run_cycle" in record.getMessage()
    assert record.exc_info is not None
    # The savepoint was rolled back: the test's transaction still works.
    task_failure_record(sender=run_cycle, exception=ValueError("again"))
    assert TaskFailure.objects.count() == 1
