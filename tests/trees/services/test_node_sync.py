"""trees.services.node_sync: the one store of every scheduler's tree, matched by key, with the
audit of the entries it changes."""

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from trees.engine.slurm import USE_PARENT, AssociationDef
from trees.models import Cluster, Node, NodeKind, ShareChange
from trees.selectors.nodes import stored_nodes_get
from trees.selectors.pbs import pbs_state_get
from trees.services.node_sync import node_key
from trees.services.pbs import pbs_usage_set
from trees.services.pbs_store import pbs_tree_held
from trees.services.slurm import slurm_tree_import

pytestmark = pytest.mark.django_db


def test_a_node_is_known_by_its_name_on_pbs_and_by_account_and_user_on_slurm() -> None:
    assert node_key(name="ann", parent="chem", kind=NodeKind.USER, slurm=False) == "ann"
    assert node_key(name="ann", parent="chem", kind=NodeKind.USER, slurm=True) == ("chem", "ann")
    assert node_key(name="chem", parent="root", kind=NodeKind.PROJECT, slurm=True) == (
        "chem",
        None,
    )


def test_storing_the_same_tree_again_writes_nothing(site: Cluster) -> None:
    before = {node.id: node for node in stored_nodes_get(cluster=site)}
    with pbs_tree_held(site) as held:
        summary = held.store(reason="again")
    assert (summary.created, summary.updated, summary.removed, summary.share_changes) == (
        0,
        0,
        0,
        0,
    )
    assert {node.id: node for node in stored_nodes_get(cluster=site)} == before


def test_an_entity_that_gets_a_usage_record_is_updated_not_remade(site: Cluster) -> None:
    ann = Node.objects.get(cluster=site, name="ann")
    pbs_usage_set(cluster=site, usage=[("ann", 500.0)], reason="test")
    again = Node.objects.get(cluster=site, name="ann")
    assert again.pk == ann.pk
    assert (again.usage_record, again.usage_record_seq, again.usage) == (500.0, 0, 500.0)
    # chem's usage is 1 plus its entities': PBS counts a group's own usage as 1.
    assert Node.objects.get(cluster=site, name="chem").usage == 501.0
    assert ShareChange.objects.filter(reason="test").count() == 0  # usage is not audited


def test_usage_is_set_on_entities_only_as_pbsfs_s_sets_it(site: Cluster) -> None:
    with pytest.raises(ValidationError, match="chem is a group"):
        pbs_usage_set(cluster=site, usage=[("ann", 5.0), ("chem", 10.0)], reason="test")
    with pytest.raises(ValidationError, match=r"Fairshare Entity nobody does not exist\."):
        pbs_usage_set(cluster=site, usage=[("nobody", 1.0)], reason="test")
    with pytest.raises(ValidationError, match="must be a finite number >= 0"):
        pbs_usage_set(cluster=site, usage=[("ann", -1.0)], reason="test")
    assert pbs_state_get(cluster=site).database.records == ()  # nothing of the refused sets


def slurm_tree(*associations: AssociationDef) -> Cluster:
    slurm_tree_import(cluster_name="dept", associations=associations, source="test")
    return Cluster.objects.get(name="dept")


def test_a_slurm_account_moved_keeps_its_node_and_is_audited_as_a_move() -> None:
    dept = slurm_tree(
        AssociationDef("chem", shares=10),
        AssociationDef("phys", shares=20),
        AssociationDef("lab", parent="chem", shares=5),
        AssociationDef("lab", parent="lab", user="ann", shares=1),
    )
    lab = Node.objects.get(cluster=dept, name="lab")
    slurm_tree(
        AssociationDef("chem", shares=10),
        AssociationDef("phys", shares=20),
        AssociationDef("lab", parent="phys", shares=5),
        AssociationDef("lab", parent="lab", user="ann", shares=1),
    )
    moved = Node.objects.get(cluster=dept, name="lab")
    assert (moved.pk, moved.parent_id) == (lab.pk, Node.objects.get(cluster=dept, name="phys").pk)
    changes = ShareChange.objects.filter(cluster=dept)
    assert [f"{change.node_name}: {change.what()}" for change in changes] == [
        "lab: moved from chem to phys"
    ]


