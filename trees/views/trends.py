"""Trends for managers: a node's children's usage over time against their target shares."""

from __future__ import annotations

import csv

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from accounting.selectors import Trends, trends_get
from trees.access import access_get
from trees.explanations import EXPLANATIONS
from trees.models import Cluster, Node
from trees.selectors.nodes import node_path_get
from trees.views.parameters import choice_parameter, id_parameter
from trees.views.tree import HISTORY_RANGES


def trends_page(request: HttpRequest, name: str) -> HttpResponse:
    """For admins and the managers of the node (or of an ancestor); `node` (default: the
    person's managed node, else the root), `range` (7d, 30d, 1y, all; default 30d), and
    `format=csv` for the same figures as a file."""
    cluster = get_object_or_404(Cluster, name=name)
    access = access_get(user=request.user, cluster=cluster)
    node_id = id_parameter(request, "node")
    if node_id:
        node = get_object_or_404(Node, pk=node_id, cluster=cluster)
    else:
        managed = Node.objects.filter(pk__in=access.managed).order_by("pk").first()
        node = managed or get_object_or_404(Node, cluster=cluster, parent__isnull=True)
    path = node_path_get(node=node)
    ids = [step.pk for step in path]
    if not access.manages(ids):
        if access.sees(ids):
            raise PermissionDenied("trends are for the managers of this part of the tree")
        raise Http404("no such node")
    span = choice_parameter(request, "range", "30d", [*HISTORY_RANGES, "all"])
    since = None if span == "all" else timezone.now() - HISTORY_RANGES[span]
    trends = trends_get(node=node, since=since)
    if request.GET.get("format") == "csv":
        return _csv(cluster, node, span, trends)
    return render(
        request,
        "trees/trends.html",
        {
            "cluster": cluster,
            "node": node,
            "path": path,
            "span": span,
            "ranges": [*HISTORY_RANGES, "all"],
            "trends": trends,
            "shares": [(child, trends.usage_share(child)) for child in trends.children],
            "series": {
                "at": [moment.isoformat() for moment in trends.at],
                "series": [
                    {"name": child.name, "usage": trends.usage[child.pk]}
                    for child in trends.children
                ],
            },
            "explain": EXPLANATIONS,
        },
    )


def _csv(cluster: Cluster, node: Node, span: str, trends: Trends) -> HttpResponse:
    """What the page shows, in three sections told apart by the first column: `usage` (time,
    child, decayed usage), `share` (child, target share, share of usage) and `top` (entity,
    jobs, core-hours, usage)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = f"{cluster.name}-{node.name}-trends-{span}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    out = csv.writer(response)
    out.writerow(["section", "at", "name", "usage", "target_share", "usage_share", "jobs",
                  "core_hours"])  # fmt: skip
    for child in trends.children:
        for moment, value in zip(trends.at, trends.usage[child.pk], strict=True):
            if value is not None:
                out.writerow(["usage", moment.isoformat(), child.name, repr(value), "", "", "", ""])
    for child in trends.children:
        share = trends.usage_share(child)
        out.writerow(["share", "", child.name, repr(child.usage), repr(child.group_perc),
                      repr(share), "", ""])  # fmt: skip
    for row in trends.top:
        out.writerow(["top", "", row.key, repr(row.usage), "", "", row.jobs,
                      repr(row.core_hours)])  # fmt: skip
    return response
