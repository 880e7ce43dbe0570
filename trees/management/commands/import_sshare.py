from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.engine.slurm import AssociationDef
from trees.formats.sshare_read import SshareFile, read_sshare
from trees.management.commands._base import FairshareCommand, slurm_import_summary
from trees.models import Cluster
from trees.selectors.slurm import slurm_tree_of_dump_get
from trees.services.slurm import slurm_tree_import, slurm_usage_import


class Command(FairshareCommand):
    help = (
        "Load Slurm associations, shares and raw usage from sshare output (-P, -p, the short"
        " or long form, or the aligned table) into a Slurm cluster. On a cluster whose tree"
        " came from import_sacctmgr_dump only the raw usage is taken: the dump's tree, shares"
        " and association priorities stay."
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
        cluster = slurm_tree_of_dump_get(cluster_name=name)
        if cluster is not None:
            self.usage_only(path, cluster, parsed.associations, parsed, len(parsed.rejected))
            return
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

    def usage_only(
        self,
        path: str,
        cluster: Cluster,
        associations: list[AssociationDef],
        parsed: SshareFile,
        rejected: int,
    ) -> None:
        """The cluster's tree came from a sacctmgr dump: its shares and Priority stay, the
        file gives the raw usage."""
        done = slurm_usage_import(
            cluster=cluster,
            associations=associations,
            source=path,
            tres_names=parsed.listed_tres,
            grp_tres_mins=parsed.grp_tres_mins,
            tres_run_mins=parsed.tres_run_mins,
        )
        for label in done.not_in_tree:
            self.stderr.write(
                f"{path}: {label} is not in the tree of the sacctmgr dump imported into"
                f" {cluster.name}: its usage is left out (import the newer dump first)"
            )
        for line in done.shares_differ:
            self.stderr.write(f"{path}: shares differ, {line}: the dump's are kept")
        if done.not_in_file:
            self.stderr.write(
                f"{path}: {len(done.not_in_file)} associations of the tree are not in the file,"
                f" their usage kept: {', '.join(done.not_in_file[:10])}"
                + (" ..." if len(done.not_in_file) > 10 else "")
            )
        summary = done.summary
        self.stdout.write(
            f"{path}: usage of {len(associations) - len(done.not_in_tree)} associations into"
            f" Slurm cluster {cluster.name}, whose tree, shares and priorities are the sacctmgr"
            f" dump's; rejected {rejected} lines; {summary.updated} nodes updated"
        )
