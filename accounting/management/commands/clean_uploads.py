from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from accounting.services.upload_runs import uploads_clean


class Command(BaseCommand):
    help = (
        "Remove what uploads of the import page left behind for more than UPLOAD_STALE_HOURS:"
        " their folders, Django's temporary files, and imports whose worker died (the beat's"
        " hourly clean_uploads task does the same)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        cleaned = uploads_clean(now=timezone.now())
        self.stdout.write(
            f"removed {cleaned.folders_removed} folders or files;"
            f" {cleaned.uploads_failed} imports whose worker died marked failed"
        )
