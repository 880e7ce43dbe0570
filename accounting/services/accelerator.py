"""Altair Accelerator: the FS_* fields stored from the jobs stored, and the FairShare
configuration imported with them (the fields need the jobs, which this app holds)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction

from accounting.models import Job
from accounting.selectors import accelerator_jobs_get
from trees.bulk import rows_update
from trees.engine.times import epoch_seconds
from trees.formats.fsgroups import FsGroupLine
from trees.models import Cluster, Node, Scheduler
from trees.selectors.accelerator import GroupDefinition
from trees.services.accelerator import (
    AcceleratorStore,
    accelerator_tree_held,
    fsgroups_definitions,
)
from trees.services.clusters import cluster_get_or_create


def accelerator_fields_store(*, cluster: Cluster, now: datetime, reason: str) -> AcceleratorStore:
    """Every group's FS_* fields at `now` from the jobs stored, stored (a cycle)."""
    with accelerator_tree_held(cluster) as held:
        jobs = [found.job for found in accelerator_jobs_get(cluster=held.cluster, now=now)]
        return held.store(jobs=jobs, now=epoch_seconds(now), reason=reason)


def accelerator_jobs_imported(
    *, cluster: Cluster, groups: Sequence[str], now: datetime
) -> list[str]:
    """After jobs were imported: make the groups they are in that the tree lacks (a user's
    leaf `G.user`, as Accelerator makes it at submission, and any missing ancestor), store
    every group's fields at `now` from the jobs stored, and link the jobs to their groups;
    the groups made."""
    with accelerator_tree_held(cluster) as held:
        known = {node.name for node in held.nodes}
        new = [path for path in dict.fromkeys(groups) if path not in known]
        made = [GroupDefinition(path, defined=False) for path in new]
        held.store(
            jobs=[found.job for found in accelerator_jobs_get(cluster=held.cluster, now=now)],
            now=epoch_seconds(now),
            reason="jobs submitted to them" if new else "jobs imported",
            groups=[*held.groups, *made],
        )
        jobs_linked(held.cluster)
    return new


def fsgroups_import(
    *,
    cluster_name: str,
    groups: Sequence[FsGroupLine],
    source: str,
    now: datetime,
    user: User | None = None,
) -> AcceleratorStore:
    """Make the cluster's defined FairShare groups those of a vovfsgroup configuration (the
    groups jobs made are kept), with every group's fields at `now`; weights audited."""
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name, scheduler=Scheduler.ACCELERATOR)
        with accelerator_tree_held(cluster) as held:
            summary = held.store(
                jobs=[found.job for found in accelerator_jobs_get(cluster=held.cluster, now=now)],
                now=epoch_seconds(now),
                reason=f"imported {source}",
                groups=fsgroups_definitions(groups, held.groups),
                user=user,
            )
            jobs_linked(held.cluster)
    return replace(summary, cluster_created=created)


def jobs_linked(cluster: Cluster) -> int:
    """Link the cluster's jobs without a node to their group's, where it exists (a group the
    configuration dropped and a job made again); how many."""
    nodes = dict(Node.objects.filter(cluster=cluster).values_list("name", "pk"))
    unlinked = Job.objects.filter(cluster=cluster, node__isnull=True).values_list("pk", "entity")
    rows = [(pk, nodes[entity]) for pk, entity in unlinked if entity in nodes]
    rows_update(Job, ["node_id"], rows)
    return len(rows)
