"""The Celery app. Configuration comes from Django settings (the CELERY_* names)."""

import os
from typing import Any

from celery import Celery
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairshare_site.settings")

app = Celery("fairshare_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Task options: the database restarting or unreachable rolled the task's transaction back, so
# running it again is safe.
RETRIED: dict[str, Any] = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "max_retries": 10,
}
