"""The site the Slurm oracle builds: nodes, partitions, QOS, the association tree, the jobs, and
the priority configurations it captures, with the commands whose output each case keeps.

The tree has what the imports must get right: accounts two deep, a user in two accounts, a
0-share user, a `parent` user, a user who never ran, association priorities set on accounts
and inherited by their users (one user with its own), a coordinator. The pending jobs have
what sprio must get right: several partitions of different and equal PriorityTier, QOS, TRES
and GPUs, nice either way, a held job, a future begin, a dependency, arrays, a priority set by
an admin, jobs without --time in partitions with and without a MaxTime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CLUSTER = "oracle"


@dataclass(frozen=True)
class NodeSpec:
    name: str
    cpus: int
    memory: int  # MB
    gpus: int = 0


# Memory in whole GiB and billing weights that make whole numbers of it: the raw usage stays
# whole, and sshare, which prints it truncated, then says all of it.
NODES = (
    NodeSpec("n1", 8, 16384),
    NodeSpec("n2", 8, 16384),
    NodeSpec("n3", 16, 32768, gpus=2),
    NodeSpec("n4", 16, 32768, gpus=2),
)

PARTITIONS = (
    "PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=INFINITE PriorityJobFactor=10"
    " PriorityTier=1 State=UP",
    "PartitionName=short Nodes=n[1-2] MaxTime=01:00:00 PriorityJobFactor=20 PriorityTier=5"
    " State=UP",
    "PartitionName=long Nodes=n[1-4] MaxTime=2-00:00:00 PriorityJobFactor=5 PriorityTier=1"
    " State=UP",
    "PartitionName=gpu Nodes=n[3-4] MaxTime=04:00:00 PriorityJobFactor=40 PriorityTier=3"
    " State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=4.0",
)


@dataclass(frozen=True)
class QosSpec:
    name: str
    priority: int


QOS = (QosSpec("normal", 10), QosSpec("high", 100), QosSpec("low", 1))


@dataclass(frozen=True)
class AccountSpec:
    name: str
    parent: str
    shares: int
    priority: int | None = None


ACCOUNTS = (
    AccountSpec("phys", "root", 40, priority=10),
    AccountSpec("chem", "root", 60),
    AccountSpec("bio", "root", 25, priority=50),
    AccountSpec("theory", "phys", 30),
    AccountSpec("exp", "phys", 10),
)


@dataclass(frozen=True)
class UserSpec:
    """A user association; `shares` a number or "parent". Users are base-passwd's accounts."""

    name: str
    account: str
    shares: int | str
    priority: int | None = None


USERS = (
    UserSpec("lp", "phys", 10),
    UserSpec("mail", "phys", 20, priority=30),
    UserSpec("news", "theory", 1),
    UserSpec("uucp", "theory", 3),
    UserSpec("proxy", "exp", "parent"),
    UserSpec("backup", "exp", 5),
    UserSpec("lp", "chem", 5),
    UserSpec("list", "chem", 0),
    UserSpec("irc", "chem", 10, priority=20),
    UserSpec("games", "bio", 1),
    UserSpec("man", "bio", 2),
)


@dataclass(frozen=True)
class CoordinatorSpec:
    account: str
    user: str


COORDINATORS = (CoordinatorSpec("phys", "mail"), CoordinatorSpec("chem", "irc"))


@dataclass(frozen=True)
class Job:
    """One sbatch: `options` as typed; `after` the name of a job it depends on (afterok);
    `updates` what an admin then sets with `scontrol update jobid=ID ...`; `pause` seconds
    before the next submission (the ages differ)."""

    name: str
    user: str
    account: str
    options: tuple[str, ...] = ()
    seconds: int = 5
    after: str | None = None
    updates: tuple[str, ...] = ()
    pause: float = 0


