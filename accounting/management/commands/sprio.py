from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.job_priority import priorities_at
from accounting.priorities import sprio_rows_get
from trees.formats.sprio import SprioError, format_sprio
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler


class Command(FairshareCommand):
    help = (
        "Slurm 22.05's sprio for a Slurm cluster's pending jobs (from import_squeue) as of a"
        " priority pass (--now): the multifactor priority and its weighted factors, with the"
        " settings of import_slurm_config; the same rows, columns and formats."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("-l", "--long", action="store_true", help="every column")
        parser.add_argument(
            "-n", "--norm", action="store_true", help="the factors normalized, not weighted"
        )
        parser.add_argument("-w", "--weights", action="store_true", help="the weights only")
        parser.add_argument("-h", "--noheader", action="store_true", help="no header line")
        parser.add_argument("-j", "--jobs", metavar="JOBS", help="these job ids (comma list)")
        parser.add_argument("-u", "--user", metavar="USERS", help="these users (comma list)")
        parser.add_argument("-p", "--partition", metavar="PARTS", help="these partitions")
        parser.add_argument("-o", "--format", metavar="FORMAT", help="sprio's -o format")
        parser.add_argument(
            "--now",
            metavar="ISO",
            help="the priority pass's time (ISO 8601); default: the pass the present falls in,"
            " on the PriorityCalcPeriod grid, as sprio shows its last pass's factors",
        )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # sprio's -h is --noheader: Django's help is still --help.
        parser = super().create_parser(prog_name, subcommand, add_help=False, **kwargs)
        parser.add_argument("--help", action="help", help="show this help message and exit")
        return parser

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler != Scheduler.SLURM:
            self.fail(f"cluster {cluster.name} is a {cluster.get_scheduler_display()} cluster")
        at = self.moment("--now", options["now"]) or priorities_at(cluster, timezone.now())
        config, rows = sprio_rows_get(cluster=cluster, at=at)
        try:
            text = format_sprio(
                rows,
                config,
                long=options["long"],
                normalized=options["norm"],
                weights=options["weights"],
                header=not options["noheader"],
                jobs=options["jobs"],
                users=options["user"],
                partitions=options["partition"],
                fmt=options["format"],
            )
        except SprioError as exc:
            self.stderr.write(str(exc), ending="")
            raise SystemExit(1) from exc
        self.stdout.write(text, ending="")
