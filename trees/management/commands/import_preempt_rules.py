from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.preempt_rules import parse_preempt_rules
from trees.management.commands._base import FairshareCommand
from trees.services.accelerator import preempt_rules_import


class Command(FairshareCommand):
    help = (
        "Load an Altair Accelerator preemption rule file (VovPreemptRule commands, as in"
        " vovpreemptd's config.tcl or fastfairshare.tcl) as the cluster's rules: they replace"
        " the rules it had, and the change is audited. A rule whose selection does not parse is"
        " kept and reported: it never fires."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the rule file")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        parsed = parse_preempt_rules(self.read_bytes(path).decode(errors="replace"))
        self.report_rejected(
            path, list(parsed.problems), strict=options["strict"], kept=len(parsed.rules)
        )
        try:
            done = preempt_rules_import(
                cluster_name=options["cluster"], rules=parsed.rules, source=path
            )
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        self.stdout.write(
            f"{path}: imported {done.rules} preemption rules into cluster {options['cluster']}"
            f"{' (new)' if done.cluster_created else ''} (it had {done.replaced});"
            f" {len(parsed.problems)} problems"
        )
