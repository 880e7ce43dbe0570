"""Scale: 20 PBS clusters of 10,000 to 100,000 users with running jobs on PostgreSQL, and the
cycles of all of them run by two Celery workers within one 10-minute scheduler_iteration.

Run with `python bench/scale.py` (PostgreSQL at 127.0.0.1:5432, or BENCH_DATABASE_URL naming a
server whose `postgres` database may be used to create `fairshare_bench_scale`; Redis at
BENCH_REDIS_URL, default redis://127.0.0.1:6379/13, a database it empties). Prints figures;
asserts nothing. SCALE_CLUSTERS and SCALE_LARGEST make a smaller site.

The clusters' sizes grow geometrically from 10,000 to 100,000 users (most sites' clusters are
small and a few are big), the engine benchmark's tree scaled down (bench/engine.py); the names
do not follow the sizes, as a site's do not. Each has 5, 10 or 20 running jobs per 100 users, in
turn, so that a cycle's cost per user and per running job can be told apart. Three rounds:

1. alone: each cluster's cycle in this process, one after the other (a cycle's own cost);
2. shared: two worker processes (`celery worker --pool=solo`) on the default queue, the beat's
   `run_due_cycles` sending every cluster's cycle of the current slot;
3. routed: CYCLE_QUEUES sends the biggest clusters, about half the users, to `cycles.big`, one
   worker takes that queue and the other the default queue (docs/scale.md).

Each cycle's store queues its cluster's tree.json listing to the cluster's queue: the workers
run those too, and the figures say how long they took beside the cycles. A worker's busy time
is the sum of its tasks' run times (its log's "succeeded in"); its utilisation, that busy time
over the two workers' time from the first task sent to the last cycle done.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
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

DATABASE = "fairshare_bench_scale"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
CLUSTERS = int(os.environ.get("SCALE_CLUSTERS", "20"))
SMALLEST, LARGEST = 10_000, int(os.environ.get("SCALE_LARGEST", "100000"))
RUNNING_PER_100 = (5, 10, 20)  # running jobs per 100 users, cluster by cluster in turn
ITERATION = timedelta(minutes=10)
TASK_DONE = re.compile(r"Task (\S+)\[([0-9a-f-]+)\] succeeded in ([0-9.e-]+)s")


def sizes() -> list[int]:
    """Users of each cluster, from SMALLEST to LARGEST in a geometric progression."""
    ratio = (LARGEST / SMALLEST) ** (1 / max(1, CLUSTERS - 1))
    return [int(round(SMALLEST * ratio**k, -2)) for k in range(CLUSTERS)]


@dataclass
class Site:
    name: str
    users: int
    running: int
    nodes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # cycle duration by round
    worker: dict[str, str] = field(default_factory=dict)  # which worker, by round


def child() -> None:
    import django

    os.environ["DATABASE_URL"] = database_url(DATABASE)
    os.environ["CELERY_BROKER_URL"] = REDIS_URL
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    django.setup()
    import redis

    broker = redis.Redis.from_url(REDIS_URL)
    broker.ping()
    started = time.perf_counter()
    sites = build()
    setup = time.perf_counter() - started
    total = sum(site.users for site in sites)
    running = sum(site.running for site in sites)
    print(
        f"{len(sites)} PBS clusters, {total:,} users ({sum(s.nodes for s in sites):,} nodes),"
        f" {running:,} running jobs, stored in {setup:.0f} s"
    )

    alone(sites)
    broker.flushdb()  # the listings the first round's stores queued
    slot = shared(sites)
    broker.flushdb()
    routed(sites, slot + ITERATION)
    broker.flushdb()
    report(sites)
    history_day(min(sites, key=lambda site: site.users))
    print(f"the whole benchmark: {time.perf_counter() - started:.0f} s")


def build() -> list[Site]:
    """The clusters stored, with their running jobs, named in an order unrelated to size."""
    from django.utils import timezone

    from accounting.models import Job
    from accounting.selectors import cycle_slot_of
    from trees.bulk import rows_insert
    from trees.models import Cluster, Node

    now = timezone.now()
    rng = random.Random(24)
    users = sizes()
    names = [f"pbs{k:02d}" for k in range(1, len(users) + 1)]
    rng.shuffle(names)
    sites = [
        Site(name, count, count * RUNNING_PER_100[k % 3] // 100)
        for k, (name, count) in enumerate(zip(names, users, strict=True))
    ]
    for number, site in enumerate(sites):
        engine_tree_stored(now, name=site.name, leaves=site.users, seed=2026 + number)
        cluster = Cluster.objects.get(name=site.name)
        site.nodes = Node.objects.filter(cluster=cluster).count()
        # Running jobs started in the day before the first cycle's slot.
        first = cycle_slot_of(cluster, now) - ITERATION
        columns = ["cluster_id", "job_id", "run", "state", "entity", "ncpus", "start"]
        columns += ["usage", "accrued", "accrual_closed", "source_file", "source_line"]
        for name in ("server", "user", "group", "account", "project", "queue", "partition"):
            columns.append(name)
        columns += ["jobname", "ngpus", "nodes"]
        rows = [
            (
                cluster.pk, str(n), 1, "running", f"u{rng.randrange(site.users)}",
                rng.choice((1, 4, 16, 128)), first - timedelta(seconds=rng.randrange(60, 86_400)),
                0.0, 0.0, False, "bench", n, "", "", "", "", "", "", "", "", 0, 0,
            )
            for n in range(site.running)
        ]  # fmt: skip
        rows_insert(Job, columns, rows)
    return sites


def alone(sites: list[Site]) -> None:
    """Each cluster's cycle in this process, one after the other, at the slot before now's."""
    from django.utils import timezone

    from accounting.selectors import cycle_slot_of
    from accounting.services.cycles import cycle_run
    from trees.models import Cluster

    print("\n1. alone: each cycle in this process, one after the other")
    started = time.perf_counter()
    for site in sites:
        cluster = Cluster.objects.get(name=site.name)
        cycle = cycle_run(cluster=cluster, now=cycle_slot_of(cluster, timezone.now()) - ITERATION)
        assert cycle is not None
        site.seconds["alone"] = cycle.duration
    print(f"   {len(sites)} cycles in {time.perf_counter() - started:.1f} s")


@contextmanager
def workers(queues: list[str], cycle_queues: str = "") -> Iterator[list[Path]]:
    """Celery workers, one per entry of `queues` (their -Q), each a solo process as
    production runs them; their logs."""
    logs, processes = [], []
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "fairshare_bench_scale"
    folder.mkdir(exist_ok=True)
    for number, queue in enumerate(queues, 1):
        log = folder / f"worker{number}.log"
        log.unlink(missing_ok=True)
        env = {
            **os.environ,
            "DATABASE_URL": database_url(DATABASE),
            "CELERY_BROKER_URL": REDIS_URL,
            "CYCLE_QUEUES": cycle_queues,
        }
        command = [
            sys.executable, "-m", "celery", "-A", "fairshare_site", "worker", "--pool=solo",
            "-n", f"worker{number}@%h", "-Q", queue, "--without-gossip", "--without-mingle",
            "--without-heartbeat", "-l", "INFO", "-f", str(log),
        ]  # fmt: skip
        quiet = subprocess.DEVNULL  # the log has all it says
        processes.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=quiet, stderr=quiet))
        logs.append(log)
    deadline = time.monotonic() + 60
    for log in logs:
        while "ready." not in (log.read_text() if log.exists() else ""):
            if time.monotonic() > deadline:
                raise SystemExit(f"a worker did not start: see {log}")
            time.sleep(0.1)
    try:
        yield logs
    finally:
        peaks = [peak_memory(process.pid) for process in processes]
        print("   the workers' peak memory: " + ", ".join(f"{peak:,.0f} MiB" for peak in peaks))
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait()


def peak_memory(pid: int) -> float:
    """The process's peak resident memory so far, in MiB (Linux's VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found[1]) / 1024 if found else float("nan")


