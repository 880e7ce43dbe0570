"""The API's read endpoints: each reads what the matching page reads, with the same access
rules (trees.access), and answers it in the DESIGN §6 fields."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import orjson
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from accounting.job_priority import JobPriority, job_priority_get, queue_get
from accounting.models import JOB_STATES
from accounting.priorities import QueuedJob
from accounting.selectors import (
    HistoryNotKept,
    history_cycle_get,
    node_history_rows_get,
    node_jobs_get,
    tree_at_get,
    trends_get,
)
from trees.access import Access, access_get, scheduler_user
from trees.api import schemas
from trees.api.base import ApiView, django_request
from trees.api.documents import (
    accelerator_history_fields,
    child_documents,
    history_document,
    iso,
    job_document,
    path_documents,
    recovery_document,
    share_change_document,
    standings_document,
    trends_document,
)
from trees.engine.ranking import furthest_over_target
from trees.engine.slurm import Algorithm
from trees.explanations import pbs_comparison_explained, slurm_comparison_explained
from trees.formats.slurmrestd import shares_response
from trees.models import Cluster, Node, Scheduler
from trees.quantities import cluster_usage_unit
from trees.selectors.audit import share_changes_get
from trees.selectors.compare import pbs_compare_get, slurm_compare_get
from trees.selectors.listings import cluster_listing_get, sshare_rows_get
from trees.selectors.nodes import children_listed_get, descendant_ids_get
from trees.selectors.pbs import tree_version_get
from trees.selectors.standing import recovery_get
from trees.selectors.tree_json import EVERY_LEVEL, tree_answer_get
from trees.serializers import cluster_document, json_number
from trees.views.compare import reads_label
from trees.views.jobs import NO_JOB, job_lookup, job_reasons, queue_rows
from trees.views.lookup import cluster_or_404, node_anywhere_view, node_view
from trees.views.parameters import (
    HISTORY_RANGES,
    MAX_NAME,
    NODE_CHILDREN_PAGE,
    BadParameter,
    choice_parameter,
    id_parameter,
    int_parameter,
    page_or_404,
    text_parameter,
    time_parameter,
)
from trees.views.standing import person_standings

MAX_DEPTH = 1000  # deeper than any tree a scheduler keeps
TREE_PAGE = 10_000  # nodes a page of the tree answers at most: a 10,000-node tree in one
MAX_PAGE = 10**6  # beyond any tree's last page; a bound so that an offset stays a number
NOT_FOUND = {404: schemas.ErrorSerializer}
ERRORS = {
    400: schemas.ErrorSerializer,
    401: schemas.ErrorSerializer,
    403: schemas.ErrorSerializer,
    404: schemas.ErrorSerializer,
}


def _whole(low: int, high: int) -> dict[str, Any]:
    """The schema of a whole-number parameter from `low` to `high`."""
    return {"type": "integer", "minimum": low, "maximum": high}


def _page_parameters(items: str, most: int, page: str = "the page") -> list[OpenApiParameter]:
    """The schema of `page` and `page_size` for a list of `items`, at most `most` a page."""
    return [
        OpenApiParameter("page", _whole(1, MAX_PAGE), description=f"{page}, from 1 (default 1)"),
        OpenApiParameter(
            "page_size", _whole(1, most), description=f"{items} a page, 1 to {most:,} (the default)"
        ),
    ]


def _page_asked(request: HttpRequest, most: int) -> tuple[int, int]:
    """The page asked for (from 1) and its size (`most` by default)."""
    number = int_parameter(request, "page", 1, 1, MAX_PAGE)
    return number, int_parameter(request, "page_size", most, 1, most)


class PageOf(CursorPagination):
    """A list that can grow, a page at a time: follow `next` (an opaque cursor) to the end."""

    page_size = 100
    max_page_size = 1000
    page_size_query_param = "page_size"
    ordering = "-id"


class ClustersPage(PageOf):
    ordering = "name"


class HistoryPage(PageOf):
    page_size = 1000
    ordering = "at"


def cluster_answer(cluster: Cluster) -> dict[str, Any]:
    document = cluster_document(cluster)
    if cluster.scheduler == Scheduler.PBS:
        document["tree_version"] = tree_version_get(cluster=cluster)
    document["usage_unit"] = cluster_usage_unit(cluster).name
    return document


class ClusterList(ApiView):
    """Every cluster, by name, with its policy (as `GET /api/clusters/{name}/` gives it)."""

    pagination_class = ClustersPage

    @extend_schema(
        operation_id="clusters_list", responses={200: schemas.ClusterPageSerializer, **ERRORS}
    )
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        clusters = paginator.paginate_queryset(Cluster.objects.all(), request, view=self)
        return paginator.get_paginated_response([cluster_answer(c) for c in clusters or []])


class ClusterDetail(ApiView):
    """A cluster's policy: its scheduler, usage formula (`fairshare_usage_res`), decay, and
    for PBS the version of its tree's entries that a share edit names in `If-Match`."""

    @extend_schema(responses={200: schemas.ClusterSerializer, **ERRORS})
    def get(self, request: Request, name: str) -> Response:
        return Response(cluster_answer(cluster_or_404(name)))


