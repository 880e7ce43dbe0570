"""The what-if simulator's speed, on two workloads.

- The whole HPC2N trace (SWF, 202,871 jobs) replayed in submit order with EASY backfilling
  (target: 100,000 jobs/s), with the other disciplines, and under PBS fair_share.
- A synthetic year (issue 26): 1.2 million jobs on a PBS resource_group of 100,000 users,
  replayed under fair_share + EASY (target: under 5 minutes and 1 GB).

Run with `python bench/simulate.py` for both, or name one: `python bench/simulate.py hpc2n`
(the trace beside the checkout, ../shared/data/swf/, or SIMULATE_SWF naming one), `python
bench/simulate.py synthetic`. Prints figures; asserts nothing. Only the replays are timed: the
trace is read first, with the project's SWF parser, users named user<N> as ingest_swf names
them; the synthetic year is drawn first, from a fixed seed. The peak memory printed is the
process's (ru_maxrss), so the synthetic year's is its own only when it is run alone.
"""

from __future__ import annotations

import gzip
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

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

SEED = 26  # the number: the same year at every run
YEAR_START = 1_767_225_600  # 2026-01-01T00:00:00Z
YEAR_JOBS = 1_200_000
ORGANIZATIONS, PROJECTS, USERS = 20, 2_000, 100_000
YEAR_CORES = 24_576  # 192 nodes of 128 cores: some 83 % busy with the jobs below
BURST = 16  # jobs a user submits at once, on average (job arrays, parameter sweeps)
USER_SKEW = 0.8  # Zipf exponent of the users' activity: a few heavy users, many light ones
YEAR_TARGET_SECONDS = 300
YEAR_TARGET_MIB = 1024


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
    sections = sys.argv[1:] or ["hpc2n", "synthetic"]
    if set(sections) - {"hpc2n", "synthetic"}:
        raise SystemExit("usage: python bench/simulate.py [hpc2n] [synthetic]")
    if "hpc2n" in sections:
        hpc2n()
    if "synthetic" in sections:
        synthetic_year()


def hpc2n() -> None:
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


def synthetic_site(rng: np.random.Generator) -> tuple[list[GroupDef], list[str]]:
    """A resource_group of 20 organizations, 2,000 projects and 100,000 users, in file order
    (parents first), and the users' names. Shares vary at each level (1-99, 1-999, 1-100);
    sizes are uneven: each project's organization and each user's project are drawn with
    Dirichlet weights, every project given one user first."""
    orgs = [f"org{n:02}" for n in range(ORGANIZATIONS)]
    projects = [f"proj{n:04}" for n in range(PROJECTS)]
    users = [f"user{n:05}" for n in range(USERS)]
    org_of = rng.choice(ORGANIZATIONS, PROJECTS, p=rng.dirichlet(np.ones(ORGANIZATIONS)))
    weights = rng.dirichlet(np.ones(PROJECTS))
    project_of = np.concatenate(
        [np.arange(PROJECTS), rng.choice(PROJECTS, USERS - PROJECTS, p=weights)]
    )
    levels = [
        (orgs, ["root"] * ORGANIZATIONS, rng.integers(1, 100, ORGANIZATIONS)),
        (projects, [orgs[n] for n in org_of.tolist()], rng.integers(1, 1000, PROJECTS)),
        (users, [projects[n] for n in project_of.tolist()], rng.integers(1, 101, USERS)),
    ]
    groups: list[GroupDef] = []
    for names, parents, shares in levels:
        for name, parent, share in zip(names, parents, shares.tolist(), strict=True):
            groups.append(GroupDef(name, 10 + len(groups), parent, share))
    return groups, users


