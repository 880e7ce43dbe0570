from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.resource_group import parse_resource_group
from trees.management.commands._base import FairshareCommand
from trees.services.pbs import resource_group_import


class Command(FairshareCommand):
    help = "Load a PBS resource_group file as the cluster's fairshare tree (usage is kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the resource_group file")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        parsed = parse_resource_group(self.read_bytes(path))
        if parsed.refused:
            self.report_rejected(path, parsed.rejected, strict=False, kept=1)  # each line's why
            self.fail(f"{path}: nothing imported: {parsed.refused}")
        self.report_rejected(
            path, parsed.rejected, strict=options["strict"], kept=len(parsed.entries)
        )
        try:
            summary = resource_group_import(
                cluster_name=options["cluster"],
                groups=parsed.groups,
                pbs_messages=parsed.pbs_messages,
                source=path,
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(
            f"{path}: imported {len(parsed.entries)} entries into cluster {options['cluster']}"
            f"{' (new)' if summary.cluster_created else ''}; rejected {len(parsed.rejected)} lines;"
            f" {summary.entries_added} entries added, {summary.entries_changed} re-shared or moved,"
            f" {summary.entries_removed} removed,"
            f" {summary.unknown_entities} entities under unknown"
        )
