"""Cycles on PostgreSQL: one stored cycle of a 100,000-leaf tree with 10,000 running jobs, the
replay of the HPC2N trace, and the history a year of cycles leaves for 10,000 nodes.

Run with `make bench` (PostgreSQL at 127.0.0.1:5432, or BENCH_DATABASE_URL naming a server
whose `postgres` database may be used to create `fairshare_bench_cycle`). Prints figures;
asserts nothing. Targets (issue 5): a cycle in under 5 s; one node's one-year history read
in under 100 ms; a year of history for 10,000 nodes in under 1 GB. The replay speed is in
simulated days per second (the trace is in ../shared/data; without it that part is skipped).

Cycles run as a worker with a broker runs them: the listing of the tree for tree.json that
each store queues is another task (on an in-process broker here, which nothing consumes); it
is timed on its own after the cycles.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.postgres import (  # noqa: E402  (after the path)
    database_url,
    engine_tree_stored,
    run_on_fresh_database,
    table_bytes,
)

DATABASE = "fairshare_bench_cycle"
RUNNING = 10_000
HISTORY_NODES = 10_000
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
HPC2N = ROOT.parent / "shared" / "data" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"


def history_instants(end: datetime) -> list[datetime]:
    """The cycles a year of 10-minute cycles leaves after the roll-up, oldest first."""
    day, hour = timedelta(days=1), timedelta(hours=1)
    recent = [end - timedelta(minutes=10 * k) for k in range(144)]  # the last day
    hourly = [end - day - hour * k for k in range(6 * 24)]  # the rest of the week
    daily = [end - 7 * day - day * k for k in range(365 - 7)]
    return sorted(recent + hourly + daily)


def child() -> None:
    import django

    os.environ["DATABASE_URL"] = database_url(DATABASE)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    django.setup()
    from django.db import connection

    from fairshare_site.celery import app

    app.conf.update(task_always_eager=False, broker_url="memory://localhost/")

    from accounting.models import Job
    from accounting.selectors import node_history_get
    from accounting.services.cycles import cycle_run
    from accounting.services.history import history_partitions_make
    from trees.models import Cluster, Node
    from trees.services.tree_json import tree_json_write

    started = time.perf_counter()
    engine_tree_stored(NOW)
    cluster = Cluster.objects.get(name="bench")
    leaves = [f"u{n}" for n in range(100_000)]
    rng = random.Random(5)
    Job.objects.bulk_create(
        (
            Job(
                cluster=cluster,
                job_id=str(n),
                state="running",
                entity=rng.choice(leaves),
                ncpus=rng.choice((1, 4, 16, 128)),
                start=NOW - timedelta(seconds=rng.randrange(1, 86_400)),
                source_file="bench",
                source_line=n,
            )
            for n in range(RUNNING)
        ),
        batch_size=5000,
    )
    print(
        f"tree of {Node.objects.count():,} nodes, {RUNNING:,} running jobs in"
        f" {time.perf_counter() - started:.1f} s"
    )

    for label, moment in (("first cycle", NOW), ("next cycle ", NOW + timedelta(minutes=10))):
        started = time.perf_counter()
        cycle = cycle_run(cluster=cluster, now=moment)
        seconds = time.perf_counter() - started
        assert cycle is not None
        print(
            f"{label}: {cycle.jobs_accrued:,} runs accrued, {cycle.decays_applied} decays,"
            f" {Node.objects.count():,} nodes and history rows stored in {seconds:.2f} s"
            " (target: under 5 s)"
        )

    started = time.perf_counter()
    assert tree_json_write(cluster_id=cluster.pk)
    print(
        f"listing the tree for tree.json, the task each store queues:"
        f" {time.perf_counter() - started:.2f} s"
    )

    replay_hpc2n(connection)

    # A year of history for 10,000 nodes, as the roll-up leaves it.
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE accounting_nodehistory")
    nodes = list(Node.objects.order_by("id").values_list("id", flat=True)[:HISTORY_NODES])
    instants = history_instants(NOW)
    history_partitions_make(first=instants[0], last=instants[-1])  # as the cycles would have
    started = time.perf_counter()
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(
            "COPY accounting_nodehistory (node_id, at, usage, fairshare_perc,"
            " fairshare_tree_usage, fairshare_factor) FROM STDIN"
        ) as copy,
    ):
        for at in instants:  # written cycle by cycle, as the cycles write them
            for node in nodes:
                usage = rng.lognormvariate(12, 2.5)
                copy.write_row((node, at, usage, 0.001, usage / 1e9, 0.5))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE accounting_nodehistory")
        size = table_bytes(cursor, "accounting_nodehistory")
    rows = len(nodes) * len(instants)
    print(
        f"history: {len(nodes):,} nodes x {len(instants)} kept cycles = {rows:,} rows written"
        f" in {time.perf_counter() - started:.1f} s; {size / 2**20:,.0f} MiB with its index"
        f" ({size / rows:.0f} bytes a row; target: a year for 10,000 nodes under 1 GB)"
    )
    node = Node.objects.get(pk=nodes[len(nodes) // 2])
    since = NOW - timedelta(days=365)
    timings = []
    for _ in range(21):
        started = time.perf_counter()
        points = node_history_get(node=node, since=since)
        timings.append(time.perf_counter() - started)
    print(
        f"one node's one-year history: {len(points)} points in"
        f" {statistics.median(timings) * 1000:.1f} ms (median of 21; target: under 100 ms)"
    )
    history_upgrade_and_retention(connection, rows)


def history_upgrade_and_retention(connection: Any, rows: int) -> None:
    """Migration 0013 on that year of history (a plain table made partitioned, as an upgrade
    does), and the retention dropping its oldest month."""
    import importlib
    from types import SimpleNamespace

    from django.db import transaction

    from accounting.services.history import history_expire

    migration = importlib.import_module("accounting.migrations.0013_node_history_partitioned")
    editor = SimpleNamespace(connection=connection)
    with transaction.atomic():
        migration.unpartition(None, editor)
    started = time.perf_counter()
    with transaction.atomic():  # as `migrate` runs it
        migration.partition(None, editor)
    print(
        f"migration 0013 on that history ({rows:,} rows into monthly partitions):"
        f" {time.perf_counter() - started:.1f} s"
    )
    started = time.perf_counter()
    expired = history_expire(now=NOW, days=335)
    print(
        f"the retention (335 days) dropping {len(expired.partitions_dropped)} month(s):"
        f" {(time.perf_counter() - started) * 1000:.0f} ms"
    )


def replay_hpc2n(connection: Any) -> None:
    """Ingest the HPC2N trace (SWF, 202,871 jobs, 3.5 years) and replay it in 10-minute cycles."""
    from django.core.management import call_command

    from accounting.services.replay import replay
    from trees.models import Cluster

    if not HPC2N.exists():
        print(f"HPC2N replay skipped: {HPC2N} is not there")
        return
    with open(os.devnull, "w") as quiet:
        call_command("ingest_swf", str(HPC2N), "--cluster", "hpc2n", "--create-nodes", stdout=quiet)
    cluster = Cluster.objects.get(name="hpc2n")
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE accounting_nodehistory")  # the 100,000-leaf cycles' rows
    started = time.perf_counter()
    result = replay(cluster=cluster)
    seconds = time.perf_counter() - started
    days = (result.last - result.first).total_seconds() / 86_400
    with connection.cursor() as cursor:
        size = table_bytes(cursor, "accounting_nodehistory")
        ledger = table_bytes(cursor, "accounting_cycle")
    print(
        f"HPC2N replay: {result.cycles:,} cycles ({days:,.0f} days) in {seconds:.1f} s:"
        f" {days / seconds:,.1f} simulated days/s; {result.runs:,} runs, {result.decays:,}"
        f" decays; history {result.history_rows:,} rows, {size / 2**20:,.1f} MiB; cycle ledger"
        f" {ledger / 2**20:,.1f} MiB"
    )


if __name__ == "__main__":
    run_on_fresh_database(__file__, DATABASE, child)
