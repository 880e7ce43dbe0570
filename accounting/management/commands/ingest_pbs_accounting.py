import re
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from accounting.management.commands._ingest import IngestCommand
from accounting.models import IngestSource

# PBS names each day's log YYYYMMDD; directories hold other files too (the .gz of old days).
_DAY_FILE = re.compile(r"\d{8}(\.gz)?")


class Command(IngestCommand):
    help = (
        "Store the job runs of PBS Professional, OpenPBS or Torque accounting logs (files, or"
        " directories of YYYYMMDD files, read in day order); each file is one transaction."
    )
    source = IngestSource.PBS_ACCOUNTING

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "paths", nargs="+", metavar="PATH", help="accounting files or directories"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.run_ingest(self._files(options["paths"]), options)

    def _files(self, paths: list[str]) -> list[str]:
        files = []
        for path in paths:
            folder = Path(path)
            if not folder.is_dir():
                files.append(path)
                continue
            days = sorted(p for p in folder.iterdir() if _DAY_FILE.fullmatch(p.name))
            if not days:
                self.stderr.write(f"{path}: no YYYYMMDD accounting files in this directory")
            files += [str(day) for day in days]
        if not files:
            self.fail("nothing ingested: no accounting file given")
        return files