def wait_for_round(sites: list[Site], slot: datetime) -> datetime:
    """When every cluster's cycle at `slot` was done and every tree.json listing written (the
    database read every 50 ms)."""
    from django.utils import timezone

    from accounting.models import Cycle
    from trees.models import Cluster

    started = time.monotonic()
    names = [site.name for site in sites]
    while time.monotonic() - started < 3600:
        if Cycle.objects.filter(at=slot).count() == len(sites):
            clusters = Cluster.objects.filter(name__in=names)
            if all(cluster.tree_json_current for cluster in clusters):
                return timezone.now()
        time.sleep(0.05)
    raise SystemExit("the round did not end within an hour")


def busy(logs: list[Path]) -> list[dict[str, tuple[int, float]]]:
    """Each worker's tasks: by task name, how many and their run time in all (seconds)."""
    done = []
    for log in logs:
        tasks: dict[str, tuple[int, float]] = {}
        for task, _, seconds in TASK_DONE.findall(log.read_text()):
            count, total = tasks.get(task, (0, 0.0))
            tasks[task] = (count + 1, total + float(seconds))
        done.append(tasks)
    return done


def who_ran(logs: list[Path]) -> dict[str, str]:
    """The worker that ran each cluster's cycle, by cluster name (from the logs)."""
    ran = {}
    for number, log in enumerate(logs, 1):
        for line in log.read_text().splitlines():
            found = re.search(r"run_cycle\[[0-9a-f-]+\] succeeded .*'cluster': '(\w+)'", line)
            if found:
                ran[found[1]] = f"worker{number}"
    return ran


