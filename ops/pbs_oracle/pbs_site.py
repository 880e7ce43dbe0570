"""The site the OpenPBS oracle runs: the fairshare tree, the users, the queues, and the cases it
captures, each a scheduler configuration and the jobs it sorts or charges.

Users are base-passwd's system accounts whose home directory exists on every Debian (pbs_mom
changes into it before it runs a job): daemon, bin, sys, games, man, mail, proxy, backup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

USERS = ("daemon", "bin", "sys", "games", "man", "mail", "proxy", "backup")

# name, cgroup id, parent, shares: groups two deep, an entity of 0 shares (man); mail and
# backup are in no group, so their jobs' usage goes under `unknown`.
RESOURCE_GROUP = """\
physics 10 root 60
chem 20 root 40
theory 30 physics 20
daemon 101 theory 30
proxy 106 theory 10
bin 102 physics 10
sys 103 chem 20
games 104 chem 20
man 105 chem 0
"""

# name, Priority: 150 and more is an express queue (preempt_queue_prio's default).
QUEUES = (("workq", 0), ("high", 100), ("express", 200))


@dataclass(frozen=True)
class Job:
    """One qsub: as `user`, into `queue`, with these -l resources and -p priority; `seconds`
    the job's sleep (priority cases keep their jobs queued: the node is offline), `busy` a
    CPU-bound loop of about that many seconds instead, `after` seconds to wait before the
    next qsub."""

    user: str
    queue: str = "workq"
    resources: tuple[str, ...] = ("ncpus=1", "walltime=00:10:00")
    priority: int | None = None
    seconds: int = 600
    busy: bool = False
    after: float = 0.0


@dataclass(frozen=True)
class PriorityCase:
    """A scheduler configuration and queued jobs: one cycle's formula values and order."""

    name: str
    about: str
    formula: str | None
    sched_config: dict[str, str] = field(default_factory=dict)  # sched_config lines replaced
    server: dict[str, str] = field(default_factory=dict)  # qmgr `set server` attributes
    sched: dict[str, str] = field(default_factory=dict)  # qmgr `set sched` attributes
    usage: tuple[tuple[str, int], ...] = ()  # pbsfs -s ENTITY USAGE, in this order
    refused: tuple[str, ...] = ()  # formulas qmgr is asked to set and PBS refuses
    jobs: tuple[Job, ...] = ()


BASE_SCHED_CONFIG = {
    "fair_share": "true\tALL",
    "fairshare_usage_res": "cput",
    "fairshare_entity": "euser",
    "fairshare_decay_time": "24:00:00",
    "fairshare_decay_factor": "0.5",
    "by_queue": "True\tALL",
    "preemptive_sched": "true\tALL",
}
USAGE = (("daemon", 500), ("bin", 100), ("sys", 50), ("proxy", 2000), ("games", 1))

JOBS = (
    Job("daemon", resources=("ncpus=2", "mem=2gb", "walltime=01:00:00")),
    Job("bin", resources=("ncpus=1", "mem=1gb", "walltime=00:30:00")),
    Job("sys", queue="high", resources=("ncpus=4", "mem=4gb", "walltime=02:00:00")),
    Job("games", resources=("ncpus=1", "walltime=00:05:00"), priority=100),
    Job("man", resources=("ncpus=1", "walltime=00:10:00")),  # 0 shares: never considered
    Job("mail", resources=("ncpus=2", "walltime=00:20:00")),  # under unknown
    Job("proxy", queue="high", resources=("ncpus=3", "mem=3gb", "walltime=04:00:00"), after=1.2),
    Job("daemon", queue="express", resources=("ncpus=1", "walltime=00:15:00")),
    Job("bin", resources=("ncpus=2", "mem=512mb", "walltime=00:45:00"), priority=-50),
    Job("games", queue="high", resources=("ncpus=1", "walltime=00:01:00")),
    Job("backup", resources=("ncpus=1", "walltime=00:10:00")),  # under unknown
    Job("sys", resources=("ncpus=1", "mem=8gb", "walltime=10:00:00"), after=1.2),
)

