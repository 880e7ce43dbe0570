"""What /metrics says, in the Prometheus text format, and who may read it.

A custom prometheus_client collector reads the database on each scrape: every node's stored
metrics down to a depth (each node is one series per gauge, so the depth bounds the label
cardinality of trees of 100,000 nodes), each cluster's size and cycles, the ingestions' line
counts and the Celery tasks that failed. A tree is read as rows, in one query per cluster:
model instances would cost microseconds each, and a scrape reads every node to know depths.

Prometheus has no use for NaN or infinity in a fairshare series (Slurm's Level FS is inf for
an association without usage): a value that is not finite is left out of its gauge, as a
value that does not apply (null in the API) is, and the help text says so.

Altair Accelerator's groups have their FS_* fields as gauges of their own, integers scaled by
10,000 as Accelerator writes them; of the PBS and Slurm gauges they keep the two that mean the
same there, shares (the group's weight) and perc (FS_TARGET unscaled). Their usage (running
jobs, FS_RUNNING_COUNT already) is not a decayed usage in the cluster's unit: left out. A
group's name is its path (`/class/vcs.u1`), and so is its `path` label.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Case, Count, F, OuterRef, Subquery, Sum, When
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.samples import Sample

from accounting.models import Cycle, IngestRun, TaskFailure
from accounting.selectors import cycle_slot_of
from trees.access import is_admin
from trees.bulk import collector_paused
from trees.engine.slurm import Algorithm
from trees.models import Cluster, Node, Scheduler, TokenScope
from trees.services.tokens import TokenRefused, api_token_authenticate, bearer_token

NODE_LABELS = ("cluster", "name", "path", "kind", "depth")
# Worded without "NaN" or "Inf", which a reader of the text may rightly search for.
NOT_FINITE = "a value that is not a finite number is left out"
SCALED = "scaled by 10,000 (2500 is a quarter)"
NODE_GAUGES = (
    (
        "fairshare_shares",
        "Shares the node holds among its siblings (a count; Accelerator: the group's weight).",
    ),
    (
        "fairshare_perc",
        "The node's target share of the whole machine, a fraction from 0 to 1 (Accelerator:"
        " FS_TARGET unscaled).",
    ),
    (
        "fairshare_usage",
        "The node's decayed usage, in its cluster's usage unit (cpu-seconds by default); PBS"
        " and Slurm clusters only.",
    ),
    (
        "fairshare_tree_usage",
        "The node's usage weighed through its ancestors (PBS fairshare_tree_usage), a fraction"
        " from 0 to 1; PBS clusters only.",
    ),
    (
        "fairshare_factor",
        "The fairshare factor from 0 to 1, higher is more deserving (PBS: 0.5 is on target;"
        " Slurm: FairShare, of ranked users or with the classic algorithm); PBS and Slurm"
        " clusters only.",
    ),
    (
        "fairshare_level_fs",
        "Slurm Fair Tree Level FS, a ratio: the node's share of its siblings' shares over its"
        f" share of their usage; Slurm clusters only; {NOT_FINITE} (as with no usage).",
    ),
    (
        "fairshare_fs_target",
        "Altair Accelerator FS_TARGET: the group's target share of the machine, its weight over"
        f" its active siblings' times its parent's, {SCALED}; Accelerator clusters only.",
    ),
    (
        "fairshare_fs_running",
        "Altair Accelerator FS_RUNNING: the group's share of the running jobs' tokens,"
        f" {SCALED}; Accelerator clusters only.",
    ),
    (
        "fairshare_fs_running_count",
        "Altair Accelerator FS_RUNNING_COUNT: the group's running jobs, its subtree's (a"
        " count); Accelerator clusters only.",
    ),
    (
        "fairshare_fs_excess_running",
        "Altair Accelerator FS_EXCESS_RUNNING: FS_RUNNING less FS_TARGET, over its target when"
        f" positive, {SCALED}; Accelerator clusters only.",
    ),
    (
        "fairshare_fs_excess_running_local",
        "Altair Accelerator FS_EXCESS_RUNNING_LOCAL: the group's share of its parent's running"
        f" tokens less its share of its active siblings' weight, {SCALED}; Accelerator"
        " clusters only.",
    ),
    (
        "fairshare_fs_history",
        "Altair Accelerator FS_HISTORY: the group's share of the token-seconds run within its"
        f" window, {SCALED}; Accelerator clusters only.",
    ),
    (
        "fairshare_fs_excess_history",
        f"Altair Accelerator FS_EXCESS_HISTORY: FS_HISTORY less FS_TARGET, {SCALED};"
        " Accelerator clusters only.",
    ),
    (
        "fairshare_fs_rank",
        "Altair Accelerator FS_RANK: the group's place among the groups with queued jobs, 0"
        " first; -1 without a queued job (where FS_RANK9 is 9999999); Accelerator clusters only.",
    ),
)
ACCELERATOR_COLUMNS = (
    "shares", "fairshare_perc", None, None, None, None, "fs_target", "fs_running",
    "fs_running_count", "fs_excess_running", "fs_excess_running_local", "fs_history",
    "fs_excess_history", "fs_rank",
)  # fmt: skip
INGEST_OUTCOMES = ("read", "ingested", "duplicates", "rejected")


def metrics_text(*, max_depth: int, max_series: int, now: datetime | None = None) -> bytes:
    """The whole /metrics answer: every metric, nodes no deeper than `max_depth` (root: 0),
    at most `max_series` node series of each cluster."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FairshareCollector(max_depth=max_depth, max_series=max_series, now=now))
    # Some 100,000 tuples, dicts and lists, none in a reference cycle: without the pauses the
    # cyclic collector would go over them again and again (a fifth of the time, and jitter).
    with collector_paused():
        return generate_latest(registry)


