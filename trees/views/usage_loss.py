"""Recorded vs actual usage (admins, PBS clusters): what PBS's fairshare database records of
the jobs that ended in a window against what they used, by entity and by job, who gains and
who pays, and what other poll and cycle settings would record. Read through
accounting/usage_loss.py only."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.usage_loss import (
    EntityShare,
    UsageLoss,
    default_since,
    usage_loss_get,
    usage_loss_whatifs_get,
)
from fairshare_site.errors import error_response
from trees.access import access_get
from trees.engine.recording import MAX_CHECK_POLL, MIN_CHECK_POLL, EntityLoss
from trees.explanations import (
    EXPLANATIONS,
    USAGE_LOSS_MODEL,
    setting_source_text,
    usage_loss_columns_explained,
    usage_loss_gain_sentence,
    usage_loss_sentence,
    usage_loss_settings_sentence,
    usage_loss_unseen_sentence,
    usage_loss_whatif_sentence,
    window_text,
)
from trees.forms import USAGE_LOSS_SORTS, UsageLossForm
from trees.models import Cluster, Scheduler
from trees.quantities import UsageUnit, cluster_usage_unit
from trees.selectors.audit import setting_latest_changes_get
from trees.views.lookup import cluster_or_404

ENTITY_ROWS = 200  # of the entities' table; `manage.py usage_loss` lists them all
JOB_ROWS = 20  # the jobs that lost most
SIDE_ROWS = 10  # entities listed among those who gain, and among those who pay
# A difference of shares smaller than this is the sums' rounding, not a gain.
GAIN_NOISE = 1e-12
DEFAULT_ITERATION = timedelta(minutes=10)  # PBS's scheduler_iteration (server_limits.h:73)

_ORDERS: dict[str, Callable[[EntityLoss], tuple[float | str, ...]]] = {
    "lost": lambda row: (-row.lost, row.entity),
    "lost_fraction": lambda row: (-row.lost_fraction, row.entity),
    "actual": lambda row: (-row.actual, row.entity),
    "recorded": lambda row: (-row.recorded, row.entity),
    "jobs": lambda row: (-row.jobs, row.entity),
    "unseen": lambda row: (-row.jobs_unseen, row.entity),
    "entity": lambda row: (row.entity,),
}


def usage_loss_page(request: HttpRequest, name: str) -> HttpResponse:
    """The jobs that ended from `from` to `until` (days, both included; the last 7 days by
    default), the entities in the order `sort`. A value the form refuses is said on the page,
    which shows the default window instead (400)."""
    cluster = cluster_or_404(name)
    if cluster.scheduler != Scheduler.PBS:
        return error_response(
            request,
            404,
            f"Recorded vs actual usage is for PBS clusters only: {cluster.name} is a"
            f" {cluster.get_scheduler_display()} cluster, which has no MoM polls and no"
            " fairshare database for its usage to be lost from.",
        )
    if not access_get(user=request.user, cluster=cluster).admin:
        raise PermissionDenied("recorded vs actual usage is for admins")
    form = UsageLossForm(request.GET)
    valid = form.is_valid()
    now = timezone.now()
    first, last = form.days() if valid else (None, None)
    since, until = _window(first, last, now)
    loss = usage_loss_get(cluster=cluster, since=since, until=until, jobs=True)
    whatifs = usage_loss_whatifs_get(cluster=cluster, since=since, until=until)
    unit = cluster_usage_unit(cluster)
    order = form.order() if valid else USAGE_LOSS_SORTS[0]
    kept = {key: f"{day:%Y-%m-%d}" for key, day in (("from", first), ("until", last)) if day}
    entities = sorted(loss.entities, key=_ORDERS[order])
    iteration = int(cluster.scheduler_iteration.total_seconds())
    now_of = {"scheduler_iteration": iteration, "$max_check_poll": cluster.mom_max_check_poll,
              "$min_check_poll": cluster.mom_min_check_poll}  # fmt: skip
    gainers, payers = _sides(loss.shares())
    lost_of = {row.entity: row for row in loss.entities}
    return render(
        request,
        "trees/usage_loss.html",
        {
            "cluster": cluster,
            "unit": unit,
            "errors": [error for errors in form.errors.values() for error in errors],
            "from_day": first or timezone.localtime(since).date(),
            "until_day": last or timezone.localtime(until).date(),
            "default_window": first is None and last is None,
            "loss": loss,
            "said": usage_loss_sentence(
                cluster=cluster.name,
                window=window_text(since, until),
                actual=loss.actual,
                recorded=loss.recorded,
                lost_fraction=loss.lost_fraction,
                jobs=loss.job_count,
                unseen=loss.unseen,
                unit=unit,
            ),
            "settings_said": usage_loss_settings_sentence(
                min_check_poll=cluster.mom_min_check_poll,
                max_check_poll=cluster.mom_max_check_poll,
                iteration=iteration,
                sources=_sources(cluster),
                logged_cycles=loss.logged_cycles,
            ),
            "entities": entities[:ENTITY_ROWS],
            "entities_left": max(0, len(entities) - ENTITY_ROWS),
            "order": order,
            "orders": {key: "?" + urlencode({**kept, "sort": key}) for key in USAGE_LOSS_SORTS},
            "gain_said": usage_loss_gain_sentence(
                lost_fraction=loss.lost_fraction, gainers=len(gainers), payers=len(payers)
            ),
            "gainers": _side_rows(gainers[:SIDE_ROWS], lost_of),
            "gainers_left": max(0, len(gainers) - SIDE_ROWS),
            "payers": _side_rows(payers[:SIDE_ROWS], lost_of),
            "payers_left": max(0, len(payers) - SIDE_ROWS),
            "whatifs": [
                usage_loss_whatif_sentence(
                    setting=whatif.setting,
                    value=whatif.value,
                    now=now_of[whatif.setting],
                    more=whatif.more,
                    extra=whatif.recorded - loss.recorded,
                    unit=unit,
                )
                for whatif in whatifs
            ],
            "jobs": loss.jobs[:JOB_ROWS],
            "unseen_said": _unseen_sentence(loss, unit),
            "model": USAGE_LOSS_MODEL,
            "legend": usage_loss_columns_explained(unit=unit.name),
            "explain": EXPLANATIONS,
        },
        status=200 if valid else 400,
    )


def _window(first: date | None, last: date | None, now: datetime) -> tuple[datetime, datetime]:
    """The moments the days asked for span, in the site's time zone: from the start of the
    first day to the end of the last, or now if that is sooner; 7 days up to then when no
    first day is given."""
    until = now if last is None else min(now, _midnight(last + timedelta(days=1)))
    since = default_since(until) if first is None else _midnight(first)
    return since, max(since, until)


def _midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _sources(cluster: Cluster) -> dict[str, str]:
    """Where each setting the model reads comes from, as the settings sentence says it."""
    latest = setting_latest_changes_get(
        cluster=cluster,
        settings=("mom_min_check_poll", "mom_max_check_poll", "scheduler_iteration"),
    )
    mom = "PBS's default: no MoM configuration has been imported; import_mom_config reads one"
    if "scheduler_iteration" in cluster.server_attributes:
        qmgr = "PBS's default, as the imported qmgr print has it"
    else:
        qmgr = "PBS's default: no qmgr print imported"
    return {
        "$min_check_poll": setting_source_text(
            latest.get("mom_min_check_poll"),
            default=mom if cluster.mom_min_check_poll == MIN_CHECK_POLL else None,
        ),
        "$max_check_poll": setting_source_text(
            latest.get("mom_max_check_poll"),
            default=mom if cluster.mom_max_check_poll == MAX_CHECK_POLL else None,
        ),
        "scheduler_iteration": setting_source_text(
            latest.get("scheduler_iteration"),
            default=qmgr if cluster.scheduler_iteration == DEFAULT_ITERATION else None,
        ),
    }


def _sides(shares: list[EntityShare]) -> tuple[list[EntityShare], list[EntityShare]]:
    """Those PBS charges less than their part (the most first), and those who pay (the most
    first)."""
    gainers = [share for share in shares if share.gain > GAIN_NOISE]
    payers = [share for share in reversed(shares) if share.gain < -GAIN_NOISE]
    return gainers, payers


def _side_rows(
    shares: list[EntityShare], lost_of: dict[str, EntityLoss]
) -> list[tuple[EntityShare, EntityLoss]]:
    return [(share, lost_of[share.entity]) for share in shares]


def _unseen_sentence(loss: UsageLoss, unit: UsageUnit) -> str:
    usage = sum(job.actual for job in loss.jobs if job.unseen)
    return usage_loss_unseen_sentence(
        unseen=loss.unseen, jobs=loss.job_count, usage=usage, unit=unit
    )
