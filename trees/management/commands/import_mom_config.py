from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.mom_config import parse_mom_config
from trees.management.commands._base import FairshareCommand
from trees.services.priority_config import mom_config_import


class Command(FairshareCommand):
    help = (
        "Take a PBS MoM's poll settings from its configuration file (mom_priv/config):"
        " $min_check_poll and $max_check_poll, read as pbs_mom reads them (PBS's defaults, 10"
        " and 120 s, where the file does not set them; both defaults when the minimum is above"
        " the maximum). A line pbs_mom would refuse is reported with its number; every change"
        " is audited. PBS's usage recording (usage_loss, usage_recording pbs) uses them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the MoM's configuration file (mom_priv/config)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        config = parse_mom_config(self.read_bytes(path).decode(errors="replace"))
        for problem in config.problems:
            self.stderr.write(f"{path}:{problem.line}: {problem.field}: {problem.reason}")
        try:
            done = mom_config_import(cluster_name=options["cluster"], config=config, source=path)
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        unset = [
            f"${name}"
            for name in ("min_check_poll", "max_check_poll")
            if name not in config.settings
        ]
        self.stdout.write(
            f"{path}: cluster {done.cluster.name}{' (new)' if done.cluster_created else ''}:"
            f" $min_check_poll {config.min_check_poll} s, $max_check_poll {config.max_check_poll} s"
            + (f" ({', '.join(unset)}: PBS's default)" if unset else "")
            + f"; {len(done.changes)} changes audited; {len(config.problems)} problems"
        )