class FairshareCollector:
    """The database's numbers as metric families, read anew on each collect()."""

    def __init__(self, *, max_depth: int, max_series: int, now: datetime | None = None) -> None:
        self.max_depth = max_depth
        self.max_series = max_series
        self.now = now

    def describe(self) -> Iterable[Metric]:
        # Names known only once read: the registry must not collect() to learn them.
        return []

    def collect(self) -> Iterator[Metric]:
        now = self.now or timezone.now()
        clusters = _clusters_with_last_cycle()
        yield from _node_families(clusters, self.max_depth, self.max_series)
        yield from _cycle_families(clusters, now)
        yield _ingest_family(clusters)
        yield _task_failures_family()


def _clusters_with_last_cycle() -> list[Any]:
    """Every cluster by name, with its latest cycle's at, duration and started_at as
    last_at, last_duration and last_started_at (None without cycles): one query."""
    latest = Cycle.objects.filter(cluster=OuterRef("pk")).order_by("-at")
    return list(
        Cluster.objects.annotate(
            last_at=Subquery(latest.values("at")[:1]),
            last_duration=Subquery(latest.values("duration")[:1]),
            last_started_at=Subquery(latest.values("started_at")[:1]),
        ).order_by("name")
    )


def _node_columns(cluster: Cluster) -> tuple[Any, ...]:
    """The node gauges' columns, in NODE_GAUGES' order, None (or missing at the end) where the
    cluster's scheduler has no such value (the API's documents have null there: the PBS
    numbers on Slurm associations and Accelerator groups, Level FS on PBS nodes, Fair Tree's
    FairShare of accounts, the FS_* fields on PBS and Slurm nodes)."""
    if cluster.scheduler == Scheduler.ACCELERATOR:
        return ACCELERATOR_COLUMNS
    if cluster.scheduler != Scheduler.SLURM:
        return ("shares", "fairshare_perc", "usage", "fairshare_tree_usage", "fairshare_factor")
    factor: Any = F("fairshare_factor")
    if cluster.fairshare_algorithm == Algorithm.FAIR_TREE:
        factor = Case(When(fairshare_rank__isnull=False, then=factor))
    return ("shares", "fairshare_perc", "usage", None, factor, "level_fs")


def _node_families(
    clusters: Sequence[Cluster], max_depth: int, max_series: int
) -> Iterator[Metric]:
    """The per-node gauges, fairshare_nodes{cluster} and what the bound on nodes left out of
    them: one query per cluster."""
    gauges = [GaugeMetricFamily(name, text, labels=NODE_LABELS) for name, text in NODE_GAUGES]
    counts = GaugeMetricFamily(
        "fairshare_nodes",
        "Nodes in the cluster's tree, at every depth (a count).",
        labels=["cluster"],
    )
    left_out = GaugeMetricFamily(
        "fairshare_metrics_nodes_left_out",
        "Nodes of the cluster's tree within METRICS_MAX_DEPTH that this scrape left out, past"
        " the cluster's METRICS_MAX_SERIES (a count; 0: every one is listed).",
        labels=["cluster"],
    )
    finite = math.isfinite
    for cluster in clusters:
        # The gauges the cluster has, each with where its value is in a row, and the columns.
        shown: list[tuple[list[Sample], str, int]] = []
        read: list[Any] = []
        for gauge, column in zip(gauges, _node_columns(cluster), strict=False):
            if column is not None:
                shown.append((gauge.samples, gauge.name, 4 + len(read)))
                read.append(column)
        rows = list(
            Node.objects.filter(cluster=cluster)
            .order_by("id")
            .values_list("id", "parent_id", "name", "kind", *read)
        )
        counts.add_metric([cluster.name], len(rows))
        named = cluster.scheduler == Scheduler.ACCELERATOR  # a group's name is its path
        # A node is a series per gauge the cluster has (some are left out where not finite).
        max_nodes = max_series // max(len(shown), 1)
        listed = _within_depth(cluster.name, rows, max_depth, max_nodes, named_paths=named)
        left_out.add_metric([cluster.name], listed.left_out)
        for labels, row in listed.nodes:
            for samples, name, at in shown:
                value = row[at]
                if value is not None and finite(value):
                    # Appended whole, the node's label dict shared by its gauges (add_metric
                    # would build one per gauge: a sixth of the time on a big tree).
                    samples.append(Sample(name, labels, value))
    yield from gauges
    yield counts
    yield left_out


