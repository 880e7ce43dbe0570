"""An admin's edit of a PBS tree's entries, made on the version they read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from trees.engine.edit import ChildEdit, EditProblem, tree_version
from trees.models import Cluster, ShareChange
from trees.selectors.audit import share_changes_since_get
from trees.selectors.edit import pbs_edit_applied
from trees.services.pbs_store import StoreSummary, pbs_tree_held


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
    with pbs_tree_held(cluster) as held:
        if tree_version(held.state.groups) != version:
            raise TreeChanged(share_changes_since_get(cluster=held.cluster, since=opened_at))
        edited = pbs_edit_applied(held.state, edits)
        if edited.problems:
            raise EditRefused(edited.problems)
        renamed = {new: old for old, new in edited.renamed.items()}
        return held.store(groups=edited.groups, reason=reason, user=user, renamed=renamed)
