"""PBS accounting logs into PostgreSQL: 1,000,000 E records with their Q and S, end to end.

Run with `make bench` (PostgreSQL at 127.0.0.1:5432, or BENCH_DATABASE_URL naming a server
whose `postgres` database may be used to create `fairshare_bench`). Prints the records/s of
`ingest_pbs_accounting` (targets: >= 50,000 E records/s, and at least a third of the speed of
PostgreSQL's own COPY of the same rows), the peak memory of the ingesting process and of its
reading helpers for a 100,000-job file and for ten of them (streaming: it must not grow with
the input), and what COPY alone takes. The log looks like NCAR's: 10 day files, 2,000 users
in 300 accounts of a resource_group tree, every job queued (Q), started (S) and ended (E),
2 % running past midnight so that their S and E are in different files.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.postgres import database_url, fresh_database  # noqa: E402  (after the path)

JOBS_PER_DAY = 100_000
DAYS = 10
USERS = 2_000
ACCOUNTS = 300
DATABASE = "fairshare_bench"


def day_stamp(epoch: int) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(epoch))


def hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def write_logs(folder: Path, seed: int = 11) -> list[Path]:
    """Ten YYYYMMDD files; a job that runs past midnight ends in the next day's file."""
    rng = random.Random(seed)
    first_day = 1_767_225_600  # 2026-01-01 00:00 UTC
    spill: list[tuple[int, str]] = []
    paths = []
    sequence = 4_500_000
    for day in range(DAYS):
        day_start = first_day + 86400 * day
        events = [item for item in spill if item[0] < day_start + 86400]
        spill = [item for item in spill if item[0] >= day_start + 86400]
        for _ in range(JOBS_PER_DAY):
            sequence += 1
            user = rng.randrange(USERS)
            account = f"ACCT{user % ACCOUNTS:04d}"
            nodes = rng.choice((1, 1, 1, 2, 4, 8))
            ncpus = 128 * nodes
            ctime = day_start + rng.randrange(86400 - 7200)
            start = ctime + rng.randrange(1, 3600)
            long_job = rng.random() < 0.02  # runs past midnight
            walltime = 86400 + rng.randrange(9000) if long_job else rng.randrange(60, 3600)
            end = start + walltime
            hosts = "+".join(f"dec{rng.randrange(2500):04d}/0*128" for _ in range(nodes))
            vnodes = "+".join(
                f"(dec{n:04d}:ncpus=128:mem=246415360kb:ngpus=0)" for n in range(nodes)
            )
            common = (
                f'user=u{user} group=ncar account="{account}" project=_pbs_project_default'
                f" jobname=run{sequence % 97} queue=cpu ctime={ctime} qtime={ctime}"
            )
            request = (
                f"Resource_List.mem={235 * nodes}gb Resource_List.mpiprocs={ncpus}"
                f" Resource_List.ncpus={ncpus} Resource_List.ngpus=0 Resource_List.nodect={nodes}"
                " Resource_List.place=scatter:exclhost"
                f" Resource_List.select={nodes}:ncpus=128:mpiprocs=128:ompthreads=1"
                " Resource_List.walltime=12:00:00"
            )
            job = f"{sequence}.desched1"
            events.append((ctime, f"{day_stamp(ctime)};Q;{job};{common} etime={ctime} {request} "))
            started = f"{common} etime={ctime} start={start} exec_host={hosts} exec_vnode={vnodes}"
            events.append((start, f"{day_stamp(start)};S;{job};{started} {request} "))
            used = (
                f"session={rng.randrange(99999)} end={end}"
                f" Exit_status={rng.choice((0, 0, 0, 1, 271))}"
                f" resources_used.cpupercent={rng.randrange(12800)}"
                f" resources_used.cput={hms(walltime * rng.randrange(1, 128))}"
                f" resources_used.mem={rng.randrange(10**6, 10**8)}kb resources_used.ncpus={ncpus}"
                f" resources_used.vmem={rng.randrange(10**6, 10**8)}kb"
                f" resources_used.walltime={hms(walltime)} eligible_time={hms(start - ctime)}"
                " run_count=1"
            )
            record = (end, f"{day_stamp(end)};E;{job};{started} {request} {used}")
            (events if end < day_start + 86400 else spill).append(record)
        events.sort(key=lambda item: item[0])
        path = folder / time.strftime("%Y%m%d", time.gmtime(day_start))
        path.write_text("".join(line + "\n" for _, line in events))
        paths.append(path)
    return paths


