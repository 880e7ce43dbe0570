"""Every PBS write ends here: the tree rebuilt exactly as pbsfs would read it (the resource
groups, then the usage records in file order), stored with its metrics in the same transaction,
so that the read side is never stale."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.contrib.auth.models import User

from trees.engine.pbs import GroupDef, PbsMetrics, PbsTree, compute
from trees.engine.times import from_epoch_seconds
from trees.engine.tree import ROOT
from trees.formats.pbsfs import UsageDatabase
from trees.models import Cluster, FairshareEntity, NodeKind, NodeOrigin
from trees.selectors.nodes import NodeState, StoredNode
from trees.selectors.pbs import PbsState, pbs_state_of, pbs_tree_of
from trees.services.node_sync import (
    NodeRow,
    cluster_nodes_locked,
    nodes_sync,
    share_changes_write,
)


@dataclass(frozen=True)
class StoreSummary:
    nodes: int
    created: int
    updated: int
    removed: int
    share_changes: int
    unknown_entities: int
    cluster_created: bool = False
    # The tree's entries added, removed (usage kept under unknown or not), and re-shared,
    # moved or renamed: once the cluster has a tree, as many as the audit rows of each kind.
    entries_added: int = 0
    entries_removed: int = 0
    entries_changed: int = 0


@dataclass(frozen=True)
class PbsHeld:
    """A PBS cluster locked in a transaction, with its state and its nodes as stored."""

    cluster: Cluster
    state: PbsState
    nodes: list[StoredNode]

    def store(
        self,
        *,
        reason: str,
        groups: Sequence[GroupDef] | None = None,
        database: UsageDatabase | None = None,
        user: User | None = None,
        renamed: Mapping[str, str] | None = None,
    ) -> StoreSummary:
        """Make the cluster's tree the one pbsfs reads from these entries and usage database
        (by default the state's), with every metric, and audit its entries' changes."""
        return pbs_store(
            self.cluster,
            self.nodes,
            groups=self.state.groups if groups is None else groups,
            database=self.state.database if database is None else database,
            reason=reason,
            user=user,
            renamed=renamed,
        )


@contextmanager
def pbs_tree_held(cluster: Cluster) -> Iterator[PbsHeld]:
    """The cluster's row locked for the transaction, and its PBS state read (nodes once)."""
    with cluster_nodes_locked(cluster) as (locked, nodes):
        yield PbsHeld(locked, pbs_state_of(locked, nodes), nodes)


def pbs_store(
    cluster: Cluster,
    nodes: Sequence[StoredNode],
    *,
    groups: Sequence[GroupDef],
    database: UsageDatabase,
    reason: str,
    user: User | None = None,
    renamed: Mapping[str, str] | None = None,
) -> StoreSummary:
    """Make the cluster's nodes, usage and metrics those of the PBS tree built from the inputs.

    `nodes` are the cluster's nodes as read with the state the inputs come from, under the
    same lock (pbs_tree_held); `renamed` maps new names to old of the entries an edit renames.
    """
    pbs = pbs_tree_of(cluster, groups, database)
    rows = pbs_rows(cluster, pbs, compute(pbs), groups, database)
    diff = nodes_sync(cluster, nodes, rows, renamed=renamed)
    changes = share_changes_write(cluster, diff, reason=reason, user=user, when=diff.stored_at)
    cluster.last_decay = from_epoch_seconds(database.last_decay)
    cluster.has_usage_database = database.exists
    cluster.save(update_fields=["last_decay", "has_usage_database"])
    return StoreSummary(
        nodes=len(pbs),
        created=diff.created,
        updated=diff.updated,
        removed=diff.removed,
        share_changes=len(changes),
        unknown_entities=len(pbs.unknown_entities()),
        entries_added=diff.entries_added,
        entries_removed=diff.entries_removed,
        entries_changed=diff.entries_changed,
    )


def pbs_rows(
    cluster: Cluster,
    pbs: PbsTree,
    metrics: PbsMetrics,
    groups: Sequence[GroupDef],
    database: UsageDatabase,
) -> Iterator[NodeRow]:
    """Every node of the tree pbsfs reads, as stored, parents first."""
    position = {group.name: index for index, group in enumerate(groups, start=1)}
    # (place in the database, value); a name's last record is the one PBS keeps.
    records = {record.name: (seq, record.usage) for seq, record in enumerate(database.records)}
    leaf_kind = _leaf_kind(cluster)
    scheduler_made = (ROOT, pbs.unknown)
    # Read out of numpy once: 100,000 nodes.
    usage, group_perc, perc, tree_usage, factor = (
        metrics.usage.tolist(),
        metrics.group_percentage.tolist(),
        metrics.fairshare_perc.tolist(),
        metrics.fairshare_tree_usage.tolist(),
        metrics.fairshare_factors.tolist(),
    )
    for index in pbs.preorder():
        name = pbs.name(index)
        if index in scheduler_made:
            origin = NodeOrigin.SCHEDULER
        elif name in position:
            origin = NodeOrigin.DEFINED
        else:
            origin = NodeOrigin.USAGE
        seq, record = records.get(name, (None, None))
        parent = pbs.tree.parent[index]
        state = NodeState(
            _kind(pbs, index, leaf_kind),
            origin,
            position.get(name, seq or 0),
            None if index == ROOT else pbs.shares(index),
            pbs.cresgroup[index],
            record,
            seq,
            usage[index],
            group_perc[index],
            perc[index],
            tree_usage[index],
            # usage/perc as PbsMetrics.usage_perc computes it
            -1.0 if perc[index] == 0 else usage[index] / perc[index],
            factor[index],
        )
        yield NodeRow(name, name, None if index == ROOT else pbs.name(parent), state)


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
