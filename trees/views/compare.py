"""Who is more deserving of two entities, and why, in words (pbsfs -c; Fair Tree on Slurm)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from trees.access import Access, access_get, readable_ids_get
from trees.explanations import (
    EXPLANATIONS,
    pbs_comparison_explained,
    slurm_comparison_explained,
)
from trees.models import Cluster, Scheduler
from trees.quantities import cluster_usage_unit
from trees.selectors.compare import (
    comparable_labels_get,
    labelled_ids_get,
    pbs_compare_get,
    slurm_compare_get,
)
from trees.selectors.nodes import ancestor_ids_get
from trees.views.documents import document_response
from trees.views.lookup import cluster_or_404
from trees.views.parameters import MAX_NAME, BadParameter, text_parameter


def compare_page(request: HttpRequest, name: str) -> HttpResponse:
    """The form; with `a` and `b`, the answer and what would change it."""
    cluster = _compared_cluster(name)
    slurm = cluster.scheduler == Scheduler.SLURM
    a, b = request.GET.get("a", "").strip(), request.GET.get("b", "").strip()
    context: dict[str, object] = {
        "cluster": cluster, "slurm": slurm, "a": a, "b": b, "explain": EXPLANATIONS,
    }  # fmt: skip
    if "a" not in request.GET and "b" not in request.GET:
        return render(request, "trees/compare.html", context)
    access = access_get(user=request.user, cluster=cluster)
    for parameter, label in (("a", a), ("b", b)):
        if (
            not label
            or len(label) > MAX_NAME
            or "\x00" in label
            or not reads_label(cluster, access, label)
        ):
            context["error"] = (
                f"{parameter}: no entity or group {label!r} that you may read on {cluster.name}"
            )
            return render(request, "trees/compare.html", context, status=400)
    try:
        if slurm:
            comparison = slurm_compare_get(cluster=cluster, a=a, b=b)
            context["winner"] = comparison.winner
            context["lines"] = [slurm_comparison_explained(comparison)]
        else:
            answer = pbs_compare_get(cluster=cluster, a=a, b=b)
            context["winner"] = answer.winner
            context["lines"] = pbs_comparison_explained(answer, cluster_usage_unit(cluster))
    except (LookupError, ValueError) as exc:
        context["error"] = str(exc)
        return render(request, "trees/compare.html", context, status=400)
    context["answered"] = True
    return render(request, "trees/compare.html", context)


def compare_names(request: HttpRequest, name: str) -> HttpResponse:
    """The labels the compare form accepts for the nodes whose name contains `q`, of those
    the person may read: the form's suggestions as they type."""
    cluster = _compared_cluster(name)
    text = text_parameter(request, "q", max_length=MAX_NAME, required=True)
    if text is None:
        raise BadParameter("q", "is required: the part of a name typed so far")
    access = access_get(user=request.user, cluster=cluster)
    among = readable_ids_get(access=access)
    return document_response(
        {"names": comparable_labels_get(cluster=cluster, text=text, among=among)}
    )


def _compared_cluster(name: str) -> Cluster:
    """A PBS or Slurm cluster: Accelerator orders its groups by FS_RANK, which each group's
    page explains, not by comparing two of them."""
    cluster = cluster_or_404(name)
    if cluster.scheduler == Scheduler.ACCELERATOR:
        raise Http404("Accelerator's groups are ranked by FS_RANK, not compared two by two")
    return cluster


def reads_label(cluster: Cluster, access: Access, label: str) -> bool:
    """Whether `label` names a node the person reads."""
    found = labelled_ids_get(cluster=cluster, label=label)
    if access.whole_tree:
        return bool(found)
    return any(access.reads([*ancestor_ids_get([pk]), pk]) for pk in found)
