"""Where a person stands: their entities on every cluster (the landing page and /me/), and a
manager's members."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.job_priority import ClusterJobs, person_jobs_get
from accounting.selectors import CurrentJobs, current_jobs_get, factors_at_get
from trees.access import Access, access_get, scheduler_user
from trees.engine.pbs import PbsTree
from trees.engine.ranking import EntityRanking
from trees.explanations import (
    EXPLANATIONS,
    TargetStanding,
    accelerator_standing_explained,
    fs_summary_sentence,
    job_place_sentence,
    pulled_down_by,
    queued_job_line,
    recovery_brief,
    running_job_line,
    standing_columns_explained,
    target_standing,
)
from trees.models import Cluster, Node, Scheduler
from trees.quantities import UsageUnit, cluster_usage_unit, wait_text
from trees.selectors.accelerator_standing import (
    GroupStanding,
    group_standings_get,
    user_leaf_ids_under_get,
)
from trees.selectors.clusters import clusters_list
from trees.selectors.nodes import nodes_in_bulk_get
from trees.selectors.pbs import pbs_tree_get
from trees.selectors.standing import entity_ranking_get, recovery_get

TREND_SPAN = timedelta(days=7)
STEADY = 1e-6  # a factor change smaller than this shows as steady


@dataclass(frozen=True)
class Standing:
    node: Node
    path: str
    place: int | None  # 1st is the most deserving of the cluster's entities
    ranked: int
    week_ago: float | None
    target: TargetStanding
    pulled_by: str = ""  # the level of its path that pulls it down, in words
    recovery: str = ""  # PBS: when it is back on target if it runs nothing more
    jobs: CurrentJobs = field(default_factory=CurrentJobs)  # running now, and queued

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
class GroupLeafStanding:
    """An Altair Accelerator group of the person's (a leaf `G.user` of theirs, or a group they
    are a member of): its stored FS_* fields, a sentence, and its jobs running and queued."""

    standing: GroupStanding
    said: str
    jobs: CurrentJobs = field(default_factory=CurrentJobs)

    @property
    def node(self) -> Node:
        return self.standing.node


@dataclass(frozen=True)
class ClusterStanding:
    cluster: Cluster
    slurm: bool
    unit: UsageUnit
    mine: list[Standing]
    best: Standing | None  # the most deserving of mine right now
    members: list[Standing]  # under the nodes they manage
    # Altair Accelerator's groups instead: mine (dispatched first, first), the first of them
    # dispatched, and the users' leaves under the groups they manage.
    groups: list[GroupLeafStanding] = field(default_factory=list)
    groups_best: GroupLeafStanding | None = None
    group_members: list[GroupLeafStanding] = field(default_factory=list)

    @property
    def accelerator(self) -> bool:
        return self.cluster.scheduler == Scheduler.ACCELERATOR

    @property
    def shown(self) -> bool:
        """Whether the person has anything of theirs here."""
        return bool(self.mine or self.groups)


MY_JOBS_SHOWN = 50  # of a person's waiting jobs, and of their running ones, a cluster


@dataclass(frozen=True)
class JobLine:
    """One job of the person's, in a line: its id (linked to its page when it waits)."""

    job_id: str
    text: str
    waiting: bool


@dataclass(frozen=True)
class MyJobs:
    """The first MY_JOBS_SHOWN of the person's waiting and of their running jobs, with how
    many more there are (an array of 10,000 is 50 lines and a count, not 10,000 lines)."""

    cluster: Cluster
    queued: list[JobLine]
    running: list[JobLine]
    queued_more: int = 0
    running_more: int = 0


def my_jobs(user_name: str, now: datetime) -> list[MyJobs]:
    """The jobs of the person's scheduler user name on every cluster, waiting and running.
    Accelerator's are in its groups' table: no queue order or job page is read for them."""
    clusters = [
        cluster for cluster in clusters_list() if cluster.scheduler != Scheduler.ACCELERATOR
    ]
    found = person_jobs_get(user_name=user_name, clusters=clusters, now=now)
    return [_job_lines(jobs, now) for jobs in found]


