"""Where a person stands: their entities on every cluster, and a manager's members."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.selectors import factors_at_get
from trees.access import access_get, scheduler_user
from trees.engine.ranking import EntityRanking
from trees.explanations import EXPLANATIONS
from trees.models import Cluster, Node, Scheduler
from trees.selectors.clusters import clusters_list
from trees.selectors.nodes import nodes_in_bulk_get
from trees.selectors.standing import entity_ranking_get

TREND_SPAN = timedelta(days=7)
STEADY = 1e-6  # a factor change smaller than this shows as steady


@dataclass(frozen=True)
class Standing:
    node: Node
    path: str
    rank: int | None
    ranked: int
    week_ago: float | None

    @property
    def change(self) -> float | None:
        return None if self.week_ago is None else self.node.fairshare_factor - self.week_ago

    @property
    def trend(self) -> str:
        change = self.change
        if change is None:
            return ""
        return "↑" if change > STEADY else "↓" if change < -STEADY else "→"


@dataclass(frozen=True)
class ClusterStanding:
    cluster: Cluster
    mine: list[Standing]
    best: Standing | None  # the most deserving of mine right now
    members: list[Standing]  # under the nodes they manage


def my_standing(request: HttpRequest) -> HttpResponse:
    """Every entity of the person's user name or membership, on every cluster: factor, rank
    among all entities, the week's trend; and the standing of the members of what they manage."""
    week_ago = timezone.now() - TREND_SPAN
    standings = []
    for cluster in clusters_list():
        access = access_get(user=request.user, cluster=cluster)
        if not (access.own or access.subtrees):
            continue
        ranking = entity_ranking_get(cluster=cluster)
        mine_ids = sorted(
            (access.own | access.subtrees) & ranking.ranks.keys(),
            key=lambda pk: (ranking.ranks[pk], ranking.path_name(pk)),
        )
        member_ids = [pk for pk in ranking.under(access.managed) if pk not in mine_ids]
        nodes = nodes_in_bulk_get(ids=[*mine_ids, *member_ids])
        before = factors_at_get(node_ids=nodes, at=week_ago)
        mine = [_standing(nodes[pk], ranking, before) for pk in mine_ids]
        members = [_standing(nodes[pk], ranking, before) for pk in member_ids]
        standings.append(ClusterStanding(cluster, mine, mine[0] if mine else None, members))
    return render(
        request,
        "trees/me.html",
        {
            "standings": standings,
            "scheduler_user": scheduler_user(request.user),
            "slurm": Scheduler.SLURM,
            "explain": EXPLANATIONS,
        },
    )


def _standing(node: Node, ranking: EntityRanking, before: dict[int, float]) -> Standing:
    return Standing(
        node, ranking.path_name(node.pk), ranking.ranks.get(node.pk), ranking.total,
        before.get(node.pk),
    )  # fmt: skip
