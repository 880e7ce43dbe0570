"""The seed's /class/vcs picture as files an Accelerator site gives: its FairShare
configuration, a jobs export and the page's two preemption rules; and stored (site_made).

/class/hsim and /class/vcs weigh the same; u2 runs 12 jobs of /class/hsim, u1 runs 3 and u5 runs
1 of /class/vcs, and u5 has one job queued: 16 jobs run. By hand (every share ×10,000):
/class/vcs.u1 has a target of 1/2 × 1/2 = 2500 and runs 3/16 = 1875, 625 under its target, but
3/4 of /class/vcs's jobs against a local target of 1/2: +2500; /class/vcs.u5 runs 1/16 = 625,
1875 under, and locally 1/4 against 1/2: -2500; its queued job ranks it 0.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from accounting.models import IngestSource
from accounting.services.accelerator import fsgroups_import
from accounting.services.cycles import cycle_run
from accounting.services.ingest import ingest
from tests.conftest import write_file
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules
from trees.models import Cluster
from trees.services.accelerator import preempt_rules_import

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
AT = int(NOW.timestamp())
HEADER = "id,fsgroup,user,status,jobclass,priority,submitted,started,ended"

FSGROUPS = """\
# vovfsgroup genconfig
FSGROUP class {
    FSGROUP hsim {}
    FSGROUP vcs {}
}
"""

RULES = """\
VovPreemptRule -rulename RuleThatDoesNotFire \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare -ruletype FAST_FAIRSHARE
VovPreemptRule -rulename RuleThatFires \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare  -ruletype FAST_FAIRSHARE
"""

RUNNING = (("/class/hsim.u2", "u2", 12, "hsim"), ("/class/vcs.u1", "u1", 3, "vcs"),
           ("/class/vcs.u5", "u5", 1, "vcs"))  # fmt: skip


def jobs_export(*extra: str) -> str:
    """The export at NOW: the running jobs (ids 1 to 16, started 500 s ago), u5's queued job
    q7, and `extra` lines."""
    lines = [HEADER]
    number = 0
    for group, user, count, jobclass in RUNNING:
        for _ in range(count):
            number += 1
            lines.append(f"{number},{group},{user},RUNNING,{jobclass},5,{AT - 600},{AT - 500},")
    lines.append(f"q7,/class/vcs.u5,u5,QUEUED,vcs,5,{AT - 60},,")
    lines.extend(extra)
    return "\n".join(lines) + "\n"


def seed_files(folder: Path) -> tuple[str, str, str]:
    """The configuration, the jobs export and the rules, written; their paths."""
    return (
        write_file(folder, "fsgroups.tcl", FSGROUPS),
        write_file(folder, "jobs.csv", jobs_export()),
        write_file(folder, "rules.tcl", RULES),
    )


def site_made(folder: Path, name: str = "vov") -> Cluster:
    """The picture stored: the configuration, the export and the rules imported, and two
    cycles kept, ten minutes before NOW (every job was still waiting then: the 16 started 500 s
    before NOW) and at NOW."""
    groups = parse_fsgroups(FSGROUPS).groups
    fsgroups_import(cluster_name=name, groups=groups, source="fsgroups.tcl", now=NOW)
    path = write_file(folder, "jobs.csv", jobs_export())
    ingest(cluster_name=name, source=IngestSource.ACCELERATOR, paths=[path])
    rules = parse_preempt_rules(RULES).rules
    preempt_rules_import(cluster_name=name, rules=rules, source="rules.tcl")
    cluster = Cluster.objects.get(name=name)
    for moment in (NOW - timedelta(minutes=10), NOW):
        cycle_run(cluster=cluster, now=moment)
    cluster.refresh_from_db()
    return cluster
