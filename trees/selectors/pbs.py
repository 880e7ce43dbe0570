"""A PBS cluster as pbsfs reads it: the policy, the resource groups, the usage database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from trees.bulk import collector_paused
from trees.engine.edit import tree_version
from trees.engine.pbs import TREEROOT, GroupDef, PbsTree, UsageRecord, resource_group_parent
from trees.engine.times import epoch_seconds
from trees.formats.pbsfs import PbsfsPolicy, UsageDatabase
from trees.formats.resource_group import format_resource_group
from trees.models import Cluster, NodeOrigin
from trees.selectors.nodes import StoredNode, stored_nodes_get


@dataclass(frozen=True)
class PbsState:
    """What pbsfs reads: the policy, the resource groups in file order, the usage database."""

    policy: PbsfsPolicy
    groups: list[GroupDef]
    database: UsageDatabase
    resource_group_messages: list[str]


def pbs_policy_get(cluster: Cluster) -> PbsfsPolicy:
    return PbsfsPolicy(
        fairshare_usage_res=cluster.fairshare_usage_res,
        decay_factor=cluster.decay_factor,
        unknown_shares=cluster.unknown_shares,
    )


def pbs_state_get(*, cluster: Cluster) -> PbsState:
    return pbs_state_of(cluster, stored_nodes_get(cluster=cluster))


@collector_paused()  # 100,000 nodes' objects made at once: see trees/bulk.py
def pbs_state_of(cluster: Cluster, nodes: Sequence[StoredNode]) -> PbsState:
    """The state of the cluster whose nodes are `nodes` as stored (a store reads them once)."""
    names = {node.id: node.name for node in nodes}
    groups: list[tuple[int, GroupDef]] = []
    records: list[tuple[int, UsageRecord]] = []
    for node in nodes:
        state = node.state
        if state.origin == NodeOrigin.DEFINED:
            above = names[node.parent_id] if node.parent_id is not None else TREEROOT
            parent = resource_group_parent(above)
            group = GroupDef(node.name, state.cgroup_id or 0, parent, state.shares or 0)
            groups.append((state.position, group))
        if state.usage_record is not None and state.usage_record_seq is not None:
            records.append((state.usage_record_seq, UsageRecord(node.name, state.usage_record)))
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
    )


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
