"""The tree pages: translate requests into selector calls and templates, nothing more."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.selectors import (
    HistoryEvent,
    history_events_get,
    node_history_get,
    recent_jobs_get,
)
from trees.access import Access, access_get, visible_ids_get
from trees.downloads import download_header
from trees.engine.pbs import ROOT_ALIAS
from trees.engine.ranking import furthest_over_target
from trees.explanations import (
    EXPLANATIONS,
    accelerator_columns_explained,
    recovery_sentence,
    target_standing,
    tree_columns_explained,
)
from trees.models import Node, NodeOrigin, Scheduler
from trees.quantities import cluster_usage_unit
from trees.selectors.listings import cluster_listing_get
from trees.selectors.nodes import (
    ancestor_ids_get,
    children_listed_get,
    node_names_get,
    siblings_named_get,
)
from trees.selectors.standing import recovery_get
from trees.selectors.tree_json import tree_answer_get
from trees.serializers import json_number
from trees.views.accelerator import group_page, history_fields
from trees.views.documents import document_response, listing_response
from trees.views.lookup import cluster_or_404, node_view
from trees.views.parameters import (
    CHILDREN_PAGE,
    HISTORY_RANGES,
    MAX_LEVELS,
    MAX_NAME,
    choice_parameter,
    id_parameter,
    int_parameter,
    page_or_404,
    text_parameter,
)


@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and the web benchmark: the application answers (nothing is read)."""
    return HttpResponse("ok\n", content_type="text/plain")


def cluster_overview(request: HttpRequest, name: str) -> HttpResponse:
    """The icicle and the table of the tree; for those who may read the whole tree, also what
    the scheduler's tool prints for it (pbsfs -p, sshare -a -l) on a tab of its own."""
    cluster = cluster_or_404(name)
    access = access_get(user=request.user, cluster=cluster)
    mine = access.own | access.subtrees
    accelerator = cluster.scheduler == Scheduler.ACCELERATOR
    return render(
        request,
        "trees/cluster.html",
        {
            # The person's entities and the path above them, which the icicle outlines.
            "mine": {"mine": sorted(mine), "above": sorted(ancestor_ids_get(mine))},
            "cluster": cluster,
            "slurm": cluster.scheduler == Scheduler.SLURM,
            "accelerator": accelerator,
            "unit": cluster_usage_unit(cluster),
            "legend": accelerator_columns_explained(cluster=True)
            if accelerator
            else tree_columns_explained(
                slurm=cluster.scheduler == Scheduler.SLURM,
                unit=cluster_usage_unit(cluster).name,
                cluster=True,
            ),
            # Trends and the listing read usage and pbsfs/sshare's columns: not Accelerator's.
            "manages": bool(access.admin or access.managed) and not accelerator,
            "admin": access.admin,
            # Fetched when its tab opens: trees of 100,000 lines.
            "listing": access.whole_tree and not accelerator,
            "explain": EXPLANATIONS,
        },
    )


def cluster_listing_text(request: HttpRequest, name: str) -> HttpResponse:
    """What pbsfs -p (PBS) or sshare -a -l (Slurm) prints for the whole tree, as a text file:
    for those who may read the whole tree."""
    cluster = cluster_or_404(name)
    if cluster.scheduler == Scheduler.ACCELERATOR:
        raise Http404("Accelerator has no such listing: accelerator_fs prints its fields")
    if not access_get(user=request.user, cluster=cluster).whole_tree:
        raise PermissionDenied("the whole tree's listing is for those who may read every node")
    response = HttpResponse(cluster_listing_get(cluster=cluster), content_type="text/plain")
    tool = "sshare" if cluster.scheduler == Scheduler.SLURM else "pbsfs"
    response["Content-Disposition"] = download_header(
        cluster.name, tool, extension="txt", inline=True
    )
    return response


def tree_json(request: HttpRequest, name: str) -> HttpResponse:
    """A node (`node`, default: the root) and its descendants `levels` deep (1 to 3, default
    2), or the nodes whose name contains `q` with their ancestors; as far as the person may
    see them, each with its number of children, to open on demand."""
    cluster = cluster_or_404(name)
    access = access_get(user=request.user, cluster=cluster)
    text = text_parameter(request, "q", max_length=MAX_NAME, required=True)
    top_id = levels = 0
    if text is None:
        levels = int_parameter(request, "levels", 2, 1, MAX_LEVELS)
        top_id = id_parameter(request, "node") or 0
    try:
        answer = tree_answer_get(
            cluster=cluster, access=access, text=text, top_id=top_id or None, levels=levels
        )
    except Node.DoesNotExist as exc:
        raise Http404("no such node") from exc
    if answer.listed is not None:
        return listing_response(cluster.name, answer.listed)
    return document_response({"cluster": cluster.name, "nodes": answer.documents})