def resource_group(folder: Path) -> Path:
    lines = [f"ACCT{a:04d} {a + 10} root {1 + a % 7}" for a in range(ACCOUNTS)]
    lines += [f"u{u} {u + 1000} ACCT{u % ACCOUNTS:04d} {1 + u % 3}" for u in range(USERS)]
    path = folder / "resource_group"
    path.write_text("\n".join(lines) + "\n")
    return path


def peak_kb() -> int:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited on exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def watch_helpers(peaks: dict[int, int], done: threading.Event) -> None:
    """The peak resident memory (VmHWM) of each reading helper, read until `done` is set."""
    while not done.wait(0.2):
        for children in Path("/proc/self/task").glob("*/children"):
            for pid in children.read_text().split():
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue  # it has just ended
                for line in status.splitlines():
                    if line.startswith("VmHWM:"):
                        peaks[int(pid)] = max(peaks.get(int(pid), 0), int(line.split()[1]))


def child(tree: str, paths: list[str]) -> None:
    """In a fresh process: the tree, then the ingest; prints seconds and peak memory."""
    import django

    os.environ["DATABASE_URL"] = database_url(DATABASE)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")
    django.setup()
    from django.core.management import call_command

    with tempfile.TemporaryFile("w+") as out:
        call_command("import_resource_group", tree, "--cluster", "bench", stdout=out)
        before = peak_kb()
        out.seek(0)
        out.truncate()
        helper_peaks: dict[int, int] = {}
        watching = threading.Event()
        watcher = threading.Thread(target=watch_helpers, args=(helper_peaks, watching))
        watcher.start()
        started = time.perf_counter()
        call_command("ingest_pbs_accounting", *paths, "--cluster", "bench", "--json", stdout=out)
        seconds = time.perf_counter() - started
        out.seek(0)
        summary = json.load(out)
    peak = peak_kb()
    watching.set()
    watcher.join()
    helpers = max(helper_peaks.values(), default=0)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_kb": peak,
                "before_kb": before,
                "helper_peak_kb": helpers,
                **summary,
            }
        )
    )


def run_child(tree: Path, paths: list[Path]) -> dict[str, Any]:
    fresh_database(DATABASE)
    command = [sys.executable, __file__, "--child", str(tree), *map(str, paths)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def copy_alone() -> tuple[int, float]:
    """COPY the stored rows out, empty the table, and time COPY loading them back."""
    import psycopg

    url = database_url(DATABASE).replace("postgres://", "postgresql://")
    with tempfile.TemporaryFile() as dump, psycopg.connect(url) as c:
        with c.cursor().copy("COPY accounting_job TO STDOUT") as copy:
            for block in copy:
                dump.write(block)
        rows = c.execute("SELECT count(*) FROM accounting_job").fetchone()[0]
        c.execute("TRUNCATE accounting_job")
        c.commit()
        dump.seek(0)
        started = time.perf_counter()
        with c.cursor().copy("COPY accounting_job FROM STDIN") as copy:
            while block := dump.read(1 << 20):
                copy.write(block)
        c.commit()
        return rows, time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        paths = write_logs(folder)
        tree = resource_group(folder)
        size = sum(path.stat().st_size for path in paths)
        print(
            f"generated {DAYS} day files, {DAYS * JOBS_PER_DAY:,} jobs (Q, S and E each),"
            f" {size / 2**20:,.0f} MiB, in {time.perf_counter() - started:.1f} s"
        )
        small = run_child(tree, paths[:1])
        full = run_child(tree, paths)
        rows, copy_seconds = copy_alone()
    for label, result in (("1 file ", small), ("10 files", full)):
        ended, lines, seconds = result["ingested"], result["read"], result["seconds"]
        peak, setup = result["peak_kb"] / 1024, result["before_kb"] / 1024
        helper = result["helper_peak_kb"] / 1024
        print(
            f"{label}: {lines:,} lines, {ended:,} E runs stored, {result['running']:,} running,"
            f" {result['rejected']} rejected in {seconds:.1f} s: {ended / seconds:,.0f} E"
            f" records/s ({lines / seconds:,.0f} lines/s); peak memory {peak:,.0f} MiB"
            f" ({setup:,.0f} MiB before the ingest), {helper:,.0f} MiB in a reading helper"
        )
    stored_rate = (full["ingested"] + full["running"]) / full["seconds"]
    print(
        f"COPY alone: {rows:,} rows in {copy_seconds:.1f} s: {rows / copy_seconds:,.0f} rows/s;"
        f" the ingest stores rows at {stored_rate / (rows / copy_seconds):.2f} of COPY's speed"
        " (targets: >= 0.33 of COPY; >= 50,000 E records/s)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
    else:
        main()
