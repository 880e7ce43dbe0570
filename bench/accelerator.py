"""Altair Accelerator's FS_* fields for 10,000 FairShare groups and 100,000 jobs (target: < 1 s),
then the same site stored on PostgreSQL: its jobs export ingested and a cycle that stores every
group's fields and history.

Run with `make bench` (PostgreSQL at 127.0.0.1:5432, or BENCH_DATABASE_URL). The tree: 20 top
groups, 480 groups under them, 9,500 user leaves (`GROUP.user`), every group counted; jobs in
the leaves, a third queued, a third running, the rest suspended or finished within the last
day, some in groups with a 10-minute window and a branch with FairShare off (`-t 0`). Prints
figures; asserts nothing.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.postgres import database_url, run_on_fresh_database
from trees.engine.accelerator import FsGroup, FsJob, fs_fields

DATABASE = "fairshare_bench_accelerator"

TOPS, MIDDLES, LEAVES, JOBS = 20, 480, 9_500, 100_000
NOW = 1_780_000_000


def synthetic_site(seed: int = 22) -> tuple[list[FsGroup], list[FsJob]]:
    rng = random.Random(seed)
    groups = [FsGroup(f"/g{t}", weight=rng.randint(1, 300)) for t in range(TOPS)]
    groups[0] = FsGroup("/g0", window=0)  # FairShare off in this branch
    groups += [
        FsGroup(f"/g{m % TOPS}/p{m}", weight=rng.randint(0, 500), window=600 if m % 7 else None)
        for m in range(MIDDLES)
    ]
    leaves = [f"/g{(n % MIDDLES) % TOPS}/p{n % MIDDLES}.u{n}" for n in range(LEAVES)]
    statuses = ("queued", "running", "queued", "running", "suspended", "done", "failed")
    jobs = []
    for n in range(JOBS):
        status = rng.choice(statuses)
        submitted = NOW - rng.randrange(86_400)
        started = None if status == "queued" else submitted + rng.randrange(600)
        ended = (
            min(NOW, started + rng.randrange(60, 20_000))
            if status in ("done", "failed") and started
            else None
        )
        jobs.append(FsJob(str(n), rng.choice(leaves), status, submitted, started, ended))
    return groups, jobs


def engine() -> None:
    groups, jobs = synthetic_site()
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        fields = fs_fields(groups, jobs, NOW)
        timings.append(time.perf_counter() - started)
    ranked = sum(1 for row in fields if row.rank >= 0)
    print(
        f"FS_* fields of {len(fields):,} groups ({ranked:,} ranked) from {len(jobs):,} jobs:"
        f" {statistics.median(timings):.2f} s (median of 5; target: under 1 s)"
    )


def export(jobs: list[FsJob]) -> str:
    """The jobs as the project's export (docs/accelerator.md)."""
    lines = ["id,fsgroup,user,status,jobclass,priority,submitted,started,ended"]
    for job in jobs:
        user = job.group.rpartition(".")[2]
        times = (job.submitted, job.started or "", job.ended or "")
        lines.append(
            f"{job.job_id},{job.group},{user},{job.status.upper()},c,5,{','.join(map(str, times))}"
        )
    return "\n".join(lines) + "\n"


def child() -> None:
    import django

    os.environ.update(
        DATABASE_URL=database_url(DATABASE),
        SECRET_KEY="bench-only-" + "k" * 50,
        ALLOWED_HOSTS="testserver",
        SECURE_SSL_REDIRECT="0",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    django.setup()
    from datetime import timedelta

    from fairshare_site.celery import app

    app.conf.update(task_always_eager=False, broker_url="memory://localhost/")

    from accounting.models import IngestSource
    from accounting.services.accelerator import fsgroups_import
    from accounting.services.cycles import cycle_run
    from accounting.services.ingest import ingest
    from trees.engine.times import epoch_time
    from trees.formats.fsgroups import FsGroupLine
    from trees.models import Cluster

    groups, jobs = synthetic_site()
    now = epoch_time(NOW)
    lines = [FsGroupLine(g.path, g.weight, g.window, (), False, n) for n, g in enumerate(groups, 1)]
    started = time.perf_counter()
    fsgroups_import(cluster_name="bench", groups=lines, source="bench", now=now)
    configured = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "jobs.csv"
        path.write_text(export(jobs))
        os.utime(path, (NOW, NOW))  # the export's moment
        started = time.perf_counter()
        ingest(cluster_name="bench", source=IngestSource.ACCELERATOR, paths=[str(path)])
        ingested = time.perf_counter() - started
    cluster = Cluster.objects.get(name="bench")
    cycles = []
    for n in range(3):
        started = time.perf_counter()
        cycle_run(cluster=cluster, now=now + timedelta(minutes=10 * n))
        cycles.append(time.perf_counter() - started)
    print(
        f"stored on PostgreSQL: the configuration of {len(groups):,} groups {configured:.2f} s;"
        f" the export of {len(jobs):,} jobs ingested (groups made, fields stored)"
        f" {ingested:.2f} s; a cycle storing every group's fields and history"
        f" {statistics.median(cycles):.2f} s (median of 3)"
    )


def main() -> None:
    if sys.argv[1:] != ["--child"]:
        engine()
    run_on_fresh_database(__file__, DATABASE, child)


if __name__ == "__main__":
    main()
