"""trees.services.clusters: removing a cluster with all it holds."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from accounting.models import Cycle, IngestRun, Job, NodeHistory
from accounting.services.cycles import cycle_run
from tests.accounting.services.test_ingest import DAY1, pbs_ingest
from tests.conftest import write_file
from trees.engine.times import epoch_time
from trees.models import Cluster, Membership, Node, Role, ShareChange, TreeJsonRow
from trees.selectors.clusters import node_get
from trees.services.clusters import cluster_delete
from trees.services.people import login_set, membership_set
from trees.services.tree_json import tree_json_write

pytestmark = pytest.mark.django_db


def test_removing_a_cluster_takes_all_it_holds(site: Cluster, tmp_path: Path) -> None:
    pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    cycle_run(cluster=site, now=epoch_time(1772380800))  # 2026-03-01T16:00Z
    alice = login_set(username="alice", password="x")
    membership_set(user=alice, node=node_get(cluster=site, name="chem"), role=Role.MEMBER)
    assert tree_json_write(cluster_id=site.pk) is True
    other = Cluster.objects.create(name="other")
    assert Job.objects.filter(cluster=site).count() == 4
    assert NodeHistory.objects.count() == 7  # a row for each node, cy under unknown too
    assert cluster_delete(name="site") is True
    assert list(Cluster.objects.all()) == [other]
    assert Job.objects.count() == Cycle.objects.count() == Node.objects.count() == 0
    assert Membership.objects.count() == ShareChange.objects.count() == 0
    assert NodeHistory.objects.count() == IngestRun.objects.count() == 0
    assert TreeJsonRow.objects.count() == 0
    assert User.objects.filter(username="alice").exists()
    assert cluster_delete(name="site") is False
