"""Reads of the accounting data."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypedDict

from django.db.models import Count, F, FloatField, Max, Min, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Cast, Coalesce
from django_stubs_ext import WithAnnotations

from accounting.models import (
    Cycle,
    FilesUpload,
    Job,
    NodeHistory,
    Scenario,
    SchedulerCycle,
    UploadRejection,
)
from accounting.parsers.records import JobState
from accounting.whatif import StoredRun
from trees.engine.accelerator import DEFAULT_WINDOW, FsJob
from trees.engine.cycle import cycle_slot
from trees.engine.times import epoch_seconds, epoch_time
from trees.models import Cluster, Node, NodeOrigin, Scheduler, ShareChange
from trees.selectors.nodes import descendant_ids_get

TOP_CONSUMERS = 10
CURRENT_JOBS_SHOWN = 20  # of a leaf's running jobs, and of its queued ones, a standing lists
TRENDS_CHILDREN = 20  # children the Trends page draws and lists; the others summed in one
OTHER_CHILDREN = 0  # the key of the summed others' series: no node's id (ids start at 1)
REPORT_GROUPS = ("entity", "user", "group", "project", "account", "queue")


@dataclass(frozen=True)
class UsageRow:
    key: str
    jobs: int
    core_hours: float
    usage: float  # fairshare_usage_res, undecayed

    def document(self) -> dict[str, object]:
        return {
            "key": self.key,
            "jobs": self.jobs,
            "core_hours": self.core_hours,
            "usage": self.usage,
        }


def usage_report_get(
    *,
    cluster: Cluster,
    by: str,
    since: datetime | None = None,
    until: datetime | None = None,
    nodes: Iterable[int] | None = None,
) -> list[UsageRow]:
    """Runs that ended in [since, until), per `by`: how many, core-hours and usage, most first;
    only those charged to `nodes` when given.

    Running and queued jobs are left out: their usage is not known until they end.
    """
    if by not in REPORT_GROUPS:
        raise ValueError(f"cannot group by {by!r}: one of {', '.join(REPORT_GROUPS)}")
    jobs = Job.objects.filter(cluster=cluster).exclude(
        state__in=[JobState.RUNNING, JobState.QUEUED]
    )
    if nodes is not None:
        jobs = jobs.filter(node_id__in=list(nodes))
    if since is not None:
        jobs = jobs.filter(end__gte=since)
    if until is not None:
        jobs = jobs.filter(end__lt=until)
    core_seconds = Cast("ncpus", FloatField()) * Cast(Coalesce("walltime", 0), FloatField())
    rows = (
        jobs.values(key=F(by))
        .annotate(jobs=Count("id"), core_seconds=Sum(core_seconds), usage=Sum("usage"))
        .order_by("-usage", "key")
    )
    return [
        UsageRow(
            key=row["key"],
            jobs=row["jobs"],
            core_hours=(row["core_seconds"] or 0.0) / 3600,
            usage=row["usage"] or 0.0,
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class AcceleratorJob:
    """A job as an Accelerator cluster's fields and preemption rules read it."""

    job: FsJob
    user: str
    jobclass: str


def accelerator_jobs_get(*, cluster: Cluster, now: datetime) -> list[AcceleratorJob]:
    """The jobs an Accelerator cluster's FS_* fields are computed from at `now`: those
    queued, running or suspended then, and those that ended within the longest window, each
    as it stood at `now` by its times (a job stored as ended that had not started by then was
    queued), with its priority and suspension as the last snapshot gave them."""
    windows = Node.objects.filter(cluster=cluster).values_list("fs_window", flat=True)
    longest = max([DEFAULT_WINDOW, *(window for window in windows if window)])
    at = epoch_seconds(now)
    rows = Job.objects.filter(cluster=cluster).filter(
        Q(state__in=[JobState.QUEUED, JobState.RUNNING])
        | Q(state=JobState.ENDED, end__gt=now - timedelta(seconds=longest))
    )
    columns = ("job_id", "entity", "user", "queue", "state", "ctime", "qtime", "start", "end")
    requests: dict[str, tuple[int, bool]] = {}  # the jobs of a batch store the same text
    jobs = []
    for *row, request in rows.values_list(*columns, "request"):
        job_id, group, user, jobclass, state, ctime, qtime, start, end = row
        submitted = epoch_seconds(qtime or ctime)
        started = epoch_seconds(start) if start is not None else None
        ended = epoch_seconds(end) if end is not None and state == JobState.ENDED else None
        if submitted > at:
            continue  # not submitted yet
        asked = requests.get(request or "")
        if asked is None:
            stored = json.loads(request or "{}")
            asked = requests[request or ""] = (
                int(stored.get("job_priority", 0)),
                bool(stored.get("suspended")),
            )
        priority, suspended = asked
        if started is None or started > at:
            status, started, ended = "queued", None, None
        elif ended is None or ended > at:
            running = "suspended" if suspended and state == JobState.RUNNING else "running"
            status, ended = running, None
        else:
            status = "done"
        job = FsJob(job_id, group, status, submitted, started, ended, priority)
        jobs.append(AcceleratorJob(job, user, jobclass))
    return jobs


