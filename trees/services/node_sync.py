"""The one store algorithm: make a cluster's stored nodes a desired tree, and audit it.

Every scheduler's store builds the tree it wants as NodeRow rows, parents first; nodes_sync
creates, updates and deletes nodes to match the stored ones (rows, not model instances: a
cycle stores every node of trees of 100,000) and returns what changed of the tree's entries,
which share_changes_of turns into audit rows.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trees.bulk import collector_paused, rows_update
from trees.engine.pbs import resource_group_parent
from trees.models import Cluster, Node, NodeKind, NodeOrigin, Scheduler, ShareChange
from trees.selectors.clusters import cluster_queue_get
from trees.selectors.nodes import (
    ACCELERATOR_COLUMNS,
    SLURM_COLUMNS,
    STATE_COLUMNS,
    AcceleratorValues,
    NodeState,
    SlurmValues,
    StoredNode,
    stored_nodes_get,
)
from trees.tasks import write_tree_json

NodeKey = Hashable  # what identifies a node from one store to the next (node_key)


class NodeRow(NamedTuple):
    """A node as a store wants it: its key, name and parent, and what it sets on it."""

    key: NodeKey
    name: str
    parent: NodeKey | None  # the parent's key; None for the root
    state: NodeState
    slurm: SlurmValues | None = None  # Slurm's associations only
    accelerator: AcceleratorValues | None = None  # Accelerator's FairShare groups only


def node_key(*, name: str, parent: str | None, kind: str, slurm: bool) -> NodeKey:
    """PBS: the name (unique in a tree, kept when the node moves); Slurm: `(account, None)`
    for an account, `(account, user)` for a user association (a user is in several)."""
    if not slurm:
        return name
    if kind == NodeKind.USER:
        return (parent or "", name)
    return (name, None)


@dataclass(frozen=True)
class NodeChange:
    """A change of one of the tree's entries (a node that an admin or a file defines)."""

    node: Node | int | None  # a created node, a stored node's id, None once removed
    name: str
    before: int | None  # shares; None: not an entry before (or FairShare=parent)
    after: int | None  # None: no longer an entry
    old_parent: str = ""  # set when it moved or was removed
    new_parent: str = ""  # set when it moved
    old_name: str = ""  # set when it was renamed


@dataclass
class NodesDiff:
    created: int = 0
    updated: int = 0
    removed: int = 0
    had_tree: bool = False  # the cluster had entries before: every entry change is audited
    stored_at: datetime = field(default_factory=timezone.now)
    changes: list[NodeChange] = field(default_factory=list)

    @property
    def entries_added(self) -> int:
        return sum(c.before is None and c.after is not None for c in self.changes)

    @property
    def entries_removed(self) -> int:
        return sum(c.before is not None and c.after is None for c in self.changes)

    @property
    def entries_changed(self) -> int:
        return sum(c.before is not None and c.after is not None for c in self.changes)


@contextmanager
def cluster_nodes_locked(cluster: Cluster) -> Iterator[tuple[Cluster, list[StoredNode]]]:
    """The cluster's row locked for the transaction, and its nodes as stored, read once: what
    a store's state comes from and what nodes_sync compares with.

    What is done on them makes objects for every node of trees of 100,000 (rows, groups,
    records, the engine's tree): the cyclic garbage collector is paused until it is done.
    """
    with collector_paused(), transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        yield cluster, stored_nodes_get(cluster=cluster)


