"""On PostgreSQL the history is a table partitioned by month (migration 0013): each month's rows
in its own partition, made ahead and as rows come, dropped whole by the retention."""

import importlib
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from django.db import IntegrityError, connection, transaction

from accounting.models import Cycle, NodeHistory
from accounting.services.cycles import cycle_run
from accounting.services.history import (
    DEFAULT_PARTITION,
    history_expire,
    history_partition_name,
    history_partitions_get,
    history_partitions_make,
    history_upkeep,
    month_after,
    month_of,
)
from accounting.services.replay import replay
from tests.accounting.services.test_cycles import DAY, T0, at, site, twin_sites
from trees.models import Node

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("accounting.migrations.0013_node_history_partitioned")


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("partitions are PostgreSQL's: run with DATABASE_URL=postgres://...")


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def rows_by_partition() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text, count(*) FROM accounting_nodehistory GROUP BY 1"
        )
        return dict(cursor.fetchall())


def bounds(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = %s", [name]
        )
        return str(cursor.fetchone()[0])


def test_the_history_is_partitioned_by_range_of_its_time() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT partstrat, pg_get_partkeydef(partrelid) FROM pg_partitioned_table"
            " WHERE partrelid = 'accounting_nodehistory'::regclass"
        )
        assert cursor.fetchone() == ("r", "RANGE (at)")
    # The migration made this month's and next month's partitions, and the default.
    this = month_of(datetime.now(UTC))
    partitions = history_partitions_get()
    assert {history_partition_name(this), history_partition_name(month_after(this))} <= set(
        partitions
    )
    assert DEFAULT_PARTITION in partitions
    assert bounds(DEFAULT_PARTITION) == "DEFAULT"


def test_a_cycles_rows_land_in_the_partition_of_its_month() -> None:
    cluster = site()
    nodes = Node.objects.filter(cluster=cluster).count()
    cycle_run(cluster=cluster, now=utc(2030, 1, 31, 23, 50))
    cycle_run(cluster=cluster, now=utc(2030, 2, 1, 0, 0))

    assert rows_by_partition() == {
        "accounting_nodehistory_y2030m01": nodes,
        "accounting_nodehistory_y2030m02": nodes,
    }
    assert bounds("accounting_nodehistory_y2030m01") == (
        "FOR VALUES FROM ('2030-01-01 00:00:00+00') TO ('2030-02-01 00:00:00+00')"
    )
    # Made with the table's keys: a cycle's row is there once.
    row = NodeHistory.objects.filter(at=utc(2030, 2, 1)).values()[0]
    with pytest.raises(IntegrityError), transaction.atomic():
        NodeHistory.objects.bulk_create([NodeHistory(**row)])


def test_a_replays_rows_land_in_the_partitions_of_their_months() -> None:
    _, replayed = twin_sites()
    replay(cluster=replayed, start=at(T0), until=at(T0 + 2 * DAY), step=timedelta(hours=1))
    assert set(rows_by_partition()) == {"accounting_nodehistory_y2026m03"}


def test_rows_the_default_partition_caught_move_into_their_months_partition() -> None:
    cluster = site()
    node = Node.objects.filter(cluster=cluster).first()
    values = {"usage": 1.0, "fairshare_perc": 0.5, "fairshare_tree_usage": 0.5}
    NodeHistory.objects.bulk_create(
        NodeHistory(node=node, at=moment, fairshare_factor=0.5, **values)
        for moment in (utc(2031, 5, 1), utc(2031, 5, 31, 23, 59), utc(2031, 6, 1))
    )
    assert rows_by_partition() == {DEFAULT_PARTITION: 3}

    made = history_partitions_make(first=utc(2031, 5, 10), last=utc(2031, 5, 20))

    assert made == ["accounting_nodehistory_y2031m05"]
    assert rows_by_partition() == {"accounting_nodehistory_y2031m05": 2, DEFAULT_PARTITION: 1}
    assert history_partitions_make(first=utc(2031, 5, 10), last=utc(2031, 5, 20)) == []


def test_the_daily_upkeep_makes_next_months_partition_ahead() -> None:
    upkeep = history_upkeep(now=utc(2032, 12, 31, 23))
    assert upkeep.partitions_made == [
        "accounting_nodehistory_y2032m12",
        "accounting_nodehistory_y2033m01",
    ]
    assert history_upkeep(now=utc(2032, 12, 31, 23, 30)).partitions_made == []
    # January's was made ahead: its first day's upkeep makes February's.
    assert history_upkeep(now=utc(2033, 1, 1, 1)).partitions_made == [
        "accounting_nodehistory_y2033m02"
    ]


def test_the_retention_detaches_and_drops_whole_months() -> None:
    cluster = site()
    nodes = Node.objects.filter(cluster=cluster).count()
    for moment in (utc(2030, 1, 10), utc(2030, 2, 10), utc(2030, 3, 10)):
        cycle_run(cluster=cluster, now=moment)

    # 30 days before 15 March is 13 February: January has passed, February has not entirely.
    expired = history_expire(now=utc(2030, 3, 15), days=30)

    assert "accounting_nodehistory_y2030m01" in expired.partitions_dropped
    assert all(
        name < "accounting_nodehistory_y2030m02" for name in expired.partitions_dropped
    )  # the migration's months of 2026 went too
    assert expired.rows_removed == 0  # none deleted one by one
    assert rows_by_partition() == {
        "accounting_nodehistory_y2030m02": nodes,
        "accounting_nodehistory_y2030m03": nodes,
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('accounting_nodehistory_y2030m01')")
        assert cursor.fetchone() == (None,)  # dropped, not left detached
    kept = dict(Cycle.objects.values_list("at", "history_kept"))
    assert kept == {utc(2030, 1, 10): False, utc(2030, 2, 10): True, utc(2030, 3, 10): True}


def test_the_migration_partitions_a_plain_history_keeping_its_rows() -> None:
    editor = SimpleNamespace(connection=connection)
    MIGRATION.unpartition(None, editor)  # as the table was before the migration
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE relname = 'accounting_nodehistory'")
        assert cursor.fetchone() == ("r",)
    cluster = site()
    nodes = Node.objects.filter(cluster=cluster).count()
    for moment in (utc(2024, 12, 31, 23, 50), utc(2025, 1, 1), utc(2025, 3, 1)):
        cycle_run(cluster=cluster, now=moment)
    before = sorted(NodeHistory.objects.values_list("node_id", "at", "usage", "fairshare_perc"))

    MIGRATION.partition(None, editor)

    assert sorted(NodeHistory.objects.values_list("node_id", "at", "usage", "fairshare_perc")) == (
        before
    )
    this = month_of(datetime.now(UTC))
    assert rows_by_partition() == {
        "accounting_nodehistory_y2024m12": nodes,
        "accounting_nodehistory_y2025m01": nodes,
        "accounting_nodehistory_y2025m03": nodes,
    }
    assert set(history_partitions_get()) == {
        "accounting_nodehistory_y2024m12",
        "accounting_nodehistory_y2025m01",
        "accounting_nodehistory_y2025m03",
        history_partition_name(this),
        history_partition_name(month_after(this)),
        DEFAULT_PARTITION,
    }
    with connection.cursor() as cursor:  # the keys and indexes, under their names
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'accounting_nodehistory'"
            " ORDER BY indexname"
        )
        names = [row[0] for row in cursor.fetchall()]
    assert names[0].startswith("accounting_nodehistory_node_id_")
    assert names[1] == "accounting_nodehistory_pkey"