class ClusterTree(ApiView):
    """The tree as the scheduler computes it, root first, each node before its children, as
    far as the person may see it: `fairshare_perc` is the node's target share of the whole
    machine as a fraction (as PBS's formulas see it); values that do not apply to the
    cluster's scheduler are null; Accelerator groups carry their FS_* fields under
    `accelerator`. `node` answers that node's subtree, `depth` stops at that depth (the root
    is 0), `q` finds the nodes whose name contains it (with their ancestors), `at` answers
    from history: each node's numbers as the last cycle kept at or before that time left them,
    with its shares then (Accelerator: the FS_* fields the history keeps, the others null); a
    time before the oldest cycle kept, or to come, is a 400. A page holds `page_size` nodes at
    most (default and most: 10,000); `next` and `previous` are the addresses of the pages
    beside it, null at either end."""

    @extend_schema(
        parameters=[
            OpenApiParameter("node", int, description="a node's id: its subtree only"),
            OpenApiParameter("depth", int, description="the deepest depth listed (root: 0)"),
            OpenApiParameter("q", str, description="nodes whose name contains it, case aside"),
            OpenApiParameter(
                "at", OpenApiTypes.DATETIME,
                description="an ISO 8601 time: the tree as the last cycle kept at or before it"
                " left it; between the oldest cycle kept and now",
            ),
            *_page_parameters("nodes", TREE_PAGE),
        ],
        responses={200: schemas.TreeSerializer, **ERRORS},
        examples=[
            OpenApiExample(
                "An Accelerator cluster's tree", value=schemas.ACCELERATOR_TREE_EXAMPLE,
                response_only=True,
            )
        ],
    )  # fmt: skip
    def get(self, request: Request, name: str) -> HttpResponseBase:
        page_request = django_request(request)
        cluster = cluster_or_404(name)
        access = access_get(user=request.user, cluster=cluster)
        text = text_parameter(page_request, "q", max_length=MAX_NAME, required=True)
        top_id = id_parameter(page_request, "node")
        depth = int_parameter(page_request, "depth", MAX_DEPTH, 0, MAX_DEPTH)
        at = time_parameter(page_request, "at")
        number, size = _page_asked(page_request, TREE_PAGE)
        cycle = None if at is None else _kept_cycle(cluster, at)
        policy = cluster_document(cluster)
        # Sets sorted: equal sets may list in another order in another web process.
        seen = [
            (key, sorted(v) if isinstance(v, frozenset) else v) for key, v in vars(access).items()
        ]
        parts = (policy, seen)

        def build() -> HttpResponse:
            try:
                answer = tree_answer_get(
                    cluster=cluster, access=access, text=text, top_id=top_id,
                    levels=EVERY_LEVEL, max_depth=depth, start=(number - 1) * size, limit=size,
                )  # fmt: skip
            except Node.DoesNotExist as exc:
                raise Http404("no such node") from exc
            beside = _pages_beside(request, number, answer.more)
            if at is not None and cycle is not None:
                documents = answer.documents or _decoded(answer.listed)
                nodes = _then(cluster, documents, at, cycle)
                return _json({"cluster": policy, "nodes": nodes, **beside})
            if answer.listed is not None:
                head = orjson.dumps(policy).decode()
                tail = orjson.dumps(beside).decode()[1:]
                body = f'{{"cluster":{head},"nodes":[{",".join(answer.listed)}],{tail}'
                return HttpResponse(body.encode(), content_type="application/json")
            return _json({"cluster": policy, "nodes": answer.documents, **beside})

        if at is not None:
            return build()  # history is thinned by its roll-up: no cheaper tag than the content
        return self.conditional(request, parts, build)