# Run for usage (AccountingStorageEnforce=limits charges each at its end), all at once.
USAGE_JOBS = (
    Job("u-lp", "lp", "phys", ("-p", "batch", "-n", "8", "-t", "5"), seconds=6),
    Job("u-mail", "mail", "phys", ("-p", "batch", "-n", "4", "-t", "5"), seconds=5),
    Job("u-news", "news", "theory", ("-p", "batch", "-n", "2", "-t", "5"), seconds=4),
    Job("u-uucp", "uucp", "theory", ("-p", "batch", "-n", "6", "-t", "5"), seconds=4),
    Job("u-proxy", "proxy", "exp", ("-p", "batch", "-n", "2", "-t", "5"), seconds=5),
    Job("u-backup", "backup", "exp", ("-p", "short", "-n", "1", "-t", "5"), seconds=3),
    Job("u-lp-chem", "lp", "chem", ("-p", "short", "-n", "4", "-t", "5"), seconds=3),
    Job("u-list", "list", "chem", ("-p", "gpu", "-n", "2", "--gres=gpu:1", "-t", "5"), seconds=4),
    Job("u-irc", "irc", "chem", ("-p", "gpu", "-n", "4", "-t", "5"), seconds=6),
    Job("u-games", "games", "bio", ("-p", "long", "-n", "1", "-t", "5"), seconds=2),
)

