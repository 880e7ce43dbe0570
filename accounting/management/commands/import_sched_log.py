from typing import Any

from django.core.management.base import CommandParser

from accounting.parsers.sched_log import read_sched_log
from accounting.services.sched_log import sched_log_import
from trees.management.commands._base import FairshareCommand


class Command(FairshareCommand):
    help = (
        "Take a PBS scheduler's log (sched_logs/YYYYMMDD): when each cycle ran, and each job's"
        " Formula Evaluation and the order it considered them in (printed at log_events with"
        " 0x0100 and 0x0080). With usage_recording pbs, the cycles PBS recorded usage at are"
        " these where the log covers, not those the job submissions, ends and"
        " scheduler_iteration would make; job_priorities --logged sets PBS's values beside"
        " ours. Importing a log again replaces the cycles of its span."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("file", help="the scheduler's log (sched_logs/YYYYMMDD)")
        self.add_timezone(parser, "the scheduler host's")
        self.add_strict(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        cluster = self.pbs_cluster(options["cluster"])
        zone = self.time_zone(options)
        try:
            with open(path, "rb") as stream:  # streamed: a day at debug levels is large
                log = read_sched_log(stream, zone=zone)
        except OSError as exc:
            self.fail(f"{path}: cannot read: {exc.strerror or exc}")
        self.report_rejected(path, log.rejected, strict=options["strict"], kept=len(log.cycles))
        try:
            done = sched_log_import(cluster=cluster, log=log, source_file=path)
        except ValueError as exc:
            self.fail(f"{path}: nothing imported: {exc}")
        self.stdout.write(
            f"{path}: cluster {cluster.name}: {done.cycles} cycles from"
            f" {done.first.isoformat()} to {done.last.isoformat()}"
            f" ({done.replaced} imported before replaced), {done.formula_values} formula"
            f" values; {log.lines} lines read, {len(log.rejected)} rejected"
        )
