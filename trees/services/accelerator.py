"""An Altair Accelerator cluster's FairShare groups: defined by a vovfsgroup configuration,
added as jobs name them, stored with the FS_* fields the engine computes from the jobs the
caller gives (jobs are `accounting`'s, which reads them); its preemption rules."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trees.engine.accelerator import DEFAULT_WEIGHT, ROOT, FsFields, FsJob, fs_fields, parent_of
from trees.formats.fsgroups import FsGroupLine
from trees.formats.preempt_rules import PreemptRuleLine
from trees.models import Cluster, NodeKind, NodeOrigin, PreemptRule, Scheduler, SettingChange
from trees.selectors.accelerator import GroupDefinition, accelerator_groups_of
from trees.selectors.nodes import AcceleratorValues, NodeState, StoredNode
from trees.services.clusters import cluster_get_or_create
from trees.services.node_sync import (
    NodeRow,
    cluster_nodes_locked,
    nodes_sync,
    share_changes_write,
)


@dataclass(frozen=True)
class AcceleratorStore:
    groups: int  # the root included
    created: int
    updated: int
    removed: int
    share_changes: int
    cluster_created: bool = False


@dataclass(frozen=True)
class AcceleratorHeld:
    """An Accelerator cluster locked in a transaction, with its groups and nodes as stored."""

    cluster: Cluster
    groups: list[GroupDefinition]
    nodes: list[StoredNode]

    def store(
        self,
        *,
        jobs: Sequence[FsJob],
        now: int,
        reason: str,
        groups: Sequence[GroupDefinition] | None = None,
        user: User | None = None,
    ) -> AcceleratorStore:
        """Make the cluster's nodes these groups (by default those stored) and those the jobs
        are in, with their FS_* fields at `now` (epoch seconds), and audit the weights."""
        return accelerator_store(
            self.cluster,
            self.nodes,
            self.groups if groups is None else groups,
            jobs,
            now=now,
            reason=reason,
            user=user,
        )


@contextmanager
def accelerator_tree_held(cluster: Cluster) -> Iterator[AcceleratorHeld]:
    """The cluster's row locked for the transaction, and its groups read (nodes once)."""
    with cluster_nodes_locked(cluster) as (locked, nodes):
        yield AcceleratorHeld(locked, accelerator_groups_of(nodes), nodes)


def accelerator_store(
    cluster: Cluster,
    nodes: Sequence[StoredNode],
    groups: Sequence[GroupDefinition],
    jobs: Sequence[FsJob],
    *,
    now: int,
    reason: str,
    user: User | None = None,
) -> AcceleratorStore:
    """Store the groups and the jobs' groups with their fields (trees.engine.accelerator)."""
    try:
        fields = fs_fields(
            [group.fs_group for group in groups],
            jobs,
            now,
            relative=cluster.fairshare_relative,
            alpha=cluster.fairshare_relative_alpha,
        )
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    diff = nodes_sync(cluster, nodes, accelerator_rows(groups, fields))
    changes = share_changes_write(cluster, diff, reason=reason, user=user, when=diff.stored_at)
    return AcceleratorStore(
        groups=len(fields),
        created=diff.created,
        updated=diff.updated,
        removed=diff.removed,
        share_changes=len(changes),
    )


