"""A cluster's nodes as rows: what a store compares with, and the paths above and below them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from django.db import connection
from django.db.models import QuerySet

from trees.bulk import collector_paused
from trees.models import Cluster, Node, NodeOrigin, Scheduler


class SlurmValues(NamedTuple):
    """What only Slurm associations hold: FairShare=parent, sshare's columns, TRES text, the
    association's Priority."""

    shares_parent: bool = False
    norm_shares: float | None = None
    norm_usage: float | None = None
    effectv_usage: float | None = None
    level_fs: float | None = None
    fairshare_rank: int | None = None
    fairshare_rank_of: int | None = None
    grp_tres_mins: str = ""
    tres_run_mins: str = ""
    assoc_priority: int | None = None  # Priority as set (None: the parent's)
    assoc_priority_effective: int = 0  # as slurmctld holds it, inherited


class AcceleratorValues(NamedTuple):
    """What only Altair Accelerator's FairShare groups hold: the group's -t, -u and -user as
    configured, then the FS_* fields and what they come from, as the engine computed them."""

    fs_window: int | None = None
    fs_users: str = ""
    fs_user_level: bool = False
    fs_window_effective: int | None = None
    fs_active: bool | None = None
    fs_target: int | None = None
    fs_running: int | None = None
    fs_running_count: int | None = None
    fs_excess_running: int | None = None
    fs_excess_running_local: int | None = None
    fs_history: int | None = None
    fs_excess_history: int | None = None
    fs_rank: int | None = None
    fs_distance: float | None = None


class NodeState(NamedTuple):
    """What every scheduler's store sets on a node besides its place: its entry (kind, origin,
    definition order, shares, PBS resource group), its usage record, its metrics."""

    kind: str
    origin: str
    position: int
    shares: int | None
    cgroup_id: int | None
    usage_record: float | None
    usage_record_seq: int | None
    usage: float
    group_perc: float
    fairshare_perc: float
    fairshare_tree_usage: float
    usage_perc: float
    fairshare_factor: float


class StoredNode(NamedTuple):
    """A node as stored, as a store of its cluster's tree compares it: a row rather than a
    model instance, since a cycle reads trees of 100,000 nodes."""

    id: int
    name: str
    parent_id: int | None
    state: NodeState
    slurm: SlurmValues | None  # None but on a Slurm cluster's nodes
    accelerator: AcceleratorValues | None = None  # None but on an Accelerator cluster's


STATE_COLUMNS = NodeState._fields
SLURM_COLUMNS = SlurmValues._fields
ACCELERATOR_COLUMNS = AcceleratorValues._fields


def stored_nodes_get(*, cluster: Cluster) -> list[StoredNode]:
    """Every node of the cluster as stored. PBS's in no particular order (their positions and
    usage records order them); Slurm's with their values, in sshare's order (position);
    Accelerator's with theirs, in tree order (position).

    A tree of 100,000 nodes is 300,000 tuples made at once: the cyclic garbage collector,
    which would go over them again and again, is paused while they are.
    """
    nodes = Node.objects.filter(cluster=cluster)
    columns = ("id", "name", "parent_id", *STATE_COLUMNS)
    stored, state = StoredNode._make, NodeState._make
    split = len(columns)
    with collector_paused():
        if cluster.scheduler == Scheduler.SLURM:
            slurm = SlurmValues._make
            rows = nodes.order_by("position", "id").values_list(*columns, *SLURM_COLUMNS)
            return [
                stored((row[0], row[1], row[2], state(row[3:split]), slurm(row[split:]), None))
                for row in rows
            ]
        if cluster.scheduler == Scheduler.ACCELERATOR:
            accelerator = AcceleratorValues._make
            rows = nodes.order_by("position", "id").values_list(*columns, *ACCELERATOR_COLUMNS)
            return [
                stored(
                    (row[0], row[1], row[2], state(row[3:split]), None, accelerator(row[split:]))
                )
                for row in rows
            ]
        rows = nodes.order_by().values_list(*columns)
        return [stored((row[0], row[1], row[2], state(row[3:]), None, None)) for row in rows]


class NodeValues(NamedTuple):
    """A node's stored values as the tree listings and tree.json read them: a row rather than
    a model instance, since they read thousands of nodes at a time."""

    id: int
    parent_id: int | None
    name: str
    kind: str
    origin: str
    position: int
    shares: int | None
    shares_parent: bool
    cgroup_id: int | None
    usage: float
    fairshare_perc: float
    usage_perc: float
    fairshare_tree_usage: float
    fairshare_factor: float
    norm_shares: float | None
    norm_usage: float | None
    effectv_usage: float | None
    level_fs: float | None
    fairshare_rank: int | None
    fairshare_rank_of: int | None
    grp_tres_mins: str
    tres_run_mins: str
    fs_window: int | None
    fs_window_effective: int | None
    fs_active: bool | None
    fs_target: int | None
    fs_running: int | None
    fs_running_count: int | None
    fs_excess_running: int | None
    fs_excess_running_local: int | None
    fs_history: int | None
    fs_excess_history: int | None
    fs_rank: int | None
    fs_distance: float | None