def _job_lines(jobs: ClusterJobs, now: datetime) -> MyJobs:
    queued = []
    for waiting in jobs.queued[:MY_JOBS_SHOWN]:
        job = waiting.job
        place = job_place_sentence(
            position=job.position,
            waiting=waiting.waiting,
            queue_position=job.queue_position,
            queue=job.queue,
            left_out=job.left_out,
        )
        fairshare = waiting.fairshare
        text = queued_job_line(
            place=place,
            ncpus=job.ncpus,
            walltime=job.walltime,
            waited=wait_text(now - job.submitted) if job.submitted else "for an unknown time",
            fairshare=(fairshare.value, fairshare.best) if fairshare else None,
            reason=job.reason,
            slurm=jobs.cluster.scheduler == Scheduler.SLURM,
        )
        queued.append(JobLine(job.job_id, text, True))
    running = [
        JobLine(
            run.job.job_id,
            running_job_line(ncpus=run.job.ncpus, since=run.job.start, core_hours=run.core_hours),
            False,
        )
        for run in jobs.running[:MY_JOBS_SHOWN]
    ]
    return MyJobs(
        jobs.cluster,
        queued,
        running,
        len(jobs.queued) - len(queued),
        len(jobs.running) - len(running),
    )


def landing(request: HttpRequest) -> HttpResponse:
    """The front page: a person with entities first reads where each stands (its words, the
    level pulling it down, when it recovers, its running and queued jobs), then their own
    jobs on every cluster, then every cluster."""
    now = timezone.now()
    standings = [
        standing for standing in person_standings(request.user, members=False) if standing.shown
    ]
    me = scheduler_user(request.user)
    return render(
        request,
        "trees/index.html",
        {
            "now": now,
            "my_jobs": my_jobs(me, now),
            "my_jobs_user": me,
            "standings": standings,
            "clusters": clusters_list(),
            "explain": EXPLANATIONS,
            "legend": _legend(standings, answers=True),
        },
    )


def my_standing(request: HttpRequest) -> HttpResponse:
    """Every entity of the person's user name or membership, on every cluster: factor, place
    among all entities, the week's trend, where it stands against its target and when it
    recovers; their own jobs, waiting and running; and the standing of the members of what
    they manage."""
    standings = person_standings(request.user, members=True)
    me = scheduler_user(request.user)
    now = timezone.now()
    return render(
        request,
        "trees/me.html",
        {
            "now": now,
            "my_jobs": my_jobs(me, now),
            "my_jobs_user": me,
            "standings": standings,
            "scheduler_user": me,
            "legend": _legend(standings, answers=False),
            "explain": EXPLANATIONS,
        },
    )


def person_standings(user: User | AnonymousUser, *, members: bool) -> list[ClusterStanding]:
    """Each cluster where the person has entities or memberships: theirs, answered in full,
    and (with `members`) those of the members of what they manage."""
    now = timezone.now()
    standings = []
    for cluster in clusters_list():
        access = access_get(user=user, cluster=cluster)
        if not (access.own or access.subtrees):
            continue
        standings.append(_cluster_standing(cluster, access, now, members=members))
    return standings


def _legend(standings: list[ClusterStanding], *, answers: bool) -> list[tuple[str, str]]:
    """The standing tables' columns explained, for the schedulers of the clusters shown."""
    schedulers = {standing.cluster.scheduler for standing in standings}
    legend = []
    if schedulers - {Scheduler.ACCELERATOR}:
        legend = standing_columns_explained(
            slurm=Scheduler.SLURM in schedulers, pbs=Scheduler.PBS in schedulers, answers=answers
        )
    if Scheduler.ACCELERATOR in schedulers:
        legend += accelerator_standing_explained()
    return legend