def _kept_cycle(cluster: Cluster, at: datetime) -> datetime:
    """The kept cycle `at` reads; a 400 saying what the history holds when there is none."""
    try:
        return history_cycle_get(cluster=cluster, at=at, now=timezone.now())
    except HistoryNotKept as exc:
        raise BadParameter("at", f"must be a time the history holds: {exc}") from exc


def _pages_beside(request: Request, number: int, more: bool) -> dict[str, str | None]:
    """The addresses of the pages before and after page `number` (null at either end)."""
    here = request.build_absolute_uri()
    before = None
    if number == 2:
        before = remove_query_param(here, "page")
    elif number > 2:
        before = replace_query_param(here, "page", number - 1)
    return {"next": replace_query_param(here, "page", number + 1) if more else None,
            "previous": before}  # fmt: skip


def _json(document: object) -> HttpResponse:
    return HttpResponse(orjson.dumps(document), content_type="application/json")


def _decoded(listed: list[str] | None) -> list[dict[str, Any]]:
    return [orjson.loads(text) for text in listed or []]


THEN = ("usage", "fairshare_perc", "fairshare_tree_usage", "usage_perc", "fairshare_factor")
ACCELERATOR_THEN = ("usage", "fairshare_perc")  # the PBS numbers stay null


def _then(
    cluster: Cluster, documents: list[dict[str, Any]], at: datetime, cycle: datetime
) -> list[dict[str, Any]]:
    """The documents with each node's numbers at the kept `cycle` and its shares at `at`;
    nodes that cycle did not write (made since) left out."""
    then = tree_at_get(cluster=cluster, at=at, cycle=cycle, ids=[doc["id"] for doc in documents])
    slurm = cluster.scheduler == Scheduler.SLURM
    accelerator = cluster.scheduler == Scheduler.ACCELERATOR
    answered = []
    for document in documents:
        found = then.get(document["id"])
        if found is None:
            continue
        point = found.point
        document = {**document, "shares": found.shares, "as_of": found.at.isoformat()}
        for field in ACCELERATOR_THEN if accelerator else THEN:
            document[field] = getattr(point, field)
        if accelerator:
            # What the history does not keep (the excesses, activity, window, distance) is null.
            kept = accelerator_history_fields(point)
            document["accelerator"] = dict.fromkeys(document["accelerator"]) | kept
        if slurm:
            document["usage_perc"] = document["fairshare_tree_usage"] = None
            document["level_fs"] = json_number(point.level_fs)
            if document["fairshare_rank"] is not None:
                document["fairshare_rank"] = {
                    "rank": point.fairshare_rank, "of": document["fairshare_rank"]["of"],
                }  # fmt: skip
        document.pop("slurm", None)  # sshare's own columns are not in the history
        answered.append(document)
    return answered


