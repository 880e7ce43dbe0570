"""A small PBS cluster with a queue, whose every number the job tests compute by hand.

resource_group (unknown_shares 0): physics and bio under the root, 50 shares each; cond and
grav under physics, 50 each. fairshare_perc: physics 0.5, bio 0.5, cond 0.25, grav 0.25.
Usage: cond 500, grav 1499, bio 1000; physics 1 + 500 + 1499 = 2000, the root 3000.
fairshare_tree_usage (seed 000): bio 1000/3000 = 0.333333; cond 500/3000 + (2000/3000 -
500/3000) * 0.5 = 2500/6000 = 0.416667; grav 3499/6000 = 0.583167 (as PBS prints them, %f).

Seed 003's formula 10*(ncpus/6656) + 1000*(1-fairshare_tree_usage) + eligible_time/86400:
- 102.srv, bio, 16 cores, 2 h, eligible 1 day: 0.024 + 666.667 + 1 = 667.691
- 101[1], cond, 64 cores, 1 h, eligible 2 days: 0.096 + 583.333 + 2 = 585.429
- 103, grav (queue long), 8 cores, 1 h, eligible 3 days: 0.012 + 416.833 + 3 = 419.845
- 104, grav, held.
by_queue is off: one order, 102.srv, 101[1], 103.

physics's usage/perc is 2000 / 0.5 = 4000, above the root's usage (3000): it is the level of
cond's path furthest over target (cond's own is 500 / 0.25 = 2000), 4000 / 3000 = 1.3× its
target share of the machine.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from accounting.models import Job
from accounting.parsers.records import JobRequest
from trees.engine.cycle import cycle_slot
from trees.engine.times import epoch_time
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Node
from trees.selectors.clusters import cluster_get
from trees.services.pbs import pbs_usage_set, resource_group_import

FORMULA = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
TREE = "physics 10 root 50\nbio 11 root 50\ncond 20 physics 50\ngrav 21 physics 50\n"
CYCLE = 600  # a cluster's default scheduler_iteration, 10 minutes


def frozen_now(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """Now, on a cycle's instant, and kept there for the test: the pages compute priorities
    at the cycle now falls in, and eligible_time grows by the second."""
    moment = epoch_time(cycle_slot(int(time.time()), CYCLE))
    monkeypatch.setattr(timezone, "now", lambda: moment)
    return moment


def queue_site_made(now: datetime, *, name: str = "q") -> Cluster:
    """The cluster, its usage and its four queued jobs (see the module's docstring)."""
    groups = parse_resource_group(TREE.encode())
    resource_group_import(cluster_name=name, groups=groups.groups, pbs_messages=[], source="t")
    cluster = cluster_get(name=name)
    pbs_usage_set(cluster=cluster, usage=[("cond", 500), ("grav", 1499), ("bio", 1000)], reason="t")
    Cluster.objects.filter(pk=cluster.pk).update(
        job_sort_formula=FORMULA, eligible_time_enable=True, by_queue=False
    )
    queued_job_made(cluster, "102.srv", "bio", "bea", 16, 2 * 3600, now - timedelta(days=1))
    queued_job_made(cluster, "101[1]", "cond", "dkaya", 64, 3600, now - timedelta(days=2))
    queued_job_made(cluster, "103", "grav", "gus", 8, 3600, now - timedelta(days=3), queue="long")
    queued_job_made(cluster, "104", "grav", "gus", 4, 3600, now - timedelta(days=3), held=True)
    return cluster_get(name=name)


def queued_job_made(
    cluster: Cluster,
    job_id: str,
    entity: str,
    user: str,
    ncpus: int,
    walltime: int,
    eligible: datetime,
    *,
    queue: str = "workq",
    held: bool = False,
    reason: str = "",
) -> Job:
    """A queued job (Job state "queued" with its request) eligible since `eligible`."""
    request = JobRequest(resources={"ncpus": ncpus, "walltime": walltime}, held=held, reason=reason)
    return Job.objects.create(
        cluster=cluster,
        job_id=job_id,
        run=1,
        state="queued",
        entity=entity,
        node=Node.objects.filter(cluster=cluster, name=entity).first(),
        user=user,
        queue=queue,
        ncpus=ncpus,
        requested_walltime=walltime,
        ctime=eligible,
        qtime=eligible,
        etime=eligible,
        source_file="test",
        source_line=1,
        request=json.dumps(asdict(request)),
    )


@pytest.fixture
def queue_now(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """The moment the queue site is made at, `timezone.now()` frozen there."""
    return frozen_now(monkeypatch)


@pytest.fixture
def queue_site(queue_now: datetime) -> Cluster:
    """The queue site, made at `queue_now`."""
    return queue_site_made(queue_now)