def cycle_period(cluster: Cluster) -> timedelta:
    """How often the cluster's cycle runs: PBS's scheduler_iteration (Accelerator's too),
    Slurm's PriorityCalcPeriod."""
    if cluster.scheduler == Scheduler.SLURM:
        return cluster.priority_calc_period
    return cluster.scheduler_iteration


def cycle_slot_of(cluster: Cluster, now: datetime) -> datetime:
    """The time of the cycle `now` falls in, on the grid of the cluster's cycle period."""
    iteration = max(1, int(cycle_period(cluster).total_seconds()))
    return epoch_time(cycle_slot(epoch_seconds(now), iteration))


def last_cycle_at(cluster: Cluster) -> datetime | None:
    return (
        Cycle.objects.filter(cluster=cluster).order_by("-at").values_list("at", flat=True).first()
    )


class _LastCycle(TypedDict):
    last_cycle: datetime | None


def clusters_cycled() -> QuerySet[WithAnnotations[Cluster, _LastCycle]]:
    """The clusters that have cycles, each with the time of its last one (`last_cycle`).

    Cycles run for PBS and Slurm clusters with a tree (resource groups or associations), and
    for Accelerator clusters with FairShare groups (defined, or made by jobs).
    """
    with_tree = Node.objects.filter(cluster=OuterRef("pk"), origin=NodeOrigin.DEFINED)
    with_groups = Node.objects.filter(cluster=OuterRef("pk"))
    return (
        Cluster.objects.filter(
            Q(scheduler__in=[Scheduler.PBS, Scheduler.SLURM], pk__in=with_tree.values("cluster"))
            | Q(scheduler=Scheduler.ACCELERATOR, pk__in=with_groups.values("cluster"))
        )
        .annotate(last_cycle=Max("cycles__at"))
        .order_by("name")
    )


def clusters_due(now: datetime) -> list[tuple[Cluster, datetime]]:
    """The clusters whose current cycle slot has not run yet, with that slot's time."""
    clusters = clusters_cycled()
    due: list[tuple[Cluster, datetime]] = []
    for cluster in clusters:
        slot = cycle_slot_of(cluster, now)
        if cluster.last_cycle is None or cluster.last_cycle < slot:
            due.append((cluster, slot))
    return due


@dataclass(frozen=True)
class CycleLag:
    """How far a cluster's cycles are behind the slot they should have reached by now."""

    cluster: str
    period: timedelta
    last_cycle: datetime | None
    behind: timedelta  # from the last cycle (or the tree's store) to the current slot; >= 0


def logged_cycle_get(*, cluster: Cluster, at: datetime) -> SchedulerCycle | None:
    """The last cycle of the cluster's imported scheduler log that started by `at` and said
    what its jobs' formulas gave (import_sched_log); None when there is none."""
    return (
        SchedulerCycle.objects.filter(cluster=cluster, at__lte=at)
        .exclude(formula={})
        .order_by("-at", "-source_line")
        .first()
    )


def cycle_lags_get(*, now: datetime) -> list[CycleLag]:
    """Every cycled cluster's lag at `now`, by name. A cluster not cycled yet counts from when
    its tree was stored: a beat that never ran shows as one falling behind."""
    lags = []
    for cluster in clusters_cycled():
        since = cluster.last_cycle or cluster.metrics_updated_at
        behind = cycle_slot_of(cluster, now) - since if since else timedelta(0)
        lags.append(
            CycleLag(
                cluster=cluster.name,
                period=cycle_period(cluster),
                last_cycle=cluster.last_cycle,
                behind=max(behind, timedelta(0)),
            )
        )
    return lags