def round_report(name: str, sites: list[Site], logs: list[Path], slot: datetime, sent: Any) -> None:
    """A round's figures: its cycles' durations, the wall time, the workers' utilisation."""
    from accounting.models import Cycle

    all_wall = (wait_for_round(sites, slot) - sent).total_seconds()
    time.sleep(0.5)  # the last task's log line
    durations = dict(Cycle.objects.filter(at=slot).values_list("cluster__name", "duration"))
    ends = [
        cycle.started_at + timedelta(seconds=cycle.duration)
        for cycle in Cycle.objects.filter(at=slot)
    ]
    cycles_wall = (max(ends) - sent).total_seconds()
    smaller = sorted(sites, key=lambda site: site.users)[: len(sites) // 2]
    smaller_ends = [
        cycle.started_at + timedelta(seconds=cycle.duration)
        for cycle in Cycle.objects.filter(at=slot, cluster__name__in=[s.name for s in smaller])
    ]
    smaller_wall = (max(smaller_ends) - sent).total_seconds()
    ran = who_ran(logs)
    for site in sites:
        site.seconds[name] = durations[site.name]
        site.worker[name] = ran.get(site.name, "?")
    tasks = busy(logs)
    cycle_busy = [worker.get("accounting.tasks.run_cycle", (0, 0.0))[1] for worker in tasks]
    listing_busy = [worker.get("trees.tasks.write_tree_json", (0, 0.0))[1] for worker in tasks]
    every_busy = [sum(total for _, total in worker.values()) for worker in tasks]
    print(
        f"   every cycle done {cycles_wall:.1f} s after the first was sent (the iteration:"
        f" {ITERATION.total_seconds():.0f} s); every tree.json listing too after {all_wall:.1f} s;"
        f" the {len(smaller)} smaller clusters' cycles after {smaller_wall:.1f} s"
    )
    for number, worker in enumerate(tasks, 1):
        counts = ", ".join(
            f"{count} {task.rsplit('.', 1)[1]}" for task, (count, _) in worker.items()
        )
        print(
            f"   worker{number}: {counts}; busy {every_busy[number - 1]:.1f} s (cycles"
            f" {cycle_busy[number - 1]:.1f} s, listings {listing_busy[number - 1]:.1f} s)"
        )
    print(
        f"   utilisation: the cycles' busy time over 2 x their wall time"
        f" {sum(cycle_busy) / (2 * cycles_wall):.0%}; every task's over 2 x the time to the last"
        f" listing {sum(every_busy) / (2 * all_wall):.0%}"
    )


def shared(sites: list[Site]) -> datetime:
    """Both workers on the default queue; the beat's task sends the slot's cycles. The slot."""
    from django.utils import timezone

    from accounting.models import Cycle
    from accounting.tasks import run_due_cycles

    print("\n2. shared: two workers on the default queue, the beat's run_due_cycles sending")
    with workers(["celery", "celery"]) as logs:
        sent = timezone.now()
        run_due_cycles.delay()
        while not Cycle.objects.filter(started_at__gte=sent).exists():
            time.sleep(0.05)
        slot = Cycle.objects.filter(started_at__gte=sent).values_list("at", flat=True)[0]
        round_report("shared", sites, logs, slot, sent)
    return slot


def routed(sites: list[Site], slot: datetime) -> None:
    """The biggest clusters, about half the users, on `cycles.big` with a worker of its own."""
    from django.conf import settings
    from django.utils import timezone

    from accounting.tasks import run_cycle
    from fairshare_site.settings import cycle_queues_parse
    from trees.models import Cluster
    from trees.selectors.clusters import cluster_queue_get

    big, users = [], 0
    for site in sorted(sites, key=lambda site: -site.users):
        if users + site.users / 2 > sum(s.users for s in sites) / 2:
            break
        big.append(site.name)
        users += site.users
    setting = "big=" + ",".join(sorted(big))
    print(
        f"\n3. routed: CYCLE_QUEUES={setting} ({len(big)} clusters, {users:,} users) for worker1"
        " (-Q cycles.big), the other clusters' for worker2 (-Q celery), each tree.json listing"
        " on its cluster's queue"
    )
    settings.CYCLE_QUEUES = cycle_queues_parse(setting)
    with workers(["cycles.big", "celery"], setting) as logs:
        sent = timezone.now()
        for cluster in Cluster.objects.filter(name__in=[s.name for s in sites]).order_by("name"):
            # What run_due_cycles sends, at the next slot (which this clock has not reached).
            run_cycle.apply_async(
                args=[cluster.pk, slot.isoformat()], queue=cluster_queue_get(cluster=cluster)
            )
        round_report("routed", sites, logs, slot, sent)


def report(sites: list[Site]) -> None:
    import numpy as np
    from django.db import connection

    print("\ncluster   users    nodes  running   alone s  shared s (worker)  routed s (worker)")
    for site in sorted(sites, key=lambda site: site.users):
        rounds = [f"{site.seconds['alone']:8.2f}"]
        rounds += [
            f"{site.seconds[name]:8.2f} ({site.worker[name]})" for name in ("shared", "routed")
        ]
        print(
            f"{site.name}  {site.users:7,}  {site.nodes:7,}  {site.running:7,}  "
            + "  ".join(rounds)
        )
    for name in ("alone", "shared", "routed"):
        print(f"sum of the {name} cycles: {sum(site.seconds[name] for site in sites):.1f} s")
    # duration = fixed + per user x users + per job x running jobs, least squares on each round
    matrix = np.array([[1.0, site.users, site.running] for site in sites])
    for name in ("alone", "shared"):
        times = np.array([site.seconds[name] for site in sites])
        (fixed, per_user, per_job), *_ = np.linalg.lstsq(matrix, times, rcond=None)
        fitted = matrix @ np.array([fixed, per_user, per_job])
        worst = max(abs(fitted - times) / times)
        print(
            f"{name} cycles fitted: {fixed:.2f} s + {per_user * 10_000:.3f} s per 10,000 users"
            f" + {per_job * 1000:.3f} s per 1,000 running jobs (fits each within {worst:.0%})"
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM accounting_nodehistory")
        rows = cursor.fetchone()[0]
        size = table_bytes(cursor, "accounting_nodehistory")
        cursor.execute("SELECT pg_database_size(current_database())")
        database = cursor.fetchone()[0]
    print(
        f"history: {rows:,} rows, {size / 2**20:,.0f} MiB with their indexes"
        f" ({size / rows:.0f} bytes a row); the database {database / 2**30:.2f} GiB"
    )
    per_nodes = statistics.median(site.seconds["alone"] / site.nodes * 10_000 for site in sites)
    print(f"a cycle alone per 10,000 nodes: {per_nodes:.2f} s (median of the clusters)")


def history_day(site: Site) -> None:
    """A day of 10-minute cycles' history of one cluster written as the cycles write it, then
    thinned by the daily roll-ups (a day later to hourly, a week later to daily): what the
    history costs the database a day, per node."""
    from django.db import transaction
    from django.utils import timezone

    from accounting.models import Cycle
    from accounting.services.history import (
        history_partitions_make,
        history_roll_up,
        history_write,
    )
    from trees.models import Cluster

    cluster = Cluster.objects.get(name=site.name)
    last = Cycle.objects.filter(cluster=cluster).latest("at").at
    day = [last + ITERATION * k for k in range(1, 145)]
    history_partitions_make(first=day[0], last=day[-1])
    started = time.perf_counter()
    for at in day:
        with transaction.atomic():
            history_write(cluster, at)
            Cycle.objects.create(cluster=cluster, at=at, started_at=timezone.now())
    written = time.perf_counter() - started
    print(
        f"\na day of history for {site.name} ({site.nodes:,} nodes): {len(day)} cycles'"
        f" {site.nodes * len(day):,} rows written in {written:.1f} s"
        f" ({site.nodes * len(day) / written:,.0f} rows/s)"
    )
    for after, kept in ((timedelta(days=1), "hourly"), (timedelta(days=8), "daily")):
        started = time.perf_counter()
        rolled = history_roll_up(cluster=cluster, now=day[-1] + after)
        seconds = time.perf_counter() - started
        print(
            f"   the roll-up {after.days} day(s) later, to {kept}: {rolled.rows_removed:,} rows"
            f" removed in {seconds:.1f} s ({rolled.rows_removed / seconds:,.0f} rows/s)"
        )


if __name__ == "__main__":
    run_on_fresh_database(__file__, DATABASE, child)
