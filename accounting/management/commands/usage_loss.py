import json
from typing import Any

from django.core.management.base import CommandParser

from accounting.usage_loss import JobLoss, usage_loss_get
from trees.engine.recording import EntityLoss
from trees.management.commands._base import FairshareCommand


class Command(FairshareCommand):
    help = (
        "What PBS recorded in its fairshare database of the PBS cluster's jobs that ended in"
        " [--from, --until), against what they used: each MoM's samples (import_mom_config)"
        " read at the scheduler's cycles (those of its log, import_sched_log, where imported;"
        " elsewhere at each job submission and end, and scheduler_iteration after the previous"
        " cycle) while the job ran; what a job used after the last sample a cycle read is lost."
        " Per entity; per job with --jobs. JSON: a list of {entity, actual, recorded, lost,"
        " lost_fraction, jobs, jobs_unseen}, or with --jobs of {job_id, entity, start, end,"
        " actual, recorded, lost, unseen, last_cycle, last_poll}."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--from", dest="since", metavar="ISO", help="jobs ended since")
        parser.add_argument("--until", metavar="ISO", help="jobs ended before")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--jobs", action="store_true", help="each job rather than entities")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.pbs_cluster(options["cluster"])
        since = self.moment("--from", options["since"])
        until = self.moment("--until", options["until"])
        if since is not None and until is not None and until <= since:
            self.fail(f"--until {options['until']} is not after --from {options['since']}")
        loss = usage_loss_get(cluster=cluster, since=since, until=until, jobs=options["jobs"])
        if options["format"] == "json":
            documents = (
                [job_document(job) for job in loss.jobs]
                if options["jobs"]
                else [entity_document(entity) for entity in loss.entities]
            )
            self.stdout.write(json.dumps(documents, indent=2))
            return
        polling = loss.polling
        self.stdout.write(
            f"cluster {cluster.name}: {loss.job_count} jobs ended"
            + (f" since {since.isoformat()}" if since else "")
            + (f" before {until.isoformat()}" if until else "")
            + f"; $min_check_poll {polling.min_check_poll} s, $max_check_poll"
            f" {polling.max_check_poll} s, scheduler_iteration {loss.iteration} s; used"
            f" {loss.actual:.0f}, recorded {loss.recorded:.0f}, lost {loss.lost:.0f}"
            f" ({100 * loss.lost_fraction:.1f} %); {loss.unseen} jobs unseen"
        )
        if options["jobs"]:
            header = ["JOB", "ENTITY", "USED", "RECORDED", "LOST", "LAST CYCLE"]
            rows = [
                [job.job_id, job.entity, f"{job.actual:.0f}", f"{job.recorded:.0f}",
                 f"{job.lost:.0f}", job.last_cycle.isoformat() if job.last_cycle else "unseen"]
                for job in loss.jobs
            ]  # fmt: skip
        else:
            header = ["ENTITY", "USED", "RECORDED", "LOST", "LOST %", "JOBS", "UNSEEN"]
            rows = [
                [e.entity, f"{e.actual:.0f}", f"{e.recorded:.0f}", f"{e.lost:.0f}",
                 f"{100 * e.lost_fraction:.1f}", str(e.jobs), str(e.jobs_unseen)]
                for e in loss.entities
            ]  # fmt: skip
        table = [header, *rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        for row in table:
            cells = [
                cell.ljust(width) if i < 2 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            self.stdout.write("  ".join(cells).rstrip())


def entity_document(entity: EntityLoss) -> dict[str, object]:
    return {
        "entity": entity.entity,
        "actual": entity.actual,
        "recorded": entity.recorded,
        "lost": entity.lost,
        "lost_fraction": entity.lost_fraction,
        "jobs": entity.jobs,
        "jobs_unseen": entity.jobs_unseen,
    }


def job_document(job: JobLoss) -> dict[str, object]:
    return {
        "job_id": job.job_id,
        "entity": job.entity,
        "start": job.start.isoformat(),
        "end": job.end.isoformat(),
        "actual": job.actual,
        "recorded": job.recorded,
        "lost": job.lost,
        "unseen": job.unseen,
        "last_cycle": job.last_cycle.isoformat() if job.last_cycle else None,
        "last_poll": job.last_poll.isoformat() if job.last_poll else None,
    }