def nodes_sync(
    cluster: Cluster,
    stored: Sequence[StoredNode],
    wanted: Iterable[NodeRow],
    *,
    renamed: Mapping[str, str] | None = None,
) -> NodesDiff:
    """Make the cluster's nodes `wanted` (parents first): the stored ones are matched by key
    (`renamed`: new name -> old name of the nodes an edit renames, which keep their rows) and
    updated, the others created or deleted. Stamps the cluster's metrics as stored and has its
    tree.json rows rewritten once the transaction commits.

    `stored` is every node of the cluster as read under the cluster's lock, in the same
    transaction: the caller read its state from them. A node new or moved (or below one)
    deeper than MAX_TREE_DEPTH is refused (ValidationError naming the entry) before anything is
    written; what was stored deeper before the limit was lowered stays as it is.
    """
    slurm = cluster.scheduler == Scheduler.SLURM
    deepest = settings.MAX_TREE_DEPTH
    new_name = {old: new for new, old in (renamed or {}).items()}
    names = {node.id: new_name.get(node.name, node.name) for node in stored}
    existing: dict[NodeKey, StoredNode] = {}  # what is left in it at the end is removed
    for node in stored:
        above = names[node.parent_id] if node.parent_id is not None else None
        key = node_key(name=names[node.id], parent=above, kind=node.state.kind, slurm=slurm)
        existing[key] = node
    diff = NodesDiff(had_tree=any(node.state.origin == NodeOrigin.DEFINED for node in stored))
    placed: dict[NodeKey, Node | int] = {}  # a stored node's id, or the node to create
    parent_names: dict[NodeKey, str] = {}
    depth: dict[NodeKey | None, int] = {None: -1}
    # Nodes new or moved, or below one: a tree stored before MAX_TREE_DEPTH was lowered keeps
    # its cycles, and no store puts a node deeper than it.
    placed_anew: dict[NodeKey | None, bool] = {None: False}
    to_create: list[list[Node]] = []
    updates: list[tuple[object, ...]] = []  # (node id, its parent, its values)
    changed: set[int] = set()  # the places in the values that differ in some update
    defined = NodeOrigin.DEFINED.value
    for row in wanted:
        level = depth[row.key] = depth[row.parent] + 1
        parent_names[row.key] = row.name
        parent = placed[row.parent] if row.parent is not None else None
        after = row.state.shares if row.state.origin == defined else None
        stored_node = existing.pop(row.key, None)
        anew = placed_anew[row.key] = placed_anew[row.parent] or (
            stored_node is None or parent != stored_node.parent_id
        )
        if level > deepest and anew:
            raise ValidationError(
                f"entry {row.name} is {level} levels below the root, deeper than"
                f" MAX_TREE_DEPTH ({deepest}) allows"
            )
        if stored_node is None:
            created = _node(cluster, row, parent)
            to_create.extend([] for _ in range(level + 1 - len(to_create)))
            to_create[level].append(created)
            placed[row.key] = created
            if after is not None:
                diff.changes.append(NodeChange(created, row.name, None, after))
            continue
        placed[row.key] = stored_node.id
        values = (parent, *row.state, *(row.slurm or ()), *(row.accelerator or ()))
        old = (
            stored_node.parent_id,
            *stored_node.state,
            *(stored_node.slurm or ()),
            *(stored_node.accelerator or ()),
        )
        if values != old:
            updates.append((stored_node.id, *values))
            changed.update(place for place, value in enumerate(values) if value != old[place])
        # Leaving the tree while keeping usage (PBS moves it under unknown) is a removal.
        was_entry = stored_node.state.origin == defined
        before = stored_node.state.shares if was_entry else None
        old_parent = _parent_name(names, stored_node.parent_id)
        new_parent = resource_group_parent(parent_names.get(row.parent, "")) if row.parent else ""
        moved = was_entry and after is not None and old_parent != new_parent
        old_name = (renamed or {}).get(row.name, "") if was_entry else ""
        if before != after or moved or old_name:
            diff.changes.append(
                NodeChange(
                    stored_node.id,
                    row.name,
                    before,
                    after,
                    old_parent=old_parent if moved or after is None else "",
                    new_parent=new_parent if moved else "",
                    old_name=old_name,
                )
            )
    # Renamed first, so that a created node may take a name a renamed one leaves.
    _names_write([(node.id, new_name[node.name]) for node in stored if node.name in new_name])
    _create_by_level(to_create)
    _updates_write(updates, sorted(changed), scheduler=cluster.scheduler)
    removed = list(existing.values())
    for node in removed:
        shares = node.state.shares
        if node.state.origin == defined and shares is not None:
            above = _parent_name(names, node.parent_id)
            diff.changes.append(NodeChange(None, node.name, shares, None, old_parent=above))
    Node.objects.filter(pk__in=[node.id for node in removed]).delete()
    diff.created = sum(len(level) for level in to_create)
    diff.updated, diff.removed = len(updates), len(removed)
    cluster.metrics_updated_at = diff.stored_at
    cluster.save(update_fields=["metrics_updated_at"])
    tree_json_requested(cluster)
    return diff


