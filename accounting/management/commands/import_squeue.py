from typing import Any

from django.core.management.base import CommandParser

from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource


class Command(IngestCommand):
    help = (
        "Take a live snapshot of a Slurm queue from `squeue --json` (data_parser v0.0.38 to"
        " v0.0.42): pending jobs with their partition, QOS, TRES, nice and accrue time; held"
        " jobs; running jobs. Pending jobs stored before the snapshot that it does not list"
        " have left the queue. Re-importing a snapshot changes nothing."
    )
    snapshot = True
    source = IngestSource.SQUEUE

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("paths", nargs="+", metavar="FILE", help="squeue --json output")
        self.add_create_nodes(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(options["paths"], options)
