from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.sacctmgr_dump import parse_sacctmgr_dump
from trees.management.commands._base import FairshareCommand, slurm_import_summary
from trees.services.slurm import slurm_tree_import


class Command(FairshareCommand):
    help = (
        "Load a Slurm cluster's accounts, users and shares from a `sacctmgr dump` file; the raw"
        " usage the associations already have is kept (the file has none)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="what `sacctmgr dump CLUSTER file=FILE` wrote")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path, name = options["file"], options["cluster"]
        parsed = parse_sacctmgr_dump(self.read_bytes(path))
        self.report_rejected(
            path, parsed.rejected, strict=options["strict"], kept=len(parsed.entries)
        )
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
        self.stdout.write(slurm_import_summary(path, name, summary, len(parsed.rejected)))
