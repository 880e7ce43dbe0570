"""On PostgreSQL, accounting_nodehistory becomes a table partitioned by range of `at`: a
partition per UTC month (accounting_nodehistory_yYYYYmMM) for every month its rows fall in and
for the current and next months, and a DEFAULT partition for rows of a month without one
(docs/history.md). The rows are copied into the new table, the old one dropped and the new one
takes its name, keys and indexes: the primary key (node_id, at) holds the partition key, as
PostgreSQL requires. The model does not change, and other databases are left as they are.

Reversed, the history goes back into one plain table.
"""

import datetime
import re

from django.db import migrations

TABLE = "accounting_nodehistory"
ASIDE = "accounting_nodehistory_aside"


def _months(cursor):
    """The UTC months that hold rows of TABLE, and the current and next months."""
    cursor.execute(
        f"SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC')::date FROM {ASIDE}"
    )
    months = {row[0] for row in cursor.fetchall()}
    today = datetime.datetime.now(datetime.UTC).date()
    this = today.replace(day=1)
    return sorted(months | {this, _month_after(this)})


def _month_after(month):
    return datetime.date(month.year + month.month // 12, month.month % 12 + 1, 1)


def _partitioned(cursor):
    cursor.execute(
        "SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [TABLE]
    )
    return cursor.fetchone() is not None


def _keys_and_indexes(cursor, table):
    """The statements that make the table's primary and unique keys and its other indexes
    again, on TABLE, under the same names."""
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = to_regclass(%s) AND contype IN ('p', 'u') ORDER BY conname",
        [table],
    )
    keys = cursor.fetchall()
    cursor.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname",
        [table],
    )
    named = {name for name, _ in keys}
    on_table = re.compile(rf" ON (ONLY )?(\w+\.)?{table} ")
    return [f"ALTER TABLE {TABLE} ADD CONSTRAINT {name} {definition}" for name, definition in keys] + [
        on_table.sub(f" ON {TABLE} ", definition)
        for name, definition in cursor.fetchall()
        if name not in named
    ]


def _moved(cursor, partitioned):
    """TABLE's rows moved into a new TABLE, partitioned by month or not: the rows are loaded
    before the keys and indexes are made, which is faster than keeping them up row by row."""
    cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {ASIDE}")
    cursor.execute(
        f"CREATE TABLE {TABLE} (LIKE {ASIDE} INCLUDING ALL EXCLUDING INDEXES)"
        + (" PARTITION BY RANGE (at)" if partitioned else "")
    )
    if partitioned:
        for month in _months(cursor):
            following = _month_after(month)
            cursor.execute(
                f"CREATE TABLE {TABLE}_y{month:%Y}m{month:%m} PARTITION OF {TABLE}"
                f" FOR VALUES FROM ('{month.isoformat()} 00:00:00+00')"
                f" TO ('{following.isoformat()} 00:00:00+00')"
            )
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")
    cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM {ASIDE}")
    remade = _keys_and_indexes(cursor, ASIDE)
    cursor.execute(f"DROP TABLE {ASIDE}")  # its partitions too, when it had some
    for statement in remade:
        cursor.execute(statement)
    cursor.execute(f"ANALYZE {TABLE}")


def partition(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if not _partitioned(cursor):
            _moved(cursor, partitioned=True)


def unpartition(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        if _partitioned(cursor):
            _moved(cursor, partitioned=False)


class Migration(migrations.Migration):
    dependencies = [
        ("accounting", "0012_usage_recording"),
    ]

    operations = [
        migrations.RunPython(partition, unpartition),
    ]
