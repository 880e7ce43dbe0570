"""A Slurm cluster's associations as slurmctld holds them, and what sshare prints for them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trees.bulk import collector_paused
from trees.engine.slurm import USE_PARENT, Algorithm, AssociationDef, SlurmTree, compute
from trees.formats.sshare import columns_for, format_sshare, sshare_rows
from trees.models import Cluster, Node, NodeKind, SlurmTreeSource
from trees.selectors.nodes import SlurmValues, StoredNode, stored_nodes_get


@dataclass(frozen=True)
class SlurmState:
    """A Slurm cluster's associations as the engine takes them, with the TRES text sshare shows."""

    tree: SlurmTree
    grp_tres_mins: dict[tuple[str, str | None], str]
    tres_run_mins: dict[tuple[str, str | None], str]
    tres_names: list[str]


def slurm_tree_of_dump_get(*, cluster_name: str) -> Cluster | None:
    """The Slurm cluster of that name if a sacctmgr dump made its tree: sshare then brings
    only its usage (the dump's tree, shares and association priorities stay)."""
    return Cluster.objects.filter(
        name=cluster_name, slurm_tree_source=SlurmTreeSource.SACCTMGR_DUMP
    ).first()


def slurm_state_get(*, cluster: Cluster) -> SlurmState:
    return slurm_state_of(cluster, stored_nodes_get(cluster=cluster))


def slurm_associations_of(nodes: Sequence[StoredNode]) -> list[AssociationDef]:
    """The associations of a Slurm cluster's stored nodes, in the nodes' order."""
    names = {node.id: node.name for node in nodes}
    associations = []
    for node in nodes:
        slurm = node.slurm or SlurmValues()
        parent = names[node.parent_id] if node.parent_id is not None else None
        is_user = node.state.kind == NodeKind.USER
        shares = 1 if node.state.shares is None else node.state.shares
        associations.append(
            AssociationDef(
                account=parent if is_user and parent is not None else node.name,
                parent=parent,
                user=node.name if is_user else None,
                shares=USE_PARENT if slurm.shares_parent else shares,
                usage=node.state.usage,
                priority=slurm.assoc_priority,
            )
        )
    return associations


@collector_paused()  # 100,000 nodes' objects made at once: see trees/bulk.py
def slurm_state_of(cluster: Cluster, nodes: Sequence[StoredNode]) -> SlurmState:
    """The state of the cluster whose nodes are `nodes` as stored (a store reads them once)."""
    associations = slurm_associations_of(nodes)
    grp: dict[tuple[str, str | None], str] = {}
    run: dict[tuple[str, str | None], str] = {}
    for node, association in zip(nodes, associations, strict=True):
        slurm = node.slurm or SlurmValues()
        if slurm.grp_tres_mins:
            grp[association.key] = slurm.grp_tres_mins
        if slurm.tres_run_mins:
            run[association.key] = slurm.tres_run_mins
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