class NodeDetail(ApiView):
    """A node as its page shows it: its values, its path from the root with each level's
    values, the level of that path furthest over its target (the one pulling it down), its
    children as far as the person sees them, and on PBS the recovery projection: its factor
    at each coming decay if its entities run nothing more. Accelerator ranks each group by its
    own distance from its target, not by its path: no level pulls it down, and it has no
    decay to recover by (`furthest_over_target` and `recovery` are null). The children come
    a page at a time, the largest target share first: `page_size` of them (at most and by
    default 1,000), `children_count` in all, `children_next` and `children_previous` the
    addresses of the pages beside (null at either end)."""

    @extend_schema(
        parameters=[
            *_page_parameters("children", NODE_CHILDREN_PAGE, "the children's page"),
        ],
        responses={200: schemas.NodeDetailSerializer, **ERRORS},
        examples=[
            OpenApiExample(
                "An Accelerator user's group", value=schemas.ACCELERATOR_DETAIL_EXAMPLE,
                response_only=True,
            )
        ],
    )  # fmt: skip
    def get(self, request: Request, node_id: int) -> Response:
        at = _node_view(request, node_id, Access.opens)
        cluster, node, path, access = at.cluster, at.node, at.path, at.access
        slurm = cluster.scheduler == Scheduler.SLURM
        accelerator = cluster.scheduler == Scheduler.ACCELERATOR
        culprit = None if accelerator else furthest_over_target(path, slurm)
        page_request = django_request(request)
        size = int_parameter(page_request, "page_size", NODE_CHILDREN_PAGE, 1, NODE_CHILDREN_PAGE)
        page = page_or_404(page_request, children_listed_get(node=node), size)
        children = [child for child in page if access.sees([*at.ids, child.pk])]
        recovery = None
        if cluster.scheduler == Scheduler.PBS and access.reads(at.ids):
            try:
                recovery = recovery_document(
                    recovery_get(cluster=cluster, node=node, now=timezone.now())
                )
            except LookupError:
                recovery = None
        documents = path_documents(cluster, path)
        return Response(
            {
                "cluster": cluster.name,
                "node": documents[-1],
                "path": documents,
                "furthest_over_target": culprit.pk if isinstance(culprit, Node) else None,
                "children": child_documents(cluster, node, len(path) - 1, children),
                "children_count": page.paginator.count,
                **{
                    f"children_{side}": link
                    for side, link in _pages_beside(request, page.number, page.has_next()).items()
                },
                "recovery": recovery,
            }
        )


def _node_view(request: Request, node_id: int, shown: Any) -> Any:
    """The node of that id in any cluster, if `shown` to the person (404 otherwise, after
    the same queries for a hidden node as for a missing one)."""
    return node_anywhere_view(django_request(request), node_id, shown=shown)


class History(ApiView):
    """The node's numbers after each cycle kept (every cycle of the last day, then hourly for
    a week, then daily), oldest first, in [since, until); a page at a time. Accelerator groups:
    the FS_* fields the history keeps under `accelerator` (null on other schedulers), and the
    PBS numbers null."""

    pagination_class = HistoryPage

    @extend_schema(
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="ISO 8601 time, included"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="ISO 8601 time, excluded"),
        ],
        responses={200: schemas.HistoryPageSerializer, **ERRORS},
        examples=[
            OpenApiExample(
                "An Accelerator group's history", value=schemas.ACCELERATOR_HISTORY_EXAMPLE,
                response_only=True,
            )
        ],
    )  # fmt: skip
    def get(self, request: Request, node_id: int) -> Response:
        at = _node_view(request, node_id, Access.reads)
        page_request = django_request(request)
        rows = node_history_rows_get(
            node=at.node,
            since=time_parameter(page_request, "since"),
            until=time_parameter(page_request, "until"),
        )
        accelerator = at.cluster.scheduler == Scheduler.ACCELERATOR
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self) or []
        return paginator.get_paginated_response(
            [history_document(row, accelerator=accelerator) for row in page]
        )


