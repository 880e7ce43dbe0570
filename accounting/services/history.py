"""Every node's numbers kept after each cycle, thinned as they age, and on PostgreSQL kept in a
partition per month, dropped whole when the retention has passed (docs/history.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from accounting.models import (
    Cycle,
    NodeHistory,
)
from accounting.services.priorities import priority_history_forget, priority_history_thin
from trees.engine.cycle import kept_instants
from trees.models import Cluster, Node

# On PostgreSQL the table is partitioned by range of `at` (migration 0013): a partition per UTC
# month, HISTORY_TABLE_yYYYYmMM, and a DEFAULT one that takes the rows of a month without its
# own (a safety net: partitions are made ahead, and a month's rows there move into its partition
# when it is made).
HISTORY_TABLE = NodeHistory._meta.db_table
DEFAULT_PARTITION = f"{HISTORY_TABLE}_default"
_PARTITION_NAME = re.compile(rf"{HISTORY_TABLE}_y(\d{{4}})m(\d{{2}})")
# Partitions are made one maker at a time (two workers' first cycles of a month): this lock.
_PARTITIONS_LOCK = 720_241_303
# The months whose partition this process made or found, by database: a cycle looks once.
_months_known: set[tuple[str, date]] = set()

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


# Rows the roll-up removes in one transaction at most (a cycle's rows are never split): a big
# cluster's day is thinned in steps, each holding the cluster's row only for its own delete.
ROLL_UP_ROWS = 500_000


def history_roll_up(*, cluster: Cluster, now: datetime) -> RollUp:
    """Thin the cluster's history: keep every cycle of the last day, the last cycle of each
    hour of the last week and the last cycle of each day before that (UTC hours and days).

    Each step is a transaction holding the cluster's row, which works out again which cycles
    go (a replay may have rewritten the ledger in between) and removes those of the oldest
    that fit in ROLL_UP_ROWS rows: a roll-up stopped midway keeps what it did.
    """
    nodes = Node.objects.filter(cluster=cluster).count()
    step = max(1, min(500, ROLL_UP_ROWS // max(1, nodes)))
    cycles = removed = 0
    while True:
        with transaction.atomic():
            cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
            thinned = _history_thinned(cluster, now)[:step]
            if not thinned:
                break
            removed += NodeHistory.objects.filter(node__cluster=cluster, at__in=thinned).delete()[0]
            Cycle.objects.filter(cluster=cluster, at__in=thinned).update(history_kept=False)
            removed += priority_history_thin(cluster, thinned)
            cycles += len(thinned)
    with transaction.atomic():
        removed += priority_history_forget(cluster, now)
    return RollUp(cycles, removed)


def _history_thinned(cluster: Cluster, now: datetime) -> list[datetime]:
    """The cycles whose history the roll-up at `now` removes, oldest first."""
    kept = Cycle.objects.filter(
        cluster=cluster, history_kept=True, at__lt=now - HISTORY_EVERY_CYCLE
    )
    times = {int(at.timestamp()): at for at in kept.values_list("at", flat=True)}
    keep = kept_instants(times, int(now.timestamp()), *HISTORY_WINDOWS)
    return sorted(at for moment, at in times.items() if moment not in keep)


def month_of(moment: datetime) -> date:
    """The first day of the UTC month of `moment`."""
    utc = moment.astimezone(UTC)
    return date(utc.year, utc.month, 1)


def month_after(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def history_partition_name(month: date) -> str:
    return f"{HISTORY_TABLE}_y{month.year:04d}m{month.month:02d}"


def history_partitioned() -> bool:
    """Whether the history table is partitioned (PostgreSQL, from migration 0013 on)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [HISTORY_TABLE]
        )
        return cursor.fetchone() is not None


def history_partitions_make(*, first: datetime, last: datetime) -> list[str]:
    """Make the history's partitions of the UTC months from `first`'s to `last`'s that are
    missing, each taking the rows of its month the DEFAULT partition holds; the names made.
    Nothing where the history is not partitioned (SQLite).

    A partition is made apart and attached: ATTACH locks the table only against changes of
    its structure (SHARE UPDATE EXCLUSIVE), so cycles writing history go on, and waits only
    for the readers of the DEFAULT partition, which it locks while it checks it (CREATE TABLE
    ... PARTITION OF would wait for every cycle writing, and hold every reader behind it).
    """
    months = [month_of(first)]
    while months[-1] < month_of(last):
        months.append(month_after(months[-1]))
    database = str(connection.settings_dict["NAME"])
    unknown = [month for month in months if (database, month) not in _months_known]
    if not unknown or not history_partitioned():
        return []
    made = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PARTITIONS_LOCK])
        names = [history_partition_name(month) for month in unknown]
        cursor.execute("SELECT n FROM unnest(%s::text[]) n WHERE to_regclass(n) IS NULL", [names])
        missing = {row[0] for row in cursor.fetchall()}
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [DEFAULT_PARTITION])
        default = bool(cursor.fetchone()[0])
        for month in unknown:
            if history_partition_name(month) in missing:
                made.append(_partition_attach(cursor, month, default))
        known = {(database, month) for month in unknown}
        transaction.on_commit(lambda: _months_known.update(known))
    return made


