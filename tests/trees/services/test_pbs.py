"""trees.services.pbs: a resource_group imported with its audit, refused on a changed tree."""

import pytest
from django.core.exceptions import ValidationError

from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Node, ShareChange
from trees.services.pbs import resource_group_import
from trees.services.tree_edit import TreeChanged

pytestmark = pytest.mark.django_db


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


def test_a_resource_group_without_entries_makes_no_cluster(site: Cluster) -> None:
    with pytest.raises(ValidationError, match="holds no entry to import: cluster new is not"):
        resource_group_import(cluster_name="new", groups=[], pbs_messages=[], source="t")
    assert not Cluster.objects.filter(name="new").exists()
    resource_group_import(cluster_name="site", groups=[], pbs_messages=[], source="t")
    assert list(Node.objects.filter(cluster=site).values_list("name", flat=True)) == [
        "TREEROOT",
        "unknown",
    ]