class NodeJobs(ApiView):
    """The runs charged to the node (a group: to its leaves), newest first: of a `state`, and
    whose last event (end, else start, else submission) is in [since, until)."""

    pagination_class = PageOf

    @extend_schema(
        parameters=[
            OpenApiParameter("state", str, enum=[state for state, _ in JOB_STATES]),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="ISO 8601 time, included"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="ISO 8601 time, excluded"),
        ],
        responses={200: schemas.JobPageSerializer, **ERRORS},
    )
    def get(self, request: Request, node_id: int) -> Response:
        at = _node_view(request, node_id, Access.reads)
        page_request = django_request(request)
        states = [state for state, _ in JOB_STATES]
        state = choice_parameter(page_request, "state", "", states) or None
        leaves = descendant_ids_get([at.node.pk]) | {at.node.pk}
        jobs = node_jobs_get(
            node=at.node,
            leaves=leaves,
            state=state,
            since=time_parameter(page_request, "since"),
            until=time_parameter(page_request, "until"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(jobs, request, view=self) or []
        return paginator.get_paginated_response([job_document(job) for job in page])


class Compare(ApiView):
    """Who of two entities or groups is more deserving, and why (pbsfs -c on PBS; Fair Tree
    on Slurm, where `a` and `b` are ACCOUNT, ACCOUNT:USER or USER)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("a", str, required=True),
            OpenApiParameter("b", str, required=True),
        ],
        responses={200: schemas.CompareSerializer, **ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        cluster = cluster_or_404(name)
        if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
            raise Http404(
                f"cluster {name} compares no two entities (PBS and Slurm only); its groups'"
                " FS_RANK, in its tree, orders them"
            )
        access = access_get(user=request.user, cluster=cluster)
        page_request = django_request(request)
        labels = {}
        for parameter in ("a", "b"):
            label = text_parameter(page_request, parameter, max_length=MAX_NAME, required=True)
            if label is None:
                raise BadParameter(parameter, "is required: an entity or group's name")
            if not reads_label(cluster, access, label):
                raise BadParameter(parameter, "names no entity or group that you may read")
            labels[parameter] = label
        a, b = labels["a"], labels["b"]
        try:
            if cluster.scheduler == Scheduler.SLURM:
                slurm = slurm_compare_get(cluster=cluster, a=a, b=b)
                return Response(
                    {
                        "a": a, "b": b, "winner": slurm.winner, "ancestor": slurm.ancestor,
                        "child_a": slurm.child_a, "child_b": slurm.child_b,
                        "level_fs_a": json_number(slurm.level_fs_a),
                        "level_fs_b": json_number(slurm.level_fs_b),
                        "fairshare_a": slurm.fairshare_a, "fairshare_b": slurm.fairshare_b,
                        "explanation": [slurm_comparison_explained(slurm)],
                    }
                )  # fmt: skip
            pbs = pbs_compare_get(cluster=cluster, a=a, b=b)
        except (LookupError, ValueError) as exc:
            raise BadParameter("a", str(exc)) from exc
        return Response(
            {
                "a": a, "b": b, "winner": pbs.winner, "answer": pbs.answer,
                "ancestor": pbs.ancestor, "child_a": pbs.child_a or None,
                "child_b": pbs.child_b or None, "usage_a": pbs.usage_a, "usage_b": pbs.usage_b,
                "perc_a": pbs.perc_a, "perc_b": pbs.perc_b,
                "explanation": pbs_comparison_explained(pbs, cluster_usage_unit(cluster)),
            }
        )  # fmt: skip


class Me(ApiView):
    """Where the person stands on every cluster: each of their entities (their scheduler user
    name's, or their memberships') with its factor, place among the cluster's entities, the
    week's change, its target standing in words, the level pulling it down, when it recovers,
    and its running and queued jobs; and the standing of the members of what they manage."""

    @extend_schema(responses={200: schemas.MeSerializer, **ERRORS})
    def get(self, request: Request) -> Response:
        standings = person_standings(request.user, members=True)
        return Response(standings_document(scheduler_user(request.user), standings))


class Audit(ApiView):
    """Admins only: every change of the tree's shares, names and places, newest first, with
    who, when and why; `q` keeps those of nodes whose name (now or before) contains it."""

    pagination_class = PageOf

    @extend_schema(
        parameters=[OpenApiParameter("q", str)],
        responses={200: schemas.AuditPageSerializer, **ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        cluster = cluster_or_404(name)
        if not access_get(user=request.user, cluster=cluster).admin:
            raise PermissionDenied("the audit trail is for admins")
        text = text_parameter(django_request(request), "q", max_length=MAX_NAME) or ""
        paginator = self.pagination_class()
        changes = share_changes_get(cluster=cluster, name=text)
        page = paginator.paginate_queryset(changes, request, view=self) or []
        return paginator.get_paginated_response([share_change_document(c) for c in page])


TRENDS_CHILDREN_MAX = 1_000  # children a trends answer lists at most, the others summed


class Trends(ApiView):
    """For admins and the managers of the node (or of an ancestor): its children's usage over
    `range` against their target shares, who ran far over target, and the top consumers."""

    @extend_schema(
        parameters=[
            OpenApiParameter("node", int, description="default: the node they manage, or root"),
            OpenApiParameter("range", str, enum=[*HISTORY_RANGES, "all"], default="30d"),
            OpenApiParameter(
                "children",
                int,
                default=TRENDS_CHILDREN_MAX,
                description=f"the children listed, those of the most present usage (1 to"
                f" {TRENDS_CHILDREN_MAX}); the others are summed in `others`",
            ),
        ],
        responses={200: schemas.TrendsSerializer, **ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        page_request = django_request(request)
        cluster = cluster_or_404(name)
        access = access_get(user=request.user, cluster=cluster)
        node_id = id_parameter(page_request, "node") or min(access.managed, default=None)
        at = node_view(page_request, cluster, node_id, shown=Access.sees, access=access)
        if not access.manages(at.ids):
            raise PermissionDenied("trends are for the managers of this part of the tree")
        span = choice_parameter(page_request, "range", "30d", [*HISTORY_RANGES, "all"])
        since = None if span == "all" else timezone.now() - HISTORY_RANGES[span]
        shown = int_parameter(page_request, "children", TRENDS_CHILDREN_MAX, 1, TRENDS_CHILDREN_MAX)
        trends = trends_get(node=at.node, since=since, children_shown=shown)
        return Response(trends_document(at.node, span, trends))


SHARES_FORMATS: dict[str, tuple[str, ...]] = {
    Scheduler.SLURM: ("json", "sshare"),
    Scheduler.PBS: ("pbsfs",),
}


class Shares(ApiView):
    """The scheduler's own view of the shares. Slurm: the JSON slurmrestd answers for
    `GET /slurm/v0.0.40/shares` (same keys and number wrappers: tools written for slurmrestd
    read it unchanged), the associations the person may see; `format=sshare` gives what
    `sshare -a -l` prints. PBS: `format=pbsfs` gives what `pbsfs -p` prints. The texts are for
    those who read the whole tree, as the cluster page's listing is."""

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "sshare", "pbsfs"])],
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "text/plain"): OpenApiTypes.STR,
            **ERRORS,
        },
    )
    def get(self, request: Request, name: str) -> HttpResponse:
        cluster = cluster_or_404(name)
        formats = SHARES_FORMATS.get(cluster.scheduler, ())
        if not formats:
            raise Http404(f"cluster {name} keeps no shares listing")
        shown = choice_parameter(django_request(request), "format", formats[0], formats)
        access = access_get(user=request.user, cluster=cluster)
        if shown != "json":
            if not access.whole_tree:
                raise PermissionDenied("the scheduler's listing is for those who read every node")
            text = cluster_listing_get(cluster=cluster)
            return HttpResponse(text, content_type="text/plain; charset=utf-8")
        rows = sshare_rows_get(cluster=cluster)
        if not access.whole_tree:
            paths = _paths_of(cluster)
            rows = [(pk, row) for pk, row in rows if access.sees(paths[pk])]
        algorithm = Algorithm(cluster.fairshare_algorithm)
        return _json(
            shares_response(
                [row for _, row in rows], cluster=cluster.name,
                tres_names=cluster.slurm_tres.split(","), algorithm=algorithm,
            )
        )  # fmt: skip


