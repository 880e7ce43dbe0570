import time
from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from accounting.models import Cycle
from accounting.selectors import clusters_due, last_cycle_at
from accounting.services.cycles import CycleRefused, cycle_run
from trees.management.commands._base import FairshareCommand
from trees.models import Cluster

# How long --loop sleeps at most between looks at the clusters (a new cluster, a changed
# scheduler_iteration are seen within it).
_LOOK_EVERY = 60.0


class Command(FairshareCommand):
    help = (
        "One scheduling cycle: accrue the usage of the job runs up to now, apply the decays"
        " due, recompute and store every metric. With --loop, each cluster's cycle every"
        " scheduler_iteration until interrupted (what the Celery beat does with a broker)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cluster",
            metavar="NAME",
            help="this cluster only (default: every PBS or Slurm cluster due)",
        )
        parser.add_argument(
            "--now", help="the cycle's time (ISO 8601; default: the clock; not with --loop)"
        )
        parser.add_argument(
            "--loop", action="store_true", help="run each cluster's cycle every iteration"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["loop"] and options["now"]:
            self.fail("--now and --loop cannot go together: a loop follows the clock")
        only = self.existing_cluster(options["cluster"]) if options["cluster"] else None
        if options["loop"]:
            self._loop(only)
            return
        now = self.moment("--now", options["now"]) or timezone.now()
        clusters = [only] if only is not None else [cluster for cluster, _ in clusters_due(now)]
        if not clusters and only is None:
            self.stdout.write("no PBS or Slurm cluster with a tree is due for a cycle")
        refused = [cluster for cluster in clusters if not self._cycle(cluster, now)]
        if refused:
            raise SystemExit(1)

    def _cycle(self, cluster: Cluster, now: datetime) -> bool:
        """Run and report one cycle; False when it is refused."""
        try:
            cycle = cycle_run(cluster=cluster, now=now)
        except CycleRefused as refusal:
            self.stderr.write(str(refusal))
            return False
        self.stdout.write(describe(cluster, now, cycle))
        return True

    def _loop(self, only: Cluster | None) -> None:
        self.stdout.write("running cycles until interrupted (Ctrl-C)")
        try:
            while True:
                now = timezone.now()
                for cluster, slot in clusters_due(now):
                    if only is None or cluster.pk == only.pk:
                        self._cycle(cluster, slot)
                time.sleep(self._pause(only, timezone.now()))
        except KeyboardInterrupt:
            self.stdout.write("stopped")

    def _pause(self, only: Cluster | None, now: datetime) -> float:
        """Seconds to the next cycle due, at most _LOOK_EVERY."""
        clusters = [only] if only is not None else list(Cluster.objects.all())
        pause = _LOOK_EVERY
        for cluster in clusters:
            last = last_cycle_at(cluster)
            if last is not None:
                step = max(cluster.scheduler_iteration, timedelta(seconds=1))
                pause = min(pause, max(0.0, (last + step - now).total_seconds()))
        return max(pause, 0.5)


def describe(cluster: Cluster, now: datetime, cycle: Cycle | None) -> str:
    if cycle is None:
        return f"{cluster.name}: the cycle at {now.isoformat()} was done before; nothing to do"
    decays = f"{cycle.decays_applied} decay{'s' if cycle.decays_applied != 1 else ''}"
    return (
        f"{cluster.name}: cycle at {cycle.at.isoformat()}: {cycle.jobs_accrued} runs accrued,"
        f" {cycle.usage_added:.6g} usage added, {decays} applied, in {cycle.duration:.2f} s"
    )
