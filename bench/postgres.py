"""The benchmarks' own PostgreSQL databases, on the server BENCH_DATABASE_URL names (by default
the local one), each made afresh and migrated before a run."""

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def database_url(name: str) -> str:
    """The URL of the database NAME on the benchmarks' server."""
    return SERVER_URL.rsplit("/", 1)[0] + "/" + name


def fresh_database(name: str) -> None:
    """Drop the database NAME, create it again and migrate it."""
    import psycopg

    with psycopg.connect(SERVER_URL.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name}")
        c.execute(f"CREATE DATABASE {name}")
    env = {**os.environ, "DATABASE_URL": database_url(name)}
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--no-input", "-v0"], check=True, env=env)


def run_on_fresh_database(script: str, name: str, child: Callable[[], None]) -> None:
    """SCRIPT's entry: make the database NAME afresh, then run CHILD in a new process of SCRIPT
    (`--child`), whose Django settings read that database's URL."""
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        fresh_database(name)
        subprocess.run([sys.executable, script, "--child"], check=True)


def table_bytes(cursor: Any, table: str) -> int:
    """The table's size with its indexes and TOAST, its partitions' summed if it has some."""
    cursor.execute(
        "SELECT pg_total_relation_size(%s::regclass) + COALESCE((SELECT"
        " sum(pg_total_relation_size(relid)) FROM pg_partition_tree(%s::regclass)), 0)",
        [table, table],
    )
    return int(cursor.fetchone()[0])


def engine_tree_stored(
    now: datetime, *, name: str = "bench", leaves: int = 100_000, seed: int = 2026
) -> None:
    """The engine benchmark's tree and usage (bench/engine.py; `leaves` users) stored as the
    cluster `name`, last decayed an hour before `now`. Call it in a child, after
    django.setup()."""
    from bench.engine import synthetic_site
    from trees.formats.usage_file import UsageFile
    from trees.services.pbs import pbs_usage_import, resource_group_import

    groups, records = synthetic_site(seed, leaves=leaves)
    resource_group_import(cluster_name=name, groups=groups, pbs_messages=[], source="bench")
    pbs_usage_import(
        cluster_name=name,
        usage=UsageFile(
            last_decay=int(now.timestamp()) - 3600,
            records=records,
            numbers=list(range(1, len(records) + 1)),
        ),
    )