@dataclass(frozen=True)
class Listed:
    """The nodes a scrape lists of one cluster, with their labels, and how many it leaves
    out within the depth bound."""

    nodes: list[tuple[dict[str, str], tuple[Any, ...]]]
    left_out: int


def _within_depth(
    cluster: str,
    rows: Sequence[tuple[Any, ...]],
    max_depth: int,
    max_nodes: int,
    *,
    named_paths: bool = False,
) -> Listed:
    """The rows (id, parent_id, name, kind, ...) no deeper than `max_depth`, each before its
    children, with its labels; the path names it from the root (`/`, depth 0) down:
    `/phys/astro/alice`, or is its name when names are paths already (`named_paths`).

    At most `max_nodes`, those nearest the root: whole depths while they fit, then the first
    nodes in tree order of the depth that does not. Each path is made from its parent's,
    a depth at a time, never by walking up from each node.
    """
    children: dict[int | None, list[tuple[Any, ...]]] = {}
    for row in rows:
        children.setdefault(row[1], []).append(row)
    paths: dict[int, str] = {}
    depth_of: dict[int, int] = {}
    level = children.get(None, [])
    unlisted: list[tuple[Any, ...]] = []  # past the bound: only counted
    room, depth, left_out = max_nodes, 0, 0
    while (level or unlisted) and depth <= max_depth:
        kept, unlisted = level[:room], unlisted + level[room:]
        left_out += len(unlisted)
        room -= len(kept)
        for row in kept:
            above = "" if depth < 2 else paths[row[1]]
            paths[row[0]] = "/" if depth == 0 else f"{above}/{row[2]}"
            depth_of[row[0]] = depth
        level = [kid for row in kept for kid in children.get(row[0], ())]
        unlisted = [kid for row in unlisted for kid in children.get(row[0], ())]
        depth += 1
    listed = []
    stack = list(reversed(children.get(None, [])))
    while stack:  # in tree order, as before the bound: each node before its children
        row = stack.pop()
        if row[0] not in paths:
            continue
        depth = depth_of[row[0]]
        # In the order generate_latest sorts labels in, which then costs it least.
        labels = {"cluster": cluster, "depth": str(depth), "kind": row[3], "name": row[2]}
        labels["path"] = row[2] if named_paths else paths[row[0]]
        listed.append((labels, row))
        stack.extend(reversed(children.get(row[0], ())))
    return Listed(listed, left_out)


def _cycle_families(clusters: Sequence[Any], now: datetime) -> Iterator[Metric]:
    """Each cluster's latest cycle; a cluster without cycles has none of these series."""
    duration = GaugeMetricFamily(
        "fairshare_cycle_duration_seconds",
        "How long the cluster's latest cycle took to run, in seconds.",
        labels=["cluster"],
    )
    lag = GaugeMetricFamily(
        "fairshare_cycle_lag_seconds",
        "How far the cluster's latest cycle is behind the cycle due now, in seconds (0: up to"
        " date; one cycle period more per cycle missed).",
        labels=["cluster"],
    )
    last_run = GaugeMetricFamily(
        "fairshare_cycle_last_run_timestamp_seconds",
        "When the cluster's latest cycle ran (wall clock), in Unix seconds.",
        labels=["cluster"],
    )
    updated = GaugeMetricFamily(
        "fairshare_metrics_updated_timestamp_seconds",
        "When the cluster's tree and its metrics were last stored, in Unix seconds.",
        labels=["cluster"],
    )
    for cluster in clusters:
        if cluster.metrics_updated_at is not None:
            updated.add_metric([cluster.name], cluster.metrics_updated_at.timestamp())
        if cluster.last_at is None:
            continue
        # Cycles run at the slots of the cluster's period (run_due_cycles): the time of the
        # slot due now less the latest cycle's is the span that no cycle has accounted yet.
        behind = (cycle_slot_of(cluster, now) - cluster.last_at).total_seconds()
        duration.add_metric([cluster.name], cluster.last_duration)
        lag.add_metric([cluster.name], max(0.0, behind))
        last_run.add_metric([cluster.name], cluster.last_started_at.timestamp())
    yield from (duration, lag, last_run, updated)


