"""The What-if pages (admins): a form that starts from the cluster's policy as it is and saves a
scenario for a worker to replay, the saved scenarios, and each one's permalink, which follows
its progress and then shows what the variant would change."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from accounting.forms import WhatIfForm
from accounting.models import Scenario, ScenarioState
from accounting.selectors import scenario_get, scenarios_get, whatif_submits_get
from accounting.services.scenarios import MAX_SETTING, MAX_SETTINGS, scenario_start
from accounting.services.whatif import WhatIfError
from accounting.whatif_results import (
    PROJECTS_SHOWN,
    backfill_said,
    project_rows,
    share_chart,
    summary_rows,
)
from trees.access import access_get
from trees.formats.whatif import ACCELERATOR_KEYS, PBS_KEYS, SLURM_KEYS
from trees.models import Cluster, Scheduler
from trees.quantities import span_text
from trees.selectors.whatif import whatif_policy_get
from trees.views.lookup import cluster_or_404
from trees.views.parameters import BadParameter, choice_parameter, page_or_404

SCENARIOS_PAGE = 50  # saved what-ifs a page of the list shows
WINDOW_DAYS = 30  # the form's window by default: the last 30 days of stored jobs
REPLAY_FIELDS = ("title", "from", "until", "cores", "order", "backfill")
WORKING = (ScenarioState.QUEUED, ScenarioState.RUNNING)
KEYS = {
    Scheduler.PBS: PBS_KEYS,
    Scheduler.SLURM: SLURM_KEYS,
    Scheduler.ACCELERATOR: ACCELERATOR_KEYS,
}


def whatif_page(request: HttpRequest, name: str) -> HttpResponse:
    """The form, on the policy as it is now (or with the settings `?set=KEY=VALUE` asks for,
    as the share edit page's "Simulate this" sends them); a valid one saves the scenario,
    queues its replay and answers with its permalink."""
    cluster = _admins_cluster(request, name)
    policy = whatif_policy_get(cluster=cluster)
    if request.method == "POST":
        form = WhatIfForm(request.POST, cluster=cluster, policy=policy)
        if form.is_valid():
            try:
                scenario = scenario_start(
                    cluster=cluster,
                    parameters=form.parameters(),
                    user=request.user if isinstance(request.user, User) else None,
                    title=form.cleaned_data["title"],
                )
            except WhatIfError as refused:
                form.add_error(None, str(refused))
            else:
                return redirect("accounting:scenario", cluster.name, scenario.pk)
    else:
        form = WhatIfForm(
            cluster=cluster, policy=policy, days=_window(cluster), asked=_asked(request)
        )
    page = page_or_404(request, scenarios_get(cluster=cluster), SCENARIOS_PAGE)
    return render(
        request,
        "accounting/whatif.html",
        {
            "cluster": cluster,
            "form": form,
            "replay": [form[field] for field in REPLAY_FIELDS],
            "knobs": [(knob, form[knob.name]) for knob in form.knobs],
            "shares": [(knob, form[knob.name]) for knob in form.shares],
            "keys": KEYS[Scheduler(cluster.scheduler)],
            "page": page,
        },
        status=400 if form.is_bound else 200,
    )


def scenario_page(request: HttpRequest, name: str, scenario_id: int) -> HttpResponse:
    """A saved what-if: its parameters; its progress while it runs; then the calibration, the
    summary, each project's waits (`?projects=all`: every one) and the share chart; or why
    it failed."""
    cluster = _admins_cluster(request, name)
    scenario = _scenario(cluster, scenario_id)
    every = choice_parameter(request, "projects", "top", ("top", "all")) == "all"
    parameters = scenario.parameters
    context: dict[str, Any] = {
        "cluster": cluster,
        "scenario": scenario,
        "working": scenario.state in WORKING,
        "parameters": parameters,
        "window": {
            "since": _moment(parameters.get("from")),
            "until": _moment(parameters.get("until")),
        },
        "backfill": backfill_said(parameters.get("backfill")),
        "again": _again(cluster, scenario),
    }
    result = scenario.result if scenario.state == ScenarioState.DONE else None
    if result:
        projects = project_rows(result)
        context |= {
            "result": result,
            "summary": summary_rows(result),
            "projects": projects if every else projects[:PROJECTS_SHOWN],
            "projects_all": len(projects),
            "chart": share_chart(result),
            "bin": span_text(timedelta(seconds=result["share_over_time"]["bin_seconds"])),
            "trace": {
                "since": _moment(result["trace"]["from"]),
                "until": _moment(result["trace"]["until"]),
            },
            "left_out": result["trace"].get("left_out_by_reason", {}),
        }
    return render(request, "accounting/scenario.html", context)


def scenario_state_json(request: HttpRequest, name: str, scenario_id: int) -> HttpResponse:
    """What the permalink polls while the replay runs."""
    scenario = _scenario(_admins_cluster(request, name), scenario_id)
    return JsonResponse(
        {
            "state": scenario.state,
            "label": scenario.get_state_display(),
            "progress": scenario.progress,
            "working": scenario.state in WORKING,
        }
    )


def _admins_cluster(request: HttpRequest, name: str) -> Cluster:
    cluster = cluster_or_404(name)
    if not access_get(user=request.user, cluster=cluster).admin:
        raise PermissionDenied("what-ifs are for admins")
    return cluster


def _scenario(cluster: Cluster, scenario_id: int) -> Scenario:
    try:
        return scenario_get(cluster=cluster, scenario_id=scenario_id)
    except Scenario.DoesNotExist as exc:
        raise Http404("no such what-if on this cluster") from exc


def _window(cluster: Cluster) -> tuple[date | None, date | None]:
    """The last WINDOW_DAYS days of the stored jobs' submits; all of them (no days) when they
    span no more."""
    span = whatif_submits_get(cluster=cluster)
    if span is None:
        return None, None
    first, last = (moment.date() for moment in span)
    since = last - timedelta(days=WINDOW_DAYS - 1)
    return (None, None) if first >= since else (since, last)


def _asked(request: HttpRequest) -> list[str]:
    asked = request.GET.getlist("set")
    if len(asked) > MAX_SETTINGS or any(
        len(text) > MAX_SETTING or "\x00" in text for text in asked
    ):
        raise BadParameter(
            "set", f"must be at most {MAX_SETTINGS} settings of {MAX_SETTING} characters"
        )
    return asked


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _again(cluster: Cluster, scenario: Scenario) -> str:
    """The form's address with this scenario's settings filled in."""
    settings = scenario.parameters.get("settings") or []
    query = urlencode([("set", text) for text in settings])
    return reverse("accounting:whatif", args=[cluster.name]) + (f"?{query}" if query else "")
