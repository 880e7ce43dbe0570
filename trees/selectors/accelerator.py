"""An Altair Accelerator cluster's FairShare groups as stored: what a store starts from, and
its preemption rules as the engine reads them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trees.engine.accelerator import DEFAULT_WEIGHT, ROOT, FsGroup
from trees.formats.preempt_rules import PreemptRuleLine
from trees.models import Cluster, NodeOrigin, PreemptRule
from trees.selectors.nodes import StoredNode


@dataclass(frozen=True)
class GroupDefinition:
    """A FairShare group as vovfsgroup defines it (`defined`) or as a job made it (a user's
    leaf `G.user`, a missing ancestor): its path, weight, window, -u and -user."""

    path: str
    weight: int = DEFAULT_WEIGHT
    window: int | None = None  # seconds; None: inherited
    users: str = ""
    user_level: bool = False
    defined: bool = True

    @property
    def fs_group(self) -> FsGroup:
        return FsGroup(self.path, self.weight, self.window)


def accelerator_groups_of(nodes: Sequence[StoredNode]) -> list[GroupDefinition]:
    """The groups of a cluster's stored nodes (the root, which nothing defines, left out), in
    tree order."""
    groups = []
    for node in nodes:
        values = node.accelerator
        if node.name == ROOT or values is None:
            continue
        groups.append(
            GroupDefinition(
                path=node.name,
                weight=DEFAULT_WEIGHT if node.state.shares is None else node.state.shares,
                window=values.fs_window,
                users=values.fs_users,
                user_level=values.fs_user_level,
                defined=node.state.origin == NodeOrigin.DEFINED,
            )
        )
    return groups


def preempt_rules_get(*, cluster: Cluster) -> list[PreemptRuleLine]:
    """The cluster's preemption rules in file order, as the rule file read them."""
    return [
        PreemptRuleLine(
            name=rule.name,
            preempting=rule.preempting,
            preemptable=rule.preemptable,
            bucketage=rule.bucketage,
            killage=rule.killage,
            pool=rule.pool,
            ruletype=rule.ruletype,
            order=rule.order,
            options=tuple((str(name), str(value)) for name, value in rule.options),
            line=rule.line,
        )
        for rule in PreemptRule.objects.filter(cluster=cluster).order_by("position")
    ]
