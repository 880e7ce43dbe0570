from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.services.accelerator import fsgroups_import
from trees.formats.fsgroups import parse_fsgroups
from trees.management.commands._base import FairshareCommand


class Command(FairshareCommand):
    help = (
        "Load an Altair Accelerator FairShare configuration, as `vovfsgroup genconfig` writes"
        " it (Tcl FSGROUP commands with -w, -t/-window, -u, -user), as the cluster's groups:"
        " they replace the groups the last configuration defined (the groups jobs made are"
        " kept), every weight change is audited and every group's FS_* fields are recomputed"
        " from the jobs stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the output of vovfsgroup genconfig")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        parsed = parse_fsgroups(self.read_bytes(path).decode(errors="replace"))
        self.report_rejected(
            path, list(parsed.problems), strict=options["strict"], kept=len(parsed.groups)
        )
        try:
            summary = fsgroups_import(
                cluster_name=options["cluster"],
                groups=parsed.groups,
                source=path,
                now=timezone.now(),
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(
            f"{path}: imported {len(parsed.groups)} FairShare groups into cluster"
            f" {options['cluster']}{' (new)' if summary.cluster_created else ''};"
            f" {len(parsed.problems)} problems; {summary.groups} groups in all (the root and"
            f" the groups jobs made included): {summary.created} added, {summary.updated}"
            f" updated, {summary.removed} removed; {summary.share_changes} weight changes"
            " audited"
        )
