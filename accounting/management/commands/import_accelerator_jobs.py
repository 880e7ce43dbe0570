from typing import Any

from django.core.management.base import CommandParser

from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource


class Command(IngestCommand):
    help = (
        "Take a snapshot of an Altair Accelerator cluster's jobs from the CSV export"
        " `id,fsgroup,user,status,jobclass,priority,submitted,started,ended` (docs/accelerator.md"
        " says how to make it): queued, running and suspended jobs with their priority, and"
        " the done and failed ones with their times. A job's group the tree lacks is made"
        " (a user's leaf G.user, as Accelerator makes it); queued jobs stored before the"
        " snapshot that it does not list have left the queue; every group's FS_* fields are"
        " recomputed. Re-importing a snapshot changes nothing."
    )
    snapshot = True
    source = IngestSource.ACCELERATOR

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("paths", nargs="+", metavar="FILE", help="the jobs export (CSV)")

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(options["paths"], options)
