"""State changes of clusters and trees; each use case is one transaction.

Every PBS write ends in `_pbs_store`: it rebuilds the tree exactly as pbsfs would read it (the
resource groups, then the usage records in file order), makes the nodes match, and stores the
metrics in the same transaction, so the read side is never stale.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trees.bulk import rows_insert, rows_update
from trees.engine.edit import ChildEdit, EditProblem, tree_version
from trees.engine.fairtree import (
    NO_VAL,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    SlurmTree,
    level_share,
    target_share,
)
from trees.engine.fairtree import compute as fair_tree_compute
from trees.engine.formula import JOB_SORT_NAMES, FormulaError, parse_formula
from trees.engine.pbs import (
    FAIRSHARE_MIN_USAGE,
    ROOT_ALIAS,
    UNKNOWN_CGROUP,
    GroupDef,
    PbsMetrics,
    PbsTree,
    UsageRecord,
    compute,
    resource_group_parent,
)
from trees.engine.tree import ROOT, subtree_ends
from trees.formats.pbsfs import PbsfsResult, UsageDatabase, run_pbsfs
from trees.formats.sched_config import MAX_DECAY_TIME, FairshareConfig
from trees.formats.usage_file import RejectedRecord, UsageFile, screen_records
from trees.models import (
    Cluster,
    FairshareEntity,
    ListedNode,
    Membership,
    Node,
    NodeKind,
    NodeOrigin,
    Person,
    Role,
    Scheduler,
    ShareChange,
)
from trees.selectors import (
    STORED_FIELDS,
    PbsState,
    SlurmState,
    StoredNode,
    epoch_seconds,
    from_epoch_seconds,
    pbs_edit_applied,
    pbs_state_get,
    pbs_tree_of,
    share_changes_get,
    slurm_state_get,
    tree_get,
)
from trees.serializers import tree_json_document

_SLURM_METRIC_FIELDS = (
    "norm_shares",
    "norm_usage",
    "effectv_usage",
    "level_fs",
    "fairshare_rank",
    "fairshare_rank_of",
)
_SLURM_FIELDS = (
    *STORED_FIELDS,
    "shares_parent",
    *_SLURM_METRIC_FIELDS,
    "grp_tres_mins",
    "tres_run_mins",
)


def cluster_get_or_create(*, name: str, scheduler: str = Scheduler.PBS) -> tuple[Cluster, bool]:
    """The cluster of that name, locked; a new PBS one starts with TREEROOT and unknown.

    A cluster of another scheduler is refused: its tree cannot take the other's files.
    """
    with transaction.atomic():
        cluster, created = Cluster.objects.select_for_update().get_or_create(
            name=name, defaults={"scheduler": scheduler}
        )
        if created:
            cluster.full_clean(exclude=["nodes"])
            if scheduler == Scheduler.PBS:
                _pbs_store(
                    cluster,
                    stored={},
                    groups=[],
                    database=UsageDatabase(),
                    reason="cluster created",
                )
        elif cluster.scheduler != scheduler:
            raise ValidationError(
                f"cluster {name} is a {cluster.get_scheduler_display()} cluster,"
                f" not {Scheduler(scheduler).label}"
            )
    return cluster, created


# An import that imports nothing leaves no new cluster behind (raised inside its transaction,
# so that the cluster made for it is rolled back too).
_NOTHING_FOR_A_NEW_CLUSTER = "the file holds no {} to import: cluster {} is not created"


@dataclass(frozen=True)
class StoreSummary:
    nodes: int
    created: int
    updated: int
    removed: int
    share_changes: int
    unknown_entities: int
    cluster_created: bool = False
    # The tree's entries added, removed (usage kept under unknown or not), and re-shared or
    # moved: once the cluster has a tree, as many as the audit rows of each kind.
    entries_added: int = 0
    entries_removed: int = 0
    entries_changed: int = 0


def resource_group_import(
    *,
    cluster_name: str,
    groups: Sequence[GroupDef],
    pbs_messages: Sequence[str],
    source: str,
    user: User | None = None,
    reason: str = "",
    version: str | None = None,
) -> StoreSummary:
    """Make the cluster's tree the one in a resource_group file; usage stays by entity name.

    Entities that leave the tree keep their usage under `unknown`, as PBS does on its next read.
    `reason` goes into every audit row beside the file's name; `version`: the entries the
    change was previewed on, refused (TreeChanged) if the tree is no longer those.
    """
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        if created and not groups:
            raise ValidationError(_NOTHING_FOR_A_NEW_CLUSTER.format("entry", cluster_name))
        state = pbs_state_get(cluster=cluster)
        if version is not None and tree_version(state.groups) != version:
            raise TreeChanged([])
        cluster.resource_group_messages = "\n".join(pbs_messages)
        cluster.save(update_fields=["resource_group_messages"])
        why = f"imported resource_group {source}" + (f": {reason.strip()}" if reason else "")
        summary = _pbs_store(
            cluster,
            stored=state.nodes,
            groups=groups,
            database=state.database,
            reason=why,
            user=user,
        )
    return replace(summary, cluster_created=created)


class TreeChanged(Exception):
    """The tree's entries changed since the edit was read; nothing was saved."""

    def __init__(self, changes: Sequence[ShareChange]) -> None:
        self.changes = list(changes)
        who = ", ".join(sorted({str(change.changed_by or "an import") for change in changes}))
        super().__init__(
            f"the tree changed while you edited it ({who or 'an import or a command'});"
            " nothing was saved"
        )


