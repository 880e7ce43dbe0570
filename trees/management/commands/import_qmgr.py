from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandParser

from trees.formats.qmgr import parse_qmgr_print
from trees.management.commands._base import FairshareCommand
from trees.services.priority_config import qmgr_import


class Command(FairshareCommand):
    help = (
        "Take a PBS server's job order settings from `qmgr -c 'print server'` output:"
        " job_sort_formula (refused, with its column, where PBS would refuse it),"
        " job_sort_formula_threshold, eligible_time_enable, scheduler_iteration, the numeric"
        " resources it creates and every queue with its Priority, queue_type, enabled and"
        " started. Unknown attributes are kept and reported; every change is audited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the output of qmgr -c 'print server'")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        parsed = parse_qmgr_print(self.read_bytes(path))
        for problem in parsed.problems:
            self.stderr.write(f"{path}:{problem.line}: {problem.field}: {problem.reason}")
        for unknown in parsed.unknown:
            self.stderr.write(
                f"{path}:{unknown.line}: {unknown.attribute}: not an attribute PBS defines; kept"
            )
        if not parsed.server and not parsed.queues and not parsed.resources:
            self.fail(f"{path}: nothing imported: no `set server`, `create queue` or resource")
        try:
            done = qmgr_import(cluster_name=options["cluster"], parsed=parsed, source=path)
        except ValidationError as exc:
            self.fail(f"{path}: nothing imported: {'; '.join(exc.messages)}")
        for refused in done.refused:
            self.stderr.write(f"{path}: {refused}")
        cluster = done.cluster
        formula = cluster.job_sort_formula or "none"
        self.stdout.write(
            f"{path}: cluster {cluster.name}{' (new)' if done.cluster_created else ''}:"
            f" job_sort_formula {formula}; eligible_time_enable"
            f" {cluster.eligible_time_enable}; scheduler_iteration"
            f" {int(cluster.scheduler_iteration.total_seconds())} s; {done.queues} queues;"
            f" {len(done.changes)} changes audited; {len(parsed.problems)} lines rejected,"
            f" {len(parsed.unknown)} unknown attributes kept"
        )