@dataclass(frozen=True)
class HistoryPoint:
    at: datetime
    usage: float
    fairshare_perc: float
    fairshare_tree_usage: float
    usage_perc: float  # usage / fairshare_perc; -1 when the percentage is 0
    fairshare_factor: float
    level_fs: float | None = None  # Slurm Fair Tree
    fairshare_rank: int | None = None
    # Altair Accelerator's FS_* fields of the group (scaled by 10,000)
    fs_target: int | None = None
    fs_running: int | None = None
    fs_running_count: int | None = None
    fs_history: int | None = None
    fs_rank: int | None = None


def node_history_rows_get(
    *, node: Node, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[NodeHistory]:
    """The node's history rows in [since, until), in any order (the API pages them)."""
    rows = NodeHistory.objects.filter(node=node)
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lt=until)
    return rows


def node_history_get(
    *, node: Node, since: datetime | None = None, until: datetime | None = None
) -> list[HistoryPoint]:
    """The node's numbers after each cycle kept in [since, until), oldest first."""
    rows = node_history_rows_get(node=node, since=since, until=until)
    return [
        HistoryPoint(
            row.at,
            row.usage,
            row.fairshare_perc,
            row.fairshare_tree_usage,
            row.usage_perc,
            row.fairshare_factor,
            row.level_fs,
            row.fairshare_rank,
            row.fs_target,
            row.fs_running,
            row.fs_running_count,
            row.fs_history,
            row.fs_rank,
        )
        for row in rows.order_by("at")
    ]


@dataclass(frozen=True)
class HistoryEvent:
    """What a chart marks: a decay of the cluster's usage, or a change of a node's shares."""

    at: datetime
    kind: str  # "decay" or "shares"
    text: str
    node_name: str = ""  # the node whose shares changed
    node_id: int | None = None  # None once the node is removed
    mentions: tuple[str, ...] = ()  # the other nodes the text names (where it moved)


