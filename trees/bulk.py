"""Many rows written or read at once: what a cycle does to every node of a 100,000-node tree.

On PostgreSQL rows go in by binary COPY; an update COPYs the new values into a temporary table
and applies them with one UPDATE ... FROM, where an UPDATE per row would be a round trip per
node. Other databases get executemany. Values must be ready for the database, of the
columns' types (plain numbers, strings, None, aware datetimes): no field conversion is applied.

Read back, a time is best an integer (`EpochMicroseconds`): the database driver parses a
timestamp into a datetime at a few microseconds a value, half a second for 100,000 rows' two.

The rows of such a tree are millions of Python objects, made and dropped in one go:
`collector_paused` keeps the cyclic garbage collector off while they are.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, models
from django.db.models import BigIntegerField, Func

__all__ = ["EpochMicroseconds", "collector_paused", "rows_insert", "rows_read", "rows_update"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (Mercurial's util.nogc does the same).

    CPython starts a collection every 700 container objects made, and the full ones go over
    every object alive: a 100,000-node cycle makes millions, none of them in a reference
    cycle, so every one of those passes is wasted. What it would have freed is freed by the
    first collection after.
    """
    if not gc.isenabled():  # paused already, by the caller or by another thread
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class EpochMicroseconds(Func):
    """A timestamp as whole microseconds since the epoch, UTC, computed by the database (NULL
    stays NULL): exact, where a datetime's timestamp() is a float."""

    arity = 1
    output_field = BigIntegerField()
    # Both databases give an int already: no converter called per row (Django's would be int()).
    convert_value = staticmethod(Func._convert_value_noop)  # type: ignore[attr-defined]

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # EXTRACT gives an exact numeric since PostgreSQL 14.
        template = "(EXTRACT(EPOCH FROM %(expressions)s) * 1000000)::bigint"
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # Django stores `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC: the seconds, then the digits.
        # strftime's %s is written %%%%s: once for this template, once for the placeholders.
        template = (
            "(CAST(strftime('%%%%s', %(expressions)s) AS INTEGER) * 1000000"
            " + CAST(substr(%(expressions)s || '.000000', 21, 6) AS INTEGER))"
        )
        sql, params = self.as_sql(compiler, connection, template=template, **extra)
        return sql, (*params, *params)  # the expression is written twice


def rows_read(query: models.QuerySet[Any]) -> list[tuple[Any, ...]]:
    """A values_list query's rows fetched at once and as the database driver gives them: no
    100-row chunks, no field converter (for columns of numbers and text, which need none)."""
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


def rows_insert(
    model: type[models.Model], columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """INSERT `rows`, each the values of `columns` (database column names), into the table."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    names = ", ".join(quote(column) for column in columns)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            marks = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
            return
        _copy(cursor, table, names, rows)


def rows_update(
    model: type[models.Model], columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Set `columns` (database column names) of the rows whose primary key is each row's first
    value to the values that follow it."""
    if not rows:
        return
    meta = model._meta
    quote = connection.ops.quote_name
    table, key = quote(meta.db_table), quote(meta.pk.column)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            assignments = ", ".join(f"{quote(column)} = %s" for column in columns)
            sql = f"UPDATE {table} SET {assignments} WHERE {key} = %s"
            cursor.executemany(sql, [(*row[1:], row[0]) for row in rows])
            return
        names = ", ".join(quote(column) for column in (meta.pk.column, *columns))
        # The new values, typed as the table's columns, in a table only this session sees.
        cursor.execute("DROP TABLE IF EXISTS pg_temp.bulk_values")
        cursor.execute(
            f"CREATE TEMPORARY TABLE bulk_values AS SELECT {names} FROM {table} WITH NO DATA"
        )
        _copy(cursor, "bulk_values", names, rows)
        assignments = ", ".join(f"{quote(column)} = v.{quote(column)}" for column in columns)
        cursor.execute(
            f"UPDATE {table} SET {assignments} FROM bulk_values v WHERE {table}.{key} = v.{key}"
        )
        cursor.execute("DROP TABLE bulk_values")


def _copy(cursor: Any, table: str, names: str, rows: Sequence[Sequence[Any]]) -> None:
    """COPY the rows into the table's columns `names` in PostgreSQL's binary format.

    Each value is packed as its column's type, told to psycopg once, rather than formatted as
    text with its type looked up anew for every value.
    """
    cursor.execute(f"SELECT {names} FROM {table} LIMIT 0")
    types = [column.type_code for column in cursor.description]
    with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)
