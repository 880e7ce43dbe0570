"""A small Altair Accelerator (vovserver) site made up from a seed, as the files the dashboard
reads from one: the FairShare configuration `vovfsgroup genconfig` writes, a preemption rule
file, and a day of jobs in the project's CSV export (docs/accelerator.md).

Pure (no Django) and deterministic: the same seed, end and users give the same bytes. Every time
is relative to the end, so the site's shape does not depend on the hour it ends at.

The tree is job classes under /class, as Altair's FairShare pages lay it out: /class/hsim,
/class/vcs and /class/spice with weights that differ, /class/urgent with a 10-minute window,
/class/sim turned off (`-w 0 -t 0`) with its child cronos (whose own `-t 3h` the parent's 0
overrides), and the default group /time/users for jobs without a class. A job submitted to G by
user U runs in the leaf G.U, which Accelerator makes at submission (and so does the import).

The day's jobs before the end are done or failed, each with its times. At the end, the jobs
still running, suspended and queued are laid out by END_PICTURE: /class/hsim runs most of the
machine, and /class/vcs is the picture of Altair's page "Preemption Rules to Speed Up
FairShare": one user runs three jobs, the member (the demo's bob) one, with one more queued. So
the member's vcs user leaf is under its target both globally and locally, the other user over
it locally only: the page's rule on FS_EXCESS_RUNNING_LOCAL fires, its rule on
FS_EXCESS_RUNNING does not.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from accounting.parsers.accelerator_jobs import ACCELERATOR_JOB_FIELDS

__all__ = [
    "ACCELERATOR_NAME",
    "END_PICTURE",
    "FSGROUPS",
    "JOB_CLASSES",
    "PREEMPT_RULES",
    "AcceleratorSite",
    "JobClass",
    "VovJob",
    "accelerator_site_generate",
    "jobs_csv",
]

ACCELERATOR_NAME = "vnc"  # the demo cluster's name: Accelerator names its queues vnc...
MINUTE = 60
HOUR = 3600
DAY = 86_400
SPAN = DAY + 2 * HOUR  # the jobs begin two hours before the day, so that its first window is full
MEMBER = "member"  # END_PICTURE's and JobClass.users' name for the member's slot
OTHER_USERS = 8  # users drawn besides the member
FIRST_JOB_ID = 481_000

# What `vovfsgroup genconfig` writes for the site (the Tcl form; a body may be left out).
FSGROUPS = """\
# vovfsgroup genconfig of the demo's Accelerator: job classes under /class
FSGROUP class {
    FSGROUP hsim -w 200
    FSGROUP vcs -w 300
    FSGROUP spice -w 100
    FSGROUP urgent -w 500 -window 10m
    FSGROUP sim -w 0 -t 0 {
        FSGROUP cronos -w 100 -t 3h
    }
}
FSGROUP time -w 50 {
    FSGROUP users
}
"""

# The two rules of Altair's page "Preemption Rules to Speed Up FairShare", as a rule file.
PREEMPT_RULES = """\
# vovpreemptd rules of the demo's Accelerator: preemption within the vcs job class
VovPreemptRule -rulename RuleThatDoesNotFire \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare -ruletype FAST_FAIRSHARE
VovPreemptRule -rulename RuleThatFires \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare  -ruletype FAST_FAIRSHARE
"""


@dataclass(frozen=True)
class JobClass:
    """A job class and the group its jobs are submitted to, with the shape of its work."""

    name: str  # the JOBCLASS field ("" for jobs without a class)
    group: str
    per_hour: float  # jobs submitted in an hour, done or failed by the end
    minutes: tuple[int, int]  # how long a job runs, shortest and longest
    users: tuple[str, ...]  # MEMBER, or "u<N>": the N-th user drawn
    bursts: tuple[tuple[int, int], ...] = ()  # (hours before the end, hours) of its only work


JOB_CLASSES = (
    JobClass("hsim", "/class/hsim", 7.0, (15, 110), ("u1", "u2", MEMBER)),
    JobClass("vcs", "/class/vcs", 9.0, (5, 50), ("u3", MEMBER, "u4")),
    JobClass("spice", "/class/spice", 5.0, (3, 40), ("u4", "u5")),
    # Hot fixes: a few short jobs in two bursts, none at the end (its window is 10 minutes).
    JobClass("urgent", "/class/urgent", 12.0, (2, 9), ("u2", "u6"), ((15, 1), (4, 1))),
    JobClass("cronos", "/class/sim/cronos", 2.0, (30, 150), ("u7",)),
    JobClass("", "/time/users", 1.5, (1, 30), (MEMBER, "u8", "u6")),
)

# At the end: (job class, user, running, suspended, queued). /class/hsim runs most of the
# machine; /class/vcs is the page's picture (u3 runs 3 jobs, the member 1 and waits for 1);
# spice has its suspended jobs; cronos waits with FairShare off; the member runs in /time/users.
END_PICTURE: tuple[tuple[str, str, int, int, int], ...] = (
    ("hsim", "u1", 10, 0, 2),
    ("hsim", "u2", 4, 0, 0),
    ("vcs", "u3", 3, 0, 0),
    ("vcs", MEMBER, 1, 0, 1),
    ("spice", "u4", 3, 1, 0),
    ("spice", "u5", 2, 1, 2),
    ("cronos", "u7", 2, 0, 3),
    ("", MEMBER, 1, 0, 0),
    ("", "u8", 1, 0, 1),
)
_PRIORITIES = (4, 4, 4, 4, 4, 6, 8, 8, 10, 12)  # job priorities, 1..15 in Accelerator
_FAILED = 0.08  # of the jobs that end


@dataclass(frozen=True, slots=True)
class VovJob:
    """One job of the export, as it stands at the end; times are epoch seconds."""

    job_id: int
    group: str  # the group it was submitted to: it runs in the leaf `group.user`
    user: str
    jobclass: str
    priority: int
    status: str  # QUEUED, RUNNING, SUSPENDED, DONE or FAILED
    submitted: int
    started: int | None
    ended: int | None

    @property
    def fsgroup(self) -> str:
        return f"{self.group}.{self.user}"


@dataclass(frozen=True)
class AcceleratorSite:
    users: dict[str, str]  # MEMBER and "u<N>" to the user names
    jobs: tuple[VovJob, ...]  # by id, which is the order they were submitted in
    end: int

    def count(self, status: str) -> int:
        return sum(1 for job in self.jobs if job.status == status)


def accelerator_site_generate(
    *, seed: int, end: datetime, member: str, users: Sequence[str]
) -> AcceleratorSite:
    """The site's jobs over the SPAN before `end`: `member` runs in several groups, and
    OTHER_USERS users are drawn from `users` (the member left out) for the others."""
    last = int(end.timestamp())
    rng = random.Random(f"{seed}:accelerator")
    pool = sorted(set(users) - {member})
    if len(pool) < OTHER_USERS:
        raise ValueError(f"{OTHER_USERS} users besides the member are needed, not {len(pool)}")
    drawn = rng.sample(pool, OTHER_USERS)
    names = {MEMBER: member, **{f"u{number}": name for number, name in enumerate(drawn, 1)}}
    # (submitted, class, user slot, status, started, ended) before the ids are given out
    rows: list[tuple[int, str, str, str, int | None, int | None]] = []
    for job_class in JOB_CLASSES:
        rows += _ended_jobs(rng, job_class, last)
    by_name = {job_class.name: job_class for job_class in JOB_CLASSES}
    for name, slot, running, suspended, queued in END_PICTURE:
        rows += _jobs_at_end(rng, by_name[name], slot, last, running, suspended, queued)
    rows.sort(key=lambda row: (row[0], row[1], row[2]))
    jobs = tuple(
        VovJob(
            job_id=FIRST_JOB_ID + number,
            group=by_name[name].group,
            user=names[slot],
            jobclass=name,
            priority=rng.choice(_PRIORITIES),
            status=status,
            submitted=submitted,
            started=started,
            ended=ended,
        )
        for number, (submitted, name, slot, status, started, ended) in enumerate(rows)
    )
    return AcceleratorSite(names, jobs, last)


def _ended_jobs(
    rng: random.Random, job_class: JobClass, last: int
) -> list[tuple[int, str, str, str, int | None, int | None]]:
    """The class's jobs done or failed by `last`: submitted at its rate over the span (or in
    its bursts), each waiting a few minutes; a job that would not be over by `last` is left
    out (the end's jobs are END_PICTURE's)."""
    spans = [(last - SPAN, last)]
    if job_class.bursts:
        spans = [
            (last - back * HOUR, last - (back - length) * HOUR) for back, length in job_class.bursts
        ]
    rows: list[tuple[int, str, str, str, int | None, int | None]] = []
    for first, stop in spans:
        moment = float(first)
        while True:
            moment += rng.expovariate(job_class.per_hour / HOUR)
            if moment >= stop:
                break
            submitted = int(moment)
            slot = rng.choice(job_class.users)
            started = submitted + int(rng.lognormvariate(4.5, 1.0))  # a minute or two, typically
            length = rng.randrange(job_class.minutes[0] * MINUTE, job_class.minutes[1] * MINUTE)
            status = "DONE"
            if rng.random() < _FAILED:  # failing early, mostly
                status, length = "FAILED", rng.randrange(10, max(11, length // 4))
            if started + length < last:
                rows.append((submitted, job_class.name, slot, status, started, started + length))
    return rows


def _jobs_at_end(
    rng: random.Random,
    job_class: JobClass,
    slot: str,
    last: int,
    running: int,
    suspended: int,
    queued: int,
) -> list[tuple[int, str, str, str, int | None, int | None]]:
    """One user's jobs of a class still running, suspended or queued at `last`: those running
    started within their class's longest run before it, those queued came in its last 40
    minutes."""
    rows: list[tuple[int, str, str, str, int | None, int | None]] = []
    longest = job_class.minutes[1] * MINUTE
    for status, count in (("RUNNING", running), ("SUSPENDED", suspended)):
        for _ in range(count):
            started = last - rng.randrange(2 * MINUTE, longest)
            submitted = started - rng.randrange(20, 10 * MINUTE)
            rows.append((submitted, job_class.name, slot, status, started, None))
    for _ in range(queued):
        rows.append(
            (last - rng.randrange(MINUTE, 40 * MINUTE), job_class.name, slot, "QUEUED", None, None)
        )
    return rows


def jobs_csv(jobs: Sequence[VovJob]) -> str:
    """The jobs as the project's export: its header, then a job a line, times in epoch
    seconds, empty where not set."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ACCELERATOR_JOB_FIELDS)
    for job in jobs:
        writer.writerow(
            (
                job.job_id,
                job.fsgroup,
                job.user,
                job.status,
                job.jobclass,
                job.priority,
                job.submitted,
                "" if job.started is None else job.started,
                "" if job.ended is None else job.ended,
            )
        )
    return out.getvalue()