def history_events_get(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> list[HistoryEvent]:
    """The decays the cycles applied (Slurm, which decays a little every pass: the usage
    resets) and the share changes in [since, until), by time."""
    changes = ShareChange.objects.filter(cluster=cluster)
    if since is not None:
        changes = changes.filter(changed_at__gte=since)
    if until is not None:
        changes = changes.filter(changed_at__lt=until)
    if cluster.scheduler == Scheduler.SLURM:
        resets = Cycle.objects.filter(cluster=cluster, usage_reset=True)
        if since is not None:
            resets = resets.filter(at__gte=since)
        if until is not None:
            resets = resets.filter(at__lt=until)
        period = cluster.priority_usage_reset_period
        events = [
            HistoryEvent(at, "decay", f"usage reset to 0 (PriorityUsageResetPeriod={period})")
            for at in resets.values_list("at", flat=True)
        ]
    else:
        events = _decay_events(cluster, since, until)
    for change in changes:
        text = f"{change.node_name}: {change.what()} ({change.reason})"
        mentions = tuple(name for name in (change.old_parent, change.new_parent) if name)
        events.append(
            HistoryEvent(
                change.changed_at, "shares", text, change.node_name, change.node_id, mentions
            )
        )
    return sorted(events, key=lambda event: event.at)


def _decay_events(
    cluster: Cluster, since: datetime | None, until: datetime | None
) -> list[HistoryEvent]:
    """PBS: each decay at the time it fell due (a cycle applies those due at or before it)."""
    cycles = Cycle.objects.filter(cluster=cluster, decays_applied__gt=0)
    if since is not None:
        cycles = cycles.filter(at__gte=since)
    factor = cluster.decay_factor
    return [
        HistoryEvent(at, "decay", f"usage decayed × {factor:g}")
        for times in cycles.values_list("decay_times", flat=True)
        for at in map(datetime.fromisoformat, times)
        if (since is None or at >= since) and (until is None or at < until)
    ]


RECENT_JOBS = 20


def recent_jobs_get(*, node: Node, limit: int = RECENT_JOBS) -> list[Job]:
    """The runs last charged to a node (a leaf: a group's runs are its leaves'), newest first:
    the queued jobs first of all, then the running ones."""
    jobs = Job.objects.filter(cluster_id=node.cluster_id, node=node)
    newest = (F("end").desc(nulls_first=True), F("start").desc(nulls_first=True), "-qtime")
    return list(jobs.order_by(*newest)[:limit])


@dataclass(frozen=True)
class CurrentJobs:
    """A leaf's jobs that are not over: running now, and waiting in the queue; the first
    CURRENT_JOBS_SHOWN of each, and how many more there are."""

    running: list[Job] = field(default_factory=list)
    queued: list[Job] = field(default_factory=list)
    running_more: int = 0
    queued_more: int = 0


def current_jobs_get(*, node_ids: Iterable[int]) -> dict[int, CurrentJobs]:
    """The runs running on each of these leaves (the longest running first) and the jobs
    waiting (the longest waiting first), CURRENT_JOBS_SHOWN of each, the rest counted;
    leaves with neither are left out."""
    shown: dict[int, tuple[list[Job], list[Job]]] = {}
    more: dict[tuple[int, bool], int] = {}
    jobs = Job.objects.filter(
        node_id__in=list(node_ids), state__in=[JobState.RUNNING, JobState.QUEUED]
    )
    for job in jobs.order_by("start", "qtime", "job_id").iterator(2000):
        if job.node_id is None:
            continue
        running = job.state == JobState.RUNNING
        kept = shown.setdefault(job.node_id, ([], []))[0 if running else 1]
        if len(kept) < CURRENT_JOBS_SHOWN:
            kept.append(job)
        else:
            more[job.node_id, running] = more.get((job.node_id, running), 0) + 1
    return {
        pk: CurrentJobs(running, queued, more.get((pk, True), 0), more.get((pk, False), 0))
        for pk, (running, queued) in shown.items()
    }


def factors_at_get(*, node_ids: Iterable[int], at: datetime) -> dict[int, float]:
    """Each node's fairshare factor as the last kept cycle at or before `at` left it (the
    roll-up keeps at least one a day); nodes without history then are left out."""
    rows = NodeHistory.objects.filter(
        node_id__in=list(node_ids), at__lte=at, at__gt=at - timedelta(days=2)
    ).order_by("node_id", "at")
    return {node: factor for node, factor in rows.values_list("node_id", "fairshare_factor")}


@dataclass(frozen=True)
class OtherChildren:
    """The children past those a Trends page shows, summed: one row and one series."""

    count: int
    shares: int
    group_perc: float
    usage: float
    series_usage: list[float | None]  # their summed decayed usage at each of the times
    series_perc: list[float | None]  # their summed target share of the machine then


@dataclass(frozen=True)
class Trends:
    """A node's children's usage over a period, their shares, and who used the most."""

    children: list[Node]  # the series' nodes: the children, or the node itself when a leaf
    at: list[datetime]
    usage: dict[int, list[float | None]]  # each series' decayed usage at each time
    perc: dict[int, list[float | None]]  # each series' target share of the machine then
    top: list[UsageRow]  # the entities under the node that were charged most in the period
    others: OtherChildren | None = None  # the children left out of `children`, summed

    def series(self) -> tuple[dict[int, list[float | None]], dict[int, list[float | None]]]:
        """Each series' usage and target share at each time, the summed others' under
        OTHER_CHILDREN: what shares of the siblings' total are taken over."""
        usage, perc = dict(self.usage), dict(self.perc)
        if self.others is not None:
            usage[OTHER_CHILDREN] = self.others.series_usage
            perc[OTHER_CHILDREN] = self.others.series_perc
        return usage, perc

    def usage_share(self, child: Node | OtherChildren) -> float:
        """The child's part of its siblings' present usage (what the target is weighed with)."""
        total = sum(node.usage for node in self.children)
        total += self.others.usage if self.others else 0.0
        return child.usage / total if total else 0.0


def trends_get(
    *,
    node: Node,
    since: datetime | None,
    top: int = TOP_CONSUMERS,
    children_shown: int | None = None,
) -> Trends:
    """The node's children's history since `since` (None: all kept). With `children_shown`,
    only that many children, those of the most present usage, the others summed by the
    database: a group of 200,000 users reads 20 series and one sum, not 200,000 series."""
    ordered = node.children.order_by("-group_perc", "name")
    most: list[int] | None = None
    if children_shown is not None and ordered.count() > children_shown:
        by_usage = ordered.order_by("-usage", "name", "pk").values_list("pk", flat=True)
        most = list(by_usage[:children_shown])
        children = list(ordered.filter(pk__in=most))
    else:
        children = list(ordered) or [node]
    points = list(
        _history_since(NodeHistory.objects.filter(node__in=children), since).values_list(
            "node_id", "at", "usage", "fairshare_perc"
        )
    )
    sums = [] if most is None else _left_out_history(node, most, since)
    at = sorted({point[1] for point in points} | {moment for moment, _, _ in sums})
    place = {moment: index for index, moment in enumerate(at)}
    usage: dict[int, list[float | None]] = {child.pk: [None] * len(at) for child in children}
    perc: dict[int, list[float | None]] = {child.pk: [None] * len(at) for child in children}
    for pk, moment, value, target in points:
        usage[pk][place[moment]] = value
        perc[pk][place[moment]] = target
    others = None
    if most is not None:
        rest = ordered.exclude(pk__in=most).aggregate(
            count=Count("pk"), shares=Sum("shares"), group_perc=Sum("group_perc"),
            usage=Sum("usage"),
        )  # fmt: skip
        series_usage: list[float | None] = [None] * len(at)
        series_perc: list[float | None] = [None] * len(at)
        for moment, summed_usage, summed_perc in sums:
            series_usage[place[moment]] = summed_usage
            series_perc[place[moment]] = summed_perc
        others = OtherChildren(
            rest["count"], rest["shares"] or 0, rest["group_perc"] or 0.0, rest["usage"] or 0.0,
            series_usage, series_perc,
        )  # fmt: skip
    under = [node.pk, *descendant_ids_get([node.pk])]
    report = usage_report_get(cluster=node.cluster, by="entity", since=since, nodes=under)
    return Trends(children, at, usage, perc, report[:top], others)


def _left_out_history(
    node: Node, shown: list[int], since: datetime | None
) -> list[tuple[datetime, float, float]]:
    """The summed usage and target share of the node's children but `shown`, at each kept
    time: one row a cycle, whatever the number of children."""
    rows = NodeHistory.objects.filter(node__parent=node).exclude(node_id__in=shown)
    summed = (
        _history_since(rows, since)
        .values("at")
        .annotate(
            summed_usage=Sum("usage"), summed_perc=Sum("fairshare_perc", output_field=FloatField())
        )
        .order_by("at")
    )
    return list(summed.values_list("at", "summed_usage", "summed_perc"))


def _history_since(rows: QuerySet[NodeHistory], since: datetime | None) -> QuerySet[NodeHistory]:
    return rows if since is None else rows.filter(at__gte=since)


def upload_get(*, upload_id: int) -> FilesUpload:
    return FilesUpload.objects.get(pk=upload_id)


def upload_rejections_get(
    *, upload: FilesUpload, limit: int | None = None
) -> Iterator[UploadRejection]:
    """The upload's rejected lines in the order they were met; the first `limit` of them."""
    rejections = UploadRejection.objects.filter(upload=upload).order_by("id")
    return rejections[:limit].iterator() if limit is not None else rejections.iterator(2000)


def node_jobs_get(
    *,
    node: Node,
    leaves: Iterable[int],
    state: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Job]:
    """The runs charged to a node's leaves (`leaves`: the node itself for a leaf), in any order:
    of a state, and whose last event (end, else start, else submission) is in [since, until)."""
    jobs = Job.objects.filter(cluster_id=node.cluster_id, node_id__in=list(leaves))
    if state is not None:
        jobs = jobs.filter(state=state)
    if since is not None or until is not None:
        jobs = jobs.annotate(last_event=Coalesce("end", "start", "qtime", "ctime"))
        if since is not None:
            jobs = jobs.filter(last_event__gte=since)
        if until is not None:
            jobs = jobs.filter(last_event__lt=until)
    return jobs


@dataclass(frozen=True)
class NodeThen:
    """A node's numbers as the cycle last before a moment left them, and its shares then."""

    node_id: int
    at: datetime
    shares: int | None
    point: HistoryPoint


class HistoryNotKept(LookupError):
    """A moment the cluster's kept history does not reach; the message says what it holds."""


def history_cycle_get(*, cluster: Cluster, at: datetime, now: datetime) -> datetime:
    """The moment of the cluster's last kept cycle at or before `at` (its ledger's (cluster,
    at) index read backwards, one row); HistoryNotKept for a moment before the oldest one kept
    or after `now`."""
    kept = Cycle.objects.filter(cluster=cluster, history_kept=True)
    found = None
    if at <= now:
        found = kept.filter(at__lte=at).order_by("-at").values_list("at", flat=True).first()
    if found is not None:
        return found
    oldest = kept.order_by("at").values_list("at", flat=True).first()
    if oldest is None:
        raise HistoryNotKept(f"{cluster.name} has no cycle kept yet")
    raise HistoryNotKept(f"from {oldest.isoformat()} (its oldest cycle kept) until now")


# Ids a query names in a list at most: thousands cost more to send and plan (0.5 s for 10,000
# on PostgreSQL) than reading the rows of the cluster's every node by a join.
IDS_LISTED = 1000


def tree_at_get(
    *, cluster: Cluster, at: datetime, cycle: datetime, ids: Sequence[int]
) -> dict[int, NodeThen]:
    """Of the nodes `ids`, each that the kept cycle at `cycle` (history_cycle_get's) wrote: its
    point then, and its shares at `at` (the shares now, with the audited changes made since
    undone). Three queries, none reading more than that cycle's rows: a cycle writes every
    node's row once, found by the history's (node, at) key."""
    wanted = set(ids)
    if len(wanted) <= IDS_LISTED:
        nodes = Node.objects.filter(cluster=cluster, id__in=wanted)
    else:
        nodes = Node.objects.filter(cluster=cluster)
    rows = NodeHistory.objects.filter(node_id__in=nodes.values("id"), at=cycle).values_list(
        "node_id", "at", "usage", "fairshare_perc", "fairshare_tree_usage",
        "fairshare_factor", "level_fs", "fairshare_rank",
        "fs_target", "fs_running", "fs_running_count", "fs_history", "fs_rank",
    )  # fmt: skip
    shares = dict(nodes.values_list("id", "shares"))
    undone = ShareChange.objects.filter(cluster=cluster, changed_at__gt=at, node__isnull=False)
    for node_id, old in undone.order_by("-changed_at", "-id").values_list("node_id", "old_shares"):
        shares[node_id] = old
    found = {}
    for node_id, moment, usage, perc, tree_usage, factor, level_fs, rank, *fs in rows:
        if node_id not in wanted:
            continue
        usage_perc = -1.0 if perc == 0 else usage / perc
        point = HistoryPoint(
            moment, usage, perc, tree_usage, usage_perc, factor, level_fs, rank, *fs
        )
        found[node_id] = NodeThen(node_id, moment, shares.get(node_id), point)
    return found


def whatif_runs_get(
    *, cluster: Cluster, since: datetime | None, until: datetime | None
) -> list[StoredRun]:
    """The cluster's job runs that started and ended, submitted within [since, until) (a run's
    submit: its ctime, else qtime, else its start), in submit order."""
    runs = (
        Job.objects.filter(cluster=cluster, run__gte=1, start__isnull=False, end__isnull=False)
        .annotate(submitted=Coalesce("ctime", "qtime", "start"))
        .order_by("submitted", "pk")
    )
    if since is not None:
        runs = runs.filter(submitted__gte=since)
    if until is not None:
        runs = runs.filter(submitted__lt=until)
    columns = runs.values_list(
        "job_id", "run", "entity", "user", "account", "project", "group", "queue", "ncpus",
        "ngpus", "nodes", "requested_walltime", "walltime", "submitted", "start", "end",
    )  # fmt: skip
    return [
        StoredRun(
            *row[:13],
            epoch_seconds(row[13]),
            epoch_seconds(row[14]),
            epoch_seconds(row[15]),
        )
        for row in columns.iterator(chunk_size=20_000)
    ]


def whatif_submits_get(*, cluster: Cluster) -> tuple[datetime, datetime] | None:
    """The first and the last submit of the job runs a what-if replays (started and ended,
    submitted as whatif_runs_get reads it); None without any."""
    span = (
        Job.objects.filter(cluster=cluster, run__gte=1, start__isnull=False, end__isnull=False)
        .annotate(submitted=Coalesce("ctime", "qtime", "start"))
        .aggregate(first=Min("submitted"), last=Max("submitted"))
    )
    if span["first"] is None or span["last"] is None:
        return None
    return span["first"], span["last"]


def scenarios_get(*, cluster: Cluster) -> QuerySet[Scenario]:
    """The cluster's saved what-ifs, newest first, with who made them (not their results)."""
    return (
        Scenario.objects.filter(cluster=cluster)
        .select_related("created_by")
        .defer("result")
        .order_by("-created_at", "-pk")
    )


def scenario_get(*, cluster: Cluster, scenario_id: int) -> Scenario:
    """The what-if of that id on the cluster (Scenario.DoesNotExist for another cluster's)."""
    return Scenario.objects.select_related("cluster", "created_by").get(
        pk=scenario_id, cluster=cluster
    )
