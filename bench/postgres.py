"""The benchmarks' own PostgreSQL databases, on the server BENCH_DATABASE_URL names (by default
the local one), each made afresh and migrated before a run."""

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

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


def engine_tree_stored(now: datetime) -> None:
    """The engine benchmark's tree and usage (bench/engine.py) stored as the cluster `bench`,
    last decayed an hour before `now`. Call it in a child, after django.setup()."""
    from bench.engine import synthetic_site
    from trees.formats.usage_file import UsageFile
    from trees.services.pbs import pbs_usage_import, resource_group_import

    groups, records = synthetic_site()
    resource_group_import(cluster_name="bench", groups=groups, pbs_messages=[], source="bench")
    pbs_usage_import(
        cluster_name="bench",
        usage=UsageFile(
            last_decay=int(now.timestamp()) - 3600,
            records=records,
            numbers=list(range(1, len(records) + 1)),
        ),
    )
