"""Read queries over clusters and trees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db.models import Count, Q, QuerySet

from trees.engine.edit import (
    ChildEdit,
    EditedTree,
    EntryChange,
    StandingChange,
    edit_tree,
    entries_diff,
    standing_changes,
    tree_version,
)
from trees.engine.fairtree import (
    NO_VAL,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    SlurmTree,
    compute,
)
from trees.engine.fairtree import compare as fair_tree_compare
from trees.engine.pbs import (
    TREEROOT,
    UNSPECIFIED,
    GroupDef,
    PbsTree,
    UsageRecord,
    compare_at,
    deserving_key,
    resource_group_parent,
)
from trees.engine.pbs import compute as pbs_compute
from trees.engine.recovery import pbs_recovery
from trees.formats.pbsfs import ListingLine, PbsfsPolicy, UsageDatabase, format_listing
from trees.formats.resource_group import format_resource_group
from trees.formats.sshare import columns_for, format_sshare, sshare_row, sshare_rows, zero_tres
from trees.models import (
    Cluster,
    ListedNode,
    Membership,
    Node,
    NodeKind,
    NodeOrigin,
    Scheduler,
    ShareChange,
)


def cluster_get(*, name: str) -> Cluster:
    return Cluster.objects.get(name=name)


def node_get(*, cluster: Cluster, name: str) -> Node:
    """The node of that name in a PBS cluster (PBS names are unique in a cluster)."""
    return Node.objects.get(cluster=cluster, name=name)


def clusters_list() -> list[Cluster]:
    return list(Cluster.objects.all())


def epoch_seconds(moment: datetime | None) -> int:
    """A time as PBS stores it (time_t); no time is 0."""
    return 0 if moment is None else int(moment.timestamp())


def epoch_time(seconds: int) -> datetime:
    """An epoch time as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, tz=UTC)


def from_epoch_seconds(seconds: int) -> datetime | None:
    """A time PBS stores, time_t, as a datetime; 0 (no time) as None."""
    return None if seconds == 0 else epoch_time(seconds)


# What a PBS store sets on a node (`parent` read as the parent's id): its place in the tree,
# its usage record, its metrics.
STORED_FIELDS = (
    "parent", "kind", "origin", "position", "shares", "cgroup_id",
    "usage_record", "usage_record_seq",
    "usage", "group_perc", "fairshare_perc", "fairshare_tree_usage", "usage_perc",
    "fairshare_factor",
)  # fmt: skip
StoredNode = tuple[Any, ...]  # (id, name, then the values of STORED_FIELDS)


@dataclass(frozen=True)
class PbsState:
    """What pbsfs reads: the policy, the resource groups in file order, the usage database;
    and the nodes as stored, by name, which a store of a state derived from it compares with.
    """

    policy: PbsfsPolicy
    groups: list[GroupDef]
    database: UsageDatabase
    resource_group_messages: list[str]
    nodes: dict[str, StoredNode]


def pbs_policy_get(cluster: Cluster) -> PbsfsPolicy:
    return PbsfsPolicy(
        fairshare_usage_res=cluster.fairshare_usage_res,
        decay_factor=cluster.decay_factor,
        unknown_shares=cluster.unknown_shares,
    )


def pbs_state_get(*, cluster: Cluster) -> PbsState:
    rows = list(Node.objects.filter(cluster=cluster).values_list("id", "name", *STORED_FIELDS))
    names = {row[0]: row[1] for row in rows}
    groups: list[tuple[int, GroupDef]] = []
    records: list[tuple[int, UsageRecord]] = []
    for _id, name, parent_id, _kind, origin, position, shares, cgroup, usage, seq, *_ in rows:
        if origin == NodeOrigin.DEFINED:
            parent = resource_group_parent(names[parent_id] if parent_id is not None else TREEROOT)
            groups.append((position, GroupDef(name, cgroup or 0, parent, shares or 0)))
        if usage is not None and seq is not None:
            records.append((seq, UsageRecord(name, usage)))
    groups.sort(key=lambda item: item[0])
    records.sort(key=lambda item: item[0])
    return PbsState(
        policy=pbs_policy_get(cluster),
        groups=[group for _, group in groups],
        database=UsageDatabase(
            exists=cluster.has_usage_database,
            last_decay=epoch_seconds(cluster.last_decay),
            records=tuple(record for _, record in records),
        ),
        resource_group_messages=cluster.resource_group_messages.splitlines(),
        nodes={row[1]: row for row in rows},
    )


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


