"""The demo's sample clusters, loaded from their files through the same services as a real
site's: a PBS cluster's sched_config, resource_group and usage, a Slurm cluster's sshare."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from accounting.services.pricing import sched_config_import
from trees.formats.resource_group import ResourceGroup, parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.formats.sshare_read import read_sshare
from trees.models import Scheduler
from trees.selectors.clusters import cluster_get
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
