"""PBS's files and tools on a cluster's tree: resource_group, the usage file, pbsfs, and the
entities and groups that accounting meets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trees.engine.edit import tree_version
from trees.engine.pbs import FAIRSHARE_MIN_USAGE, ROOT_ALIAS, UNKNOWN_CGROUP, GroupDef, UsageRecord
from trees.engine.times import epoch_seconds
from trees.formats.pbsfs import PbsfsResult, UsageDatabase, run_pbsfs, usage_set_refused
from trees.formats.usage_file import RejectedRecord, UsageFile, screen_records
from trees.models import Cluster
from trees.selectors.pbs import pbs_tree_of
from trees.services.clusters import NOTHING_FOR_A_NEW_CLUSTER, cluster_get_or_create
from trees.services.pbs_store import StoreSummary, pbs_tree_held
from trees.services.tree_edit import TreeChanged


def resource_group_import(
    *,
    cluster_name: str,
    groups: Sequence[GroupDef],
    pbs_messages: Sequence[str],
    source: str,
    user: User | None = None,
    reason: str = "",
    version: str | None = None,
) -> StoreSummary:
    """Make the cluster's tree the one in a resource_group file; usage stays by entity name.

    Entities that leave the tree keep their usage under `unknown`, as PBS does on its next read.
    `reason` goes into every audit row beside the file's name; `version`: the entries the
    change was previewed on, refused (TreeChanged) if the tree is no longer those.
    """
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        if created and not groups:
            raise ValidationError(NOTHING_FOR_A_NEW_CLUSTER.format("entry", cluster_name))
        with pbs_tree_held(cluster) as held:
            if version is not None and tree_version(held.state.groups) != version:
                raise TreeChanged([])
            held.cluster.resource_group_messages = "\n".join(pbs_messages)
            held.cluster.save(update_fields=["resource_group_messages"])
            why = f"imported resource_group {source}" + (f": {reason.strip()}" if reason else "")
            summary = held.store(groups=groups, reason=why, user=user)
    return replace(summary, cluster_created=created)


@dataclass(frozen=True)
class UsageImport:
    summary: StoreSummary | None  # None: no record could be imported, nothing was written
    screened: list[RejectedRecord]  # records the file holds but no scheduler writes
    imported: int


def pbs_usage_import(*, cluster_name: str, usage: UsageFile) -> UsageImport:
    """Replace the usage database with a scheduler's usage file."""
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        with pbs_tree_held(cluster) as held:
            kept, screened = screen_records(usage, held.state.groups)
            summary = None
            if kept or not (usage.rejected or screened):
                if created and not kept:
                    raise ValidationError(
                        NOTHING_FOR_A_NEW_CLUSTER.format("usage record", cluster_name)
                    )
                records = tuple(kept)
                database = UsageDatabase(exists=True, last_decay=usage.last_decay, records=records)
                summary = held.store(database=database, reason="usage import")
        if summary is None:  # nothing to import: no cluster made for it either
            transaction.set_rollback(True)
            return UsageImport(summary=None, screened=screened, imported=0)
    return UsageImport(replace(summary, cluster_created=created), screened, len(kept))


def pbs_entities_add(*, cluster: Cluster, names: Sequence[str], reason: str) -> list[str]:
    """Entities met in jobs that the tree lacks: under `unknown`, with PBS's first usage (1).

    find_alloc_ginfo does this when a job names an entity the resource_group does not have.
    Returns the names added.
    """
    with pbs_tree_held(cluster) as held:
        state = held.state
        known = {group.name for group in state.groups} | {r.name for r in state.database.records}
        new = [name for name in dict.fromkeys(names) if name not in known]
        if new:
            added = tuple(UsageRecord(name, FAIRSHARE_MIN_USAGE) for name in new)
            held.store(
                database=replace(state.database, records=state.database.records + added),
                reason=reason,
            )
    return new


def pbs_groups_add(
    *, cluster: Cluster, groups: Sequence[tuple[str, str | None, int]], reason: str
) -> list[str]:
    """Define new resource groups `(name, parent or None for root, shares)`, parents first.

    Each takes the next free resource group id. Names the tree already defines are skipped;
    an entity that was under `unknown` moves to its place and keeps its usage.
    """
    with pbs_tree_held(cluster) as held:
        defined = {group.name for group in held.state.groups}
        cgroup = max((group.cgroup for group in held.state.groups), default=UNKNOWN_CGROUP)
        added: list[GroupDef] = []
        for name, parent, shares in groups:
            if name in defined:
                continue
            cgroup += 1
            added.append(GroupDef(name, cgroup, parent or ROOT_ALIAS, shares))
            defined.add(name)
        if added:
            held.store(groups=[*held.state.groups, *added], reason=reason)
    return [group.name for group in added]


def pbsfs_run(*, cluster: Cluster, argv: Sequence[str], now: datetime | None = None) -> PbsfsResult:
    """Run pbsfs on the cluster; -s, -d and -e store the usage database it writes."""
    moment = now or timezone.now()
    with pbs_tree_held(cluster) as held:
        state = held.state
        result = run_pbsfs(
            argv,
            groups=state.groups,
            database=state.database,
            policy=state.policy,
            now=epoch_seconds(moment),
            resource_group_messages=state.resource_group_messages,
        )
        if result.written is not None:
            held.store(database=result.written, reason="pbsfs")
    return result


def pbs_usage_set(*, cluster: Cluster, usage: Sequence[tuple[str, float]], reason: str) -> None:
    """Set entities' usage as `pbsfs -s ENTITY VALUE` does, each in turn (a group, or a value
    that is not a usage, is refused with why, and nothing is set)."""
    with pbs_tree_held(cluster) as held:
        pbs = pbs_tree_of(held.cluster, held.state.groups, held.state.database)
        for name, value in usage:
            node = pbs.find(name)
            if node is None:
                raise ValidationError(f"Fairshare Entity {name} does not exist.")
            refused = usage_set_refused(pbs, node, value)
            if refused is not None:
                raise ValidationError(refused)
            pbs.set_usage(node, value)
        records = tuple(pbs.records())
        database = UsageDatabase(exists=True, last_decay=pbs.last_decay, records=records)
        held.store(database=database, reason=reason)
