import json
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.priorities import QueuedJob, QueueOrder, queue_order_get
from trees.engine.job_sort import pbs_decimal
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler


class Command(FairshareCommand):
    help = (
        "The queued jobs in the order the scheduler would consider them at --now (default:"
        " now), each with its priority and the terms it is the sum of: PBS job_sort_formula"
        " (or, without one, the sort keys that order the jobs), Slurm multifactor. Held jobs"
        " follow, unnumbered. JSON: a list of {job_id, entity, queue, priority, position,"
        " terms}."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--now", metavar="ISO", help="when (ISO 8601; default: now)")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
            self.fail(f"cluster {cluster.name}: job priorities are computed for PBS and Slurm")
        at = self.moment("--now", options["now"]) or timezone.now()
        order = queue_order_get(cluster=cluster, at=at)
        if order.problem:
            self.stderr.write(f"cluster {cluster.name}: {order.problem}; the order without it")
        if options["format"] == "json":
            jobs = [job.document() for job in (*order.ordered, *order.held)]
            self.stdout.write(json.dumps(jobs, indent=2))
            return
        self.stdout.write(priorities_text(order), ending="")


def priorities_text(order: QueueOrder) -> str:
    """The table job_priorities prints: a heading line, then one row per job, a column per term."""
    slurm = order.cluster.scheduler == Scheduler.SLURM
    jobs = [*order.ordered, *order.held]
    terms: dict[str, None] = {}
    for job in order.ordered:
        terms.update(dict.fromkeys(job.terms))
    held = f" ({len(order.held)} held)" if order.held else ""
    how = (
        "Slurm multifactor"
        if slurm
        else (f"job_sort_formula {order.formula}" if order.formula else "no job_sort_formula")
    )
    lines = [
        f"cluster {order.cluster.name} at {order.at.isoformat()}:"
        f" {len(order.ordered)} jobs waiting{held}; {how}"
    ]
    header = ["POS", "QPOS", "JOB", "ENTITY", "QUEUE", "PRIORITY", *terms]
    rows = [header] + [_row(job, terms, slurm) for job in jobs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        cells = [
            cell.rjust(width) if index in (0, 1) or index >= 5 else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _row(job: QueuedJob, terms: dict[str, None], slurm: bool) -> list[str]:
    number = (lambda value: f"{value:.0f}") if slurm else pbs_decimal
    if job.position is None:
        return ["held", "", job.job_id, job.entity, job.queue, "", *("" for _ in terms)]
    priority = "" if job.priority is None else number(job.priority)
    values = [number(job.terms[name]) if name in job.terms else "" for name in terms]
    return [str(job.position), str(job.queue_position), job.job_id, job.entity, job.queue,
            priority, *values]  # fmt: skip