NODE_VALUES = NodeValues._fields


def node_values(node: Node) -> NodeValues:
    return NodeValues._make(getattr(node, name) for name in NODE_VALUES)


def node_values_get(nodes: QuerySet[Node]) -> list[NodeValues]:
    return list(map(NodeValues._make, nodes.values_list(*NODE_VALUES)))


def node_path_get(*, node: Node) -> list[Node]:
    """The nodes from the root down to `node`, both included (one query a level)."""
    path = [node]
    while path[-1].parent_id is not None:
        path.append(Node.objects.get(pk=path[-1].parent_id))
    path.reverse()
    return path


def node_path_by_id_get(*, node_id: int, cluster: Cluster | None = None) -> list[Node]:
    """The nodes from the root down to the node of that id (in that cluster, when given), in
    one query, whatever the depth; empty when there is no such node. A lookup that must not
    tell a node hidden from the person from a missing one reads this and decides on it: both
    cost this one query. UNION (not UNION ALL) ends the walk even on a parent loop."""
    table = connection.ops.quote_name(Node._meta.db_table)
    in_cluster = "" if cluster is None else " AND cluster_id = %s"
    sql = (
        f"WITH RECURSIVE up(id, parent_id) AS ("
        f" SELECT id, parent_id FROM {table} WHERE id = %s{in_cluster}"
        f" UNION SELECT n.id, n.parent_id FROM {table} n JOIN up ON n.id = up.parent_id)"
        f" SELECT * FROM {table} WHERE id IN (SELECT id FROM up)"
    )
    params = [node_id] if cluster is None else [node_id, cluster.pk]
    found = {node.pk: node for node in Node.objects.raw(sql, params)}
    path: list[Node] = []
    step = found.get(node_id)
    while step is not None and len(path) <= len(found):
        path.append(step)
        step = found.get(step.parent_id) if step.parent_id is not None else None
    path.reverse()
    return path


def ancestor_ids_get(nodes: Iterable[int]) -> frozenset[int]:
    """Every ancestor of the nodes (one query a level)."""
    found: set[int] = set()
    frontier = set(nodes)
    while frontier:
        parents = set(
            Node.objects.filter(id__in=frontier, parent__isnull=False).values_list(
                "parent_id", flat=True
            )
        )
        frontier = parents - found
        found |= parents
    return frozenset(found)


def descendant_ids_get(nodes: Iterable[int]) -> frozenset[int]:
    """Every descendant of the nodes (one query a level)."""
    found: set[int] = set()
    frontier = set(nodes)
    while frontier:
        frontier = (
            set(Node.objects.filter(parent_id__in=frontier).values_list("id", flat=True)) - found
        )
        found |= frontier
    return frozenset(found)


def nodes_in_bulk_get(*, ids: Sequence[int]) -> dict[int, Node]:
    """The nodes of these ids, by id (those that exist)."""
    return Node.objects.in_bulk(list(ids))


def children_get(*, node: Node) -> list[Node]:
    """The node's children, the largest target share first."""
    return list(children_listed_get(node=node))


def children_listed_get(*, node: Node) -> QuerySet[Node]:
    """The node's children, the largest target share first, to read a page at a time (the id
    last: an order no two children share, so that pages neither repeat nor skip one)."""
    return node.children.order_by("-fairshare_perc", "name", "id")


def defined_children_get(*, node: Node) -> list[Node]:
    """The children the tree defines (not met in usage only), in resource_group order."""
    return list(node.children.filter(origin=NodeOrigin.DEFINED).order_by("position"))


def siblings_named_get(*, node: Node) -> list[tuple[int, str]]:
    """The ids and names of the node's parent's children, the node among them."""
    return list(Node.objects.filter(parent_id=node.parent_id).values_list("id", "name"))


def node_names_get(*, ids: Iterable[int]) -> set[str]:
    return set(Node.objects.filter(pk__in=list(ids)).values_list("name", flat=True))


def existing_ids_get(*, cluster: Cluster, ids: Iterable[int]) -> set[int]:
    """Those of the ids that are nodes of the cluster still."""
    return set(Node.objects.filter(cluster=cluster, pk__in=list(ids)).values_list("pk", flat=True))


def group_names_get(*, cluster: Cluster, limit: int) -> list[str]:
    """The names of the tree's own entries that have children (the first `limit` by name)."""
    groups = Node.objects.filter(cluster=cluster, origin=NodeOrigin.DEFINED, children__isnull=False)
    return list(groups.distinct().order_by("name").values_list("name", flat=True)[:limit])