def _ingest_family(clusters: Sequence[Cluster]) -> Metric:
    """Lines the ingestions read and what became of them, summed over the clusters' runs
    (every cluster, 0 without runs, so that rates start from the first run)."""
    lines = CounterMetricFamily(
        "fairshare_ingest_lines",
        "Accounting lines the ingestions read, and of those ingested, duplicates and rejected"
        " (a count).",
        labels=["cluster", "outcome"],
    )
    sums = {
        row[0]: row[1:]
        for row in IngestRun.objects.order_by()
        .values("cluster_id")
        .annotate(*(Sum(outcome) for outcome in INGEST_OUTCOMES))
        .values_list("cluster_id", *(f"{outcome}__sum" for outcome in INGEST_OUTCOMES))
    }
    for cluster in clusters:
        values = sums.get(cluster.pk, (0,) * len(INGEST_OUTCOMES))
        for outcome, value in zip(INGEST_OUTCOMES, values, strict=True):
            lines.add_metric([cluster.name, outcome], value or 0)
    return lines


def _task_failures_family() -> Metric:
    failures = CounterMetricFamily(
        "fairshare_task_failures",
        "Celery tasks that raised (after their retries), by task name (a count).",
        labels=["task"],
    )
    counted = TaskFailure.objects.order_by("task").values("task").annotate(failed=Count("id"))
    for task, failed in counted.values_list("task", "failed"):
        failures.add_metric([task], failed)
    return failures


# Who may read /metrics.


@dataclass(frozen=True)
class Refusal:
    status: int  # 401: no usable credentials; 403: credentials that do not open /metrics
    detail: str


def metrics_reader_check(
    *,
    authorization: str,
    user: User | AnonymousUser,
    address: str,
    allowed: Sequence[str],
    now: datetime,
) -> Refusal | None:
    """None when the request may read /metrics: it comes from an `allowed` address or network
    (a site's Prometheus server), or carries a token of the `metrics` scope of an admin's
    (`authorization` is the Authorization header), or an admin's session; else why not.

    Behind a reverse proxy every request comes from the proxy's address: list addresses only
    when Prometheus reaches the site without one.
    """
    if address_allowed(address, allowed):
        return None
    try:
        sent = bearer_token(authorization)
        token = None if sent is None else api_token_authenticate(token=sent, now=now)
    except TokenRefused as refused:
        return Refusal(401, refused.answer)  # one answer for unknown, revoked and expired
    if token is not None:
        if token.scope != TokenScope.METRICS:
            return Refusal(403, "/metrics takes a token of the `metrics` scope")
        if not is_admin(token.user):
            return Refusal(403, "the token's user is no longer an admin")
        return None
    if is_admin(user):
        return None
    if user.is_authenticated:
        return Refusal(403, "/metrics is for admins and the site's Prometheus server")
    return Refusal(401, "a token of the `metrics` scope (Authorization: Bearer) or a login")


def address_allowed(address: str, allowed: Sequence[str]) -> bool:
    """Whether the client's address is one of `allowed`, or in one of its networks."""
    networks = allowed_networks(tuple(allowed))
    if not networks:
        return False
    try:
        client = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(client, ipaddress.IPv6Address) and client.ipv4_mapped is not None:
        client = client.ipv4_mapped  # an IPv4 client of a dual-stack server: ::ffff:10.0.0.5
    return any(client in network for network in networks)


@lru_cache(maxsize=8)
def allowed_networks(
    entries: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """METRICS_ADDRESSES as networks: an address (`10.0.0.5`, `::1`) or a network in CIDR
    notation, host bits 0 (`10.0.0.0/24`; not `10.0.0.5/24`), each. An entry that is neither
    is a mistake that would lock Prometheus out, or let in more than meant:
    ImproperlyConfigured, naming it."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip()))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"METRICS_ADDRESSES: {entry!r} is not an address or a network ({exc})"
            ) from None
    return tuple(networks)
