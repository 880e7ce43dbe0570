from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from trees.formats.resource_group import format_resource_group
from trees.management.commands._base import FairshareCommand
from trees.selectors import pbs_state_get


class Command(FairshareCommand):
    help = "Write the cluster's tree as a PBS resource_group file."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.pbs_cluster(options["cluster"])
        state = pbs_state_get(cluster=cluster)
        stamp = timezone.now().strftime("%Y-%m-%d %H:%M:%S %Z")
        text = format_resource_group(
            state.groups, header=f"resource_group of cluster {cluster.name}, exported {stamp}"
        )
        self.write_text(options["output"], text)