# Submitted once the nodes are drained: they stay pending through every case.
PENDING_JOBS = (
    Job("lp-batch", "lp", "phys", ("-p", "batch", "-n", "4", "-t", "60", "--mem=2000")),
    Job("mail-three", "mail", "phys", ("-p", "batch,short,long", "-n", "2")),
    Job("news-long-short", "news", "theory", ("-p", "long,short", "-n", "1", "-t", "30")),
    Job("uucp-gpu", "uucp", "theory",
        ("-p", "gpu", "--gres=gpu:2", "-n", "8", "-t", "120", "--qos=high")),
    Job("proxy-low", "proxy", "exp", ("--qos=low", "-N", "2", "-n", "16", "-t", "600"),
        pause=12),
    Job("backup-nice", "backup", "exp", ("--nice=500", "-n", "1", "-t", "10")),
    Job("lp-chem-nice", "lp", "chem", ("--nice=-300", "-n", "2", "-t", "20", "-p", "short")),
    Job("list-zero", "list", "chem", ("-n", "1", "-t", "5")),
    Job("irc-gpus", "irc", "chem", ("-p", "batch,gpu", "--gpus=1", "-n", "2", "-t", "45")),
    Job("games-array", "games", "bio", ("--array=0-3", "-n", "1", "-t", "15"), pause=12),
    Job("man-whole", "man", "bio", ("-p", "batch", "-N", "4", "-n", "48", "-t", "1440")),
    Job("mail-held", "mail", "phys", ("-H", "-n", "1", "-t", "5")),
    Job("news-begin", "news", "theory", ("--begin=now+2hours", "-n", "1", "-t", "5")),
    Job("uucp-after", "uucp", "theory", ("-n", "1", "-t", "5"), after="mail-held"),
    # No job with a site factor (`scontrol update sitefactor=`): squeue --json does not show
    # it, and sprio's SITE column cannot be made from what the imports read.
    Job("proxy-direct", "proxy", "exp", ("-n", "2", "-t", "30"), updates=("priority=7777",)),
    Job("backup-three", "backup", "exp", ("-n", "3", "-t", "30")),
    Job("lp-no-time", "lp", "phys", ("-p", "long,batch", "-n", "1"), pause=12),
    Job("irc-mem", "irc", "chem", ("-p", "batch,gpu", "-n", "4", "--mem-per-cpu=1500", "-t", "90")),
    Job("list-array", "list", "chem", ("--array=1-9:2%2", "-n", "1", "-t", "5")),
    Job("games-late", "games", "bio", ("-p", "short,batch", "-n", "8", "-t", "240")),
    Job("man-gpu-nice", "man", "bio",
        ("-p", "gpu", "--gres=gpu:1", "-n", "1", "-t", "30", "--nice=-50", "--qos=low")),
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """A priority configuration: slurm.conf lines that replace the defaults below."""

    name: str
    about: str
    settings: dict[str, str] = field(default_factory=dict)


BASE_PRIORITY = {
    "PriorityType": "priority/multifactor",
    "PriorityCalcPeriod": "1",
    "PriorityDecayHalfLife": "0",
    "PriorityUsageResetPeriod": "YEARLY",
    "PriorityMaxAge": "30",
    "PriorityWeightAge": "1000",
    "PriorityWeightAssoc": "100",
    "PriorityWeightFairshare": "10000",
    "PriorityWeightJobSize": "500",
    "PriorityWeightPartition": "2000",
    "PriorityWeightQOS": "3000",
    "PriorityWeightTRES": "CPU=1000,Mem=2000,GRES/gpu=4000",
    "AccountingStorageEnforce": "associations,limits,qos",
}

CASES = (
    Case("fair_tree", "Fair Tree, every weight, TRES weights with GPUs, limits enforced"),
    Case(
        "classic",
        "classic fairshare (NO_FAIR_TREE), dampening 2, no TRES weights, no limits enforced",
        {
            "PriorityFlags": "NO_FAIR_TREE",
            "FairShareDampeningFactor": "2",
            "PriorityWeightTRES": "",
            "AccountingStorageEnforce": "associations",
        },
    ),
    Case(
        "depth_oblivious",
        "DEPTH_OBLIVIOUS classic fairshare, fractional TRES weights",
        {"PriorityFlags": "DEPTH_OBLIVIOUS",
         "PriorityWeightTRES": "CPU=750.5,Mem=0.5G,GRES/gpu=12.25"},
    ),
    Case(
        "favor_small",
        "PriorityFavorSmall, an assoc weight of 0, a long PriorityMaxAge",
        {"PriorityFavorSmall": "YES", "PriorityWeightAssoc": "0", "PriorityMaxAge": "7-0",
         "PriorityWeightTRES": "CPU=500"},
    ),
    Case(
        "small_relative_to_time",
        "SMALL_RELATIVE_TO_TIME, job size weighed heavily",
        {"PriorityFlags": "SMALL_RELATIVE_TO_TIME", "PriorityWeightJobSize": "100000"},
    ),
    Case(
        "small_relative_favor_small",
        "SMALL_RELATIVE_TO_TIME with PriorityFavorSmall, under classic fairshare",
        {"PriorityFlags": "SMALL_RELATIVE_TO_TIME,NO_FAIR_TREE", "PriorityFavorSmall": "YES",
         "PriorityWeightJobSize": "100000"},
    ),
    Case(
        "no_normal_qos",
        "NO_NORMAL_QOS alone (scontrol show config prints NO_NORMAL_ALL)",
        {"PriorityFlags": "NO_NORMAL_QOS", "PriorityWeightQOS": "7"},
    ),
    Case(
        "no_normal_assoc_part_tres",
        "NO_NORMAL_ASSOC, NO_NORMAL_PART and NO_NORMAL_TRES, small weights",
        {"PriorityFlags": "NO_NORMAL_ASSOC,NO_NORMAL_PART,NO_NORMAL_TRES",
         "PriorityWeightAssoc": "3", "PriorityWeightPartition": "11",
         "PriorityWeightTRES": "CPU=2,Mem=0.001,GRES/gpu=50"},
    ),
    Case(
        "accrue_always",
        "ACCRUE_ALWAYS: the future begin and the dependent job are listed",
        {"PriorityFlags": "ACCRUE_ALWAYS"},
    ),
    Case(
        "max_tres_fractional",
        "MAX_TRES, fractional TRES weights on Node and billing",
        {"PriorityFlags": "MAX_TRES",
         "PriorityWeightTRES": "CPU=0.5,Mem=0.75G,Node=12.25,billing=3.5,GRES/gpu=250.5"},
    ),
)  # fmt: skip


def node_list() -> str:
    return ",".join(node.name for node in NODES)


def slurm_conf(
    *,
    folder: Path,
    socket: Path,
    ctld_port: int,
    slurmd_port: int,
    dbd_port: int,
    node_ports: list[int],
    case: Case | None,
) -> str:
    """slurm.conf: the daemons on their own ports and folder, then the case's priorities."""
    lines = [
        f"ClusterName={CLUSTER}",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        "AuthType=auth/munge",
        f"AuthInfo=socket={socket}",
        "CredType=cred/munge",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={folder / 'state'}",
        f"SlurmdSpoolDir={folder / 'spool'}/%n",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmdPidFile={folder / 'slurmd'}.%n.pid",
        f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={folder / 'log' / 'slurmd'}.%n.log",
        "SlurmctldDebug=verbose",  # log_flag lines (DebugFlags=Priority) are verbose
        "SlurmdDebug=info",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=localhost",
        f"AccountingStoragePort={dbd_port}",
        f"AccountingStoragePass={socket}",  # the munge socket slurmdbd's clients use
        "AccountingStorageTRES=gres/gpu",
        "GresTypes=gpu",
        "MailProg=/bin/true",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",  # the nodes are as configured, not as this host
        "MinJobAge=600",
        # NO_CONF_HASH: slurmd keep the first slurm.conf, each case changes it; Priority: the
        # factors and effective usages in the log, for whoever reads a difference.
        "DebugFlags=NO_CONF_HASH,Priority",
    ]
    settings = dict(BASE_PRIORITY)
    if case is not None:
        settings.update(case.settings)
    lines += [f"{key}={value}" for key, value in settings.items() if value != ""]
    for node, port in zip(NODES, node_ports, strict=True):
        gres = f" Gres=gpu:{node.gpus}" if node.gpus else ""
        lines.append(
            f"NodeName={node.name} NodeHostname=localhost Port={port} CPUs={node.cpus}"
            f" RealMemory={node.memory}{gres} State=UNKNOWN"
        )
    lines += PARTITIONS
    return "\n".join(lines) + "\n"


def slurmdbd_conf(*, folder: Path, socket: Path, port: int, database: str) -> str:
    return "\n".join([
        "AuthType=auth/munge",
        f"AuthInfo=socket={socket}",
        "DbdHost=localhost",
        f"DbdPort={port}",
        "SlurmUser=root",
        "StorageType=accounting_storage/mysql",
        "StorageHost=127.0.0.1",
        "StoragePort=3306",
        "StorageUser=root",
        f"StorageLoc={database}",
        f"PidFile={folder / 'slurmdbd.pid'}",
        f"LogFile={folder / 'log' / 'slurmdbd.log'}",
        "DebugLevel=info",
    ]) + "\n"  # fmt: skip


def gres_conf(folder: Path) -> str:
    return "".join(
        f"NodeName={node.name} Name=gpu File={folder / 'dev'}/{node.name}-gpu[0-{node.gpus - 1}]\n"
        for node in NODES
        if node.gpus
    )


def outputs(case: Case, jobs: dict[str, str]) -> list[tuple[str, list[str]]]:
    """Each output file and the command that prints it (sprio and sshare with their options)."""
    multi, gpus, direct = jobs["mail-three"], jobs["irc-gpus"], jobs["proxy-direct"]
    some = ",".join([multi, gpus, direct, jobs["lp-no-time"], jobs["news-begin"]])
    commands = [
        ["sprio"],
        ["sprio", "-l"],
        ["sprio", "-n"],
        ["sprio", "-n", "-l"],
        ["sprio", "-w"],
        ["sprio", "-w", "-n"],
        ["sprio", "-w", "-l"],
        ["sprio", "-h"],
        ["sprio", "-u", "mail,irc"],
        ["sprio", "-u", "lp", "-l"],
        ["sprio", "-u", "news,games", "-n"],
        ["sprio", "-u", "man", "-n", "-l"],
        ["sprio", "-j", some],
        ["sprio", "-j", multi, "-l"],
        ["sprio", "-j", gpus, "-n"],
        ["sprio", "-j", f"{direct},{jobs['backup-three']}", "-n", "-l"],
        ["sprio", "-j", jobs["mail-held"]],
        ["sprio", "-j", multi, "-u", "mail"],
        ["sprio", "-p", "short"],
        ["sprio", "-p", "gpu,long", "-l"],
        ["sprio", "-o", "%.15i %9r %.8u %.10Y %.10A %.10F %.10J %.20T"],
        ["sshare", "-a", "-l"],
        ["sshare", "-a", "-l", "-P"],
        ["sshare", "-a"],
        ["sshare", "-a", "-P"],
        ["sshare", "-a", "-l", "-p"],
        ["sshare", "-a", "-l", "-u", "lp,list"],
        ["sshare", "-l", "-A", "chem,bio"],
    ]
    named = []
    for command in commands:
        flags = "_".join(arg.lstrip("-") for arg in command[1:] if arg.startswith("-"))
        named.append((f"{command[0]}{'_' + flags if flags else ''}", command))
    seen: dict[str, int] = {}
    result = []
    for stem, command in named:
        seen[stem] = seen.get(stem, 0) + 1
        suffix = f"_{seen[stem]}" if seen[stem] > 1 else ""
        result.append((f"{stem}{suffix}.txt", command))
    return result
