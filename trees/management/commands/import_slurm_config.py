from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.slurm_config import parse_slurm_config
from trees.management.commands._base import FairshareCommand
from trees.services.priority_config import slurm_config_import


class Command(FairshareCommand):
    help = (
        "Take what a Slurm cluster's priorities read: `scontrol show config` (PriorityType,"
        " PriorityWeight*, PriorityMaxAge, PriorityFavorSmall, PriorityFlags,"
        " PriorityDecayHalfLife, PriorityCalcPeriod, PriorityUsageResetPeriod,"
        " FairShareDampeningFactor, AccountingStorageEnforce), `scontrol show partition`"
        " (PriorityJobFactor, TotalCPUs, TotalNodes, TRES, MaxTime) and `sacctmgr show qos -P`"
        " (Priority), in one file or several; each part replaces what was stored of it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("files", nargs="+", metavar="FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        for path in options["files"]:
            raw = self.read_bytes(path)
            parsed = parse_slurm_config(raw.decode(errors="replace"))
            for problem in parsed.problems:
                self.stderr.write(f"{path}:{problem.line}: {problem.key}: {problem.reason}")
            for warning in parsed.warnings:
                self.stderr.write(f"{path}:{warning.line}: {warning.key}: {warning.reason}")
            if not parsed.kinds:
                self.fail(
                    f"{path}: nothing imported: no `scontrol show config`, `scontrol show"
                    " partition` or `sacctmgr show qos` output in it"
                )
            try:
                done = slurm_config_import(
                    cluster_name=options["cluster"], parsed=parsed, source=path
                )
            except ValidationError as exc:
                self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
            config = done.cluster.slurm_priority
            weights = ", ".join(
                f"{name.removeprefix('weight_')} {config.get(name, 0)}"
                for name in ("weight_age", "weight_assoc", "weight_fairshare", "weight_jobsize",
                             "weight_partition", "weight_qos")
            )  # fmt: skip
            self.stdout.write(
                f"{path}: cluster {done.cluster.name}{' (new)' if done.cluster_created else ''}:"
                f" read {', '.join(dict.fromkeys(parsed.kinds))}; weights {weights};"
                f" {done.queues} partitions, {done.qos} QOS; {len(done.changes)} changes"
                f" audited; {len(parsed.problems)} lines rejected"
            )
