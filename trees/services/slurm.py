"""A Slurm cluster's associations: imported from sshare or a sacctmgr dump, added as jobs name
them, stored with every number slurmctld holds after a pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from trees.engine.slurm import (
    NO_VAL,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    SlurmTree,
    level_share,
    target_share,
)
from trees.engine.slurm import compute as fair_tree_compute
from trees.engine.tree import ROOT
from trees.models import Cluster, NodeKind, NodeOrigin, Scheduler, SlurmTreeSource
from trees.selectors.nodes import NodeState, SlurmValues, StoredNode
from trees.selectors.slurm import SlurmState, slurm_state_of
from trees.services.clusters import cluster_get_or_create
from trees.services.node_sync import (
    NodeRow,
    cluster_nodes_locked,
    node_key,
    nodes_sync,
    share_changes_write,
)

TresText = Mapping[tuple[str, str | None], str]  # by association key, as sshare shows it


@dataclass(frozen=True)
class SlurmImport:
    algorithm: Algorithm  # the cluster's, which a file of the other one does not change
    associations: int
    created: int
    updated: int
    removed: int
    share_changes: int
    cluster_created: bool = False


@dataclass(frozen=True)
class SlurmHeld:
    """A Slurm cluster locked in a transaction, with its state and its nodes as stored."""

    cluster: Cluster
    state: SlurmState
    nodes: list[StoredNode]

    def store(
        self,
        *,
        reason: str,
        tree: SlurmTree | None = None,
        grp_tres_mins: TresText | None = None,
        tres_run_mins: TresText | None = None,
        user: User | None = None,
    ) -> SlurmImport:
        """Make the cluster's nodes the tree's associations (by default the state's, with the
        raw usage a pass left in it), with every number slurmctld holds, and audit them."""
        state = self.state
        return slurm_store(
            self.cluster,
            self.nodes,
            state.tree if tree is None else tree,
            grp_tres_mins=state.grp_tres_mins if grp_tres_mins is None else grp_tres_mins,
            tres_run_mins=state.tres_run_mins if tres_run_mins is None else tres_run_mins,
            reason=reason,
            user=user,
        )


@contextmanager
def slurm_tree_held(cluster: Cluster) -> Iterator[SlurmHeld]:
    """The cluster's row locked for the transaction, and its associations read (nodes once)."""
    with cluster_nodes_locked(cluster) as (locked, nodes):
        yield SlurmHeld(locked, slurm_state_of(locked, nodes), nodes)


def slurm_tree_import(
    *,
    cluster_name: str,
    associations: Sequence[AssociationDef],
    source: str,
    algorithm: Algorithm | None = None,
    with_usage: bool = True,
    tres_names: Sequence[str] | None = None,
    grp_tres_mins: TresText | None = None,
    tres_run_mins: TresText | None = None,
    user: User | None = None,
) -> SlurmImport:
    """Make the cluster's associations those given (sshare output or a sacctmgr dump).

    `with_usage` false (a dump) keeps the raw usage each association already has and takes
    the associations' Priority from the file; true (sshare, which has no Priority) keeps the
    Priority each association already has. `algorithm` is taken only by a new cluster, whose
    fairshare the file shows.
    """
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name, scheduler=Scheduler.SLURM)
        if created and algorithm is not None:
            cluster.fairshare_algorithm = algorithm.value
        if tres_names:
            cluster.slurm_tres = ",".join(tres_names)
        cluster.slurm_tree_source = (
            SlurmTreeSource.SSHARE if with_usage else SlurmTreeSource.SACCTMGR_DUMP
        )
        cluster.save(update_fields=["fairshare_algorithm", "slurm_tres", "slurm_tree_source"])
        with slurm_tree_held(cluster) as held:
            kept = {a.key: a for a in held.state.tree.records()}
            if with_usage:
                associations = [
                    replace(a, priority=kept[a.key].priority) if a.key in kept else a
                    for a in associations
                ]
            else:
                associations = [
                    replace(a, usage=kept[a.key].usage if a.key in kept else 0.0)
                    for a in associations
                ]
            summary = held.store(
                tree=_tree_built(associations),
                grp_tres_mins=grp_tres_mins or {},
                tres_run_mins=tres_run_mins or {},
                reason=f"imported {source}",
                user=user,
            )
    return replace(summary, cluster_created=created)


@dataclass(frozen=True)
class SlurmUsageImport:
    """What an sshare file gave a tree that a sacctmgr dump made: the raw usage only."""

    summary: SlurmImport
    not_in_tree: list[str]  # `account` or `account:user` the file has and the tree lacks
    not_in_file: list[str]  # the tree's associations the file does not list
    shares_differ: list[str]  # `account:user: the dump's N, the file's M`


def slurm_usage_import(
    *,
    cluster: Cluster,
    associations: Sequence[AssociationDef],
    source: str,
    tres_names: Sequence[str] | None = None,
    grp_tres_mins: TresText | None = None,
    tres_run_mins: TresText | None = None,
    user: User | None = None,
) -> SlurmUsageImport:
    """The raw usage (and sshare's TRES columns) of the associations the tree has, the tree,
    its shares and Priority left as the dump made them: sshare after `sacctmgr dump`."""
    with transaction.atomic(), slurm_tree_held(cluster) as held:
        if tres_names:
            held.cluster.slurm_tres = ",".join(tres_names)
            held.cluster.save(update_fields=["slurm_tres"])
        given = {a.key: a for a in associations}
        tree = held.state.tree
        records = tree.records()
        known = {record.key for record in records}
        differ = [
            f"{_label(a.key)}: the dump's {_shares_text(record.shares)}, the file's"
            f" {_shares_text(a.shares)}"
            for record in records
            if (a := given.get(record.key)) is not None and a.shares != record.shares
        ]
        updated = [
            replace(record, usage=given[record.key].usage) if record.key in given else record
            for record in records
        ]
        summary = held.store(
            tree=_tree_built(updated),
            grp_tres_mins={**held.state.grp_tres_mins, **(grp_tres_mins or {})},
            tres_run_mins=dict(tres_run_mins or {}),
            reason=f"usage imported from {source}",
            user=user,
        )
    return SlurmUsageImport(
        summary=summary,
        not_in_tree=[_label(key) for key in given if key not in known],
        not_in_file=[_label(r.key) for r in records if r.key not in given],
        shares_differ=differ,
    )


