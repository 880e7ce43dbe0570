"""Altair Accelerator's FS_* fields for 10,000 FairShare groups and 100,000 jobs (target: < 1 s).

Run with `make bench`. The tree: 20 top groups, 480 groups under them, 9,500 user leaves
(`GROUP.user`), every group counted; jobs in the leaves, a third queued, a third running, the
rest suspended or finished within the last day, some in groups with a 10-minute window and a
branch with FairShare off (`-t 0`). Prints figures; asserts nothing.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trees.engine.accelerator import FsGroup, FsJob, fs_fields

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


def main() -> None:
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


if __name__ == "__main__":
    main()
