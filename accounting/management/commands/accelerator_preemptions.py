import json
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.accelerator import preemptions_get
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler


class Command(FairshareCommand):
    help = (
        "For each preemption rule of an Altair Accelerator cluster and each job queued at"
        " --now (default: now): whether the rule fires, the running jobs it would let the job"
        " preempt, and why, in words. JSON: a list of {rule, queued_job, fires, victims, why}."
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
        found = preemptions_get(cluster=cluster, now=at)
        if options["format"] == "json":
            documents = [
                {
                    "rule": p.rule,
                    "queued_job": p.queued_job,
                    "fires": p.fires,
                    "victims": list(p.victims),
                    "why": p.why,
                }
                for p in found
            ]
            self.stdout.write(json.dumps(documents, indent=2))
            return
        if not found:
            self.stdout.write(f"cluster {cluster.name}: no preemption rule, or no job queued")
            return
        for preemption in found:
            victims = ", ".join(preemption.victims) if preemption.victims else "none"
            mark = "fires" if preemption.fires else "does not fire"
            self.stdout.write(
                f"{preemption.rule} for {preemption.queued_job}: {mark}; may preempt {victims}"
            )
            self.stdout.write(f"  {preemption.why}")
