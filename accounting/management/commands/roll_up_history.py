from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from accounting.services.history import history_roll_up, history_upkeep
from trees.models import Cluster


class Command(BaseCommand):
    help = (
        "The history's daily care, in this process (the beat's daily roll_up_history task does"
        " the same through the workers): on PostgreSQL this month's and next month's partitions"
        " made if missing; the months past HISTORY_RETENTION_DAYS removed; every cluster's"
        " history thinned (every cycle of the last day, the last of each hour of the last week,"
        " the last of each day before)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        upkeep = history_upkeep(now=now)
        for name in upkeep.partitions_made:
            self.stdout.write(f"partition {name} made")
        for name in upkeep.partitions_dropped:
            self.stdout.write(f"partition {name} dropped (past the retention)")
        if upkeep.rows_expired:
            self.stdout.write(f"{upkeep.rows_expired:,} history rows past the retention removed")
        for cluster in Cluster.objects.order_by("name"):
            rolled = history_roll_up(cluster=cluster, now=now)
            self.stdout.write(
                f"{cluster.name}: {rolled.rows_removed:,} history rows thinned"
                f" ({rolled.cycles_thinned:,} cycles)"
            )
