"""An admin's edit of a PBS tree, pure: changes to one node's children applied to the
resource_group entries, checked as PBS and the dashboard require, and their effect on every
node's standing computed in memory (the what-if preview).

Usage stays with entity names, as in PBS's usage database: an entity that leaves the tree keeps
its usage under `unknown`, and a new entry named like an entity under `unknown` takes its usage.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from trees.engine.pbs import (
    INT_MAX,
    ROOT_ALIAS,
    TREEROOT,
    UNKNOWN,
    UNKNOWN_CGROUP,
    USAGE_NAME_MAX,
    GroupDef,
    PbsTree,
    compute,
    definition_order,
)
from trees.engine.tree import ROOT

RESERVED_NAMES = (TREEROOT, UNKNOWN, ROOT_ALIAS)
# A resource_group entry is split on spaces and tabs; PBS's usage database takes these names.
_ENTRY_NAME = re.compile(r"[A-Za-z0-9._:\-]+")
WHOLE_EDIT = -1  # the row of a problem with the edit as a whole


@dataclass(frozen=True)
class ChildEdit:
    """One row of the edit: an existing entry (`original`, its name now) or a new one ("")."""

    original: str
    name: str
    parent: str  # `root` for TREEROOT
    shares: int
    remove: bool = False


@dataclass(frozen=True)
class EditProblem:
    row: int  # the edit's index in the rows, or WHOLE_EDIT
    field: str
    message: str


@dataclass(frozen=True)
class EditedTree:
    """The entries after the edit, in definition order, and what the edit did by name."""

    groups: list[GroupDef]
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # new name -> (from, to)
    removed: list[str] = field(default_factory=list)  # the rows removed and their subtrees
    added: list[str] = field(default_factory=list)
    problems: list[EditProblem] = field(default_factory=list)


def tree_version(groups: Iterable[GroupDef]) -> str:
    """A fingerprint of the resource_group entries: an edit made on one version is refused on
    another, so that two admins never overwrite each other unawares."""
    digest = hashlib.sha256()
    for group in groups:
        digest.update(f"{group.name}\t{group.cgroup}\t{group.parent}\t{group.shares}\n".encode())
    return digest.hexdigest()[:32]


def name_problem(name: str) -> str:
    """Why a name cannot be a resource_group entry; "" when it can."""
    if not name:
        return "a name is required"
    if name in RESERVED_NAMES:
        return f"{name!r} is reserved by PBS"
    if _ENTRY_NAME.fullmatch(name) is None:
        return "use only letters, digits and . _ : - (resource_group splits names on spaces)"
    if len(name) >= USAGE_NAME_MAX:
        return f"PBS keeps names of at most {USAGE_NAME_MAX - 1} characters"
    return ""


def edit_tree(
    groups: Sequence[GroupDef], edits: Sequence[ChildEdit], *, usage_names: Collection[str] = ()
) -> EditedTree:
    """The entries with the edits applied, or the problems that keep them from applying.

    A removed entry takes its subtree with it. `usage_names` are the entities with usage in
    the database: renaming an entry to one that is not in the tree would merge two entities'
    usage, so it is refused (adding it as a new entry gives that entity its place instead).
    """
    by_name = {group.name: group for group in groups}
    problems: list[EditProblem] = []
    rows: dict[str, ChildEdit] = {}  # original name -> its row
    unnamed: set[int] = set()  # rows whose name cannot be, left out of the checks that use it
    for row, edit in enumerate(edits):
        if edit.original:
            if edit.original not in by_name:
                problems.append(
                    EditProblem(row, "name", f"{edit.original} is no longer in the tree")
                )
            elif edit.original in rows:
                problems.append(EditProblem(row, "name", f"{edit.original} is edited twice"))
            else:
                rows[edit.original] = edit
        if not edit.remove:
            if problem := name_problem(edit.name):
                problems.append(EditProblem(row, "name", problem))
                unnamed.add(row)
            if not 0 <= edit.shares <= INT_MAX:
                problems.append(EditProblem(row, "shares", f"shares must be from 0 to {INT_MAX:,}"))
    removed = _subtrees(groups, {name for name, edit in rows.items() if edit.remove})
    renamed = {
        name: edit.name for name, edit in rows.items() if not edit.remove and edit.name != name
    }

    def final(name: str) -> str:
        return renamed.get(name, name)

    # The rows that apply: new entries, and each existing entry's one row, unless removed.
    live = [
        (row, edit)
        for row, edit in enumerate(edits)
        if not edit.remove
        and row not in unnamed
        and (not edit.original or rows.get(edit.original) is edit)
    ]
    taken: dict[str, int] = {}  # every name after the edit -> its row (WHOLE_EDIT: unedited)
    for group in groups:
        if group.name not in removed and group.name not in rows:
            taken[group.name] = WHOLE_EDIT
    for row, edit in live:
        owner = taken.setdefault(edit.name, row)
        if owner != row:
            whose = "another row's" if owner != WHOLE_EDIT else "another entry's"
            problems.append(
                EditProblem(row, "name", f"{edit.name} is {whose} name (PBS names are unique)")
            )
        elif edit.original and edit.name != edit.original and edit.name in usage_names:
            problems.append(
                EditProblem(
                    row,
                    "name",
                    f"{edit.name} is an entity with usage under unknown: renaming to it would"
                    " merge two entities' usage; add it as a new entry instead",
                )
            )

    parents: dict[str, str] = {}  # final name -> final parent name, after the edit
    for group in groups:
        if group.name not in removed:
            parents[final(group.name)] = final(group.parent)
    for row, edit in live:
        given = edit.parent.strip()
        parent = final(given)
        if parent in (TREEROOT, UNKNOWN):
            problems.append(
                EditProblem(row, "parent", f"use `{ROOT_ALIAS}` for the top; {parent} is PBS's own")
            )
        elif parent != ROOT_ALIAS and parent not in parents:
            why = "is being removed" if given in removed else "is not in the tree"
            problems.append(EditProblem(row, "parent", f"{given or '(empty)'} {why}"))
        else:
            parents[edit.name] = parent
    for row, edit in live:
        ancestor = parents.get(edit.name, ROOT_ALIAS)
        seen = {edit.name}
        while ancestor != ROOT_ALIAS and ancestor not in seen:
            seen.add(ancestor)
            ancestor = parents.get(ancestor, ROOT_ALIAS)
        if ancestor == edit.name:
            problems.append(
                EditProblem(
                    row,
                    "parent",
                    f"{edit.name} cannot move under {parents[edit.name]}: it is inside"
                    f" {edit.name}'s own subtree",
                )
            )
    if not problems and not _changes(groups, rows, edits):
        problems.append(EditProblem(WHOLE_EDIT, "__all__", "nothing is changed"))
    if problems:
        return EditedTree(groups=list(groups), problems=problems)

    result: list[GroupDef] = []
    moved: dict[str, tuple[str, str]] = {}
    for group in groups:
        if group.name in removed:
            continue
        change = rows.get(group.name)
        if change is None:
            result.append(GroupDef(group.name, group.cgroup, final(group.parent), group.shares))
            continue
        parent = parents[change.name]
        if parent != final(group.parent):
            moved[change.name] = (final(group.parent), parent)
        result.append(GroupDef(change.name, group.cgroup, parent, change.shares))
    cgroup = max([UNKNOWN_CGROUP, *(group.cgroup for group in groups)])
    added = []
    for edit in edits:
        if not edit.original and not edit.remove:
            cgroup += 1
            result.append(GroupDef(edit.name, cgroup, parents[edit.name], edit.shares))
            added.append(edit.name)
    return EditedTree(
        groups=definition_order(result),
        renamed=renamed,
        moved=moved,
        removed=[group.name for group in groups if group.name in removed],
        added=added,
    )


def _subtrees(groups: Sequence[GroupDef], tops: set[str]) -> set[str]:
    """The entries named and all their descendants."""
    found = set(tops)
    for group in definition_order(groups):  # parents first
        if group.parent in found:
            found.add(group.name)
    return found


def _changes(
    groups: Sequence[GroupDef], rows: Mapping[str, ChildEdit], edits: Sequence[ChildEdit]
) -> bool:
    by_name = {group.name: group for group in groups}
    if any(not edit.original and not edit.remove for edit in edits):
        return True
    for name, edit in rows.items():
        group = by_name[name]
        if edit.remove or edit.name != name or edit.shares != group.shares:
            return True
        if edit.parent.strip() not in (group.parent, *_aliases(group.parent)):
            return True
    return False


def _aliases(parent: str) -> tuple[str, ...]:
    return (ROOT_ALIAS, TREEROOT) if parent in (ROOT_ALIAS, TREEROOT) else (parent,)


@dataclass(frozen=True)
class StandingChange:
    """A node whose target share or factor the edit changes; None where it has no place."""

    name: str  # after the edit; the old name when it was removed
    old_name: str  # before the edit; "" when it is new
    parent: str  # after the edit (`unknown` for an entity that left the tree with usage)
    leaf: bool
    perc_before: float | None
    perc_after: float | None
    factor_before: float | None
    factor_after: float | None


def standing_changes(
    before: PbsTree, after: PbsTree, renamed: Mapping[str, str]
) -> list[StandingChange]:
    """Every node whose fairshare_perc or fairshare_factor differs between the two trees (the
    same usage records under the old and the new entries), in pbsfs -p order of the new tree,
    then the nodes the edit removes."""
    old_metrics, new_metrics = compute(before), compute(after)
    old_name = {new: old for old, new in renamed.items()}
    changes, kept = [], set()
    for node in after.preorder():
        if node == ROOT:
            continue
        name = after.name(node)
        was = old_name.get(name, name)
        # A name renamed away that is back (usage kept under it) is a new node.
        old = None if name in renamed and name not in old_name else before.find(was)
        perc = float(new_metrics.fairshare_perc[node])
        factor = new_metrics.fairshare_factor(node)
        parent = after.name(after.tree.parent[node])
        if old is not None:
            kept.add(old)
            same_perc = float(old_metrics.fairshare_perc[old]) == perc
            if same_perc and old_metrics.fairshare_factor(old) == factor and was == name:
                continue
            changes.append(
                StandingChange(
                    name,
                    was,
                    parent,
                    after.is_leaf(node),
                    float(old_metrics.fairshare_perc[old]),
                    perc,
                    old_metrics.fairshare_factor(old),
                    factor,
                )
            )
        else:
            changes.append(
                StandingChange(name, "", parent, after.is_leaf(node), None, perc, None, factor)
            )
    for node in before.preorder():
        if node != ROOT and node not in kept:
            changes.append(
                StandingChange(
                    before.name(node),
                    before.name(node),
                    "",
                    before.is_leaf(node),
                    float(old_metrics.fairshare_perc[node]),
                    None,
                    old_metrics.fairshare_factor(node),
                    None,
                )
            )
    return changes


@dataclass(frozen=True)
class EntryChange:
    """One resource_group entry a new file changes, in words (the import's preview)."""

    name: str
    change: str  # "added", "removed", "renamed", or "moved", "re-shared", "now a group"...
    before: str  # where and with what shares it was; "" when new
    after: str  # where and with what shares it will be; "" when removed


def entries_diff(old: Sequence[GroupDef], new: Sequence[GroupDef]) -> list[EntryChange]:
    """Every entry a resource_group file adds, removes, renames, moves or re-shares, and every
    group it turns into an entity (or back), in the new file's order, then the removals.

    PBS keeps usage by name, so a rename is a removal and an addition; it is named a rename
    where the two share a cgroup id, which is how a site renames a group in place.
    """
    before = {group.name: group for group in old}
    after = {group.name: group for group in new}
    groups_before = {group.parent for group in old}
    groups_after = {group.parent for group in new}
    gone = {group.cgroup: group for group in old if group.name not in after and group.cgroup}
    renamed = {
        group.name: gone[group.cgroup]
        for group in new
        if group.name not in before and group.cgroup in gone
    }
    changes = []
    for group in new:
        was = before.get(group.name) or renamed.get(group.name)
        if was is None:
            changes.append(EntryChange(group.name, "added", "", _placed(group)))
            continue
        what = []
        if was.name != group.name:
            what.append(f"renamed from {was.name} (same cgroup; usage stays with the old name)")
        if was.parent != group.parent:
            what.append("moved")
        if was.shares != group.shares:
            what.append("re-shared")
        if (was.name in groups_before) != (group.name in groups_after):
            what.append("now a group" if group.name in groups_after else "now an entity")
        if what:
            changes.append(EntryChange(group.name, ", ".join(what), _placed(was), _placed(group)))
    kept = {was.name for was in renamed.values()}
    for group in old:
        if group.name not in after and group.name not in kept:
            changes.append(EntryChange(group.name, "removed", _placed(group), ""))
    return changes


def _placed(group: GroupDef) -> str:
    return f"under {group.parent}, {group.shares} shares"
