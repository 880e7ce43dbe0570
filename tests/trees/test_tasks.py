"""trees.tasks, run eagerly (no broker in the tests): the listing a store asks for."""

import pytest

from tests.accounting.services.test_ingest import TREE
from trees import tasks
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, TreeJsonRow
from trees.services.pbs import resource_group_import

pytestmark = pytest.mark.django_db


def test_the_listing_task_lists_a_stored_tree_once() -> None:
    groups = parse_resource_group(TREE.encode()).groups
    resource_group_import(cluster_name="site", groups=groups, pbs_messages=[], source="t")
    cluster = Cluster.objects.get(name="site")  # stored; its own request never ran (rollback)

    assert tasks.write_tree_json.delay(cluster.pk).get() is True
    assert tasks.write_tree_json.delay(cluster.pk).get() is False
    assert TreeJsonRow.objects.filter(cluster=cluster).count() == cluster.nodes.count() == 6