class EditRefused(Exception):
    def __init__(self, problems: Sequence[EditProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(problem.message for problem in problems))


def tree_edit(
    *,
    cluster: Cluster,
    edits: Sequence[ChildEdit],
    reason: str,
    version: str,
    opened_at: datetime,
    user: User | None,
) -> StoreSummary:
    """An admin's edit of a PBS tree, made on the entries of `version` (read at `opened_at`):
    stored with its metrics and one audit row per node it changes, each with the reason.

    Under the cluster's lock, a tree whose entries are no longer that version is refused with
    the changes since (TreeChanged): two admins never overwrite each other unawares. Renamed
    nodes keep their rows (history, memberships); usage stays with names, as PBS keeps it.
    """
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": "a reason is required"})
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        state = pbs_state_get(cluster=cluster)
        if tree_version(state.groups) != version:
            since = share_changes_get(cluster=cluster, since=opened_at)
            raise TreeChanged(list(since.order_by("changed_at", "id")))
        edited = pbs_edit_applied(state, edits)
        if edited.problems:
            raise EditRefused(edited.problems)
        stored = _rows_renamed(state.nodes, edited.renamed)
        old_names = {new: old for old, new in edited.renamed.items()}
        now = timezone.now()
        moves = []  # renames and moves: one audit row each, which says it all
        for group in edited.groups:
            old_name = old_names.get(group.name, "")
            old_parent, new_parent = (
                resource_group_parent(name) for name in edited.moved.get(group.name, ("", ""))
            )
            if old_name or new_parent:
                row = stored[group.name]
                old_shares = row[2 + STORED_FIELDS.index("shares")]
                change = _share_change(
                    cluster, row[0], old_shares, group.shares, now, reason, user, group.name
                )
                change.old_name = old_name
                change.old_parent, change.new_parent = old_parent, new_parent
                moves.append(change)
        summary = _pbs_store(
            cluster,
            stored=stored,
            groups=edited.groups,
            database=state.database,
            reason=reason,
            user=user,
            skip_audit={change.node_name for change in moves},
        )
        ShareChange.objects.bulk_create(moves)
    return replace(summary, share_changes=summary.share_changes + len(moves))


def _rows_renamed(
    stored: Mapping[str, StoredNode], renamed: Mapping[str, str]
) -> dict[str, StoredNode]:
    """The stored rows under their new names, renamed in the database too (through names no
    entry can have, so that two nodes may swap names)."""
    rows = dict(stored)
    moving = [(rows.pop(old), new) for old, new in renamed.items()]
    for row, _ in moving:
        Node.objects.filter(pk=row[0]).update(name=f" renaming {row[0]}")
    for row, new in moving:
        Node.objects.filter(pk=row[0]).update(name=new)
        rows[new] = (row[0], new, *row[2:])
    return rows


def sched_config_import(*, cluster_name: str, config: FairshareConfig) -> StoreSummary:
    """Take the fairshare keys of a sched_config (PBS's defaults for keys it leaves unset)."""
    if config.refused:
        raise ValidationError(config.refused)
    if not 0 < config.decay_time <= MAX_DECAY_TIME:  # timedelta overflows long before 1e24 s
        raise ValidationError(
            f"decay_time {config.decay_time} s is not within 1 s and {MAX_DECAY_TIME} s"
        )
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        formula_changed = cluster.fairshare_usage_res != config.fairshare_usage_res
        cluster.fairshare_usage_res = config.fairshare_usage_res
        cluster.fairshare_entity = config.fairshare_entity
        cluster.decay_interval = timedelta(seconds=config.decay_time)
        cluster.decay_factor = config.decay_factor
        cluster.unknown_shares = config.unknown_shares
        cluster.full_clean(exclude=["nodes"])
        cluster.save()
        state = pbs_state_get(cluster=cluster)
        summary = _pbs_store(
            cluster,
            stored=state.nodes,
            groups=state.groups,
            database=state.database,
            reason="sched_config import",
        )
        if formula_changed:
            # Imported here: the accounting app builds on this one, not the other way round.
            from accounting.services import jobs_usage_recompute

            jobs_usage_recompute(cluster=cluster)
    return replace(summary, cluster_created=created)


def job_sort_formula_set(*, cluster: Cluster, formula: str) -> None:
    """The cluster's `job_sort_formula` (a PBS server attribute, set with qmgr); "" for none.

    A formula that does not parse, or names what PBS does not know, is refused with where.
    """
    if formula:
        try:
            parse_formula(formula, JOB_SORT_NAMES)
        except FormulaError as exc:
            raise ValidationError({"job_sort_formula": f"{formula!r}: {exc}"}) from exc
    with transaction.atomic():
        cluster.job_sort_formula = formula
        cluster.save(update_fields=["job_sort_formula"])


def cluster_delete(*, name: str) -> bool:
    """Remove the cluster with all it holds (tree, usage, jobs, cycles, history, memberships);
    False when there was none."""
    with transaction.atomic():
        deleted, _ = Cluster.objects.filter(name=name).delete()
    return deleted > 0


@dataclass(frozen=True)
class UsageImport:
    summary: StoreSummary | None  # None: no record could be imported, nothing was written
    screened: list[RejectedRecord]  # records the file holds but no scheduler writes
    imported: int


def pbs_usage_import(*, cluster_name: str, usage: UsageFile) -> UsageImport:
    """Replace the usage database with a scheduler's usage file."""
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        state = pbs_state_get(cluster=cluster)
        kept, screened = screen_records(usage, state.groups)
        if not kept and (usage.rejected or screened):
            transaction.set_rollback(True)
            return UsageImport(summary=None, screened=screened, imported=0)
        if created and not kept:
            raise ValidationError(_NOTHING_FOR_A_NEW_CLUSTER.format("usage record", cluster_name))
        database = UsageDatabase(exists=True, last_decay=usage.last_decay, records=tuple(kept))
        summary = _pbs_store(
            cluster,
            stored=state.nodes,
            groups=state.groups,
            database=database,
            reason="usage import",
        )
    return UsageImport(replace(summary, cluster_created=created), screened, len(kept))


def pbs_database_store(
    *, cluster: Cluster, state: PbsState, database: UsageDatabase, reason: str
) -> StoreSummary:
    """Store a usage database computed from the cluster's state (a cycle's), with every metric.

    The caller holds the cluster's row lock and its transaction, from reading the state on.
    """
    return _pbs_store(
        cluster, stored=state.nodes, groups=state.groups, database=database, reason=reason
    )


def pbs_entities_add(*, cluster: Cluster, names: Sequence[str], reason: str) -> list[str]:
    """Entities met in jobs that the tree lacks: under `unknown`, with PBS's first usage (1).

    find_alloc_ginfo does this when a job names an entity the resource_group does not have.
    Returns the names added.
    """
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        state = pbs_state_get(cluster=cluster)
        held = {group.name for group in state.groups} | {r.name for r in state.database.records}
        new = [name for name in dict.fromkeys(names) if name not in held]
        if new:
            added = tuple(UsageRecord(name, FAIRSHARE_MIN_USAGE) for name in new)
            database = replace(state.database, records=state.database.records + added)
            _pbs_store(
                cluster, stored=state.nodes, groups=state.groups, database=database, reason=reason
            )
    return new


def pbs_groups_add(
    *, cluster: Cluster, groups: Sequence[tuple[str, str | None, int]], reason: str
) -> list[str]:
    """Define new resource groups `(name, parent or None for root, shares)`, parents first.

    Each takes the next free resource group id. Names the tree already defines are skipped;
    an entity that was under `unknown` moves to its place and keeps its usage.
    """
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        state = pbs_state_get(cluster=cluster)
        defined = {group.name for group in state.groups}
        cgroup = max((group.cgroup for group in state.groups), default=UNKNOWN_CGROUP)
        added: list[GroupDef] = []
        for name, parent, shares in groups:
            if name in defined:
                continue
            cgroup += 1
            added.append(GroupDef(name, cgroup, parent or ROOT_ALIAS, shares))
            defined.add(name)
        if added:
            _pbs_store(
                cluster,
                stored=state.nodes,
                groups=[*state.groups, *added],
                database=state.database,
                reason=reason,
            )
    return [group.name for group in added]


def pbsfs_run(*, cluster: Cluster, argv: Sequence[str], now: datetime | None = None) -> PbsfsResult:
    """Run pbsfs on the cluster; -s, -d and -e store the usage database it writes."""
    moment = now or timezone.now()
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        state = pbs_state_get(cluster=cluster)
        result = run_pbsfs(
            argv,
            groups=state.groups,
            database=state.database,
            policy=state.policy,
            now=epoch_seconds(moment),
            resource_group_messages=state.resource_group_messages,
        )
        if result.written is not None:
            _pbs_store(
                cluster,
                stored=state.nodes,
                groups=state.groups,
                database=result.written,
                reason="pbsfs",
            )
    return result


def _kind(pbs: PbsTree, node: int, leaf_kind: str) -> str:
    if pbs.is_leaf(node) and node not in (ROOT, pbs.unknown):
        return leaf_kind
    return NodeKind.ORGANIZATION if pbs.tree.depth[node] <= 1 else NodeKind.PROJECT


def _leaf_kind(cluster: Cluster) -> str:
    """What a PBS entity is: a user where jobs are charged to users, else the project (the
    account, group or queue) they are charged to, as seed 003's site charges projects."""
    if cluster.fairshare_entity in (FairshareEntity.EUSER, FairshareEntity.EGROUP_EUSER):
        return NodeKind.USER
    return NodeKind.PROJECT


def _pbs_store(
    cluster: Cluster,
    *,
    stored: Mapping[str, StoredNode],
    groups: Sequence[GroupDef],
    database: UsageDatabase,
    reason: str,
    user: User | None = None,
    skip_audit: Collection[str] = (),
) -> StoreSummary:
    """Make the cluster's nodes, usage and metrics those of the PBS tree built from the inputs.

    `stored` is the cluster's nodes as read with the state the inputs come from, under the
    same lock (a cycle stores every node of trees of 100,000: they are read once). Nodes in
    `skip_audit` get no audit row of their shares here: their caller writes one that says more.
    """
    pbs = pbs_tree_of(cluster, groups, database)
    metrics = compute(pbs)
    position = {group.name: index for index, group in enumerate(groups, start=1)}
    # (place in the database, value); a name's last record is the one PBS keeps.
    records = {record.name: (seq, record.usage) for seq, record in enumerate(database.records)}

    # Rows, not model instances, compared as tuples in STORED_FIELDS order.
    metric_rows = _metric_rows(metrics)
    leaf_kind = _leaf_kind(cluster)
    existing = dict(stored)  # what is left in it at the end is removed
    names = {row[0]: row[1] for row in stored.values()}
    origin_at, shares_at = 2 + STORED_FIELDS.index("origin"), 2 + STORED_FIELDS.index("shares")
    had_tree = any(row[origin_at] == NodeOrigin.DEFINED for row in existing.values())
    by_index: dict[int, Node | int] = {}  # an existing node's id, or the node to create
    to_create: list[list[Node]] = []
    updates: list[tuple[int, tuple[Any, ...]]] = []  # (node id, its new values)
    changed: set[int] = set()  # the places in STORED_FIELDS that differ in some update
    changes: list[ShareChange] = []
    entries = [0, 0, 0]  # the tree's entries added, removed, re-shared or moved
    now = timezone.now()

    for index in pbs.preorder():
        name = pbs.name(index)
        if index in (ROOT, pbs.unknown):
            origin = NodeOrigin.SCHEDULER
        elif name in position:
            origin = NodeOrigin.DEFINED
        else:
            origin = NodeOrigin.USAGE
        seq, usage = records.get(name, (None, None))
        shares = None if index == ROOT else pbs.shares(index)
        values = (
            by_index.get(pbs.tree.parent[index]),
            _kind(pbs, index, leaf_kind),
            origin,
            position.get(name, seq or 0),
            shares,
            pbs.cresgroup[index],
            usage,
            seq,
            *metric_rows[index],
        )
        row = existing.pop(name, None)
        if row is None:
            parent, *rest = values
            fields = dict(zip(STORED_FIELDS[1:], rest, strict=True))
            node = Node(cluster=cluster, name=name, **fields)
            if isinstance(parent, Node):
                node.parent = parent
            else:
                node.parent_id = parent
            depth = pbs.tree.depth[index]
            to_create.extend([] for _ in range(depth + 1 - len(to_create)))
            to_create[depth].append(node)
            if origin == NodeOrigin.DEFINED:
                entries[0] += 1
                if had_tree:
                    changes.append(_share_change(cluster, node, None, shares, now, reason, user))
            by_index[index] = node
            continue
        old = row[2:]
        if values != old:
            updates.append((row[0], values))
            changed.update(place for place, value in enumerate(values) if value != old[place])
        # Leaving the tree while keeping usage (it moves under unknown) is a removal.
        was_defined = row[origin_at] == NodeOrigin.DEFINED
        before = row[shares_at] if was_defined else None
        after = shares if origin == NodeOrigin.DEFINED else None
        old_parent = resource_group_parent(names.get(row[2], ""))
        new_parent = resource_group_parent(pbs.name(pbs.tree.parent[index]))
        moved = was_defined and after is not None and old_parent != new_parent
        if before is None and after is not None:
            entries[0] += 1
        elif before is not None and after is None:
            entries[1] += 1
        elif before is not None and (before != after or moved):
            entries[2] += 1
        if (before != after or moved) and (was_defined or had_tree) and name not in skip_audit:
            change = _share_change(cluster, row[0], before, after, now, reason, user, name)
            if after is None:
                change.old_parent = old_parent
            elif moved:
                change.old_parent, change.new_parent = old_parent, new_parent
            changes.append(change)
        by_index[index] = row[0]

    _create_by_level(to_create)
    places = sorted(changed)
    columns = [STORED_FIELDS[place] for place in places]
    rows_update(Node, _columns(columns), _update_rows(updates, places))
    removed = list(existing.values())
    for row in removed:
        entries[1] += row[origin_at] == NodeOrigin.DEFINED
        if row[origin_at] == NodeOrigin.DEFINED and row[shares_at] is not None:
            change = _share_change(cluster, None, row[shares_at], None, now, reason, user, row[1])
            change.old_parent = resource_group_parent(names.get(row[2], ""))
            changes.append(change)
    Node.objects.filter(pk__in=[row[0] for row in removed]).delete()
    ShareChange.objects.bulk_create(changes, batch_size=2000)

    cluster.last_decay = from_epoch_seconds(database.last_decay)
    cluster.has_usage_database = database.exists
    cluster.metrics_updated_at = now
    cluster.save(update_fields=["last_decay", "has_usage_database", "metrics_updated_at"])
    _listing_requested(cluster)
    return StoreSummary(
        nodes=len(pbs),
        created=sum(len(level) for level in to_create),
        updated=len(updates),
        removed=len(removed),
        share_changes=len(changes),
        unknown_entities=len(pbs.unknown_entities()),
        entries_added=entries[0],
        entries_removed=entries[1],
        entries_changed=entries[2],
    )


def _listing_requested(cluster: Cluster) -> None:
    """Once the store commits, have the tree listed for tree.json (the task tree_listing: in
    a worker with a broker, so that a cycle does not wait for it; at once without one). If it
    cannot be queued, readers get answers built from the nodes until the next store's."""
    from trees.tasks import tree_listing  # the task calls back into this module

    cluster_id = cluster.pk
    transaction.on_commit(lambda: tree_listing.delay(cluster_id), robust=True)


def tree_listing_write(*, cluster_id: int) -> bool:
    """List the cluster's tree as stored for whole-tree readers of tree.json (ListedNode):
    every node's document in tree order, with its place, depth and the end of its subtree.
    False when the listing holds the stored tree already (a store's second request)."""
    with transaction.atomic():
        # Locked, as stores lock it: the revision read is the one of the nodes read below.
        cluster = Cluster.objects.select_for_update().get(pk=cluster_id)
        if cluster.listing_current:
            return False
        nodes = tree_get(cluster=cluster)
        children = Counter(item.node.parent_id for item in nodes)
        ends = subtree_ends([item.depth for item in nodes])
        rows = [
            (
                item.node.id,
                cluster.pk,
                place,
                ends[place],
                item.depth,
                orjson.dumps(
                    tree_json_document(cluster, item, children=children[item.node.id], opens=True)
                ).decode(),
            )
            for place, item in enumerate(nodes)
        ]
        ListedNode.objects.filter(cluster=cluster).delete()
        columns = ["node_id", "cluster_id", "place", "last", "depth", "document"]
        rows_insert(ListedNode, columns, rows)
        cluster.listed_at = cluster.metrics_updated_at
        cluster.save(update_fields=["listed_at"])
        return True


def _create_by_level(levels: Sequence[Sequence[Node]]) -> None:
    """Parents first, level by level, so that each level's parents already have their ids."""
    parent = Node._meta.get_field("parent")
    for level in levels:
        for node in level:
            if parent.is_cached(node) and node.parent is not None:  # created in this store
                node.parent_id = node.parent.pk
        Node.objects.bulk_create(level, batch_size=2000)


def _nodes_update(nodes: Sequence[Node], fields: Sequence[str]) -> None:
    """Store `fields` of the nodes (the ones a change touched), all in one go."""
    if not nodes or not fields:
        return
    rows = [[node.pk, *(_db_value(getattr(node, name)) for name in fields)] for node in nodes]
    rows_update(Node, _columns(fields), rows)


def _update_rows(
    updates: list[tuple[int, tuple[Any, ...]]], places: list[int]
) -> list[tuple[Any, ...]]:
    """`(id, *values at places)` for each update; only choices and parents need converting."""
    if not places:
        return []
    columns = []
    for place in places:
        column = [values[place] for _, values in updates]
        if STORED_FIELDS[place] in ("parent", "kind", "origin"):
            column = [_db_value(value) for value in column]
        columns.append(column)
    return list(zip([pk for pk, _ in updates], *columns, strict=True))


def _columns(fields: Sequence[str]) -> list[str]:
    """The database columns of Node fields (`parent` is parent_id)."""
    by_name = {field.name: field.column for field in Node._meta.concrete_fields}
    return [by_name[name] for name in fields]


def _db_value(value: object) -> object:
    """A node attribute as the database takes it: a choice (an Enum) as its value, a node
    (a parent created in the same store) as its id."""
    if isinstance(value, Enum):
        return value.value
    return value.pk if isinstance(value, Node) else value


def _metric_rows(metrics: PbsMetrics) -> list[tuple[float, ...]]:
    """Each node's metrics as stored, in STORED_FIELDS order, by tree index (read out of
    numpy once: 100,000 nodes)."""
    return [
        (usage, group, perc, tree_usage, -1.0 if perc == 0 else usage / perc, factor)
        for usage, group, perc, tree_usage, factor in zip(
            metrics.usage.tolist(),
            metrics.group_percentage.tolist(),
            metrics.fairshare_perc.tolist(),
            metrics.fairshare_tree_usage.tolist(),
            metrics.fairshare_factors.tolist(),
            strict=True,
        )
    ]  # usage_perc as PbsMetrics.usage_perc computes it


def _differing(node: Node, values: Mapping[str, object]) -> set[str]:
    """The fields whose value in `values` is not the node's."""
    differing = set()
    for field, value in values.items():
        if field == "parent":
            parent = value if isinstance(value, Node) else None
            if node.parent_id != (parent.pk if parent is not None else None):
                differing.add(field)
        elif getattr(node, field) != value:
            differing.add(field)
    return differing


def _share_change(
    cluster: Cluster,
    node: Node | int | None,
    old: int | None,
    new: int | None,
    when: datetime,
    reason: str,
    user: User | None,
    name: str = "",
) -> ShareChange:
    """The audit row of a node's shares changing; `node` may be a stored node's id (then
    `name` names it) or None for a node removed."""
    change = ShareChange(
        cluster=cluster,
        node_name=node.name if isinstance(node, Node) else name,
        changed_by=user,
        changed_at=when,
        old_shares=old,
        new_shares=new,
        reason=reason,
    )
    if isinstance(node, Node):
        change.node = node
    else:
        change.node_id = node
    return change


@dataclass(frozen=True)
class SlurmImport:
    algorithm: Algorithm  # the cluster's, which a file of the other one does not change
    associations: int
    created: int
    updated: int
    removed: int
    share_changes: int
    cluster_created: bool = False


def slurm_tree_import(
    *,
    cluster_name: str,
    associations: Sequence[AssociationDef],
    source: str,
    algorithm: Algorithm | None = None,
    with_usage: bool = True,
    tres_names: Sequence[str] | None = None,
    grp_tres_mins: Mapping[tuple[str, str | None], str] | None = None,
    tres_run_mins: Mapping[tuple[str, str | None], str] | None = None,
    user: User | None = None,
) -> SlurmImport:
    """Make the cluster's associations those given (sshare output or a sacctmgr dump).

    `with_usage` false keeps the raw usage each association already has (a dump has none);
    `algorithm` is taken only by a new cluster, whose fairshare the file shows.
    """
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name, scheduler=Scheduler.SLURM)
        if created and algorithm is not None:
            cluster.fairshare_algorithm = algorithm.value
        if tres_names:
            cluster.slurm_tres = ",".join(tres_names)
        cluster.save(update_fields=["fairshare_algorithm", "slurm_tres"])
        if not with_usage:
            held = {a.key: a.usage for a in slurm_state_get(cluster=cluster).tree.records()}
            associations = [replace(a, usage=held.get(a.key, 0.0)) for a in associations]
        try:
            tree = SlurmTree.build(associations)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        summary = _slurm_store(
            cluster,
            tree,
            grp_tres_mins=grp_tres_mins or {},
            tres_run_mins=tres_run_mins or {},
            reason=f"imported {source}",
            user=user,
        )
    return replace(summary, cluster_created=created)


