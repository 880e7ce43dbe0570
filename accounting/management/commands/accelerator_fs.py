import json
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.accelerator import accelerator_fields_get
from trees.engine.accelerator import FsFields
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler

FIELDS = (
    ("FS_TARGET", "target"),
    ("FS_RUNNING", "running"),
    ("FS_RUNNING_COUNT", "running_count"),
    ("FS_EXCESS_RUNNING", "excess_running"),
    ("FS_EXCESS_RUNNING_LOCAL", "excess_running_local"),
    ("FS_HISTORY", "history"),
    ("FS_EXCESS_HISTORY", "excess_history"),
    ("FS_RANK", "rank"),
    ("FS_RANK9", "rank9"),
)


class Command(FairshareCommand):
    help = (
        "Every FairShare group of an Altair Accelerator cluster with its FS_* fields at --now"
        " (default: now), worked out from the groups and jobs stored as a cycle would: shares"
        " scaled by 10,000, FS_RANK from 0 in dispatch order (-1 without a queued job). JSON: a"
        " list of {group, FS_TARGET, FS_RUNNING, FS_RUNNING_COUNT, FS_EXCESS_RUNNING,"
        " FS_EXCESS_RUNNING_LOCAL, FS_HISTORY, FS_EXCESS_HISTORY, FS_RANK, FS_RANK9}."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--now", metavar="ISO", help="when (ISO 8601; default: now)")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler != Scheduler.ACCELERATOR:
            self.fail(
                f"cluster {cluster.name} is a {cluster.get_scheduler_display()} cluster, not"
                " Altair Accelerator"
            )
        at = self.moment("--now", options["now"]) or timezone.now()
        found = accelerator_fields_get(cluster=cluster, now=at)
        if options["format"] == "json":
            documents = [fields_document(fields) for fields in found.fields]
            self.stdout.write(json.dumps(documents, indent=2))
            return
        self.stdout.write(
            f"cluster {cluster.name} at {at.isoformat()}: {len(found.fields)} groups,"
            f" {len(found.jobs)} jobs; fairshare.relative {cluster.fairshare_relative},"
            f" relative_alpha {cluster.fairshare_relative_alpha:g}"
        )
        header = ["GROUP", *(name for name, _ in FIELDS), "WINDOW"]
        rows = [header] + [
            [fields.group, *(str(getattr(fields, attr)) for _, attr in FIELDS), _window(fields)]
            for fields in found.fields
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for row in rows:
            cells = [
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            self.stdout.write("  ".join(cells).rstrip())


def fields_document(fields: FsFields) -> dict[str, object]:
    """A group's fields as accelerator_fs --format json writes them (DESIGN §6)."""
    return {"group": fields.group, **{name: getattr(fields, attr) for name, attr in FIELDS}}


def _window(fields: FsFields) -> str:
    return "off" if fields.window == 0 else f"{fields.window}s"
