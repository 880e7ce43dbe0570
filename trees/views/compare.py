"""Who is more deserving of two entities, and why, in words (pbsfs -c; Fair Tree on Slurm)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from trees.access import Access, access_get
from trees.explanations import (
    EXPLANATIONS,
    pbs_comparison_explained,
    slurm_comparison_explained,
)
from trees.models import Cluster, Scheduler
from trees.selectors.compare import labelled_ids_get, pbs_compare_get, slurm_compare_get
from trees.selectors.nodes import ancestor_ids_get
from trees.views.lookup import cluster_or_404
from trees.views.parameters import MAX_NAME


def compare_page(request: HttpRequest, name: str) -> HttpResponse:
    """The form; with `a` and `b`, the answer and what would change it."""
    cluster = cluster_or_404(name)
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
            or not _reads(cluster, access, label)
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
            unit = cluster.fairshare_usage_res
            context["winner"], context["lines"] = (
                answer.winner,
                pbs_comparison_explained(answer, unit),
            )
    except (LookupError, ValueError) as exc:
        context["error"] = str(exc)
        return render(request, "trees/compare.html", context, status=400)
    context["answered"] = True
    return render(request, "trees/compare.html", context)


def _reads(cluster: Cluster, access: Access, label: str) -> bool:
    """Whether `label` names a node the person reads."""
    found = labelled_ids_get(cluster=cluster, label=label)
    if access.whole_tree:
        return bool(found)
    return any(access.reads([*ancestor_ids_get([pk]), pk]) for pk in found)
