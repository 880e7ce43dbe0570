"""The what-if simulator's speed: the whole HPC2N trace (SWF, 202,871 jobs) replayed in submit
order with EASY backfilling (target: 100,000 jobs/s), and with the other disciplines.

Run with `python bench/simulate.py` (the trace beside the checkout, ../shared/data/swf/, or
SIMULATE_SWF naming one). Prints figures; asserts nothing. Only the replay is timed: the trace
is read first, with the project's SWF parser, users named user<N> as ingest_swf names them.
"""

from __future__ import annotations

import gzip
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from accounting.parsers.records import JobRecord  # noqa: E402  (after the path)
from accounting.parsers.swf import SwfReader  # noqa: E402
from trees.engine.formula import USAGE_RESOURCES, parse_formula  # noqa: E402
from trees.engine.pbs import GroupDef  # noqa: E402
from trees.engine.simulate import Backfill, SimJob, simulate  # noqa: E402
from trees.engine.simulate_pbs import PbsFairShareOrder  # noqa: E402

TRACE = Path(
    os.environ.get(
        "SIMULATE_SWF", ROOT.parent / "shared" / "data" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
    )
)
TARGET = 100_000  # jobs/s, fifo + easy
POLICY_TARGET = 10_000  # jobs/s, PBS fair_share + easy


def trace_jobs(path: Path) -> tuple[list[SimJob], int]:
    """The trace's jobs as the simulator takes them, and the machine's cores (MaxProcs)."""
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as lines:
        reader = SwfReader(lines)
        jobs = []
        for item in reader:
            if not isinstance(item, JobRecord) or item.ctime is None:
                continue
            run_time = item.walltime if item.walltime is not None else 0
            jobs.append(
                SimJob(
                    f"{item.job_id}" if item.run == 1 else f"{item.job_id}.{item.run}",
                    f"user{item.user}" if item.user else "user-1",
                    item.ctime,
                    run_time,
                    item.ncpus,
                    item.requested_walltime,
                    item.start,
                )
            )
    capacity = reader.header.max_procs or max(job.cores for job in jobs)
    return jobs, capacity


def main() -> None:
    if not TRACE.exists():
        raise SystemExit(f"{TRACE}: no such trace (set SIMULATE_SWF)")
    started = time.perf_counter()
    jobs, capacity = trace_jobs(TRACE)
    seconds = time.perf_counter() - started
    print(f"{TRACE.name}: {len(jobs):,} jobs on {capacity} cores read in {seconds:.1f} s")
    disciplines: list[Backfill] = ["easy", "none", "greedy", 2]
    for backfill in disciplines:
        started = time.perf_counter()
        schedule = simulate(jobs, capacity=capacity, backfill=backfill)
        seconds = time.perf_counter() - started
        replayed = len(schedule.jobs)
        waits = sorted(job.start - job.submit for job in schedule.jobs)
        target = f" (target: {TARGET:,} jobs/s)" if backfill == "easy" else ""
        print(
            f"fifo + {backfill}: {replayed:,} jobs replayed in {seconds:.2f} s,"
            f" {replayed / seconds:,.0f} jobs/s{target}; left out {schedule.left_out};"
            f" mean wait {sum(waits) / len(waits) / 3600:.2f} h, median"
            f" {waits[len(waits) // 2] / 3600:.2f} h"
        )
    pbs_fair_share(jobs, capacity)


def pbs_fair_share(jobs: list[SimJob], capacity: int) -> None:
    """PBS fair_share + EASY: each user a resource group of 10 shares under the root, usage
    cput, 10-minute cycles, usage halved daily."""
    users = sorted({job.entity for job in jobs})
    groups = [GroupDef(user, 10 + n, "root", 10) for n, user in enumerate(users)]
    order = PbsFairShareOrder(
        groups, {}, formula=parse_formula("cput", USAGE_RESOURCES), iteration=600,
        decay_interval=86_400, decay_factor=0.5,
    )  # fmt: skip
    started = time.perf_counter()
    schedule = simulate(jobs, capacity=capacity, backfill="easy", order=order)
    seconds = time.perf_counter() - started
    waits = sorted(job.start - job.submit for job in schedule.jobs)
    print(
        f"PBS fair_share ({len(users)} users) + easy: {len(schedule.jobs):,} jobs in"
        f" {seconds:.2f} s, {len(schedule.jobs) / seconds:,.0f} jobs/s (target:"
        f" {POLICY_TARGET:,} jobs/s); mean wait {sum(waits) / len(waits) / 3600:.2f} h"
    )


if __name__ == "__main__":
    main()