def _paths_of(cluster: Cluster) -> dict[int, list[int]]:
    """Each node's ids from the root."""
    parents = dict(Node.objects.filter(cluster=cluster).values_list("id", "parent_id"))
    paths: dict[int, list[int]] = {}

    def path(pk: int) -> list[int]:
        if pk not in paths:
            parent = parents[pk]
            paths[pk] = [pk] if parent is None else [*path(parent), pk]
        return paths[pk]

    for pk in parents:
        path(pk)
    return paths


QUEUE_STATES = ["queued"]  # the order is computed for waiting jobs only
QUEUE_PAGE = 1000  # waiting jobs a page of the queue answers at most (and by default)


def _with_priorities(cluster: Cluster) -> None:
    """404 for a cluster whose jobs have no priorities we compute: Accelerator orders its
    queue by FS_RANK, in the tree."""
    if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
        raise Http404(f"cluster {cluster.name} has no job priorities (PBS and Slurm only)")


def _terms(terms: dict[str, float]) -> dict[str, float | None]:
    """A priority's terms for JSON, which has no NaN or infinity (null for those)."""
    return {text: value if math.isfinite(value) else None for text, value in terms.items()}


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def queued_job_document(job: QueuedJob, masked: bool) -> dict[str, Any]:
    """A waiting job as the queue lists it; `masked`, its size and priority only."""
    document: dict[str, Any] = {
        "job_id": None, "entity": None, "user": None, "queue": None, "ncpus": job.ncpus,
        "walltime": job.walltime, "priority": _finite(job.priority), "position": job.position,
        "queue_position": None, "terms": {}, "held": job.held, "reason": None,
        "submitted": None, "masked": masked,
    }  # fmt: skip
    if not masked:
        document |= {
            "job_id": job.job_id, "entity": job.entity, "user": job.user, "queue": job.queue,
            "queue_position": job.queue_position, "terms": _terms(job.terms),
            "reason": job.reason, "submitted": iso(job.submitted),
        }  # fmt: skip
    return document


