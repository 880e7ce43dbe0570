import importlib
from datetime import UTC, datetime, timedelta

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from trees.models import Cluster, Node, NodeKind, ShareChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster() -> Cluster:
    return Cluster.objects.create(name="c")


@pytest.fixture
def root(cluster: Cluster) -> Node:
    return Node.objects.create(cluster=cluster, name="TREEROOT", kind=NodeKind.ORGANIZATION)


def refused(**fields: object) -> bool:
    try:
        with transaction.atomic():
            Node.objects.create(**fields)
    except IntegrityError:
        return True
    return False


def test_it_rejects_negative_shares(cluster: Cluster, root: Node) -> None:
    assert refused(cluster=cluster, parent=root, name="a", shares=-1)


def test_only_the_root_may_lack_shares(cluster: Cluster, root: Node) -> None:
    assert refused(cluster=cluster, parent=root, name="a", shares=None)


def test_one_root_per_cluster(cluster: Cluster, root: Node) -> None:
    assert refused(cluster=cluster, name="other", kind=NodeKind.ORGANIZATION)


def test_names_are_unique_under_a_parent(cluster: Cluster, root: Node) -> None:
    Node.objects.create(cluster=cluster, parent=root, name="a", shares=1)
    assert refused(cluster=cluster, parent=root, name="a", shares=2)


def test_group_names_are_unique_in_the_cluster(cluster: Cluster, root: Node) -> None:
    g1 = Node.objects.create(cluster=cluster, parent=root, name="g1", shares=1, kind="project")
    assert not refused(cluster=cluster, parent=g1, name="alice", shares=1)
    g2 = Node.objects.create(cluster=cluster, parent=root, name="g2", shares=1, kind="project")
    assert not refused(cluster=cluster, parent=g2, name="alice", shares=1)
    assert refused(cluster=cluster, parent=g2, name="g1", shares=1, kind="project")


def test_a_usage_record_has_its_place_in_the_database(cluster: Cluster, root: Node) -> None:
    assert refused(cluster=cluster, parent=root, name="a", shares=1, usage_record=5.0)
    assert refused(
        cluster=cluster, parent=root, name="b", shares=1, usage_record=-1.0, usage_record_seq=0
    )


@pytest.mark.parametrize("factor", [0.0, 1.0, 1.5, -0.5])
def test_the_decay_factor_lies_between_0_and_1(factor: float) -> None:
    with pytest.raises(IntegrityError):
        Cluster.objects.create(name="d", decay_factor=factor)


def test_the_decay_interval_is_positive() -> None:
    with pytest.raises(IntegrityError):
        Cluster.objects.create(name="d", decay_interval=timedelta(0))


def test_a_share_change_needs_a_reason(cluster: Cluster) -> None:
    with pytest.raises(IntegrityError):
        ShareChange.objects.create(
            cluster=cluster, node_name="a", changed_at="2026-01-01T00:00Z", new_shares=1
        )


def test_the_listing_is_current_only_for_the_tree_as_last_stored() -> None:
    stored = datetime(2026, 11, 24, 5, 0, tzinfo=UTC)
    assert not Cluster(name="new").tree_json_current  # never stored, never listed
    assert not Cluster(name="c", metrics_updated_at=stored).tree_json_current
    assert Cluster(name="c", metrics_updated_at=stored, tree_json_at=stored).tree_json_current
    later = stored + timedelta(minutes=10)
    assert not Cluster(name="c", metrics_updated_at=later, tree_json_at=stored).tree_json_current


def test_the_decay_interval_is_at_most_ten_years() -> None:
    """Past ten years the coming decays leave the calendar (every recovery.json was a 500)."""
    Cluster.objects.create(name="ok", decay_interval=timedelta(days=3660))
    with pytest.raises(IntegrityError), transaction.atomic():
        Cluster.objects.create(name="d", decay_interval=timedelta(days=3660, seconds=1))
    with pytest.raises(ValidationError, match="cluster_decay_interval_at_most_ten_years"):
        Cluster(name="d", decay_interval=timedelta(hours=10**9)).full_clean()


def test_a_cluster_stored_before_the_bound_is_brought_within_it() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("stores a value past the CHECK with SQLite's ignore_check_constraints")
    cluster = Cluster.objects.create(name="old")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA ignore_check_constraints = 1")
        try:
            Cluster.objects.filter(pk=cluster.pk).update(decay_interval=timedelta(hours=10**9))
        finally:
            cursor.execute("PRAGMA ignore_check_constraints = 0")
    migration = importlib.import_module("trees.migrations.0008_decay_interval_at_most_ten_years")
    migration.clamp_decay_intervals(apps, None)
    cluster.refresh_from_db()
    assert cluster.decay_interval == timedelta(days=3660)
