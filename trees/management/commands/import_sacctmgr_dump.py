from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.sacctmgr_dump import parse_sacctmgr_dump
from trees.management.commands._base import FairshareCommand
from trees.services import slurm_tree_import


class Command(FairshareCommand):
    help = (
        "Load a Slurm cluster's accounts, users and shares from a `sacctmgr dump` file; the raw"
        " usage the associations already have is kept (the file has none)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="what `sacctmgr dump CLUSTER file=FILE` wrote")
        parser.add_argument(
            "--strict", action="store_true", help="import nothing when any line is rejected"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path, name = options["file"], options["cluster"]
        parsed = parse_sacctmgr_dump(self.read_bytes(path))
        for bad in parsed.rejected:
            self.stderr.write(f"{path}:{bad.line}: {bad.field}: {bad.reason}")
        if parsed.rejected and (options["strict"] or not parsed.entries):
            self.fail(f"{path}: nothing imported ({len(parsed.rejected)} lines rejected)")
        if parsed.cluster is not None and parsed.cluster != name:
            self.stderr.write(
                f"{path}: the dump is of cluster {parsed.cluster}; importing into {name}"
            )
        try:
            summary = slurm_tree_import(
                cluster_name=name,
                associations=parsed.associations,
                source=path,
                with_usage=False,
                grp_tres_mins=parsed.grp_tres_mins,
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(
            f"{path}: imported {summary.associations} associations into Slurm cluster {name}"
            f"{' (new)' if summary.cluster_created else ''}; rejected {len(parsed.rejected)}"
            f" lines; {summary.created} nodes added, {summary.updated} updated,"
            f" {summary.removed} removed"
        )
