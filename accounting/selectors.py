"""Reads of the accounting data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F, FloatField, Sum
from django.db.models.functions import Cast, Coalesce

from accounting.models import Job
from accounting.parsers.records import JobState
from trees.models import Cluster

REPORT_GROUPS = ("entity", "user", "group", "project", "account", "queue")


@dataclass(frozen=True)
class UsageRow:
    key: str
    jobs: int
    core_hours: float
    usage: float  # fairshare_usage_res, undecayed

    def document(self) -> dict[str, object]:
        return {
            "key": self.key,
            "jobs": self.jobs,
            "core_hours": self.core_hours,
            "usage": self.usage,
        }


def usage_report_get(
    *, cluster: Cluster, by: str, since: datetime | None = None, until: datetime | None = None
) -> list[UsageRow]:
    """Runs that ended in [since, until), per `by`: how many, core-hours and usage, most first.

    Running jobs are left out: their usage is not known until they end.
    """
    if by not in REPORT_GROUPS:
        raise ValueError(f"cannot group by {by!r}: one of {', '.join(REPORT_GROUPS)}")
    jobs = Job.objects.filter(cluster=cluster).exclude(state=JobState.RUNNING)
    if since is not None:
        jobs = jobs.filter(end__gte=since)
    if until is not None:
        jobs = jobs.filter(end__lt=until)
    core_seconds = Cast("ncpus", FloatField()) * Cast(Coalesce("walltime", 0), FloatField())
    rows = (
        jobs.values(key=F(by))
        .annotate(jobs=Count("id"), core_seconds=Sum(core_seconds), usage=Sum("usage"))
        .order_by("-usage", "key")
    )
    return [
        UsageRow(
            key=row["key"],
            jobs=row["jobs"],
            core_hours=(row["core_seconds"] or 0.0) / 3600,
            usage=row["usage"] or 0.0,
        )
        for row in rows
    ]
