"""Trends for managers: a node's children's usage over time against their target shares."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.selectors import OTHER_CHILDREN, TRENDS_CHILDREN, Trends, trends_get
from trees.access import Access, access_get
from trees.downloads import CsvWriter, download_header
from trees.engine.trends import far_over_target, shares_over_time
from trees.explanations import EXPLANATIONS
from trees.models import Cluster, Node, Scheduler
from trees.quantities import cluster_usage_unit, percent_text
from trees.views.lookup import cluster_or_404, node_view
from trees.views.parameters import HISTORY_RANGES, choice_parameter, id_parameter


def trends_page(request: HttpRequest, name: str) -> HttpResponse:
    """For admins and the managers of the node (or of an ancestor); `node` (default: the
    person's managed node, else the root), `range` (7d, 30d, 1y, all; default 30d), and
    `format=csv` for the same figures as a file. A group of more than TRENDS_CHILDREN
    children shows those of the most usage, the others summed in one row and one series;
    the CSV holds every child."""
    cluster = cluster_or_404(name)
    if cluster.scheduler == Scheduler.ACCELERATOR:  # its groups' pages chart their FS_* fields
        raise Http404("no usage trends are kept for Accelerator's groups")
    access = access_get(user=request.user, cluster=cluster)
    # By default the node they manage (the first, by id), else the root.
    node_id = id_parameter(request, "node") or min(access.managed, default=None)
    at = node_view(request, cluster, node_id, shown=Access.sees, access=access)
    node, path = at.node, at.path
    if not at.access.manages(at.ids):
        raise PermissionDenied("trends are for the managers of this part of the tree")
    span = choice_parameter(request, "range", "30d", [*HISTORY_RANGES, "all"])
    now = timezone.now()
    since = None if span == "all" else now - HISTORY_RANGES[span]
    if request.GET.get("format") == "csv":  # every child, as a file is read
        return _csv(cluster, node, span, trends_get(node=node, since=since))
    trends = trends_get(node=node, since=since, children_shown=TRENDS_CHILDREN)
    others = trends.others
    usage, perc = trends.series()
    usage_shares = shares_over_time(usage)
    target_shares = shares_over_time(perc)
    names = {child.pk: child.name for child in trends.children}
    series = [
        {
            "name": child.name,
            "usage": trends.usage[child.pk],
            "usage_share": usage_shares[child.pk],
            "target_share": target_shares[child.pk],
        }
        for child in trends.children
    ]
    if others is not None:
        series.append(
            {
                "name": f"{others.count} others",
                "usage": others.series_usage,
                "usage_share": usage_shares[OTHER_CHILDREN],
                "target_share": target_shares[OTHER_CHILDREN],
            }
        )
    return render(
        request,
        "trees/trends.html",
        {
            "cluster": cluster,
            "node": node,
            "path": path,
            "span": span,
            "since": since,
            "now": now,
            "ranges": [*HISTORY_RANGES, "all"],
            "trends": trends,
            "slurm": cluster.scheduler == Scheduler.SLURM,
            "unit": cluster_usage_unit(cluster),
            "shares": [(child, trends.usage_share(child)) for child in trends.children],
            "others": others,
            "others_share": trends.usage_share(others) if others is not None else 0.0,
            "shown": TRENDS_CHILDREN,
            "series": {
                "unit": cluster_usage_unit(cluster).name,
                "at": [moment.isoformat() for moment in trends.at],
                "series": series,
            },
            "far_over": [
                (names[over.child], over)
                for over in far_over_target(usage_shares, target_shares)
                if over.child != OTHER_CHILDREN  # a sum of many is no one child far over
            ],
            "siblings": len(trends.children) > 1,
            "explain": EXPLANATIONS,
        },
    )


def _csv(cluster: Cluster, node: Node, span: str, trends: Trends) -> HttpResponse:
    """What the page shows, in three sections told apart by the first column: `usage` (time,
    child, decayed usage), `share` (child, target share and share of usage as percents, as the
    page shows them) and `top` (entity, jobs, core-hours, usage)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = download_header(
        cluster.name, node.name, "trends", span, extension="csv"
    )
    # Numbers go in as numbers (csv writes a float's repr, every digit kept): only text can
    # start like a formula.
    out = CsvWriter(response)
    out.writerow(["section", "at", "name", "usage", "target_percent", "usage_percent", "jobs",
                  "core_hours"])  # fmt: skip
    for child in trends.children:
        for moment, value in zip(trends.at, trends.usage[child.pk], strict=True):
            if value is not None:
                out.writerow(["usage", moment.isoformat(), child.name, value, "", "", "", ""])
    for child in trends.children:
        share = trends.usage_share(child)
        target = percent_text(child.group_perc, slurm=cluster.scheduler == Scheduler.SLURM)
        out.writerow(["share", "", child.name, child.usage, target,
                      percent_text(share, slurm=True), "", ""])  # fmt: skip
    for row in trends.top:
        out.writerow(["top", "", row.key, row.usage, "", "", row.jobs,
                      row.core_hours])  # fmt: skip
    return response