def slurm_associations_add(
    *, cluster: Cluster, associations: Sequence[AssociationDef], reason: str
) -> list[str]:
    """Add accounts and user associations the tree lacks, keeping everyone's raw usage.

    Returns the added associations as `account` or `account:user`.
    """
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        state = slurm_state_get(cluster=cluster)
        current = state.tree.records()
        held = {association.key for association in current}
        new = [a for a in dict.fromkeys(associations) if a.key not in held]
        if new:
            try:
                tree = SlurmTree.build([*current, *new])
            except ValueError as exc:
                raise ValidationError(str(exc)) from exc
            _slurm_store(
                cluster,
                tree,
                grp_tres_mins=state.grp_tres_mins,
                tres_run_mins=state.tres_run_mins,
                reason=reason,
            )
    return [f"{a.account}:{a.user}" if a.user is not None else a.account for a in new]


def slurm_usage_store(*, cluster: Cluster, state: SlurmState, reason: str) -> None:
    """Store the associations' raw usage as a pass left it, and every metric after it."""
    _slurm_store(
        cluster,
        state.tree,
        grp_tres_mins=state.grp_tres_mins,
        tres_run_mins=state.tres_run_mins,
        reason=reason,
    )


def _slurm_kind(tree: SlurmTree, node: int) -> str:
    if tree.is_user[node]:
        return NodeKind.USER
    return NodeKind.ORGANIZATION if tree.tree.depth[node] <= 1 else NodeKind.PROJECT


