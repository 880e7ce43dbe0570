from typing import Any

from django.core.management.base import CommandParser

from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource


class Command(IngestCommand):
    help = (
        "Store the jobs of a Slurm `sacct --parsable2` dump in the 26 fields XDMoD asks for"
        " (jobid|jobidraw|cluster|partition|qos|account|group|gid|user|uid|submit|eligible|"
        "start|end|elapsed|exitcode|state|nnodes|ncpus|reqcpus|reqmem|reqtres|alloctres|"
        "timelimit|nodelist|jobname)."
    )
    source = IngestSource.SACCT

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("paths", nargs="+", metavar="PATH", help="an sacct -P dump")
        self.add_create_nodes(parser)
        self.add_timezone(parser, "the cluster's")

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(options["paths"], options, time_zone=self.time_zone(options))
