from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import parse_sched_config
from trees.selectors import cluster_get
from trees.services import pbsfs_run, resource_group_import, sched_config_import

SAMPLES = Path(__file__).resolve().parents[2] / "sample"


class Command(BaseCommand):
    help = (
        "Load the sample site: the PBS white paper's tree (cluster whitepaper) and the forum "
        "post's tree (cluster forum), with their usage. Running it again resets them."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for folder in sorted(SAMPLES.iterdir()):
            name = folder.name
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
