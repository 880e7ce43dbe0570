"""The queued jobs' priorities kept after each cycle, and thinned as node history is."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection

from accounting.models import Job, JobPriorityHistory
from accounting.parsers.records import JobState
from accounting.priorities import queue_order_get
from trees.bulk import rows_insert
from trees.engine.times import epoch_microseconds
from trees.models import Cluster

# A job's priority history stays this long after it stopped waiting.
KEPT_AFTER_WAIT = timedelta(days=7)


PRIORITY_COLUMNS = ["cluster_id", "job_id", "at", "priority", "position", "queue_position"]


def priority_history_write(cluster: Cluster, at: datetime) -> int:
    """Each job waiting at `at` (queued by then, not held) with its priority and place, as
    the cycle at `at` computed them; how many rows."""
    order = queue_order_get(cluster=cluster, at=at)
    at_us = epoch_microseconds(at)
    moment = connection.ops.adapt_datetimefield_value(at)
    ordered = order.ordered  # read as columns: no job's terms are needed
    rows = [
        (cluster.pk, job_id, moment, priority, position, queue_position)
        for position, (job_id, priority, queue_position, submitted_us) in enumerate(
            zip(ordered.job_ids, ordered.priorities, ordered.queue_positions,
                ordered.submitted_us, strict=True),
            start=1,
        )
        if submitted_us is None or submitted_us <= at_us
    ]  # fmt: skip
    rows_insert(JobPriorityHistory, PRIORITY_COLUMNS, rows)  # a big queue's rows in one COPY
    return len(rows)


def priority_history_thin(cluster: Cluster, thinned: list[datetime]) -> int:
    """Remove the rows of the cycles the roll-up thinned; how many went."""
    removed = 0
    for start in range(0, len(thinned), 500):
        chunk = thinned[start : start + 500]
        removed += JobPriorityHistory.objects.filter(cluster=cluster, at__in=chunk).delete()[0]
    return removed


def priority_history_forget(cluster: Cluster, now: datetime) -> int:
    """Remove the rows of jobs that stopped waiting more than KEPT_AFTER_WAIT ago; how many
    went."""
    removed = 0
    waiting = set(
        Job.objects.filter(cluster=cluster, state=JobState.QUEUED).values_list("job_id", flat=True)
    )
    old = (
        JobPriorityHistory.objects.filter(cluster=cluster, at__lt=now - KEPT_AFTER_WAIT)
        .values_list("job_id", flat=True)
        .distinct()
    )
    gone = [job_id for job_id in old if job_id not in waiting]
    for start in range(0, len(gone), 500):
        removed += JobPriorityHistory.objects.filter(
            cluster=cluster, job_id__in=gone[start : start + 500], at__lt=now - KEPT_AFTER_WAIT
        ).delete()[0]
    return removed
