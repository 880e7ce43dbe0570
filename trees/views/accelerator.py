"""An Altair Accelerator group's page: its FS_* fields with a sentence each, its path and
children, its history, what the preemption rules would do for its queued jobs, and its jobs.

With private usage on, a reader who does not read the whole tree sees the running jobs a rule
would preempt only in the groups they read, and a rule's reason only when every group it names
is one they see; the rest is counted, not named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.accelerator import GroupPreemption, group_jobs_get, group_preemptions_get
from accounting.selectors import HistoryPoint
from trees.access import Access, readable_ids_get, visible_ids_get
from trees.explanations import (
    EXPLANATIONS,
    accelerator_columns_explained,
    fs_history_sentence,
    fs_local_sentence,
    fs_rank_sentence,
    fs_running_sentence,
    fs_target_sentence,
)
from trees.selectors.accelerator import preempt_rules_get
from trees.selectors.accelerator_standing import group_standings_get
from trees.selectors.nodes import children_listed_get, node_names_get
from trees.views.lookup import NodeView
from trees.views.parameters import CHILDREN_PAGE, HISTORY_RANGES, page_or_404

VICTIMS_SHOWN = 12  # running jobs named in a rule's row; the rest are counted
_GROUP_NAME = re.compile(r"/[^\s,()'\"]*")  # a group's path as the engine's sentences write it


@dataclass(frozen=True)
class PreemptionRow:
    """A rule's answer for a queued job, as far as the reader may know it."""

    rule: str
    queued_job: str  # "" for a job of a group private to its members
    group: str  # "" likewise
    fires: bool
    victims: list[str]  # the running jobs named (of the groups the reader reads)
    more: int  # those not named: beyond VICTIMS_SHOWN, or of groups private to their members
    private: int  # of which in groups private to their members
    why: str  # "" when it names a group the reader may not see


def group_page(request: HttpRequest, at: NodeView) -> HttpResponse:
    """The node page of an Accelerator cluster (node_page's, once node_view has checked)."""
    cluster, node, path, access, ids = at.cluster, at.node, at.path, at.access, at.ids
    page = page_or_404(request, children_listed_get(node=node), CHILDREN_PAGE)
    children = [
        (child, access.opens([*ids, child.pk])) for child in page if access.sees([*ids, child.pk])
    ]
    standing = group_standings_get(cluster=cluster, ids=[node.pk])[0]
    reads = access.reads(ids)
    now = timezone.now()
    rules = len(preempt_rules_get(cluster=cluster)) if reads else 0
    preemptions = group_preemptions_get(node=node, now=now) if rules else None
    return render(
        request,
        "trees/accelerator_node.html",
        {
            "cluster": cluster,
            "node": node,
            "path": path,
            "children": children,
            "page": page,
            "said": {
                "target": fs_target_sentence(standing),
                "running": fs_running_sentence(standing),
                "local": fs_local_sentence(standing),
                "history": fs_history_sentence(standing),
                "rank": fs_rank_sentence(standing),
            },
            "reads": reads,
            "jobs": group_jobs_get(node=node) if reads else None,
            "now": now,
            "rules": rules,
            "preemptions": _rows(preemptions.queued, access) if preemptions else [],
            # The rules that let jobs queued elsewhere preempt its running jobs.
            "against": _rows(preemptions.against, access, preemptions.leaves)
            if preemptions
            else [],
            "admin": access.admin,
            "legend": accelerator_columns_explained(cluster=False),
            "ranges": [*HISTORY_RANGES, "all"],
            "explain": EXPLANATIONS,
        },
    )


def history_fields(points: list[HistoryPoint]) -> dict[str, list[int | None]]:
    """A group's FS_* fields at each kept cycle, for its history chart (node-history's JSON)."""
    return {
        "FS_TARGET": [point.fs_target for point in points],
        "FS_RUNNING": [point.fs_running for point in points],
        "FS_HISTORY": [point.fs_history for point in points],
        "FS_RUNNING_COUNT": [point.fs_running_count for point in points],
        "FS_RANK": [point.fs_rank for point in points],
    }


def _rows(
    preemptions: list[GroupPreemption], access: Access, among: frozenset[int] | None = None
) -> list[PreemptionRow]:
    """The answers as the reader may read them; `among`: only the victims of these nodes."""
    readable = readable_ids_get(access=access)
    visible = visible_ids_get(access=access)
    shown = None if visible is None else node_names_get(ids=visible)
    rows = []
    for found in preemptions:
        answer = found.preemption
        victims = [(job, pk) for job, pk in found.victims if among is None or pk in among]
        named = [job for job, pk in victims if readable is None or pk in readable]
        whose = readable is None or found.node_id in readable
        rows.append(
            PreemptionRow(
                rule=answer.rule,
                queued_job=answer.queued_job if whose else "",
                group=found.group if whose else "",
                fires=answer.fires,
                victims=named[:VICTIMS_SHOWN],
                more=len(victims) - min(len(named), VICTIMS_SHOWN),
                private=len(victims) - len(named),
                why=answer.why if whose and _names_only(answer.why, shown) else "",
            )
        )
    return rows


def _names_only(text: str, shown: set[str] | None) -> bool:
    """Whether every group path the sentence names is one of `shown` (None: every group);
    anything that reads like a path and is not (a hidden group's name, or a slash in a rule's
    text) says no."""
    return shown is None or all(
        name in shown or name.rstrip(".:;") in shown for name in _GROUP_NAME.findall(text)
    )
