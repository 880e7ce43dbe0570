from typing import Any

from django.core.management.base import CommandParser

from accounting.entities import SWF_ACCOUNT_FROM
from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource


class Command(IngestCommand):
    help = (
        "Store the jobs of a Standard Workload Format trace (Parallel Workloads Archive, gzip"
        " or plain). Users, groups, queues and partitions are named user17, group3, queue2"
        " (or the header's queue name), partition4; the group is the project and account."
    )
    source = IngestSource.SWF

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("paths", nargs="+", metavar="PATH", help="an .swf or .swf.gz trace")
        self.add_create_nodes(parser)
        parser.add_argument(
            "--account-from",
            choices=SWF_ACCOUNT_FROM,
            default="group",
            help="the SWF field that is a job's project and account (default: group)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(options["paths"], options, swf_account_from=options["account_from"])