QUEUE_EXAMPLE = {
    "cluster": "hpc",
    "at": "2026-11-26T12:00:00+00:00",
    "formula": "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)",
    "problem": "",
    "waiting": 2,
    "jobs": [
        {
            "job_id": "4103[2]", "entity": "cond-matter", "user": "dkaya", "queue": "cpu",
            "ncpus": 64, "walltime": 14400, "priority": 667.2216, "position": 1,
            "queue_position": 1, "held": False, "reason": "", "submitted":
            "2026-11-26T09:00:00+00:00", "masked": False,
            "terms": {"10*(ncpus/6656)": 0.0962, "1000*(1-fairshare_tree_usage)": 667.0,
                      "(eligible_time/86400)": 0.125},
        },
        {
            "job_id": None, "entity": None, "user": None, "queue": None, "ncpus": 16,
            "walltime": 3600, "priority": 412.5, "position": 2, "queue_position": None,
            "terms": {}, "held": False, "reason": None, "submitted": None, "masked": True,
        },
    ],
    "next": None,
    "previous": None,
}  # fmt: skip


class ClusterJobs(ApiView):
    """The cluster's waiting jobs in the order its scheduler considers them (PBS
    job_sort_formula and job order, Slurm multifactor), computed now from the jobs and
    standings stored, the held ones last; each with its priority's terms. Where usage is
    private (`private_usage`), a job of an entity the person may not read shows only its size
    and priority. `state`: `queued` only (the order is the waiting jobs'). A page holds
    `page_size` jobs at most (1,000, the default), `next` and `previous` the addresses of the
    pages beside it (null at either end); `waiting` counts every waiting job."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "state", str, enum=QUEUE_STATES, default="queued",
                description="queued: the waiting jobs (running and ended ones are the node's"
                " jobs, /api/nodes/{id}/jobs/)",
            ),
            *_page_parameters("jobs", QUEUE_PAGE),
        ],
        responses={200: schemas.QueueSerializer, **ERRORS},
        examples=[OpenApiExample("A queue of two", value=QUEUE_EXAMPLE, response_only=True)],
    )  # fmt: skip
    def get(self, request: Request, name: str) -> Response:
        page_request = django_request(request)
        cluster = cluster_or_404(name)
        choice_parameter(page_request, "state", "queued", QUEUE_STATES)
        number, size = _page_asked(page_request, QUEUE_PAGE)
        _with_priorities(cluster)
        now = timezone.now()
        order = queue_get(cluster=cluster, now=now)
        access = access_get(user=request.user, cluster=cluster)
        me = scheduler_user(request.user)
        start = (number - 1) * size
        every = [*order.ordered, *order.held]
        rows = queue_rows(cluster, every[start : start + size], access, me, now)
        return Response(
            {
                "cluster": cluster.name,
                "at": order.at.isoformat(),
                "formula": order.formula,
                "problem": order.problem,
                "waiting": len(order.ordered),
                "jobs": [queued_job_document(row.job, row.masked) for row in rows],
                **_pages_beside(request, number, len(every) > start + size),
            }
        )


def job_priority_document(explained: JobPriority, sentences: list[str]) -> dict[str, Any]:
    """The job page's numbers."""
    job, over, fairshare = explained.job, explained.over, explained.fairshare
    return {
        "cluster": explained.order.cluster.name,
        "job_id": job.job_id, "entity": job.entity, "user": job.user, "queue": job.queue,
        "ncpus": job.ncpus, "walltime": job.walltime, "submitted": iso(job.submitted),
        "held": job.held, "priority": _finite(job.priority), "position": job.position,
        "queue_position": job.queue_position, "waiting": explained.waiting,
        "in_queue": explained.in_queue,
        "ahead": {
            "jobs": explained.ahead.jobs, "cores": explained.ahead.cores,
            "core_hours": explained.ahead.core_hours,
        },
        "terms": _terms(job.terms), "values": _terms(job.values), "reason": job.reason,
        "error": job.error, "under_threshold": job.under_threshold,
        "fairshare": {
            "term": fairshare.term, "value": _finite(fairshare.value),
            "best": _finite(fairshare.best),
        } if fairshare else None,
        "furthest_over_target": {
            "node": over.node.pk, "name": over.node.name, "ratio": _finite(over.ratio),
        } if over else None,
        "explanation": sentences,
        "history": [
            {
                "at": row.at.isoformat(), "priority": _finite(row.priority),
                "position": row.position, "queue_position": row.queue_position,
            }
            for row in explained.history
        ],
    }  # fmt: skip