NODE_VALUES = NodeValues._fields


def node_values(node: Node) -> NodeValues:
    return NodeValues._make(getattr(node, name) for name in NODE_VALUES)


def _node_values(nodes: QuerySet[Node]) -> list[NodeValues]:
    return list(map(NodeValues._make, nodes.values_list(*NODE_VALUES)))


class TreeNode(NamedTuple):
    node: NodeValues
    depth: int
    account: str = ""  # the node's own name; a user's parent (Slurm: the user's account)


def tree_get(*, cluster: Cluster) -> list[TreeNode]:
    """Every node, root first, each before its children; siblings in the scheduler's order.

    PBS lists children newest first: resource_group entries in reverse definition order, and
    the entities it met in usage before them, newest record first. Slurm lists users first,
    then accounts, each by name.
    """
    # Unsorted: _in_tree_order orders them (the model's order joins the cluster to sort).
    nodes = _node_values(Node.objects.filter(cluster=cluster).order_by())
    return _in_tree_order(cluster, nodes, [n for n in nodes if n.parent_id is None], 0, "")


def _in_tree_order(
    cluster: Cluster, nodes: list[NodeValues], tops: list[NodeValues], depth: int, account: str
) -> list[TreeNode]:
    """`tops` and their descendants among `nodes`, each before its children, siblings in the
    scheduler's order (tree_get's)."""
    children: dict[int | None, list[NodeValues]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    newest_first = cluster.scheduler == Scheduler.PBS  # Slurm: sshare's order, kept in position
    usage = NodeOrigin.USAGE.value
    for kids in children.values():
        kids.sort(key=lambda n: (n.origin == usage, n.position, n.id), reverse=newest_first)
    ordered: list[TreeNode] = []
    user = NodeKind.USER.value
    stack = [(top, depth, account if top.kind == user else top.name) for top in reversed(tops)]
    while stack:
        node, level, above = stack.pop()
        ordered.append(TreeNode(node, level, above))
        below = children.get(node.id)
        if below:
            stack.extend(
                (kid, level + 1, node.name if kid.kind == user else kid.name)
                for kid in reversed(below)
            )
    return ordered


def node_path_get(*, node: Node) -> list[Node]:
    """The nodes from the root down to `node`, both included (one query a level)."""
    path = [node]
    while path[-1].parent_id is not None:
        path.append(Node.objects.get(pk=path[-1].parent_id))
    path.reverse()
    return path


@dataclass(frozen=True)
class Subtree:
    nodes: list[TreeNode]  # the top, then its descendants in tree order
    children: dict[int, int]  # how many children each node has (loaded or not)
    above: list[int]  # the ids from the root down to the top's parent


def _with_child_counts(
    cluster: Cluster,
    nodes: list[NodeValues],
    top: NodeValues,
    above: list[Node],
    counts: dict[int, int] | None = None,
) -> Subtree:
    """`nodes` from `top` down in tree order, with their child counts; `above` is the top's
    path from the root, the top excluded."""
    account = above[-1].name if above else ""
    if counts is None:
        counts = dict(
            Node.objects.filter(parent_id__in=[node.id for node in nodes])
            .values("parent_id")
            .annotate(count=Count("id"))
            .values_list("parent_id", "count")
        )
    ordered = _in_tree_order(cluster, nodes, [top], len(above), account)
    children = {item.node.id: counts.get(item.node.id, 0) for item in ordered}
    return Subtree(ordered, children, [step.pk for step in above])


MATCHES_SHOWN = 50


def nodes_named_get(
    *,
    cluster: Cluster,
    text: str,
    among: frozenset[int] | None = None,
    limit: int = MATCHES_SHOWN,
) -> Subtree:
    """The nodes whose name contains `text` (case aside; the first `limit` by name), with
    every ancestor, from the root (one query a level). `among`: the only nodes that may match
    (what a reader of part of the tree sees), so that a hidden node answers as a name that
    does not exist, ancestors and limit included."""
    found = Node.objects.filter(cluster=cluster, name__icontains=text)
    if among is not None:
        found = found.filter(pk__in=among)
    matches = _node_values(found.order_by("name", "id")[:limit])
    above = ancestor_ids_get([node.id for node in matches]) - {node.id for node in matches}
    nodes = matches + _node_values(Node.objects.filter(pk__in=above).order_by())
    root = next((node for node in nodes if node.parent_id is None), None)
    if root is None:
        return Subtree([], {}, [])
    return _with_child_counts(cluster, nodes, root, [])


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


def furthest_over_target(path: Sequence[Node], slurm: bool) -> Node | None:
    """The level of a path (below the root) furthest over its target, which pulls the node
    down: PBS, the highest usage/perc of those using more than their target share of the whole
    (usage/perc above the root's usage); Slurm, the lowest Level FS under 1."""
    below_root = path[1:]
    if slurm:
        over = [(n.level_fs, n) for n in below_root if n.level_fs is not None and n.level_fs < 1]
    else:
        whole = path[0].usage
        over = [(-n.usage_perc, n) for n in below_root if n.usage_perc > whole]
    return min(over, key=lambda pair: pair[0])[1] if over else None


def subtree_get(*, cluster: Cluster, top: Node | None = None, levels: int = 2) -> Subtree:
    """A node (default: the root) and its descendants `levels` deep: what a tree view shows
    before the person opens deeper nodes (one query a level, and one for the deepest level's
    child counts)."""
    if top is None:
        top = Node.objects.get(cluster=cluster, parent__isnull=True)
    first = node_values(top)
    nodes, frontier, previous = [first], [top.pk], [top.pk]
    counts: Counter[int] = Counter()
    for _ in range(levels):
        kids = _node_values(Node.objects.filter(cluster=cluster, parent_id__in=frontier).order_by())
        counts.update(kid.parent_id for kid in kids if kid.parent_id is not None)
        if not kids:
            break
        nodes += kids
        previous, frontier = frontier, [kid.id for kid in kids]
    else:
        # The deepest level's counts, found by its parents' ids (a few) rather than its own
        # (thousands).
        counts.update(
            dict(
                Node.objects.filter(parent__parent_id__in=previous)
                .order_by()
                .values("parent_id")
                .annotate(count=Count("id"))
                .values_list("parent_id", "count")
            )
        )
    return _with_child_counts(cluster, nodes, first, node_path_get(node=top)[:-1], counts)


def listed_documents_get(*, cluster: Cluster, top: int | None, levels: int) -> list[str] | None:
    """What subtree_get finds, as tree.json documents for whole-tree readers (JSON texts, from
    the cluster's listing); None when the listing is not of the tree as stored (its task has
    not run since the last store) or has no node `top` (default: the root). Two queries."""
    if not cluster.listing_current:
        return None
    listed = ListedNode.objects.filter(cluster=cluster)
    listed = listed.filter(node_id=top) if top is not None else listed.filter(place=0)
    found = listed.values_list("place", "last", "depth").first()
    if found is None:
        return None
    place, last, depth = found
    return list(
        ListedNode.objects.filter(
            cluster=cluster, place__range=(place, last), depth__lte=depth + levels
        )
        .order_by("place")
        .values_list("document", flat=True)
    )


def pbsfs_listing_get(*, cluster: Cluster) -> str:
    """What `pbsfs -p` prints for the cluster, from the stored metrics (nothing recomputed)."""
    nodes = tree_get(cluster=cluster)
    cgroup = {item.node.id: item.node.cgroup_id for item in nodes}
    lines = (
        ListingLine(
            name=node.name,
            resgroup=UNSPECIFIED if node.parent_id is None else cgroup[node.parent_id] or 0,
            cresgroup=node.cgroup_id or 0,
            shares=UNSPECIFIED if node.shares is None else node.shares,
            usage=node.usage,
            fairshare_perc=node.fairshare_perc,
        )
        for node in (item.node for item in nodes)
    )
    return format_listing(lines, cluster.fairshare_usage_res)


@dataclass(frozen=True)
class SlurmState:
    """A Slurm cluster's associations as the engine takes them, with the TRES text sshare shows."""

    tree: SlurmTree
    grp_tres_mins: dict[tuple[str, str | None], str]
    tres_run_mins: dict[tuple[str, str | None], str]
    tres_names: list[str]


def slurm_state_get(*, cluster: Cluster) -> SlurmState:
    rows = Node.objects.filter(cluster=cluster).values_list(
        "id", "parent_id", "name", "kind", "shares", "shares_parent", "usage",
        "grp_tres_mins", "tres_run_mins",
    )  # fmt: skip
    names = {row[0]: row[2] for row in rows}
    associations = []
    grp: dict[tuple[str, str | None], str] = {}
    run: dict[tuple[str, str | None], str] = {}
    for _id, parent_id, name, kind, shares, shares_parent, usage, grp_text, run_text in rows:
        parent = names[parent_id] if parent_id is not None else None
        is_user = kind == NodeKind.USER
        association = AssociationDef(
            account=parent if is_user and parent is not None else name,
            parent=parent,
            user=name if is_user else None,
            shares=USE_PARENT if shares_parent else (1 if shares is None else shares),
            usage=usage,
        )
        associations.append(association)
        if grp_text:
            grp[association.key] = grp_text
        if run_text:
            run[association.key] = run_text
    return SlurmState(
        tree=SlurmTree.build(associations),
        grp_tres_mins=grp,
        tres_run_mins=run,
        tres_names=cluster.slurm_tres.split(","),
    )


def slurm_node_ids_get(*, cluster: Cluster) -> dict[tuple[str, str | None], int]:
    """Each association's node: (account, None) for an account, (account, user) for a user."""
    rows = list(Node.objects.filter(cluster=cluster).values_list("id", "parent_id", "name", "kind"))
    names = {pk: name for pk, _, name, _ in rows}
    return {
        (names.get(parent, "") if parent is not None else "", name)
        if kind == NodeKind.USER
        else (name, None): pk
        for pk, parent, name, kind in rows
    }


def sshare_get(
    *,
    cluster: Cluster,
    long: bool = False,
    parsable: str = "",
    header: bool = True,
    users: list[str] | None = None,
    accounts: list[str] | None = None,
) -> str:
    """What Slurm's sshare prints for the cluster's associations and raw usage."""
    state = slurm_state_get(cluster=cluster)
    algorithm = Algorithm(cluster.fairshare_algorithm)
    metrics = compute(state.tree, algorithm, dampening=cluster.fairshare_dampening_factor)
    rows = sshare_rows(
        state.tree,
        metrics,
        grp_tres_mins=state.grp_tres_mins,
        tres_run_mins=state.tres_run_mins,
        tres_names=state.tres_names,
    )
    return format_sshare(
        rows,
        columns_for(algorithm, long=long),
        parsable=parsable,
        header=header,
        users=users,
        accounts=accounts,
    )


@dataclass(frozen=True)
class SlurmComparison:
    """Fair Tree's answer to "who is more deserving", with the values that decide it."""

    a: str
    b: str
    ancestor: str
    child_a: str
    child_b: str
    level_fs_a: float
    level_fs_b: float
    winner: str | None  # a or b (as given); None when their Level FS tie
    fairshare_a: float | None
    fairshare_b: float | None

    def explanation(self) -> str:
        where = (
            f"At {self.ancestor}, their first common ancestor, Fair Tree compares"
            f" {self.child_a} (Level FS {self.level_fs_a:f}) with {self.child_b}"
            f" (Level FS {self.level_fs_b:f})."
        )
        if self.winner is None:
            return (
                f"{where} The two tie: Slurm then ranks users before accounts and keeps the"
                f" account list's order, so neither is more deserving by fairshare."
            )
        loser = self.b if self.winner == self.a else self.a
        return (
            f"{where} The higher Level FS wins, so {self.winner} is more deserving than"
            f" {loser}; Level FS is shares over usage at that level, above 1 means"
            " under-served."
        )


def association_label(tree: SlurmTree, node: int) -> str:
    """`account` or `account:user`, as the commands take them."""
    return f"{tree.account(node)}:{tree.name(node)}" if tree.is_user[node] else tree.name(node)


def association_find(tree: SlurmTree, label: str) -> int:
    """The association `ACCOUNT`, `ACCOUNT:USER`, or `USER` when the user is in one account."""
    account, _, user = label.partition(":")
    if user:
        found = tree.find(account, user)
    else:
        found = tree.find(label)
        if found is None:
            matches = [node for (_, name), node in tree.users.items() if name == label]
            if len(matches) > 1:
                raise LookupError(f"user {label} is in several accounts: say ACCOUNT:{label}")
            found = matches[0] if matches else None
    if found is None:
        raise LookupError(f"no association {label}")
    return found


def slurm_compare_get(*, cluster: Cluster, a: str, b: str) -> SlurmComparison:
    """Compare two associations as Fair Tree ranks them (raises LookupError, ValueError)."""
    tree = slurm_state_get(cluster=cluster).tree
    metrics = compute(tree, Algorithm.FAIR_TREE)
    node_a, node_b = association_find(tree, a), association_find(tree, b)
    result = fair_tree_compare(metrics, node_a, node_b)

    def fairshare(node: int) -> float | None:
        return float(metrics.fairshare[node]) if tree.is_user[node] else None

    winner = None if result.winner is None else (a if result.winner == result.child_a else b)
    return SlurmComparison(
        a=a,
        b=b,
        ancestor=association_label(tree, result.ancestor),
        child_a=association_label(tree, result.child_a),
        child_b=association_label(tree, result.child_b),
        level_fs_a=float(metrics.level_fs[result.child_a]),
        level_fs_b=float(metrics.level_fs[result.child_b]),
        winner=winner,
        fairshare_a=fairshare(node_a),
        fairshare_b=fairshare(node_b),
    )


def sshare_listing_get(*, cluster: Cluster) -> str:
    """What `sshare -a -l` prints, from the stored metrics (nothing recomputed)."""
    nodes = tree_get(cluster=cluster)
    names = {item.node.id: item.node.name for item in nodes}
    zeros = zero_tres(cluster.slurm_tres.split(","))
    algorithm = Algorithm(cluster.fairshare_algorithm)
    rows = []
    for item in nodes:
        node = item.node
        row = sshare_row(
            account=item.account,
            parent=names.get(node.parent_id) if node.parent_id is not None else None,
            user=node.name if node.kind == NodeKind.USER else None,
            shares=USE_PARENT if node.shares_parent else node.shares or 0,
            usage=node.usage,
            norm_shares=node.norm_shares or 0.0,
            norm_usage=NO_VAL if node.norm_usage is None else node.norm_usage,
            effectv_usage=node.effectv_usage or 0.0,
            fairshare=node.fairshare_factor,
            level_fs=NO_VAL if node.level_fs is None else node.level_fs,
            algorithm=algorithm,
            dampening=cluster.fairshare_dampening_factor,
            grp_tres_mins=node.grp_tres_mins,
            tres_run_mins=node.tres_run_mins or zeros,
        )
        rows.append(row)
    return format_sshare(rows, columns_for(algorithm, long=True))


def cluster_listing_get(*, cluster: Cluster) -> str:
    """The scheduler's own listing of the tree: sshare -a -l for Slurm, pbsfs -p for PBS."""
    if cluster.scheduler == Scheduler.SLURM:
        return sshare_listing_get(cluster=cluster)
    return pbsfs_listing_get(cluster=cluster)


@dataclass(frozen=True)
class EntityRanking:
    """Where each entity of a cluster stands among all of them; rank 1 is the most deserving."""

    ranks: dict[int, int]  # entity id -> rank; equals share a rank
    total: int
    parents: Mapping[int, int | None]
    names: Mapping[int, str]

    def path_name(self, node: int) -> str:
        """The names from the root's child down to the node: `physics / cond-matter / dkaya`."""
        names = []
        step: int | None = node
        while step is not None and self.parents.get(step) is not None:
            names.append(self.names[step])
            step = self.parents[step]
        return " / ".join(reversed(names))

    def under(self, tops: Iterable[int]) -> list[int]:
        """The ranked entities in the subtrees of `tops`, most deserving first."""
        tops = set(tops)
        found = []
        for entity in self.ranks:
            step: int | None = entity
            while step is not None and step not in tops:
                step = self.parents[step]
            if step is not None:
                found.append(entity)
        return sorted(found, key=lambda entity: (self.ranks[entity], self.path_name(entity)))


def entity_ranking_get(*, cluster: Cluster) -> EntityRanking:
    """PBS: every entity (a leaf of the tree) in the order pbsfs -c puts them, from the stored
    metrics; Slurm: each user association's place in Fair Tree's ranking as slurmctld left it."""
    rows = list(
        Node.objects.filter(cluster=cluster).values_list(
            "id", "parent_id", "name", "origin", "fairshare_perc", "usage", "fairshare_rank",
            "fairshare_rank_of",
        )
    )  # fmt: skip
    parents = {row[0]: row[1] for row in rows}
    names = {row[0]: row[2] for row in rows}
    if cluster.scheduler == Scheduler.SLURM:
        # Fair Tree counts down: the most deserving of n users gets rank n (FairShare 1.0).
        total = max((row[7] or 0 for row in rows), default=0)
        places = {row[0]: total - row[6] + 1 for row in rows if row[6]}
        return EntityRanking(places, total, parents, names)
    values = {row[0]: (row[4], row[5]) for row in rows}
    groups = {parent for parent in parents.values() if parent is not None}
    keys = {}
    for pk, _, _, origin, *_ in rows:
        if pk in groups or origin == NodeOrigin.SCHEDULER:
            continue
        levels = []
        step: int | None = pk
        while step is not None and parents[step] is not None:
            levels.append(values[step])
            step = parents[step]
        keys[pk] = deserving_key(reversed(levels))
    ordered = sorted(keys, key=keys.__getitem__)
    ranks: dict[int, int] = {}
    rank, previous = 0, None
    for place, entity in enumerate(ordered, start=1):
        if previous is None or keys[previous] != keys[entity]:
            rank = place
        ranks[entity], previous = rank, entity
    return EntityRanking(ranks, len(ordered), parents, names)


def pbs_tree_get(*, cluster: Cluster) -> PbsTree:
    """The tree pbsfs reads for the cluster, in memory, for answers that are not stored."""
    state = pbs_state_get(cluster=cluster)
    return pbs_tree_of(cluster, state.groups, state.database)


def pbs_tree_of(cluster: Cluster, groups: Sequence[GroupDef], database: UsageDatabase) -> PbsTree:
    """The tree pbsfs would read for the cluster from these entries and usage database."""
    return PbsTree.build(
        groups,
        database.records,
        unknown_shares=cluster.unknown_shares,
        last_decay=database.last_decay,
    )


def pbs_edit_applied(state: PbsState, edits: Sequence[ChildEdit]) -> EditedTree:
    """An admin's edit applied to the stored entries; the entities with usage are the names a
    rename may not take."""
    usage_names = {record.name for record in state.database.records}
    return edit_tree(state.groups, edits, usage_names=usage_names)


def resource_group_text_get(*, cluster: Cluster, now: datetime) -> str:
    """The cluster's tree as the resource_group file to hand to PBS."""
    state = pbs_state_get(cluster=cluster)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S %Z")
    return format_resource_group(
        state.groups, header=f"resource_group of cluster {cluster.name}, exported {stamp}"
    )


def tree_version_get(*, cluster: Cluster) -> str:
    """The version of the cluster's resource_group entries that an edit is made on."""
    return tree_version(pbs_state_get(cluster=cluster).groups)


@dataclass(frozen=True)
class TreeEditPreview:
    """What an edit would do, computed in memory from the stored tree: nothing is saved."""

    version: str  # of the entries the edit was applied to
    edited: EditedTree
    changes: list[StandingChange]  # empty when the edit has problems
    memberships_removed: int  # people's memberships of the nodes the edit removes


def tree_edit_preview_get(*, cluster: Cluster, edits: Sequence[ChildEdit]) -> TreeEditPreview:
    state = pbs_state_get(cluster=cluster)
    edited = pbs_edit_applied(state, edits)
    if edited.problems:
        return TreeEditPreview(tree_version(state.groups), edited, [], 0)
    before, after = (
        pbs_tree_of(cluster, groups, state.database) for groups in (state.groups, edited.groups)
    )
    removed = Membership.objects.filter(node__cluster=cluster, node__name__in=edited.removed)
    return TreeEditPreview(
        tree_version(state.groups),
        edited,
        standing_changes(before, after, edited.renamed),
        removed.count(),
    )


def share_changes_get(
    *,
    cluster: Cluster,
    name: str = "",
    since: datetime | None = None,
    around: Node | None = None,
) -> QuerySet[ShareChange]:
    """The audit trail, newest first: every change, or those of nodes whose name (now or
    before a rename) contains `name`, those since a time, or those of a node and of its
    children (what editing its children changes, removed and moved-away ones included)."""
    changes = ShareChange.objects.filter(cluster=cluster).select_related("changed_by")
    if name:
        changes = changes.filter(Q(node_name__icontains=name) | Q(old_name__icontains=name))
    if around is not None:
        parent = resource_group_parent(around.name)
        changes = changes.filter(
            Q(node=around) | Q(node__parent=around) | Q(old_parent=parent) | Q(new_parent=parent)
        )
    if since is not None:
        changes = changes.filter(changed_at__gte=since)
    return changes


@dataclass(frozen=True)
class PbsComparison:
    """pbsfs -c's answer to "who is more deserving", with the level that decided it."""

    a: str
    b: str
    answer: int  # -1: a is more deserving, 1: b is, 0: they tie
    ancestor: str | None  # the first common ancestor; None when one is on the other's path
    child_a: str = ""
    child_b: str = ""
    usage_a: float = 0.0
    usage_b: float = 0.0
    perc_a: float = 0.0
    perc_b: float = 0.0

    @property
    def winner(self) -> str | None:
        return None if self.answer == 0 else self.a if self.answer < 0 else self.b

    def explanation(self, unit: str) -> list[str]:
        """The answer in words: where it is decided, on what, and what would turn it round."""
        if self.ancestor is None:
            return [
                f"{self.a} and {self.b} tie: one is on the other's path from the root, and pbsfs"
                " ties a node with its ancestors."
            ]
        where = "the root" if self.ancestor == TREEROOT else self.ancestor
        sides = [
            (self.child_a, self.usage_a, self.perc_a),
            (self.child_b, self.usage_b, self.perc_b),
        ]
        said = " with ".join(
            f"{name} (usage {usage:.0f} for a target of {perc:.3%}"
            + (f", usage/perc {usage / perc:.1f})" if perc > 0 else ", no target share)")
            for name, usage, perc in sides
        )
        lines = [f"At {where}, their first common ancestor, pbsfs compares {said}."]
        if self.perc_a <= 0 and self.perc_b <= 0:
            return [
                *lines,
                "Neither has a target share there, so they tie; shares would change it.",
            ]
        if self.answer == 0:
            return [*lines, "Their usage/perc tie at every level, so neither is more deserving."]
        win, lose = (sides[0], sides[1]) if self.answer < 0 else (sides[1], sides[0])
        loser = self.b if self.answer < 0 else self.a
        if lose[2] <= 0:
            return [
                *lines,
                f"{lose[0]} has no target share there, so it loses to any node with one:"
                f" {self.winner} is more deserving than {loser}, and only shares for {lose[0]}"
                " would change that.",
            ]
        ratio = win[1] / win[2]
        more = lose[1] / lose[2] * win[2] - win[1]
        changes = [
            f"{lose[0]}'s usage falling below {ratio * lose[2]:.1f} (decay lowers it while it"
            " does not run)",
            f"{win[0]} using more than {more:.1f} more ({unit})",
        ]
        if ratio > 0:  # with no usage at all the winner keeps winning whatever the target
            changes.append(f"{lose[0]}'s target share rising above {lose[1] / ratio:.3%}")
        return [
            *lines,
            f"The lower usage/perc is more deserving, so {self.winner} is more deserving than"
            f" {loser}.",
            f"What would change it: {', or '.join(changes)}.",
        ]


def pbs_compare_get(*, cluster: Cluster, a: str, b: str) -> PbsComparison:
    """Compare two entities or groups as pbsfs -c does (raises LookupError for a name that the
    tree does not hold)."""
    pbs = pbs_tree_get(cluster=cluster)
    metrics = pbs_compute(pbs)
    nodes = []
    for name in (a, b):
        node = pbs.find(name)
        if node is None:
            raise LookupError(f"no entity or group {name}")
        nodes.append(node)
    answer, level = compare_at(pbs, metrics, nodes[0], nodes[1])
    if level is None:
        return PbsComparison(a, b, answer, None)
    path_a, path_b = pbs.gpath(nodes[0]), pbs.gpath(nodes[1])
    child_a, child_b = path_a[level], path_b[level]
    return PbsComparison(
        a, b, answer, pbs.name(path_a[level - 1]),
        pbs.name(child_a), pbs.name(child_b),
        float(metrics.usage[child_a]), float(metrics.usage[child_b]),
        float(metrics.fairshare_perc[child_a]), float(metrics.fairshare_perc[child_b]),
    )  # fmt: skip


@dataclass(frozen=True)
class RecoveryProjection:
    """A PBS node's factor if its entities stop running, at each coming decay."""

    at: list[datetime]  # now, then each decay
    factors: list[float]
    reaches: int | None  # decays until the factor is 0.5 or more; None: never
    held_by: str | None  # the ancestor that keeps it under 0.5, when it never gets there
    no_target: bool = False  # its target share is 0: the factor is 0 whatever the usage

    def sentence(self) -> str:
        now = self.factors[0]
        if self.no_target:
            return (
                "Never: its target share is 0 (a level of its path has 0 shares), so its factor"
                " is 0 whatever its usage; only shares would change that."
            )
        if self.reaches == 0:
            return f"Already at or above its target: its factor is {now:.6f} (0.5 is on target)."
        if self.reaches is not None:
            when = self.at[self.reaches]
            days = (when - self.at[0]).total_seconds() / 86400
            return (
                f"With no further usage its factor goes from {now:.6f} to 0.5 (on target) in"
                f" {self.reaches} decays, on {when:%Y-%m-%d %H:%M} UTC, {days:.1f} days from now."
            )
        last = self.factors[-1]
        if self.held_by is not None:
            return (
                f"Never by decay alone: {self.held_by} stays over its target because of others'"
                f" usage, so its factor stops at {last:.6f}."
            )
        return f"Never by decay alone: with no usage left its factor stops at {last:.6f}."


def recovery_get(*, cluster: Cluster, node: Node, now: datetime) -> RecoveryProjection:
    """With no further usage by the node's entities, its factor at each decay to come (the
    decay policy's interval and factor; the rest of the tree as it is)."""
    pbs = pbs_tree_get(cluster=cluster)
    index = pbs.find(node.name)
    if index is None:
        raise LookupError(f"{node.name} is not in the tree pbsfs reads")
    recovery = pbs_recovery(pbs, index, cluster.decay_factor)
    interval = cluster.decay_interval
    first = (cluster.last_decay or now) + interval
    if first <= now:  # decays due but not yet run happen at the next cycle's whole intervals
        first += interval * ((now - first) // interval + 1)
    # Dates end with the calendar (year 9999): a projection past it stops there.
    room = (datetime.max.replace(tzinfo=UTC) - first) // interval + 1
    factors = recovery.factors[: room + 1]
    at = [now, *(first + interval * step for step in range(len(factors) - 1))]
    held = pbs.name(recovery.held_by) if recovery.held_by is not None else None
    no_target = node.fairshare_perc <= 0
    reaches = recovery.reaches if recovery.reaches is None or recovery.reaches < len(at) else None
    return RecoveryProjection(at, factors, reaches, held, no_target)


@dataclass(frozen=True)
class ResourceGroupPreview:
    """What a resource_group file would do to a cluster's tree, computed in memory."""

    version: str  # of the stored entries it was computed on
    entries: list[EntryChange]
    changes: list[StandingChange]  # every node whose target share or factor moves
    memberships_removed: int  # people's memberships of the nodes the file removes


def resource_group_preview_get(
    *, cluster: Cluster, groups: Sequence[GroupDef]
) -> ResourceGroupPreview:
    state = pbs_state_get(cluster=cluster)
    before, after = (
        pbs_tree_of(cluster, entries, state.database) for entries in (state.groups, groups)
    )
    kept = {group.name for group in groups}
    removed = [group.name for group in state.groups if group.name not in kept]
    memberships = Membership.objects.filter(node__cluster=cluster, node__name__in=removed)
    return ResourceGroupPreview(
        tree_version(state.groups),
        entries_diff(state.groups, groups),
        standing_changes(before, after, {}),
        memberships.count(),
    )
