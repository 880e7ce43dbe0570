"""What an admin's edit or a resource_group file would do to a PBS tree, computed in memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
from trees.engine.pbs import GroupDef
from trees.models import Cluster, Membership, Node, NodeOrigin
from trees.selectors.pbs import PbsState, pbs_state_get, pbs_tree_of


def pbs_edit_applied(state: PbsState, edits: Sequence[ChildEdit]) -> EditedTree:
    """An admin's edit applied to the stored entries; the entities with usage are the names a
    rename may not take."""
    usage_names = {record.name for record in state.database.records}
    return edit_tree(state.groups, edits, usage_names=usage_names)


@dataclass(frozen=True)
class TreeEditPreview:
    """What an edit would do, computed in memory from the stored tree: nothing is saved."""

    version: str  # of the entries the edit was applied to
    edited: EditedTree
    changes: list[StandingChange]  # empty when the edit has problems
    memberships_removed: int  # people's memberships of the nodes the edit removes


def defined_children_count_get(*, node: Node) -> int:
    """How many children the tree defines under the node: the rows its edit form would have."""
    return node.children.filter(origin=NodeOrigin.DEFINED).count()


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
