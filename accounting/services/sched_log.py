"""A PBS scheduler's log imported: its cycles, which the recording of usage runs on where the
log covers, and what each said of the jobs it sorted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from accounting.models import SchedulerCycle
from accounting.parsers.sched_log import SchedLog
from trees.engine.times import epoch_time
from trees.models import Cluster

ZERO_SHARES = "zero shares"
UNDER_THRESHOLD = "under job_sort_formula_threshold"


@dataclass(frozen=True)
class SchedLogImport:
    cycles: int
    replaced: int  # cycles of an earlier import of the same span
    first: datetime
    last: datetime
    formula_values: int


def sched_log_import(*, cluster: Cluster, log: SchedLog, source_file: str) -> SchedLogImport:
    """Store the log's cycles for the cluster, in place of those stored for its span (first
    to last cycle start): importing a log again, or a longer one, changes nothing twice."""
    if not log.cycles:
        raise ValueError(
            "no whole scheduling cycle (Starting Scheduling Cycle ... Leaving Scheduling"
            " Cycle): not a pbs_sched log, or one that ends before its first cycle does"
        )
    rows = []
    for cycle in log.cycles:
        left_out = dict.fromkeys(cycle.zero_shares, ZERO_SHARES)
        left_out.update(dict.fromkeys(cycle.under_threshold, UNDER_THRESHOLD))
        rows.append(
            SchedulerCycle(
                cluster=cluster,
                at=epoch_time(cycle.start),
                ended_at=epoch_time(cycle.end),
                formula=cycle.formula,
                considered=cycle.considered,
                left_out=left_out,
                decays=cycle.decays,
                source_file=source_file[:1024],
                source_line=cycle.line,
            )
        )
    first, last = rows[0].at, rows[-1].at
    with transaction.atomic():
        span = SchedulerCycle.objects.filter(cluster=cluster, at__gte=first, at__lte=last)
        replaced, _ = span.delete()
        SchedulerCycle.objects.bulk_create(rows, batch_size=2000)
    return SchedLogImport(
        cycles=len(rows),
        replaced=replaced,
        first=first,
        last=last,
        formula_values=sum(len(row.formula) for row in rows),
    )
