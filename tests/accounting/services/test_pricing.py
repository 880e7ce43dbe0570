"""accounting.services.pricing: a sched_config's decay time refused or taken as PBS takes it,
and its scheduling policy set on the cluster."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from accounting.services.pricing import sched_config_import
from tests.accounting.services.test_ingest import TREE
from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import FairshareConfig, parse_sched_config
from trees.models import Cluster, Node
from trees.selectors.clusters import cluster_get
from trees.services.pbs import resource_group_import

pytestmark = pytest.mark.django_db

SEED_003 = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"


@pytest.fixture
def site() -> Cluster:
    groups = parse_resource_group(TREE.encode())
    resource_group_import(cluster_name="site", groups=groups.groups, pbs_messages=[], source="t")
    return cluster_get(name="site")


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


def test_sched_config_import_sets_strict_ordering_backfill_and_depth(site: Cluster) -> None:
    config = parse_sched_config(
        b"strict_ordering: true ALL\nbackfill: false non_prime\nbackfill_depth: 3\n"
    )
    sched_config_import(cluster_name="site", config=config)
    cluster = cluster_get(name="site")
    assert (cluster.strict_ordering, cluster.backfill, cluster.backfill_depth) == (True, False, 3)


def test_keys_left_unset_or_for_prime_time_only_take_pbs_defaults(site: Cluster) -> None:
    site.strict_ordering, site.backfill, site.backfill_depth = True, False, 5
    site.save(update_fields=["strict_ordering", "backfill", "backfill_depth"])
    config = parse_sched_config(b"strict_ordering: true prime\nbackfill: false none\n")
    assert [(line.line, line.key) for line in config.unapplied] == [
        (1, "strict_ordering"),
        (2, "backfill"),
    ]
    sched_config_import(cluster_name="site", config=config)
    cluster = cluster_get(name="site")
    assert (cluster.strict_ordering, cluster.backfill, cluster.backfill_depth) == (False, True, 1)
