from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.sshare_read import read_sshare
from trees.management.commands._base import FairshareCommand, slurm_import_summary
from trees.services.slurm import slurm_tree_import


class Command(FairshareCommand):
    help = (
        "Load Slurm associations, shares and raw usage from sshare output (-P, -p, the short"
        " or long form, or the aligned table) into a Slurm cluster."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="what `sshare -a -l -P` (or another layout) printed")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path, name = options["file"], options["cluster"]
        parsed = read_sshare(self.read_bytes(path))
        for note in parsed.notes:
            self.stderr.write(f"{path}: {note}")
        self.report_rejected(
            path, parsed.rejected, strict=options["strict"], kept=len(parsed.entries)
        )
        if not parsed.entries:
            self.fail(f"{path}: nothing imported (no association in the file)")
        try:
            summary = slurm_tree_import(
                cluster_name=name,
                associations=parsed.associations,
                source=path,
                algorithm=parsed.algorithm,
                tres_names=parsed.listed_tres,
                grp_tres_mins=parsed.grp_tres_mins,
                tres_run_mins=parsed.tres_run_mins,
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        if parsed.algorithm is not None and summary.algorithm != parsed.algorithm:
            self.stderr.write(
                f"{path}: the file shows {parsed.algorithm.label()} fairshare"
                f" ({parsed.algorithm_evidence}) but cluster {name} uses"
                f" {summary.algorithm.label()}: its shares and raw usage are imported;"
                " its computed columns are not this cluster's"
            )
        self.stdout.write(slurm_import_summary(path, name, summary, len(parsed.rejected)))