def slurm_numbers(cluster: Cluster, tree: SlurmTree) -> list[dict[str, Any]]:
    """The numbers slurmctld holds for each association after a pass, as nodes store them
    (index = tree node): usage, target share, FairShare, sshare's columns, Level FS, rank."""
    metrics = fair_tree_compute(
        tree, Algorithm(cluster.fairshare_algorithm), dampening=cluster.fairshare_dampening_factor
    )
    target, within = target_share(tree, metrics), level_share(tree, metrics)
    fair_tree = metrics.algorithm == Algorithm.FAIR_TREE
    numbers = []
    for index in range(len(tree)):
        lfs = float(metrics.level_fs[index])
        ranked = fair_tree and tree.is_user[index]
        factor = float(metrics.fairshare[index]) if ranked or not fair_tree else 0.0
        numbers.append(
            {
                "usage": float(tree.tree.usage[index]),
                "group_perc": float(within[index]),
                "fairshare_perc": float(target[index]),
                "fairshare_tree_usage": 0.0,
                "usage_perc": -1.0,
                "fairshare_factor": factor,
                "norm_shares": float(metrics.norm_shares[index]),
                "norm_usage": None if index == ROOT else float(metrics.norm_usage[index]),
                "effectv_usage": float(metrics.effectv_usage[index]),
                "level_fs": None if not fair_tree or lfs == NO_VAL else lfs,
                "fairshare_rank": int(metrics.rank[index]) if ranked else None,
                "fairshare_rank_of": metrics.user_count if ranked else None,
            }
        )
    return numbers