def node_page(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    at = node_view(request, name, node_id)
    if at.cluster.scheduler == Scheduler.ACCELERATOR:
        return group_page(request, at)
    cluster, node, path, access, ids = at.cluster, at.node, at.path, at.access, at.ids
    # A page at a time: a group of 200,000 users is a page of 100, not a 1 MB table.
    page = page_or_404(request, children_listed_get(node=node), CHILDREN_PAGE)
    rows = [
        (child, access.opens([*ids, child.pk])) for child in page if access.sees([*ids, child.pk])
    ]
    slurm = cluster.scheduler == Scheduler.SLURM
    culprit = furthest_over_target(path, slurm)
    reads = access.reads(ids)
    unit = cluster_usage_unit(cluster)
    return render(
        request,
        "trees/node.html",
        {
            "cluster": cluster,
            "node": node,
            "path": [(step, step is culprit) for step in path],
            "children": rows,
            "page": page,
            "group": page.paginator.count > 0,
            "jobs": recent_jobs_get(node=node) if reads and not page.paginator.count else [],
            "now": timezone.now(),
            "reads": reads,
            "manages": access.manages(ids),
            # Admins edit PBS trees' own entries (and the root's children); Slurm's are sacctmgr's.
            "editable": access.admin
            and cluster.scheduler == Scheduler.PBS
            and (node.parent_id is None or node.origin == NodeOrigin.DEFINED),
            "slurm": slurm,
            "unit": unit,
            "target": target_standing(node, slurm=slurm),
            # Fair Tree's rank counts down from the number of users; places count up from 1st.
            "place": node.fairshare_rank_of - node.fairshare_rank + 1
            if node.fairshare_rank and node.fairshare_rank_of
            else None,
            "legend": tree_columns_explained(slurm=slurm, unit=unit.name, cluster=False),
            "ranges": [*HISTORY_RANGES, "all"],
            "explain": EXPLANATIONS,
        },
    )


def node_history_json(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    """The node's history over `range` (7d, 30d, 1y or all; default 30d) and the events that
    mark it (decays, usage resets, share changes)."""
    at = node_view(request, name, node_id, shown=Access.reads)
    cluster, node = at.cluster, at.node
    beside = siblings_named_get(node=node)
    nearby_ids = {*at.ids, *(pk for pk, _ in beside)}
    nearby = {step.name for step in at.path} | {name for _, name in beside}
    visible = visible_ids_get(access=at.access)
    shown = None if visible is None else {ROOT_ALIAS, *node_names_get(ids=visible)}
    span = choice_parameter(request, "range", "30d", [*HISTORY_RANGES, "all"])
    since = None if span == "all" else timezone.now() - HISTORY_RANGES[span]
    points = node_history_get(node=node, since=since)
    events = history_events_get(cluster=cluster, since=since)
    return document_response(
        {
            "node": node.pk,
            "range": span,
            "at": [point.at.isoformat() for point in points],
            "usage": [point.usage for point in points],
            "fairshare_perc": [point.fairshare_perc for point in points],
            "fairshare_tree_usage": [point.fairshare_tree_usage for point in points],
            "usage_perc": [point.usage_perc for point in points],
            "fairshare_factor": [point.fairshare_factor for point in points],
            "level_fs": [json_number(point.level_fs) for point in points],
            **(
                {"accelerator": history_fields(points)}
                if cluster.scheduler == Scheduler.ACCELERATOR
                else {}
            ),
            # Shares changed on the path or beside it move the node's target share.
            "events": [
                {"at": event.at.isoformat(), "kind": event.kind, "text": event.text}
                for event in events
                if event.kind == "decay" or _nearby(event, nearby_ids, nearby, shown)
            ],
        }
    )


def node_recovery_json(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    """With no further usage by the node's entities, its factor at each coming decay and when
    it reaches 0.5 (PBS; Fair Tree's FairShare is a rank, not a distance from target)."""
    at = node_view(request, name, node_id, scheduler=Scheduler.PBS, shown=Access.reads)
    node = at.node
    try:
        projection = recovery_get(cluster=at.cluster, node=node, now=timezone.now())
    except LookupError as exc:
        raise Http404(str(exc)) from exc
    return document_response(
        {
            "node": node.pk,
            "at": [moment.isoformat() for moment in projection.at],
            "fairshare_factor": projection.factors,
            "reaches": projection.reaches,
            "held_by": projection.held_by,
            "sentence": recovery_sentence(projection),
        }
    )


def _nearby(event: HistoryEvent, ids: set[int], names: set[str], shown: set[str] | None) -> bool:
    """A share change on the node's path or beside it (a removed node by its name), that
    moves it from or to a group the person sees (`shown`; None: the whole tree): a node of the
    same name elsewhere (a Slurm user in another account), or a move from a hidden group, stays
    out."""
    here = event.node_id in ids if event.node_id is not None else event.node_name in names
    return here and (shown is None or all(name in shown for name in event.mentions))