JOB_PRIORITY_EXAMPLE = {
    "cluster": "hpc", "job_id": "4103[2]", "entity": "cond-matter", "user": "dkaya",
    "queue": "cpu", "ncpus": 64, "walltime": 14400, "submitted": "2026-11-26T09:00:00+00:00",
    "held": False, "priority": 667.2216, "position": 12, "queue_position": 3, "waiting": 340,
    "in_queue": 41, "ahead": {"jobs": 11, "cores": 704, "core_hours": 2816.0},
    "terms": {"10*(ncpus/6656)": 0.0962, "1000*(1-fairshare_tree_usage)": 667.0,
              "(eligible_time/86400)": 0.125},
    "values": {"ncpus": 64, "eligible_time": 10800, "fairshare_tree_usage": 0.333,
               "fairshare_perc": 0.1, "fairshare_factor": 0.099213},
    "reason": "Not Running: Insufficient amount of resource: ncpus", "error": None,
    "under_threshold": False,
    "fairshare": {"term": "1000*(1-fairshare_tree_usage)", "value": 667.0, "best": 1000.0},
    "furthest_over_target": {"node": 12, "name": "physics", "ratio": 3.0},
    "explanation": [
        "12th of 340 waiting; 3rd in queue cpu.",
        "11 jobs ahead of it, asking for 704 cores and 2,816.0 core-hours in all (requested"
        " cores × requested walltime).",
        "cond-matter's fairshare term 1000*(1-fairshare_tree_usage) is 667.000 of a possible"
        " 1,000 (its value with no usage: fairshare_tree_usage 0, fairshare_factor 1):"
        " physics has used 3.0× its target share of the machine (decayed usage against"
        " target), the furthest over target on its path.",
    ],
    "history": [
        {"at": "2026-11-26T11:50:00+00:00", "priority": 667.2146, "position": 14,
         "queue_position": 4},
        {"at": "2026-11-26T12:00:00+00:00", "priority": 667.2216, "position": 12,
         "queue_position": 3},
    ],
}  # fmt: skip


class JobPriorityDetail(ApiView):
    """A waiting job's priority explained, as its page shows it: its place among the jobs
    waiting and in its queue, the jobs ahead of it (how many, their cores and core-hours),
    its priority's terms and the formula's inputs, its fairshare term against the best it
    could be, the level of its entity's path furthest over target, the page's sentences, and
    the priority and place each cycle recorded while it waited. For readers of the job's
    entity, and the job's own user; 404 for others, as for a job that does not wait."""

    @extend_schema(
        responses={200: schemas.JobPrioritySerializer, **ERRORS},
        examples=[
            OpenApiExample("A job 12th in line", value=JOB_PRIORITY_EXAMPLE, response_only=True)
        ],
    )
    def get(self, request: Request, cluster: str, job_id: str) -> Response:
        _with_priorities(cluster_or_404(cluster))
        found = job_lookup(django_request(request), cluster, job_id)
        explained = job_priority_get(cluster=found.cluster, job_id=job_id, now=timezone.now())
        if explained is None:
            raise Http404(NO_JOB)
        return Response(job_priority_document(explained, job_reasons(explained)))
