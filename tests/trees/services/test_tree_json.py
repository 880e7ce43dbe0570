"""trees.services: the listing of a stored tree for tree.json (tree_json_write), which
every store asks for once it has committed."""

import json
import logging
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.accounting.services.test_ingest import TREE
from trees.engine.slurm import AssociationDef
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, TreeJsonRow
from trees.services.pbs import resource_group_import
from trees.services.slurm import slurm_tree_import
from trees.services.tree_json import tree_json_write

pytestmark = pytest.mark.django_db


def _import(text: str) -> Cluster:
    groups = parse_resource_group(text.encode()).groups
    resource_group_import(cluster_name="site", groups=groups, pbs_messages=[], source="t")
    return Cluster.objects.get(name="site")


def _listing(cluster: Cluster) -> list[tuple[str, int, int, int, dict[str, Any]]]:
    rows = TreeJsonRow.objects.filter(cluster=cluster).order_by("place")
    return [
        (row.node.name, row.place, row.last, row.depth, json.loads(row.document))
        for row in rows.select_related("node")
    ]


def test_a_store_asks_once_committed_and_the_tree_is_listed_in_pbs_order(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as asked:
        cluster = _import(TREE)
    # The new cluster's empty tree, then the import's: both stores ask, the second task finds
    # the tree listed by the first (they run after the one commit).
    assert len(asked) == 2
    cluster.refresh_from_db()
    assert cluster.tree_json_at == cluster.metrics_updated_at is not None

    listing = _listing(cluster)
    # pbsfs lists the groups newest first; the entities under each; unknown last.
    assert [row[:4] for row in listing] == [
        ("TREEROOT", 0, 5, 0),
        ("phys", 1, 2, 1),
        ("bob", 2, 2, 2),
        ("chem", 3, 4, 1),
        ("ann", 4, 4, 2),
        ("unknown", 5, 5, 1),
    ]
    chem = listing[3][4]
    assert chem["id"] == cluster.nodes.get(name="chem").pk
    assert (chem["shares"], chem["children"], chem["opens"]) == (60, 1, True)
    assert chem["fairshare_perc"] == 0.6000000238418579  # 60 of 100, as PBS's float32 holds it
    assert listing[0][4]["children"] == 3


def test_listing_the_tree_listed_already_does_nothing(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        cluster = _import(TREE)
    assert tree_json_write(cluster_id=cluster.pk) is False

    cluster = _import(TREE.replace("ann 20 chem 1", "ann 20 chem 3"))  # its task is not run
    assert cluster.tree_json_at != cluster.metrics_updated_at
    assert _listing(cluster)[4][4]["shares"] == 1  # the listing of the tree before
    assert tree_json_write(cluster_id=cluster.pk) is True
    assert _listing(cluster)[4][4]["shares"] == 3
    assert TreeJsonRow.objects.filter(cluster=cluster).count() == 6  # rewritten, not added to


def test_a_store_whose_listing_cannot_be_asked_for_stays_stored(
    django_capture_on_commit_callbacks: Any, caplog: pytest.LogCaptureFixture
) -> None:
    broker_down = mock.patch(
        "trees.tasks.write_tree_json.apply_async", side_effect=OSError("refused")
    )
    with (
        broker_down,
        caplog.at_level(logging.ERROR),
        django_capture_on_commit_callbacks(execute=True),
    ):
        cluster = _import(TREE)
    assert cluster.nodes.count() == 6
    assert cluster.tree_json_at is None
    assert "refused" in caplog.text


def test_a_slurm_store_is_listed_with_slurms_columns(
    django_capture_on_commit_callbacks: Any,
) -> None:
    associations = [
        AssociationDef(account="chem", shares=3),
        AssociationDef(account="chem", parent="chem", user="ann", shares=1, usage=50.0),
        AssociationDef(account="phys", shares=1),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        slurm_tree_import(cluster_name="slurm", associations=associations, source="t")
    cluster = Cluster.objects.get(name="slurm")
    listing = _listing(cluster)
    assert [row[:4] for row in listing] == [
        ("root", 0, 3, 0),
        ("chem", 1, 2, 1),
        ("ann", 2, 2, 2),
        ("phys", 3, 3, 1),
    ]
    ann = listing[2][4]
    assert ann["slurm"]["account"] == "chem"
    assert ann["slurm"]["raw_usage"] == 50
    assert ann["slurm"]["norm_shares"] == 1.0  # of its account's users, as sshare shows
    assert listing[1][4]["slurm"]["norm_shares"] == 0.75  # chem: 3 of the root's 4


def test_a_clusters_listing_is_rewritten_without_touching_another_clusters(
    django_capture_on_commit_callbacks: Any,
) -> None:
    groups = parse_resource_group(TREE.encode()).groups
    with django_capture_on_commit_callbacks(execute=True):
        site = _import(TREE)
        resource_group_import(cluster_name="other", groups=groups, pbs_messages=[], source="t")
    other = Cluster.objects.get(name="other")
    rows = TreeJsonRow.objects.filter(cluster=other).order_by("place")
    before = list(rows.values_list("pk", "place", "document"))
    site = _import(TREE.replace("ann 20 chem 1", "ann 20 chem 3"))  # its task is not run

    with CaptureQueriesContext(connection) as queries:
        assert tree_json_write(cluster_id=site.pk) is True

    # Every row it locks, deletes or updates is its own cluster's: the listing's rows by their
    # cluster, the cluster's by its key (the new rows go in by COPY, or one INSERT).
    said = [query["sql"] for query in queries]
    assert [sql for sql in said if sql.startswith("DELETE")] == [
        f'DELETE FROM "trees_treejsonrow" WHERE "trees_treejsonrow"."cluster_id" = {site.pk}'
    ]
    of_clusters = [sql for sql in said if 'FROM "trees_cluster"' in sql or "UPDATE" in sql]
    assert len(of_clusters) == 2  # locked (SELECT ... FOR UPDATE on PostgreSQL), stamped
    assert all(f'"trees_cluster"."id" = {site.pk}' in sql for sql in of_clusters)
    assert list(rows.values_list("pk", "place", "document")) == before
    assert Cluster.objects.get(pk=other.pk).tree_json_current
    assert _listing(site)[4][4]["shares"] == 3


def test_the_listing_of_a_cluster_with_a_queue_of_its_own_goes_to_that_queue(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.CYCLE_QUEUES = {"site": "cycles.big"}
    with (
        mock.patch("trees.tasks.write_tree_json.apply_async") as asked,
        django_capture_on_commit_callbacks(execute=True),
    ):
        cluster = _import(TREE)
        resource_group_import(
            cluster_name="other", groups=parse_resource_group(TREE.encode()).groups,
            pbs_messages=[], source="t",
        )  # fmt: skip
    other = Cluster.objects.get(name="other")
    assert asked.call_args_list == [
        mock.call(args=[cluster.pk], queue="cycles.big"),  # the new cluster's empty tree
        mock.call(args=[cluster.pk], queue="cycles.big"),
        mock.call(args=[other.pk], queue=None),
        mock.call(args=[other.pk], queue=None),
    ]