def synthetic_jobs(rng: np.random.Generator, users: list[str]) -> list[SimJob]:
    """A year of 1.2 million jobs, in bursts of one user's jobs of one shape (BURST on
    average, geometric). A burst's user is drawn with Zipf weights (USER_SKEW), its day evenly
    over the year, its hour by a daily cycle (busiest mid-afternoon, 9 times the quietest
    hour); its cores are log-uniform over 1-256, its run time log-uniform over 1 minute to 1
    day. Each job arrives within a minute of its burst and runs 0.5-1.5 times the burst's
    time; it asks for 1-4 times its run, in whole minutes, and 1 in 20 runs past a request of
    half to all of its run (as a trace shows jobs the limit did not stop)."""
    sizes = rng.geometric(1 / BURST, YEAR_JOBS)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), YEAR_JOBS)) + 1]
    sizes[-1] -= int(sizes.sum()) - YEAR_JOBS
    bursts = len(sizes)
    activity = 1.0 / np.arange(1, USERS + 1) ** USER_SKEW
    who = rng.permutation(USERS)[rng.choice(USERS, bursts, p=activity / activity.sum())]
    daily = 1 + 0.8 * np.sin((np.arange(24) - 9) * np.pi / 12)
    submit = (
        YEAR_START
        + rng.integers(0, 365, bursts) * 86_400
        + rng.choice(24, bursts, p=daily / daily.sum()) * 3_600
        + rng.integers(0, 3_600, bursts)
    )
    cores = np.rint(2 ** rng.uniform(0, 8, bursts)).astype(np.int64)
    run = np.exp(rng.uniform(np.log(60), np.log(86_400), bursts))
    who, submit, cores, run = (np.repeat(a, sizes) for a in (who, submit, cores, run))
    submit += rng.integers(0, 60, YEAR_JOBS)
    run = np.maximum(np.rint(run * rng.uniform(0.5, 1.5, YEAR_JOBS)), 1).astype(np.int64)
    past = rng.random(YEAR_JOBS) < 0.05
    ratio = np.where(past, rng.uniform(0.5, 1, YEAR_JOBS), rng.uniform(1, 4, YEAR_JOBS))
    asked = (np.ceil(run * ratio / 60) * 60).astype(np.int64)
    order = np.argsort(submit, kind="stable")
    columns = zip(
        who[order].tolist(), submit[order].tolist(), run[order].tolist(),
        cores[order].tolist(), asked[order].tolist(), strict=True,
    )  # fmt: skip
    return [
        SimJob(str(n), users[user], at, ran, width, limit)
        for n, (user, at, ran, width, limit) in enumerate(columns, start=1)
    ]


def synthetic_year() -> None:
    """PBS fair_share + EASY over the synthetic year: usage ncpus*walltime, 10-minute cycles,
    usage halved daily. FCFS + EASY on the same jobs, after, for the waits' contrast."""
    started = time.perf_counter()
    rng = np.random.default_rng(SEED)
    groups, users = synthetic_site(rng)
    jobs = synthetic_jobs(rng, users)
    seconds = time.perf_counter() - started
    work = sum(job.cores * job.run_time for job in jobs)
    span = jobs[-1].submit - jobs[0].submit
    print(
        f"synthetic year: {len(jobs):,} jobs of {len({job.entity for job in jobs}):,} of"
        f" {USERS:,} users ({len(groups):,} groups) on {YEAR_CORES:,} cores, drawn in"
        f" {seconds:.1f} s; the work is {work / (YEAR_CORES * span):.0%} of the cores"
    )
    order = PbsFairShareOrder(
        groups, {}, formula=parse_formula("ncpus*walltime", USAGE_RESOURCES), iteration=600,
        decay_interval=86_400, decay_factor=0.5,
    )  # fmt: skip
    started = time.perf_counter()
    schedule = simulate(jobs, capacity=YEAR_CORES, backfill="easy", order=order)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    replayed = len(schedule.jobs)
    waits = [job.start - job.submit for job in schedule.jobs]
    print(
        f"PBS fair_share + easy: {replayed:,} jobs in {seconds:.1f} s"
        f" (target: {YEAR_TARGET_SECONDS} s), {replayed / seconds:,.0f} jobs/s; peak memory"
        f" {peak:,.0f} MiB (target: {YEAR_TARGET_MIB:,} MiB); mean wait"
        f" {sum(waits) / len(waits) / 3600:.2f} h"
    )
    del schedule, order, waits
    started = time.perf_counter()
    schedule = simulate(jobs, capacity=YEAR_CORES, backfill="easy")
    seconds = time.perf_counter() - started
    waits = [job.start - job.submit for job in schedule.jobs]
    print(
        f"fifo + easy, the same jobs: {seconds:.1f} s; mean wait"
        f" {sum(waits) / len(waits) / 3600:.2f} h"
    )


if __name__ == "__main__":
    main()