def test_a_slurm_user_that_changes_account_is_another_association() -> None:
    dept = slurm_tree(
        AssociationDef("chem", shares=10),
        AssociationDef("phys", shares=20),
        AssociationDef("chem", parent="chem", user="ann", shares=2),
    )
    slurm_tree(
        AssociationDef("chem", shares=10),
        AssociationDef("phys", shares=20),
        AssociationDef("phys", parent="phys", user="ann", shares=3),
    )
    ann = Node.objects.get(cluster=dept, name="ann")
    assert ann.parent_id == Node.objects.get(cluster=dept, name="phys").pk
    changes = sorted(
        f"{change.node_name}: {change.what()}"
        for change in ShareChange.objects.filter(cluster=dept)
    )
    assert changes == ["ann: added with 3 shares", "ann: removed from chem (had 2 shares)"]


def test_fairshare_parent_has_no_shares_to_audit() -> None:
    dept = slurm_tree(
        AssociationDef("chem", shares=10),
        AssociationDef("chem", parent="chem", user="ann", shares=USE_PARENT),
        AssociationDef("chem", parent="chem", user="bob", shares=1),
    )
    ann = Node.objects.get(cluster=dept, name="ann")
    assert (ann.shares, ann.shares_parent) == (None, True)
    slurm_tree(AssociationDef("chem", shares=10), AssociationDef("chem", parent="chem", user="bob"))
    assert not Node.objects.filter(cluster=dept, name="ann").exists()
    assert ShareChange.objects.filter(cluster=dept).count() == 0


def test_no_store_puts_a_node_deeper_than_max_tree_depth_and_a_stored_tree_keeps(
    settings: Any,
) -> None:
    """A tree stored before MAX_TREE_DEPTH was lowered is stored again as it is (its cycles
    go on); a group new or moved deeper than the limit is refused, and nothing is written."""
    from trees.engine.pbs import GroupDef
    from trees.services.clusters import cluster_get_or_create
    from trees.services.pbs import pbs_groups_add

    settings.MAX_TREE_DEPTH = 10
    cluster, _ = cluster_get_or_create(name="deep")
    chain = [GroupDef(f"g{n}", 10 + n, f"g{n - 1}" if n else "root", 1) for n in range(5)]
    with pbs_tree_held(cluster) as held:
        held.store(groups=chain, reason="five levels")
    settings.MAX_TREE_DEPTH = 3
    with pbs_tree_held(cluster) as held:
        assert held.store(reason="again").nodes == 7
    with pytest.raises(ValidationError, match=r"entry g5 is 6 levels below the root, deeper"):
        pbs_groups_add(cluster=cluster, groups=[("g5", "g4", 1)], reason="deeper")
    moved = [*chain[:2], GroupDef("g2", 12, "g1", 1), GroupDef("g3", 13, "g0", 1), chain[4]]
    with pbs_tree_held(cluster) as held:
        held.store(groups=moved, reason="g3 moves up, g4 with it")
    g4 = Node.objects.select_related("parent__parent").get(cluster=cluster, name="g4")
    assert g4.parent is not None
    assert g4.parent.parent is not None
    assert g4.parent.parent.name == "g0"
    with pbs_tree_held(cluster) as held, pytest.raises(ValidationError, match="entry g4 is 4"):
        held.store(groups=[*moved[:4], GroupDef("g4", 14, "g2", 1)], reason="g4 down again")
    g4 = Node.objects.select_related("parent").get(cluster=cluster, name="g4")
    assert g4.parent is not None
    assert g4.parent.name == "g3"
