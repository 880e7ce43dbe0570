from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.formats.sshare import read_sshare
from trees.selectors import cluster_get
from trees.services import (
    pbsfs_run,
    resource_group_import,
    sched_config_import,
    slurm_tree_import,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample"


class Command(BaseCommand):
    help = (
        "Load the sample site: the PBS white paper's tree (cluster whitepaper), the forum "
        "post's tree (cluster forum), with their usage, and a Slurm Fair Tree cluster "
        "(fairtree) from sshare output. Running it again resets them."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for folder in sorted(SAMPLES.iterdir()):
            name = folder.name
            if (folder / "sshare.txt").exists():
                parsed = read_sshare((folder / "sshare.txt").read_bytes())
                slurm_tree_import(
                    cluster_name=name,
                    associations=parsed.associations,
                    source=f"sample {name}",
                    algorithm=parsed.algorithm,
                )
                self.stdout.write(
                    f"loaded Slurm cluster {name}: {len(parsed.entries)} associations"
                )
                continue
            sched_config_import(
                cluster_name=name,
                config=parse_sched_config((folder / "sched_config").read_bytes()),
            )
            groups = parse_resource_group((folder / "resource_group").read_bytes())
            resource_group_import(
                cluster_name=name,
                groups=groups.groups,
                pbs_messages=groups.pbs_messages,
                source=f"sample {name}",
            )
            cluster = cluster_get(name=name)
            for line in (folder / "usage").read_text().splitlines():
                entity, value = line.split()
                pbsfs_run(cluster=cluster, argv=["-s", entity, value])
            self.stdout.write(f"loaded cluster {name}: {len(groups.entries)} tree entries")