def _partition_attach(cursor: Any, month: date, default: bool) -> str:
    quote = connection.ops.quote_name
    name = history_partition_name(month)
    table, partition, bounds = quote(HISTORY_TABLE), quote(name), quote(f"{name}_bounds")
    low, high = _bound(month), _bound(month_after(month))
    cursor.execute(
        f"CREATE TABLE {partition} (LIKE {table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
    )
    # Its range as a constraint, so that ATTACH need not read it to check its rows.
    cursor.execute(
        f"ALTER TABLE {partition} ADD CONSTRAINT {bounds} CHECK (at >= {low} AND at < {high})"
    )
    if default:
        cursor.execute(
            f"WITH moved AS (DELETE FROM {quote(DEFAULT_PARTITION)}"
            f" WHERE at >= {low} AND at < {high} RETURNING *)"
            f" INSERT INTO {partition} SELECT * FROM moved"
        )
    cursor.execute(
        f"ALTER TABLE {table} ATTACH PARTITION {partition} FOR VALUES FROM ({low}) TO ({high})"
    )
    cursor.execute(f"ALTER TABLE {partition} DROP CONSTRAINT {bounds}")
    return name


def _bound(month: date) -> str:
    return f"'{month.isoformat()} 00:00:00+00'"


def history_partitions_get() -> list[str]:
    """The history's partitions, by name; none where it is not partitioned."""
    if not history_partitioned():
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(%s) ORDER BY c.relname",
            [HISTORY_TABLE],
        )
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class Expired:
    partitions_dropped: list[str]
    rows_removed: int  # deleted one by one: SQLite's, and the DEFAULT partition's


def history_expire(*, now: datetime, days: int) -> Expired:
    """Remove the history of every UTC month that ended `days` or more before `now`; nothing
    when `days` is 0. A partitioned history detaches and drops those months' partitions (no
    row deleted, nothing left to vacuum) and deletes the DEFAULT partition's rows from before;
    elsewhere the rows are deleted. The cycles' ledger then says their history is gone."""
    if days <= 0:
        return Expired([], 0)
    kept = month_of(now - timedelta(days=days))  # the oldest month kept
    boundary = datetime(kept.year, kept.month, 1, tzinfo=UTC)
    dropped: list[str] = []
    with transaction.atomic():
        if history_partitioned():
            quote = connection.ops.quote_name
            with connection.cursor() as cursor:
                for name in history_partitions_get():
                    month = _partition_month(name)
                    if month is not None and month < kept:
                        cursor.execute(
                            f"ALTER TABLE {quote(HISTORY_TABLE)} DETACH PARTITION {quote(name)}"
                        )
                        cursor.execute(f"DROP TABLE {quote(name)}")
                        dropped.append(name)
                cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [DEFAULT_PARTITION])
                removed = 0
                if cursor.fetchone()[0]:
                    cursor.execute(
                        f"DELETE FROM {quote(DEFAULT_PARTITION)} WHERE at < %s", [boundary]
                    )
                    removed = cursor.rowcount
        else:
            removed = NodeHistory.objects.filter(at__lt=boundary).delete()[0]
        database = str(connection.settings_dict["NAME"])
        gone = {(database, _partition_month(name)) for name in dropped}
        transaction.on_commit(lambda: _months_known.difference_update(gone))
    # Apart: a ledger row locked by a replay must not hold the partitions' lock meanwhile.
    Cycle.objects.filter(at__lt=boundary, history_kept=True).update(history_kept=False)
    return Expired(dropped, removed)


def _partition_month(name: str) -> date | None:
    """The month of a partition named as history_partition_name names them; None for others."""
    found = _PARTITION_NAME.fullmatch(name)
    return None if found is None else date(int(found[1]), int(found[2]), 1)


@dataclass(frozen=True)
class Upkeep:
    partitions_made: list[str]
    partitions_dropped: list[str]
    rows_expired: int


def history_upkeep(*, now: datetime) -> Upkeep:
    """The history's daily care of the whole site, beside each cluster's roll-up: this month's
    and next month's partitions made if missing, the months past the retention
    (settings.HISTORY_RETENTION_DAYS) removed."""
    following = month_after(month_of(now))
    made = history_partitions_make(
        first=now, last=datetime(following.year, following.month, 1, tzinfo=UTC)
    )
    expired = history_expire(now=now, days=settings.HISTORY_RETENTION_DAYS)
    return Upkeep(made, expired.partitions_dropped, expired.rows_removed)
