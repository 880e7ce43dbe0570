"""trees.services: the cluster's job_sort_formula, removing a cluster, logins and their places."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from accounting.models import Cycle, IngestRun, Job, NodeHistory
from accounting.services.cycles import cycle_run
from accounting.services.pricing import sched_config_import
from tests.accounting.test_services import DAY1, TREE, pbs_ingest
from tests.conftest import write_file
from trees.engine.times import epoch_time
from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import FairshareConfig, parse_sched_config
from trees.models import Cluster, Membership, Node, Person, Role, ShareChange, TreeJsonRow
from trees.selectors.clusters import cluster_get, node_get
from trees.services.clusters import cluster_delete, job_sort_formula_set
from trees.services.pbs import resource_group_import
from trees.services.people import login_set, membership_set, person_set
from trees.services.tree_edit import TreeChanged
from trees.services.tree_json import tree_json_write

pytestmark = pytest.mark.django_db

SEED_003 = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def site() -> Cluster:
    groups = parse_resource_group(TREE.encode())
    resource_group_import(cluster_name="site", groups=groups.groups, pbs_messages=[], source="t")
    return cluster_get(name="site")


def test_the_job_sort_formula_is_stored_once_it_parses(site: Cluster) -> None:
    job_sort_formula_set(cluster=site, formula=SEED_003)
    assert cluster_get(name="site").job_sort_formula == SEED_003
    with pytest.raises(ValidationError) as refused:
        job_sort_formula_set(cluster=site, formula="1000*(1-fairshare_tree_usge)")
    assert "fairshare_tree_usge" in str(refused.value)
    assert cluster_get(name="site").job_sort_formula == SEED_003
    job_sort_formula_set(cluster=site, formula="")
    assert cluster_get(name="site").job_sort_formula == ""


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


def test_a_login_is_made_then_updated() -> None:
    alice = login_set(username="alice", password="first", admin=True)
    assert (alice.is_staff, alice.is_superuser, alice.check_password("first")) == (
        True,
        True,
        True,
    )
    again = login_set(username="alice", password="second")
    assert again.pk == alice.pk
    assert User.objects.count() == 1
    stored = User.objects.get()
    assert (stored.is_staff, stored.is_superuser) == (False, False)
    assert (stored.check_password("second"), stored.check_password("first")) == (True, False)


def test_a_person_and_memberships_are_held_once(site: Cluster) -> None:
    bob = login_set(username="bob", password="x")
    person_set(user=bob, scheduler_user="ann")
    person_set(user=bob, scheduler_user="bob")
    assert list(Person.objects.values_list("user__username", "scheduler_user")) == [("bob", "bob")]
    chem = node_get(cluster=site, name="chem")
    membership_set(user=bob, node=chem, role=Role.MEMBER)
    membership_set(user=bob, node=chem, role=Role.MANAGER)
    assert list(Membership.objects.values_list("node__name", "role")) == [("chem", "manager")]
    with pytest.raises(ValidationError):
        membership_set(user=bob, node=chem, role="owner")


def test_an_import_audits_moves_and_counts_entries_as_the_audit_does(site: Cluster) -> None:
    """TREE: chem and phys under root, ann under chem, bob under phys. The new file moves
    bob under chem, re-shares chem, removes phys and adds cy: one audit row each."""
    moved = "chem 10 root 70\nann 20 chem 1\nbob 21 chem 1\ncy 22 chem 1\n"
    summary = resource_group_import(
        cluster_name="site",
        groups=parse_resource_group(moved.encode()).groups,
        pbs_messages=[],
        source="t2",
        reason="merge",
    )
    rows = ShareChange.objects.filter(cluster=site, reason="imported resource_group t2: merge")
    assert sorted(f"{row.node_name}: {row.what()}" for row in rows) == [
        "bob: moved from phys to chem",
        "chem: 60 → 70 shares",
        "cy: added with 1 shares",
        "phys: removed from root (had 40 shares)",
    ]
    counts = (summary.entries_added, summary.entries_changed, summary.entries_removed)
    assert counts == (1, 2, 1)


def test_an_import_on_a_tree_changed_since_its_preview_is_refused(site: Cluster) -> None:
    with pytest.raises(TreeChanged):
        resource_group_import(
            cluster_name="site", groups=[], pbs_messages=[], source="t", version="0" * 32
        )
    assert Node.objects.filter(cluster=site, name="chem").exists()


@pytest.mark.parametrize("value", ["1000000000:00:00", "99999999999999999999:00:00"])
def test_a_decay_time_past_the_calendar_leaves_the_cluster_valid(
    site: Cluster, value: str, client: Client
) -> None:
    config = parse_sched_config(f"fairshare_decay_time: {value}\nunknown_shares: 5\n".encode())
    assert [(bad.line, bad.key) for bad in config.problems] == [(1, "fairshare_decay_time")]
    sched_config_import(cluster_name="site", config=config)
    cluster = cluster_get(name="site")
    cluster.full_clean(exclude=["nodes"])
    assert (cluster.decay_interval, cluster.unknown_shares) == (timedelta(hours=24), 5)
    client.force_login(User.objects.create_user("admin", is_staff=True))
    leaf = Node.objects.filter(cluster=cluster, kind="user").first()
    assert leaf is not None
    assert client.get(f"/clusters/site/nodes/{leaf.pk}/recovery.json").status_code == 200


def test_sched_config_import_refuses_a_decay_time_it_cannot_store() -> None:
    with pytest.raises(ValidationError, match="decay_time 1000000000000000000000000 s is not"):
        sched_config_import(cluster_name="new", config=FairshareConfig(decay_time=10**24))
    assert not Cluster.objects.filter(name="new").exists()


def test_a_resource_group_without_entries_makes_no_cluster(site: Cluster) -> None:
    with pytest.raises(ValidationError, match="holds no entry to import: cluster new is not"):
        resource_group_import(cluster_name="new", groups=[], pbs_messages=[], source="t")
    assert not Cluster.objects.filter(name="new").exists()
    resource_group_import(cluster_name="site", groups=[], pbs_messages=[], source="t")
    assert list(Node.objects.filter(cluster=site).values_list("name", flat=True)) == [
        "TREEROOT",
        "unknown",
    ]
