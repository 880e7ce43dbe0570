import json
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.models import SchedulerCycle
from accounting.priorities import QueuedJob, QueueOrder, queue_order_get
from accounting.selectors import logged_cycle_get
from trees.engine.job_sort import pbs_decimal
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler


class Command(FairshareCommand):
    help = (
        "The queued jobs in the order the scheduler would consider them at --now (default:"
        " now), each with its priority and the terms it is the sum of: PBS job_sort_formula"
        " (or, without one, the sort keys that order the jobs), Slurm multifactor. Held jobs"
        " follow, unnumbered. JSON: a list of {job_id, entity, queue, priority, position,"
        " terms}. PBS with --logged: beside each job, the Formula Evaluation PBS printed for"
        " it in the last cycle of its imported log (import_sched_log) by --now, and whether"
        " ours prints the same (JSON: logged, logged_equal)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--now", metavar="ISO", help="when (ISO 8601; default: now)")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--logged",
            action="store_true",
            help="PBS: set the values of the scheduler's imported log beside ours",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
            self.fail(f"cluster {cluster.name}: job priorities are computed for PBS and Slurm")
        at = self.moment("--now", options["now"]) or timezone.now()
        logged: SchedulerCycle | None = None
        if options["logged"]:
            if cluster.scheduler != Scheduler.PBS:
                self.fail(f"cluster {cluster.name}: --logged compares with PBS's scheduler log")
            logged = logged_cycle_get(cluster=cluster, at=at)
            if logged is None:
                self.fail(
                    f"cluster {cluster.name}: no cycle of an imported scheduler log by"
                    f" {at.isoformat()} printed formula values (import_sched_log; the log needs"
                    " log_events with 0x0100)"
                )
        order = queue_order_get(cluster=cluster, at=at)
        if order.problem:
            self.stderr.write(f"cluster {cluster.name}: {order.problem}; the order without it")
        jobs = [*order.ordered, *order.held]
        printed = {} if logged is None else logged_values(logged)
        if options["format"] == "json":
            documents = []
            for job in jobs:
                document = job.document()
                if logged is not None:
                    value = printed.get(job.job_id)
                    document["logged"] = value
                    document["logged_equal"] = value is not None and value == _ours(job)
                documents.append(document)
            self.stdout.write(json.dumps(documents, indent=2))
            return
        self.stdout.write(priorities_text(order, printed if logged else None), ending="")
        if logged is not None:
            self.stdout.write(logged_summary(logged, jobs, printed))


def logged_values(cycle: SchedulerCycle) -> dict[str, str]:
    """The formula values a logged cycle printed, by job id as stored (without the server)."""
    return {job_id.split(".", 1)[0]: value for job_id, value in cycle.formula.items()}


def _ours(job: QueuedJob) -> str | None:
    return None if job.priority is None else pbs_decimal(job.priority)


def logged_summary(cycle: SchedulerCycle, jobs: list[QueuedJob], printed: dict[str, str]) -> str:
    """`PBS's log, cycle at ...: 11 of 12 formula values the same; 1 job it printed is not
    queued here.`"""
    both = [job for job in jobs if job.job_id in printed]
    same = sum(1 for job in both if printed[job.job_id] == _ours(job))
    gone = len(printed.keys() - {job.job_id for job in jobs})
    said = (
        f"PBS's log, cycle at {cycle.at.isoformat()}: {same} of {len(both)} formula values the same"
    )
    if gone:
        said += f"; {gone} job{'s' * (gone != 1)} it printed not queued here"
    return said + "\n"


def priorities_text(order: QueueOrder, printed: dict[str, str] | None = None) -> str:
    """The table job_priorities prints: a heading line, then one row per job, a column per
    term; with `printed` (PBS's logged values by job id), a PBS LOG column after PRIORITY."""
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
    logged = [] if printed is None else ["PBS LOG"]
    header = ["POS", "QPOS", "JOB", "ENTITY", "QUEUE", "PRIORITY", *logged, *terms]
    rows = [header] + [_row(job, terms, slurm, printed) for job in jobs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        cells = [
            cell.rjust(width) if index in (0, 1) or index >= 5 else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _row(
    job: QueuedJob, terms: dict[str, None], slurm: bool, printed: dict[str, str] | None
) -> list[str]:
    number = (lambda value: f"{value:.0f}") if slurm else pbs_decimal
    logged = [] if printed is None else [_logged_cell(job, printed)]
    if job.position is None:
        place = "held" if job.held else "out"
        return [place, "", job.job_id, job.entity, job.queue,
                "" if job.held or job.priority is None else number(job.priority), *logged,
                *("" for _ in terms)]  # fmt: skip
    priority = "" if job.priority is None else number(job.priority)
    values = [number(job.terms[name]) if name in job.terms else "" for name in terms]
    return [str(job.position), str(job.queue_position), job.job_id, job.entity, job.queue,
            priority, *logged, *values]  # fmt: skip


def _logged_cell(job: QueuedJob, printed: dict[str, str]) -> str:
    """PBS's value, with `≠` when ours prints otherwise; `-` when its log has none."""
    value = printed.get(job.job_id)
    if value is None:
        return "-"
    return value if value == _ours(job) else f"≠ {value}"