PRIORITY_CASES = (
    PriorityCase(
        "seed_formula",
        "seed 003's formula (ncpus, fairshare_tree_usage, eligible_time), by_queue, an express"
        " queue, a 0-share entity, entities under unknown",
        "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)",
        server={"eligible_time_enable": "True"},
        usage=USAGE,
        jobs=JOBS,
    ),
    PriorityCase(
        "perc_factor_math",
        "fairshare_perc, fairshare_factor, queue_priority, job_priority, walltime, mem and math"
        " functions; no by_queue; a threshold some jobs are under",
        "1000*fairshare_perc + 500*fairshare_factor + queue_priority + walltime/3600"
        " + log(ncpus + 1) + ceil(mem/1048576) + min(ncpus, 3) + job_priority/10",
        sched_config={"by_queue": "False\tALL"},
        sched={"job_sort_formula_threshold": "348"},
        usage=USAGE,
        refused=("ncpus +* 2", "arch + ncpus"),
        jobs=JOBS,
    ),
    PriorityCase(
        "no_formula",
        "no formula: fair share's order (usage over perc down the tree), by_queue, job_sort_key",
        None,
        sched_config={"job_sort_key": '"ncpus HIGH"\tALL'},
        usage=USAGE,
        jobs=JOBS,
    ),
    PriorityCase(
        "no_preemption",
        "preemptive_sched false: the express queue is only its Priority; eligible_time off",
        "queue_priority + 100*fairshare_factor + sqrt(walltime)/60 + pow(ncpus, 2)",
        sched_config={"preemptive_sched": "false\tALL", "by_queue": "False\tALL"},
        server={"eligible_time_enable": "False"},
        usage=(("daemon", 40), ("bin", 4000), ("sys", 90), ("games", 7)),
        jobs=JOBS,
    ),
)


def resource_group() -> str:
    return RESOURCE_GROUP


def sched_config(shipped: str, changes: dict[str, str]) -> str:
    """The shipped sched_config with each `key:` line of BASE_SCHED_CONFIG and `changes`
    replaced (or added at the end)."""
    wanted = {**BASE_SCHED_CONFIG, **changes}
    lines, seen = [], set()
    for line in shipped.splitlines():
        key = line.split(":", 1)[0].strip() if ":" in line and not line.startswith("#") else ""
        if key in wanted:
            if key not in seen:
                lines.append(f"{key}: {wanted[key]}")
                seen.add(key)
            continue
        lines.append(line)
    lines += [f"{key}: {value}" for key, value in wanted.items() if key not in seen]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class UsageCase:
    """Real jobs that end by themselves, on the MoM's poll settings and a 60-second
    scheduler_iteration: what PBS's fairshare database gains of them."""

    name: str
    about: str
    usage_res: str
    min_check_poll: int
    max_check_poll: int
    jobs: tuple[Job, ...]
    decay_time: str = "24:00:00"
    decay_factor: str = "0.5"
    iteration: int = 60
    snapshots: bool = False  # keep the usage file as each cycle wrote it (the decays)


def _usage_jobs(busy: bool) -> tuple[Job, ...]:
    return (
        Job("daemon", resources=("ncpus=1", "walltime=00:10:00"), seconds=95, busy=busy, after=7),
        Job("bin", resources=("ncpus=2", "walltime=00:10:00"), seconds=40, after=23),
        Job("sys", resources=("ncpus=1", "walltime=00:10:00"), seconds=150, busy=busy, after=31),
        Job("games", resources=("ncpus=1", "walltime=00:10:00"), seconds=12, after=4),
        Job("mail", resources=("ncpus=3", "walltime=00:10:00"), seconds=70, after=19),
        Job("daemon", resources=("ncpus=1", "walltime=00:10:00"), seconds=200, after=11),
        Job("proxy", resources=("ncpus=2", "walltime=00:10:00"), seconds=33, after=27),
        Job("backup", resources=("ncpus=1", "walltime=00:10:00"), seconds=55, after=2),
    )


USAGE_CASES = (
    UsageCase(
        "walltime_default_polls",
        "fairshare_usage_res walltime, the MoM's default polls (10 s growing to 120 s)",
        "walltime", 10, 120, _usage_jobs(busy=False),
    ),
    UsageCase(
        "cput_fast_polls",
        "fairshare_usage_res cput, two CPU-bound jobs, polls of 5 s growing to 30 s",
        "cput", 5, 30, _usage_jobs(busy=True),
    ),
    UsageCase(
        "ncpus_walltime_decay",
        "fairshare_usage_res ncpus*walltime, polls every 45 s, a decay every 100 s (factor 0.5)",
        "ncpus*walltime", 45, 45, _usage_jobs(busy=False),
        decay_time="00:01:40", snapshots=True,
    ),
)  # fmt: skip