def accelerator_rows(
    groups: Sequence[GroupDefinition], fields: Sequence[FsFields]
) -> Iterator[NodeRow]:
    """Every group as stored, parents first: a group a job made weighs 100 and inherits its
    window; its FS_* fields; the unscaled target and share in the columns every scheduler
    has (fairshare_perc, group_perc), its running jobs as its usage."""
    by_path = {group.path: group for group in groups}
    for position, field in enumerate(fields):
        path = field.group
        group = by_path.get(path)
        if path == ROOT:
            origin = NodeOrigin.SCHEDULER
        elif group is not None and group.defined:
            origin = NodeOrigin.DEFINED
        else:
            origin = NodeOrigin.USAGE
        state = NodeState(
            kind=_kind(path),
            origin=origin,
            position=position,
            shares=None if path == ROOT else (group.weight if group else DEFAULT_WEIGHT),
            cgroup_id=None,
            usage_record=None,
            usage_record_seq=None,
            usage=float(field.running_count),
            group_perc=field.share,
            fairshare_perc=field.target_share,
            fairshare_tree_usage=0.0,  # PBS's numbers: none on Accelerator
            usage_perc=-1.0,
            fairshare_factor=0.0,
        )
        values = AcceleratorValues(
            fs_window=group.window if group else None,
            fs_users=group.users if group else "",
            fs_user_level=group.user_level if group else False,
            fs_window_effective=field.window,
            fs_active=field.active,
            fs_target=field.target,
            fs_running=field.running,
            fs_running_count=field.running_count,
            fs_excess_running=field.excess_running,
            fs_excess_running_local=field.excess_running_local,
            fs_history=field.history,
            fs_excess_history=field.excess_history,
            fs_rank=field.rank,
            fs_distance=field.distance,
        )
        parent = None if path == ROOT else parent_of(path)
        yield NodeRow(path, path, parent, state, accelerator=values)


def _kind(path: str) -> str:
    """The root and the groups just below it are organizations, a user's leaf `G.user` a
    user, the rest projects."""
    if path == ROOT:
        return NodeKind.ORGANIZATION
    head = path.rpartition("/")[0]
    if parent_of(path) != (head or ROOT):
        return NodeKind.USER
    return NodeKind.PROJECT if head else NodeKind.ORGANIZATION


def fsgroups_definitions(
    lines: Sequence[FsGroupLine], stored: Sequence[GroupDefinition]
) -> list[GroupDefinition]:
    """The groups a vovfsgroup configuration defines (weight 100 where it gives none), then
    those jobs made that it does not define: a configuration replaces the defined ones."""
    defined = [
        GroupDefinition(
            path=line.path,
            weight=DEFAULT_WEIGHT if line.weight is None else line.weight,
            window=line.window,
            users=" ".join(line.users),
            user_level=line.user_level,
        )
        for line in lines
    ]
    paths = {group.path for group in defined}
    return [*defined, *(g for g in stored if not g.defined and g.path not in paths)]


@dataclass(frozen=True)
class RulesImport:
    rules: int
    replaced: int  # the rules the cluster had before
    cluster_created: bool = False


def preempt_rules_import(
    *,
    cluster_name: str,
    rules: Sequence[PreemptRuleLine],
    source: str,
    user: User | None = None,
) -> RulesImport:
    """Make the cluster's preemption rules those of a rule file, audited as a setting."""
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name, scheduler=Scheduler.ACCELERATOR)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        old = PreemptRule.objects.filter(cluster=cluster)
        before = [rule.name for rule in old.order_by("position")]
        old.delete()
        PreemptRule.objects.bulk_create(
            PreemptRule(
                cluster=cluster,
                position=position,
                name=rule.name,
                preempting=rule.preempting,
                preemptable=rule.preemptable,
                bucketage=rule.bucketage,
                killage=rule.killage,
                pool=rule.pool,
                ruletype=rule.ruletype,
                order=rule.order,
                options=[list(pair) for pair in rule.options],
                source=source[:255],
                line=rule.line,
            )
            for position, rule in enumerate(rules)
        )
        after = [rule.name for rule in rules]
        if before != after:
            audit_text = _rules_text(before), _rules_text(after)
            SettingChange.objects.create(
                cluster=cluster,
                setting="preempt_rules",
                old_value=audit_text[0][:255],
                new_value=audit_text[1][:255],
                changed_by=user,
                changed_at=timezone.now(),
                reason=f"imported {source}",
            )
    return RulesImport(len(rules), len(before), created)


def _rules_text(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"
