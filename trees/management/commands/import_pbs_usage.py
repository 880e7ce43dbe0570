from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.usage_file import read_usage_file
from trees.management.commands._base import FairshareCommand
from trees.services.pbs import pbs_usage_import


class Command(FairshareCommand):
    help = "Replace the cluster's usage with a PBS scheduler usage file (sched_priv/usage)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the binary usage file, v1 or v2")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        usage = read_usage_file(self.read_binary(path))
        if usage.refused:
            self.fail(f"{path}: nothing imported: {usage.refused}")
        for problem in usage.rejected:
            self.stderr.write(f"{path}: {problem}")
        if not usage.header_ok:
            self.fail(f"{path}: nothing imported: PBS reads no usage from a file with this header")
        try:
            result = pbs_usage_import(cluster_name=options["cluster"], usage=usage)
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        for problem in result.screened:
            self.stderr.write(f"{path}: {problem}")
        if result.summary is None:
            self.fail(f"{path}: nothing imported: no record could be read")
        rejected = len(usage.rejected) + len(result.screened)
        self.stdout.write(
            f"{path}: usage file v{usage.version}: imported {result.imported} records into "
            f"cluster {options['cluster']}; rejected {rejected};"
            f" {result.summary.unknown_entities} entities under unknown"
        )
