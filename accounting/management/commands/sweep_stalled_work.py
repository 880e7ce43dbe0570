from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from accounting.services.stalled import stalled_work_sweep


class Command(BaseCommand):
    help = (
        "Send again once, then fail with why, the what-ifs and uploads whose worker has been"
        " silent for WORK_SILENT_MINUTES or that no worker took in WORK_QUEUED_MINUTES; fail"
        " the ingestions silent that long (the beat's sweep_stalled_work task does the same"
        " every minute)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        swept = stalled_work_sweep(now=timezone.now())
        self.stdout.write(
            f"what-ifs: {len(swept.scenarios_sent_again)} sent again,"
            f" {len(swept.scenarios_failed)} failed; uploads:"
            f" {len(swept.uploads_sent_again)} sent again, {len(swept.uploads_failed)} failed;"
            f" ingestions failed: {swept.ingest_runs_failed}"
        )
