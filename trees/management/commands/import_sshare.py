from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.engine.fairtree import Algorithm
from trees.formats.sshare import DEFAULT_TRES, read_sshare, zero_tres
from trees.management.commands._base import FairshareCommand, slurm_import_summary
from trees.models import Cluster
from trees.services import slurm_tree_import


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
        existing = Cluster.objects.filter(name=name).first()
        if (
            parsed.algorithm is not None
            and existing is not None
            and existing.fairshare_algorithm != parsed.algorithm
        ):
            self.stderr.write(
                f"{path}: the file shows {parsed.algorithm.label()} fairshare"
                f" ({parsed.algorithm_evidence}) but cluster {name} uses"
                f" {Algorithm(existing.fairshare_algorithm).label()}: its shares and raw usage"
                " are imported; its computed columns are not this cluster's"
            )
        tres = parsed.tres_names
        zeros = zero_tres(tres)
        run = {}
        for entry in parsed.entries:
            text = entry.cells.get("TRESRunMins", "")
            # An aligned cell is cut at 30 characters: keep nothing when it is the all-zero text.
            if text and text != zeros and not (text.endswith("+") and zeros.startswith(text[:-1])):
                run[entry.association.key] = text
        grp = {
            entry.association.key: entry.cells["GrpTRESMins"]
            for entry in parsed.entries
            if entry.cells.get("GrpTRESMins")
        }
        try:
            summary = slurm_tree_import(
                cluster_name=name,
                associations=parsed.associations,
                source=path,
                algorithm=parsed.algorithm,
                tres_names=tres if list(tres) != list(DEFAULT_TRES) else None,
                grp_tres_mins=grp,
                tres_run_mins=run,
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(slurm_import_summary(path, name, summary, len(parsed.rejected)))