def _slurm_store(
    cluster: Cluster,
    tree: SlurmTree,
    *,
    grp_tres_mins: Mapping[tuple[str, str | None], str],
    tres_run_mins: Mapping[tuple[str, str | None], str],
    reason: str,
    user: User | None = None,
) -> SlurmImport:
    """Make the cluster's nodes the tree's associations, with every metric slurmctld holds."""
    numbers = slurm_numbers(cluster, tree)
    rows = Node.objects.filter(cluster=cluster)
    names = {row.pk: row.name for row in rows}
    existing: dict[tuple[str, str | None], Node] = {}
    for row in rows:
        up = names.get(row.parent_id) if row.parent_id is not None else None
        user_row = row.kind == NodeKind.USER
        existing[(up or "" if user_row else row.name, row.name if user_row else None)] = row
    had_tree = bool(existing)
    by_index: dict[int, Node] = {}
    to_create: list[list[Node]] = []
    to_update: list[Node] = []
    changed: set[str] = set()  # the fields of to_update that differ somewhere
    changes: list[ShareChange] = []
    now = timezone.now()
    for position, index in enumerate(tree.tree.preorder()):
        shares = tree.tree.shares[index]
        values = {
            "parent": by_index.get(tree.tree.parent[index]),
            "kind": _slurm_kind(tree, index),
            "origin": NodeOrigin.SCHEDULER if index == ROOT else NodeOrigin.DEFINED,
            "position": position,
            "shares": None if shares == USE_PARENT else shares,
            "shares_parent": shares == USE_PARENT,
            "cgroup_id": None,
            "usage_record": None,
            "usage_record_seq": None,
            **numbers[index],
            "grp_tres_mins": grp_tres_mins.get(tree.key(index), ""),
            "tres_run_mins": tres_run_mins.get(tree.key(index), ""),
        }
        key = tree.key(index)
        node = existing.pop(key) if key in existing else None
        if node is None:
            node = Node(cluster=cluster, name=tree.name(index), **values)
            depth = tree.tree.depth[index]
            to_create.extend([] for _ in range(depth + 1 - len(to_create)))
            to_create[depth].append(node)
            if had_tree and index != ROOT:
                changes.append(_share_change(cluster, node, None, node.shares, now, reason, user))
        else:
            old_shares, old_parent = node.shares, node.shares_parent
            differing = _differing(node, values)
            if differing:
                for field, value in values.items():
                    setattr(node, field, value)
                to_update.append(node)
                changed |= differing
            if (old_shares, old_parent) != (node.shares, node.shares_parent):
                changes.append(
                    _share_change(cluster, node, old_shares, node.shares, now, reason, user)
                )
        by_index[index] = node
    _create_by_level(to_create)
    _nodes_update(to_update, [name for name in _SLURM_FIELDS if name in changed])
    removed = list(existing.values())
    for node in removed:
        if node.parent_id is not None:
            change = _share_change(cluster, None, node.shares, None, now, reason, user, node.name)
            change.old_parent = names[node.parent_id]
            changes.append(change)
    Node.objects.filter(pk__in=[node.pk for node in removed]).delete()
    # FairShare=parent has no number: a change to or from it is audited as empty shares.
    changes = [c for c in changes if c.old_shares is not None or c.new_shares is not None]
    ShareChange.objects.bulk_create(changes, batch_size=2000)
    cluster.metrics_updated_at = now
    cluster.save(update_fields=["metrics_updated_at"])
    _listing_requested(cluster)
    return SlurmImport(
        algorithm=Algorithm(cluster.fairshare_algorithm),
        associations=len(tree) - 1,
        created=sum(len(level) for level in to_create),
        updated=len(to_update),
        removed=len(removed),
        share_changes=len(changes),
    )


def login_set(*, username: str, password: str, admin: bool = False) -> User:
    """A dashboard login with this password, made or updated; an admin is Django staff and
    superuser, anyone else neither. The password is taken as given (the demo prints it)."""
    with transaction.atomic():
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.is_staff = user.is_superuser = admin
        user.save()
    return user


def person_set(*, user: User, scheduler_user: str) -> Person:
    """Who `user` is to the schedulers: the user name their jobs run under."""
    person, _ = Person.objects.update_or_create(
        user=user, defaults={"scheduler_user": scheduler_user}
    )
    return person


def membership_set(*, user: User, node: Node, role: str) -> Membership:
    """`user` is a member or manager of `node` (once: a second call changes the role)."""
    if role not in Role.values:
        raise ValidationError({"role": f"{role!r} is not one of {', '.join(Role.values)}"})
    membership, _ = Membership.objects.update_or_create(
        user=user, node=node, defaults={"role": role}
    )
    return membership
