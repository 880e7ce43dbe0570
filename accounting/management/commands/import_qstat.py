from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
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
        parser.add_argument(
            "--timezone",
            default=settings.TIME_ZONE,
            help="the PBS server's time zone, in which qstat prints times (default: TIME_ZONE,"
            f" {settings.TIME_ZONE})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            zone = ZoneInfo(options["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            self.fail(f"--timezone {options['timezone']}: not a time zone (e.g. Europe/Oslo)")
        self.run_ingest(options["paths"], options, time_zone=zone)
