"""The seed's /class/vcs picture (tests/accounting/accelerator_site.py, where its numbers are
worked out by hand) dated from a given moment, for the pages' tests, which compute at the
time they run (the server-side ones build it with the services, the browser's with the
commands): the jobs started an hour before, and one of u1's ended half an hour before."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from accounting.models import IngestSource
from accounting.services.accelerator import fsgroups_import
from accounting.services.cycles import cycle_run
from accounting.services.ingest import ingest
from tests.accounting.accelerator_site import FSGROUPS, HEADER, RULES, RUNNING
from tests.conftest import write_file
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules
from trees.models import Cluster
from trees.services.accelerator import preempt_rules_import

CLUSTER = "accel-seed"  # not the demo's `vov`, which the permission tests build beside
CYCLES = 3  # cycles kept, ten minutes apart, the last at the site's moment: a chart's points


def jobs_export(now: datetime, extra: Sequence[str] = ()) -> str:
    """The export at `now`: the running jobs (ids 1 to 16, started an hour before: u1's are 13
    to 15, u5's 16), u5's queued job q7 (submitted a minute before), one of u1's that ended
    half an hour before, and `extra` lines."""
    at = int(now.timestamp())
    lines = [HEADER]
    number = 0
    for group, user, count, jobclass in RUNNING:
        for _ in range(count):
            number += 1
            lines.append(f"{number},{group},{user},RUNNING,{jobclass},5,{at - 4000},{at - 3600},")
    lines.append(f"q7,/class/vcs.u5,u5,QUEUED,vcs,5,{at - 60},,")
    lines.append(f"d9,/class/vcs.u1,u1,DONE,vcs,5,{at - 7000},{at - 6000},{at - 1800}")
    lines.extend(extra)
    return "\n".join(lines) + "\n"


def seed_files(
    folder: Path, now: datetime, *, extra: Sequence[str] = (), rules: str = RULES
) -> tuple[str, str, str]:
    """The configuration, the jobs export at `now` (with `extra` lines) and the rules, written;
    their paths."""
    return (
        write_file(folder, "fsgroups.tcl", FSGROUPS),
        write_file(folder, "jobs.csv", jobs_export(now, extra)),
        write_file(folder, "rules.tcl", rules),
    )


def cycle_times(now: datetime) -> list[datetime]:
    """The moments of the site's cycles, oldest first, the last `now`."""
    return [now - timedelta(minutes=10 * back) for back in range(CYCLES - 1, -1, -1)]


def seed_site_made(
    folder: Path, now: datetime, *, extra: Sequence[str] = (), rules: str = RULES
) -> Cluster:
    """The seed's site stored as of `now` (with `extra` job lines and these rules), with
    CYCLES cycles kept."""
    fsgroups, jobs, rules = seed_files(folder, now, extra=extra, rules=rules)
    fsgroups_import(
        cluster_name=CLUSTER,
        groups=parse_fsgroups(Path(fsgroups).read_text()).groups,
        source="fsgroups.tcl",
        now=now,
    )
    ingest(cluster_name=CLUSTER, source=IngestSource.ACCELERATOR, paths=[jobs])
    preempt_rules_import(
        cluster_name=CLUSTER,
        rules=parse_preempt_rules(Path(rules).read_text()).rules,
        source="rules.tcl",
    )
    cluster = Cluster.objects.get(name=CLUSTER)
    for moment in cycle_times(now):
        cycle_run(cluster=cluster, now=moment)
    return cluster
