from typing import Any

from django.core.management.base import CommandParser

from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource


class Command(IngestCommand):
    help = (
        "Take a live snapshot of a PBS queue from `qstat -f -F json`: queued jobs with what"
        " they ask for, their Priority and eligible_time; held jobs; running jobs. Queued jobs"
        " stored before the snapshot that it does not list have left the queue. Re-importing"
        " a snapshot changes nothing."
    )
    snapshot = True
    source = IngestSource.QSTAT

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("paths", nargs="+", metavar="FILE", help="qstat -f -F json output")
        self.add_timezone(parser, "the PBS server's")

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(options["paths"], options, time_zone=self.time_zone(options))
