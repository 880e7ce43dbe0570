import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from trees.formats.usage_file import truncated_names, write_usage_file
from trees.management.commands._base import FairshareCommand
from trees.selectors.pbs import pbs_state_get


class Command(FairshareCommand):
    help = "Write the cluster's usage as the PBS scheduler's binary usage file (v2)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "-o", "--output", required=True, metavar="FILE", help="the file to write; - for stdout"
        )
        parser.add_argument(
            "--file-version",
            type=int,
            choices=[1, 2],
            default=2,
            help="2 (what PBS writes today, the default) or 1 (headerless, 8-byte names)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.pbs_cluster(options["cluster"])
        database = pbs_state_get(cluster=cluster).database
        version = options["file_version"]
        for name in truncated_names(database.records, version=version):
            self.stderr.write(
                f"warning: {name!r} is too long for a v{version} usage file: PBS cuts it and "
                "then files its usage under unknown"
            )
        data = write_usage_file(database.records, last_decay=database.last_decay, version=version)
        if options["output"] == "-":
            sys.stdout.buffer.write(data)
            return
        try:
            Path(options["output"]).write_bytes(data)
        except OSError as exc:
            self.fail(f"{options['output']}: cannot write: {exc.strerror or exc}")
        self.stdout.write(f"wrote {len(database.records)} records to {options['output']}")
