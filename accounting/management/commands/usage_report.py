import json
from typing import Any

from django.core.management.base import CommandParser

from accounting.selectors import REPORT_GROUPS, usage_report_get
from trees.downloads import CsvWriter
from trees.management.commands._base import FairshareCommand


class Command(FairshareCommand):
    help = (
        "Job runs that ended in a window, grouped: how many, core-hours (ncpus × walltime) and"
        " fairshare_usage_res usage, undecayed, most usage first. Running jobs are left out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--since", help="from this date or time (ISO 8601; included)")
        parser.add_argument("--until", help="to this date or time (ISO 8601; excluded)")
        parser.add_argument("--by", choices=REPORT_GROUPS, default="entity")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        since = self.moment("--since", options["since"])
        until = self.moment("--until", options["until"])
        if since is not None and until is not None and until <= since:
            self.fail(f"--until {options['until']} is not after --since {options['since']}")
        rows = usage_report_get(cluster=cluster, by=options["by"], since=since, until=until)
        if options["format"] == "json":
            self.stdout.write(json.dumps([row.document() for row in rows], indent=2))
            return
        writer = CsvWriter(self.stdout, lineterminator="\n")
        writer.writerow(["key", "jobs", "core_hours", "usage"])
        for row in rows:
            writer.writerow([row.key, row.jobs, row.core_hours, row.usage])
