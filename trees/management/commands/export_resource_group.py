from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from trees.management.commands._base import FairshareCommand
from trees.selectors.pbs import resource_group_text_get


class Command(FairshareCommand):
    help = "Write the cluster's tree as a PBS resource_group file."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.pbs_cluster(options["cluster"])
        text = resource_group_text_get(cluster=cluster, now=timezone.now())
        self.write_text(options["output"], text)