def _cluster_standing(
    cluster: Cluster, access: Access, now: datetime, *, members: bool
) -> ClusterStanding:
    if cluster.scheduler == Scheduler.ACCELERATOR:
        return _accelerator_standing(cluster, access, members=members)
    slurm = cluster.scheduler == Scheduler.SLURM
    ranking = entity_ranking_get(cluster=cluster)
    mine_ids = sorted(
        (access.own | access.subtrees) & ranking.ranks.keys(),
        key=lambda pk: (ranking.ranks[pk], ranking.path_name(pk)),
    )
    member_ids = (
        [pk for pk in ranking.under(access.managed) if pk not in mine_ids] if members else []
    )
    above = {step for pk in mine_ids for step in _ancestors(ranking, pk)}
    nodes = nodes_in_bulk_get(ids=[*mine_ids, *member_ids, *above])
    before = factors_at_get(node_ids=[*mine_ids, *member_ids], at=now - TREND_SPAN)
    current = current_jobs_get(node_ids=mine_ids)
    pbs = pbs_tree_get(cluster=cluster) if mine_ids and not slurm else None

    def answered(pk: int) -> Standing:
        path = [nodes[step] for step in reversed([pk, *_ancestors(ranking, pk)])]
        target = target_standing(nodes[pk], slurm=slurm)
        return Standing(
            nodes[pk], ranking.path_name(pk), ranking.ranks.get(pk), ranking.total,
            before.get(pk), target, pulled_down_by(path, slurm=slurm, standing=target),
            _recovery(cluster, nodes[pk], now, pbs), current.get(pk, CurrentJobs()),
        )  # fmt: skip

    def brief(pk: int) -> Standing:
        return Standing(
            nodes[pk], ranking.path_name(pk), ranking.ranks.get(pk), ranking.total,
            before.get(pk), target_standing(nodes[pk], slurm=slurm),
        )  # fmt: skip

    mine = [answered(pk) for pk in mine_ids]
    return ClusterStanding(
        cluster, slurm, cluster_usage_unit(cluster), mine, mine[0] if mine else None,
        [brief(pk) for pk in member_ids],
    )  # fmt: skip


def _accelerator_standing(cluster: Cluster, access: Access, *, members: bool) -> ClusterStanding:
    """The person's leaves `G.user` and the groups they are a member of, in dispatch order
    (FS_RANK, those without a queued job after), with the users' leaves below the groups they
    manage."""
    mine_ids = access.own | access.subtrees
    member_ids = user_leaf_ids_under_get(ids=access.managed) - mine_ids if members else set()
    current = current_jobs_get(node_ids=mine_ids)
    rows = [
        GroupLeafStanding(
            group, fs_summary_sentence(group), current.get(group.node.pk, CurrentJobs())
        )
        for group in group_standings_get(cluster=cluster, ids=[*mine_ids, *member_ids])
    ]
    mine = [row for row in rows if row.node.pk in mine_ids]
    ranked = [row for row in mine if row.node.fs_rank is not None and row.node.fs_rank >= 0]
    return ClusterStanding(
        cluster, False, cluster_usage_unit(cluster), [], None, [],
        groups=mine, groups_best=ranked[0] if ranked else None,
        group_members=[row for row in rows if row.node.pk not in mine_ids],
    )  # fmt: skip


def _ancestors(ranking: EntityRanking, node: int) -> list[int]:
    """The ids above a node, its parent first, the root last."""
    found = []
    step = ranking.parents.get(node)
    while step is not None:
        found.append(step)
        step = ranking.parents.get(step)
    return found


def _recovery(cluster: Cluster, node: Node, now: datetime, pbs: PbsTree | None) -> str:
    if pbs is None:  # Fair Tree's FairShare is a rank among users, not a distance to a target
        return ""
    try:
        return recovery_brief(recovery_get(cluster=cluster, node=node, now=now, pbs=pbs))
    except LookupError as exc:  # an entity the usage database holds but pbsfs does not read
        return f"not projected: {exc}"
