from typing import Any

from django.core.management.base import CommandParser

from trees.explanations import slurm_comparison_explained
from trees.management.commands._base import FairshareCommand
from trees.models import Scheduler
from trees.selectors.compare import slurm_compare_get


class Command(FairshareCommand):
    help = (
        "Say which of two Slurm associations Fair Tree finds more deserving, and why: the"
        " Level FS of their sides at the first common ancestor. Name each as ACCOUNT,"
        " ACCOUNT:USER, or USER when the user is in one account. (PBS: pbsfs -c.)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("a")
        parser.add_argument("b")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self.existing_cluster(options["cluster"])
        if cluster.scheduler != Scheduler.SLURM:
            self.fail(f"cluster {cluster.name} is not a Slurm cluster; use pbsfs -c")
        try:
            result = slurm_compare_get(cluster=cluster, a=options["a"], b=options["b"])
        except (LookupError, ValueError) as exc:
            self.fail(str(exc.args[0]))
        self.stdout.write(slurm_comparison_explained(result))
        for label, value in ((result.a, result.fairshare_a), (result.b, result.fairshare_b)):
            if value is not None:
                self.stdout.write(f"FairShare of {label}: {value:f}")
