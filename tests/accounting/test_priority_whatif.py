"""The projection "if its entity ran nothing more": the queue ordered again with standings
recomputed in memory (accounting/priority_whatif.py), on tests/trees/queue_site.py's cluster."""

import pytest
from django.utils import timezone

from accounting.priorities import pbs_order, queue_order_get, queued_rows_get
from accounting.priority_whatif import (
    decayed_once,
    priority_whatif_get,
    standings_of,
)
from trees.engine.pbs import compute
from trees.models import Cluster, Scheduler
from trees.selectors.pbs import pbs_tree_get

pytestmark = pytest.mark.django_db


def test_with_the_tree_unchanged_the_order_is_the_scheduler_s(queue_site: Cluster) -> None:
    """The projection orders the queue itself: with the tree as stored it must give what
    accounting.priorities gives, job for job and term for term."""
    at = timezone.now()
    rows = queued_rows_get(cluster=queue_site)
    pbs = pbs_tree_get(cluster=queue_site)
    again = pbs_order(queue_site, at, rows, standings_of(queue_site, pbs, compute(pbs)))
    stored = queue_order_get(cluster=queue_site, at=at)
    assert again.ordered == stored.ordered
    assert again.held == stored.held


def test_the_entity_s_usage_decays_once_and_the_rest_stays(queue_site: Cluster) -> None:
    """cond 500 -> 250 (decay_factor 0.5): physics 1 + 250 + 1499 = 1750, the root 2750."""
    pbs = pbs_tree_get(cluster=queue_site)
    metrics = decayed_once(pbs, pbs.find("cond") or 0, queue_site.decay_factor)
    usage = {pbs.name(n): float(metrics.usage[n]) for n in range(len(pbs))}
    assert (usage["cond"], usage["grav"], usage["bio"]) == (250.0, 1499.0, 1000.0)
    assert (usage["physics"], usage["TREEROOT"]) == (1750.0, 2750.0)


def test_a_held_job_and_a_slurm_cluster_get_no_projection(queue_site: Cluster) -> None:
    held = priority_whatif_get(cluster=queue_site, job_id="104", now=timezone.now())
    assert held is not None
    assert not held.supported
    assert "held" in held.reason
    Cluster.objects.filter(pk=queue_site.pk).update(scheduler=Scheduler.SLURM)
    queue_site.refresh_from_db()
    slurm = priority_whatif_get(cluster=queue_site, job_id="101[1]", now=timezone.now())
    assert slurm is not None
    assert not slurm.supported
    assert "Slurm" in slurm.reason
    assert priority_whatif_get(cluster=queue_site, job_id="999", now=timezone.now()) is None
