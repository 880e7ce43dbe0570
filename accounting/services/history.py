"""Every node's numbers kept after each cycle, and thinned as they age."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction

from accounting.models import (
    Cycle,
    NodeHistory,
)
from accounting.services.priorities import priority_history_thin
from trees.engine.cycle import kept_instants
from trees.models import Cluster, Node

# What PBS's and Slurm's history holds (a replay writes these), then Accelerator's fields.
HISTORY_COLUMNS = (
    "node_id", "at", "usage", "fairshare_perc", "fairshare_tree_usage", "fairshare_factor",
    "level_fs", "fairshare_rank",
)  # fmt: skip
ACCELERATOR_HISTORY_COLUMNS = (
    "fs_target",
    "fs_running",
    "fs_running_count",
    "fs_history",
    "fs_rank",
)


# The roll-up: every cycle for a day, the last of each hour for a week, the last of each day.
HISTORY_EVERY_CYCLE = timedelta(days=1)


HISTORY_HOURLY = timedelta(days=7)


HISTORY_WINDOWS = (int(HISTORY_EVERY_CYCLE.total_seconds()), int(HISTORY_HOURLY.total_seconds()))


def history_write(cluster: Cluster, at: datetime) -> None:
    """Every node's numbers, as just stored, as history at `at` (copied in the database)."""
    quote = connection.ops.quote_name
    columns = (*HISTORY_COLUMNS, *ACCELERATOR_HISTORY_COLUMNS)  # a node's own column names
    values = ", ".join(quote(column) for column in columns[2:])
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(NodeHistory._meta.db_table)}"
            f" ({', '.join(quote(column) for column in columns)})"
            f" SELECT {quote('id')}, %s, {values} FROM {quote(Node._meta.db_table)}"
            f" WHERE {quote('cluster_id')} = %s",
            [connection.ops.adapt_datetimefield_value(at), cluster.pk],
        )


@dataclass(frozen=True)
class RollUp:
    cycles_thinned: int  # cycles whose history rows were removed
    rows_removed: int


def history_roll_up(*, cluster: Cluster, now: datetime) -> RollUp:
    """Thin the cluster's history: keep every cycle of the last day, the last cycle of each
    hour of the last week and the last cycle of each day before that (UTC hours and days).
    """
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        kept = Cycle.objects.filter(
            cluster=cluster, history_kept=True, at__lt=now - HISTORY_EVERY_CYCLE
        )
        times = {int(at.timestamp()): at for at in kept.values_list("at", flat=True)}
        keep = kept_instants(times, int(now.timestamp()), *HISTORY_WINDOWS)
        thinned = sorted(at for moment, at in times.items() if moment not in keep)
        removed = 0
        for start in range(0, len(thinned), 500):
            chunk = thinned[start : start + 500]
            removed += NodeHistory.objects.filter(node__cluster=cluster, at__in=chunk).delete()[0]
            Cycle.objects.filter(cluster=cluster, at__in=chunk).update(history_kept=False)
        removed += priority_history_thin(cluster, thinned, now)
    return RollUp(len(thinned), removed)
