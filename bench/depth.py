"""Deep trees and big batches (issue 39 item 8): a cycle of a 5,000-level resource_group, a
cycle after many ended jobs, /metrics of a 200,000-group Accelerator cluster.

Run with `make bench` or `python bench/depth.py`; each case runs in a process of its own on a
fresh SQLite database, so that its peak resident size (getrusage) is its own. Prints figures;
asserts nothing. DEPTH_LEVELS, DEPTH_JOBS and DEPTH_GROUPS make the cases smaller or bigger.

On this machine (2 cores), before the fixes and after: the 5,000-level cycle 4.3 s and
1,323 MiB (a row of every root path, 10,000 numbers each, to rank the entities), 0.70 s and
107 MiB; the cycle after 300,000 ended jobs 10.3 s and 354 MiB over the process's 157 MiB (the
queryset's cached rows), 7.4 s and 136 MiB; /metrics of 200,000 groups 21.2 s, 197 MiB of text
and 883 MiB (every group listed), 3.5 s, 9.6 MiB and 237 MiB (10,000 groups listed).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEVELS = int(os.environ.get("DEPTH_LEVELS", "5000"))
JOBS = int(os.environ.get("DEPTH_JOBS", "300000"))
GROUPS = int(os.environ.get("DEPTH_GROUPS", "200000"))
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def setup(database: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    os.environ["MAX_TREE_DEPTH"] = str(LEVELS)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def deep_cycle() -> str:
    from accounting.services.cycles import cycle_run
    from trees.engine.pbs import GroupDef
    from trees.models import Cluster
    from trees.services.pbs import resource_group_import

    chain = [GroupDef(f"g{n}", 10 + n, f"g{n - 1}" if n else "root", 10) for n in range(LEVELS)]
    resource_group_import(cluster_name="deep", groups=chain, pbs_messages=[], source="bench")
    cluster = Cluster.objects.get(name="deep")
    cycle_run(cluster=cluster, now=NOW)  # the first cycle starts the decay clock
    started = time.perf_counter()
    cycle_run(cluster=cluster, now=NOW + timedelta(minutes=10))
    took = time.perf_counter() - started
    return f"a cycle of a {LEVELS:,}-level resource_group: {took:.2f} s, peak {peak_mib():.0f} MiB"


def ended_jobs_cycle() -> str:
    from accounting.models import Job
    from accounting.services.cycles import cycle_run
    from trees.engine.pbs import GroupDef
    from trees.models import Cluster
    from trees.services.pbs import resource_group_import

    users = [GroupDef(f"u{n}", 10 + n, "root", 1) for n in range(1000)]
    resource_group_import(cluster_name="jobs", groups=users, pbs_messages=[], source="bench")
    cluster = Cluster.objects.get(name="jobs")
    cycle_run(cluster=cluster, now=NOW - timedelta(hours=2))
    start, end = NOW - timedelta(hours=1), NOW - timedelta(minutes=30)
    for first in range(0, JOBS, 5000):  # a batch at a time: bulk_create lists what it is given
        Job.objects.bulk_create(
            Job(cluster=cluster, job_id=str(n), state="ended", entity=f"u{n % 1000}", ncpus=1,
                start=start, end=end, walltime=1800, usage=1800.0, source_file="bench",
                source_line=n)
            for n in range(first, min(first + 5000, JOBS))
        )  # fmt: skip
    before = peak_mib()
    started = time.perf_counter()
    cycle = cycle_run(cluster=cluster, now=NOW)
    took = time.perf_counter() - started
    accrued = cycle.jobs_accrued if cycle else 0
    return (
        f"a cycle after {JOBS:,} ended jobs ({accrued:,} accrued): {took:.2f} s,"
        f" peak {peak_mib():.0f} MiB ({before:.0f} MiB before it)"
    )


def accelerator_metrics() -> str:
    from django.conf import settings

    from accounting.metrics import metrics_text
    from trees.models import Cluster, Node

    cluster = Cluster.objects.create(name="vnc", scheduler="accelerator")
    root = Node.objects.create(cluster=cluster, name="/", kind="organization", origin="scheduler")
    for first in range(0, GROUPS, 5000):
        Node.objects.bulk_create(
            Node(cluster=cluster, parent=root, name=f"/class{n}", kind="user", shares=1,
                 fairshare_perc=1 / GROUPS, fs_target=1, fs_running=0, fs_running_count=0,
                 fs_excess_running=-1, fs_excess_running_local=0, fs_history=0,
                 fs_excess_history=-1, fs_rank=-1)
            for n in range(first, min(first + 5000, GROUPS))
        )  # fmt: skip
    before = peak_mib()
    started = time.perf_counter()
    text = metrics_text(
        max_depth=settings.METRICS_MAX_DEPTH, max_series=settings.METRICS_MAX_SERIES
    )
    took = time.perf_counter() - started
    return (
        f"/metrics of a {GROUPS:,}-group Accelerator cluster (METRICS_MAX_SERIES"
        f" {settings.METRICS_MAX_SERIES:,}): {took:.2f} s, {len(text) / 2**20:.1f} MiB,"
        f" peak {peak_mib():.0f} MiB ({before:.0f} MiB before it)"
    )


CASES = {"deep_cycle": deep_cycle, "ended_jobs": ended_jobs_cycle, "metrics": accelerator_metrics}


def main() -> None:
    if len(sys.argv) == 3:  # a case, in its own process
        setup(sys.argv[2])
        print(CASES[sys.argv[1]]())
        return
    for case in CASES:
        with tempfile.TemporaryDirectory() as folder:
            database = str(Path(folder) / "bench.sqlite3")
            subprocess.run([sys.executable, __file__, case, database], check=True)


if __name__ == "__main__":
    main()
