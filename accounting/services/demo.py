"""The demo's sample clusters, loaded from their files through the same services as a real
site's: a PBS cluster's sched_config, resource_group and usage, a Slurm cluster's sshare; and
the generated Accelerator site's configuration, rules and cycles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from accounting.models import NodeHistory
from accounting.selectors import cycle_period
from accounting.services.accelerator import fsgroups_import
from accounting.services.cycles import cycle_run
from accounting.services.pricing import sched_config_import
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules
from trees.formats.resource_group import ResourceGroup, parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.formats.sshare_read import read_sshare
from trees.models import Cluster, Scheduler
from trees.selectors.clusters import cluster_get
from trees.services.accelerator import preempt_rules_import
from trees.services.pbs import pbs_usage_set, resource_group_import
from trees.services.slurm import slurm_tree_import

# One folder a cluster, named as the cluster: `sshare.txt` (Slurm), or `sched_config`,
# `resource_group` and `usage` (PBS: `ENTITY USAGE` lines, set as pbsfs -s sets them).
DEMO_SAMPLES = Path(__file__).resolve().parents[1] / "demo_sample"


@dataclass(frozen=True)
class SampleLoaded:
    name: str
    scheduler: str
    entries: int  # resource_group entries or associations


def demo_sample_load(folder: Path) -> SampleLoaded:
    """The sample cluster of `folder` (see DEMO_SAMPLES), made or replaced."""
    name = folder.name
    if (folder / "sshare.txt").exists():
        parsed = read_sshare((folder / "sshare.txt").read_bytes())
        slurm_tree_import(
            cluster_name=name,
            associations=parsed.associations,
            source=f"sample {name}",
            algorithm=parsed.algorithm,
        )
        return SampleLoaded(name, Scheduler.SLURM, len(parsed.entries))
    groups = pbs_site_import(
        name, folder / "sched_config", folder / "resource_group", f"sample {name}"
    )
    usage = [line.split() for line in (folder / "usage").read_text().splitlines()]
    pbs_usage_set(
        cluster=cluster_get(name=name),
        usage=[(entity, float(value)) for entity, value in usage],
        reason=f"sample {name}",
    )
    return SampleLoaded(name, Scheduler.PBS, len(groups.entries))


def pbs_site_import(
    name: str, sched_config: Path, resource_group: Path, source: str
) -> ResourceGroup:
    """A PBS cluster's sched_config, then its resource_group, as the import commands do."""
    sched_config_import(cluster_name=name, config=parse_sched_config(sched_config.read_bytes()))
    groups = parse_resource_group(resource_group.read_bytes())
    resource_group_import(
        cluster_name=name, groups=groups.groups, pbs_messages=groups.pbs_messages, source=source
    )
    return groups


@dataclass(frozen=True)
class AcceleratorConfigured:
    groups: int  # every group stored, the root and the groups jobs made included
    defined: int  # those the configuration defines
    rules: int


def accelerator_config_import(
    *, name: str, fsgroups: Path, rules: Path, source: str, now: datetime
) -> AcceleratorConfigured:
    """An Accelerator cluster's FairShare configuration (vovfsgroup genconfig's Tcl) and its
    preemption rule file, as import_fsgroups and import_preempt_rules load them; a problem in
    either is an error (the demo's files have none)."""
    parsed = parse_fsgroups(fsgroups.read_text())
    read = parse_preempt_rules(rules.read_text())
    problems = [*parsed.problems, *read.problems]
    if problems:
        raise ValueError(f"{source}: {problems[0]}")
    stored = fsgroups_import(cluster_name=name, groups=parsed.groups, source=source, now=now)
    done = preempt_rules_import(cluster_name=name, rules=read.rules, source=source)
    return AcceleratorConfigured(stored.groups, len(parsed.groups), done.rules)


@dataclass(frozen=True)
class CyclesRun:
    cycles: int
    history_rows: int  # the cluster's, after them


def cycles_run(*, cluster: Cluster, first: datetime, last: datetime) -> CyclesRun:
    """The cluster's cycle at every cycle period from `first` to `last`, both included, as the
    beat would have run them (a cycle done before is not run again)."""
    step = cycle_period(cluster)
    moment, cycles = first, 0
    while moment <= last:
        cycles += cycle_run(cluster=cluster, now=moment) is not None
        moment += step
    history = NodeHistory.objects.filter(node__cluster=cluster).count()
    return CyclesRun(cycles, history)