def tree_json_requested(cluster: Cluster) -> None:
    """Once the store commits, have the cluster's tree.json rows written (the task
    write_tree_json: in a worker with a broker, so that a cycle does not wait for it; at once
    without one), on the cluster's queue as its cycles (CYCLE_QUEUES). If it cannot be queued,
    readers get answers built from the nodes until the next store's."""
    cluster_id, queue = cluster.pk, cluster_queue_get(cluster=cluster)
    transaction.on_commit(
        lambda: write_tree_json.apply_async(args=[cluster_id], queue=queue), robust=True
    )


def _parent_name(names: Mapping[int, str], parent_id: int | None) -> str:
    """A stored node's parent as resource_group names it; "" for the root's."""
    return "" if parent_id is None else resource_group_parent(names[parent_id])


def share_changes_write(
    cluster: Cluster, diff: NodesDiff, *, reason: str, user: User | None, when: datetime
) -> list[ShareChange]:
    """The audit rows of a store's changes to the tree's entries, written: once the cluster
    has entries, every change; a first tree's entries are its start, not changes."""
    changes = [
        _share_change(cluster, change, reason=reason, user=user, when=when)
        for change in diff.changes
        if diff.had_tree or change.before is not None
    ]
    ShareChange.objects.bulk_create(changes, batch_size=2000)
    return changes


def _share_change(
    cluster: Cluster, change: NodeChange, *, reason: str, user: User | None, when: datetime
) -> ShareChange:
    audit = ShareChange(
        cluster=cluster,
        node_name=change.name,
        changed_by=user,
        changed_at=when,
        old_shares=change.before,
        new_shares=change.after,
        reason=reason,
        old_name=change.old_name,
        old_parent=change.old_parent,
        new_parent=change.new_parent,
    )
    if isinstance(change.node, Node):
        audit.node = change.node
    else:
        audit.node_id = change.node
    return audit


def _node(cluster: Cluster, row: NodeRow, parent: Node | int | None) -> Node:
    node = Node(cluster=cluster, name=row.name, **row.state._asdict())
    for values in (row.slurm, row.accelerator):
        if values is not None:
            for name, value in values._asdict().items():
                setattr(node, name, value)
    if isinstance(parent, Node):
        node.parent = parent
    else:
        node.parent_id = parent
    return node


def _create_by_level(levels: Sequence[Sequence[Node]]) -> None:
    """Parents first, level by level, so that each level's parents already have their ids."""
    parent = Node._meta.get_field("parent")
    for level in levels:
        for node in level:
            if parent.is_cached(node) and node.parent is not None:  # created in this store
                node.parent_id = node.parent.pk
        Node.objects.bulk_create(level, batch_size=2000)


def _names_write(renames: Sequence[tuple[int, str]]) -> None:
    """Give stored nodes their new names, through names no entry can have, so that two nodes
    may swap names."""
    for pk, _ in renames:
        Node.objects.filter(pk=pk).update(name=f" renaming {pk}")
    for pk, name in renames:
        Node.objects.filter(pk=pk).update(name=name)


def _updates_write(
    updates: Sequence[tuple[object, ...]], places: list[int], *, scheduler: str
) -> None:
    """Store the values at `places` (0: the parent) of the updated nodes, in one go."""
    if not updates or not places:
        return
    extra = {Scheduler.SLURM: SLURM_COLUMNS, Scheduler.ACCELERATOR: ACCELERATOR_COLUMNS}
    names = ("parent", *STATE_COLUMNS, *extra.get(Scheduler(scheduler), ()))
    by_name = {field.name: field.column for field in Node._meta.concrete_fields}
    columns = [by_name[names[place]] for place in places]
    converted = {place for place in places if names[place] in ("parent", "kind", "origin")}
    rows = [
        (
            update[0],
            *(_db_value(update[1 + p]) if p in converted else update[1 + p] for p in places),
        )
        for update in updates
    ]
    rows_update(Node, columns, rows)


def _db_value(value: object) -> object:
    """A node's value as the database takes it: a choice (an Enum) as its value, a node (a
    parent created in the same store) as its id."""
    if isinstance(value, Enum):
        return value.value
    return value.pk if isinstance(value, Node) else value