def _label(key: tuple[str, str | None]) -> str:
    account, user = key
    return account if user is None else f"{account}:{user}"


def _shares_text(shares: int) -> str:
    return "parent" if shares == USE_PARENT else str(shares)


def slurm_associations_add(
    *, cluster: Cluster, associations: Sequence[AssociationDef], reason: str
) -> list[str]:
    """Add accounts and user associations the tree lacks, keeping everyone's raw usage.

    Returns the added associations as `account` or `account:user`.
    """
    with slurm_tree_held(cluster) as held:
        current = held.state.tree.records()
        known = {association.key for association in current}
        new = [a for a in dict.fromkeys(associations) if a.key not in known]
        if new:
            held.store(tree=_tree_built([*current, *new]), reason=reason)
    return [f"{a.account}:{a.user}" if a.user is not None else a.account for a in new]


def _tree_built(associations: Sequence[AssociationDef]) -> SlurmTree:
    try:
        return SlurmTree.build(associations)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


def slurm_store(
    cluster: Cluster,
    nodes: Sequence[StoredNode],
    tree: SlurmTree,
    *,
    grp_tres_mins: TresText,
    tres_run_mins: TresText,
    reason: str,
    user: User | None = None,
) -> SlurmImport:
    """Make the cluster's nodes the tree's associations, with every number slurmctld holds.

    `nodes` are the cluster's nodes as read under the same lock (slurm_tree_held).
    """
    rows = slurm_rows(cluster, tree, grp_tres_mins=grp_tres_mins, tres_run_mins=tres_run_mins)
    diff = nodes_sync(cluster, nodes, rows)
    changes = share_changes_write(cluster, diff, reason=reason, user=user, when=diff.stored_at)
    return SlurmImport(
        algorithm=Algorithm(cluster.fairshare_algorithm),
        associations=len(tree) - 1,
        created=diff.created,
        updated=diff.updated,
        removed=diff.removed,
        share_changes=len(changes),
    )


def slurm_rows(
    cluster: Cluster, tree: SlurmTree, *, grp_tres_mins: TresText, tres_run_mins: TresText
) -> Iterator[NodeRow]:
    """Every association as stored, with the numbers slurmctld holds after a pass (usage,
    target share, FairShare, sshare's columns, Level FS, rank), in sshare's order."""
    metrics = fair_tree_compute(
        tree, Algorithm(cluster.fairshare_algorithm), dampening=cluster.fairshare_dampening_factor
    )
    target, within = target_share(tree, metrics), level_share(tree, metrics)
    priorities = tree.effective_priorities()
    fair_tree = metrics.algorithm == Algorithm.FAIR_TREE
    keys: dict[int, object] = {}
    for position, index in enumerate(tree.tree.preorder()):
        kind = _kind(tree, index)
        parent = tree.tree.parent[index]
        key = keys[index] = node_key(
            name=tree.name(index),
            parent=None if index == ROOT else tree.name(parent),
            kind=kind,
            slurm=True,
        )
        shares = tree.tree.shares[index]
        lfs = float(metrics.level_fs[index])
        ranked = fair_tree and tree.is_user[index]
        state = NodeState(
            kind=kind,
            origin=NodeOrigin.SCHEDULER if index == ROOT else NodeOrigin.DEFINED,
            position=position,
            shares=None if shares == USE_PARENT else shares,
            cgroup_id=None,
            usage_record=None,
            usage_record_seq=None,
            usage=float(tree.tree.usage[index]),
            group_perc=float(within[index]),
            fairshare_perc=float(target[index]),
            fairshare_tree_usage=0.0,  # PBS's numbers: none on Slurm
            usage_perc=-1.0,
            fairshare_factor=float(metrics.fairshare[index]) if ranked or not fair_tree else 0.0,
        )
        yield NodeRow(
            key,
            tree.name(index),
            None if index == ROOT else keys[parent],
            state,
            SlurmValues(
                shares_parent=shares == USE_PARENT,
                norm_shares=float(metrics.norm_shares[index]),
                norm_usage=None if index == ROOT else float(metrics.norm_usage[index]),
                effectv_usage=float(metrics.effectv_usage[index]),
                level_fs=None if not fair_tree or lfs == NO_VAL else lfs,
                fairshare_rank=int(metrics.rank[index]) if ranked else None,
                fairshare_rank_of=metrics.user_count if ranked else None,
                grp_tres_mins=grp_tres_mins.get(tree.key(index), ""),
                tres_run_mins=tres_run_mins.get(tree.key(index), ""),
                assoc_priority=tree.priorities[index],
                assoc_priority_effective=priorities[index],
            ),
        )


def _kind(tree: SlurmTree, node: int) -> str:
    if tree.is_user[node]:
        return NodeKind.USER
    return NodeKind.ORGANIZATION if tree.tree.depth[node] <= 1 else NodeKind.PROJECT
