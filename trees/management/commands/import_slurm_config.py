from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.slurm_config import (
    NO_NORMAL_ALL_WARNING,
    NONE_FOUND,
    SlurmConfigFile,
    parse_slurm_config,
    slurm_configs_combined,
)
from trees.management.commands._base import FairshareCommand
from trees.services.priority_config import slurm_config_import


class Command(FairshareCommand):
    help = (
        "Take what a Slurm cluster's priorities read: `scontrol show config` (PriorityType,"
        " PriorityWeight*, PriorityMaxAge, PriorityFavorSmall, PriorityFlags,"
        " PriorityDecayHalfLife, PriorityCalcPeriod, PriorityUsageResetPeriod,"
        " FairShareDampeningFactor, AccountingStorageEnforce), `scontrol show partition`"
        " (PriorityJobFactor, PriorityTier, TotalCPUs, TotalNodes, TRES, MaxTime), `sacctmgr"
        " show qos -P` (Priority) and slurm.conf (PriorityFlags as configured, which 22.05's"
        " scontrol prints NO_NORMAL_ALL for any NO_NORMAL_* flag), in one file or several, in"
        " any order, each recognised by what it holds; each part replaces what was stored of it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("files", nargs="+", metavar="FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        read: list[tuple[str, SlurmConfigFile]] = []
        unread = []
        for path in options["files"]:
            parsed = parse_slurm_config(self.read_bytes(path).decode(errors="replace"))
            if parsed.kinds:
                read.append((path, parsed))
            else:
                unread.append(path)
        combined = slurm_configs_combined(read)
        flags_given = combined.parsed.found.get("PriorityFlags") is not None and any(
            "slurm.conf" in parsed.kinds and "PriorityFlags" in parsed.found for _, parsed in read
        )
        for path, parsed in read:
            for problem in parsed.problems:
                self.stderr.write(f"{path}:{problem.line}: {problem.key}: {problem.reason}")
            for warning in parsed.warnings:
                if not (flags_given and warning.reason == NO_NORMAL_ALL_WARNING):
                    self.stderr.write(f"{path}:{warning.line}: {warning.key}: {warning.reason}")
        for note in combined.notes:
            self.stderr.write(note)
        for path in unread:
            self.stderr.write(f"{path}: nothing imported: {NONE_FOUND}")
        if not read:
            self.fail("nothing imported")
        source = ", ".join(path for path, _ in read)
        try:
            done = slurm_config_import(
                cluster_name=options["cluster"], configs=combined, source=source
            )
        except ValidationError as exc:
            self.fail(f"{source}: nothing imported: {'; '.join(exc.messages)}")
        config = done.cluster.slurm_priority
        weights = ", ".join(
            f"{name.removeprefix('weight_')} {config.get(name, 0)}"
            for name in ("weight_age", "weight_assoc", "weight_fairshare", "weight_jobsize",
                         "weight_partition", "weight_qos")
        )  # fmt: skip
        flags = ",".join(config.get("flags", [])) or "none"
        problems = sum(len(parsed.problems) for _, parsed in read)
        self.stdout.write(
            f"{source}: cluster {done.cluster.name}{' (new)' if done.cluster_created else ''}:"
            f" read {', '.join(combined.parsed.kinds)}; weights {weights}; flags {flags};"
            f" {done.queues} partitions, {done.qos} QOS; {len(done.changes)} changes"
            f" audited; {problems} lines rejected"
        )
        if unread:
            raise SystemExit(1)
