"""trees.services.tree_edit on the white paper's tree (every leaf at 100, unknown_shares 10):
what is stored, the audit rows, concurrent edits, refusals that save nothing."""

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from tests.trees.engine.conftest import SEED_GROUPS
from trees.engine.edit import ChildEdit
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Membership, Node, NodeOrigin, Role, ShareChange
from trees.selectors.audit import share_changes_get
from trees.selectors.clusters import cluster_get
from trees.selectors.edit import tree_edit_preview_get
from trees.selectors.pbs import pbs_state_get, resource_group_text_get, tree_version_get
from trees.services.pbs import pbsfs_run, resource_group_import
from trees.services.people import membership_set
from trees.services.tree_edit import EditRefused, TreeChanged, tree_edit

pytestmark = pytest.mark.django_db
BY_NAME = {group.name: group for group in SEED_GROUPS}


@pytest.fixture
def whitepaper() -> Cluster:
    resource_group_import(cluster_name="wp", groups=SEED_GROUPS, pbs_messages=[], source="t")
    Cluster.objects.filter(name="wp").update(unknown_shares=10)
    cluster = cluster_get(name="wp")
    for leaf in range(1, 9):
        pbsfs_run(cluster=cluster, argv=["-s", f"L{leaf}", "100"])
    return cluster


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", is_staff=True)


def keep(entry: str, /, **changes: Any) -> ChildEdit:
    group = BY_NAME[entry]
    fields = {"original": entry, "name": entry, "parent": group.parent, "shares": group.shares}
    return ChildEdit(**{**fields, **changes})


def edit(cluster: Cluster, user: User, *edits: ChildEdit, reason: str = "policy 2026") -> Any:
    return tree_edit(
        cluster=cluster,
        edits=edits,
        reason=reason,
        version=tree_version_get(cluster=cluster),
        opened_at=timezone.now(),
        user=user,
    )


def stored(name: str) -> Node:
    return Node.objects.get(cluster__name="wp", name=name)


def test_shares_are_stored_with_the_metrics_the_preview_showed(
    whitepaper: Cluster, alice: User
) -> None:
    edits = (keep("L1"), keep("L2", shares=10))
    preview = {
        row.name: row for row in tree_edit_preview_get(cluster=whitepaper, edits=edits).changes
    }
    assert set(preview) == {"L1", "L2"}
    summary = edit(whitepaper, alice, *edits)
    assert summary.share_changes == 1
    for name in ("L1", "L2"):
        node = stored(name)
        assert (node.fairshare_perc, node.fairshare_factor) == (
            preview[name].perc_after,
            preview[name].factor_after,
        )
    assert stored("L1").fairshare_perc == pytest.approx(0.05)
    [change] = share_changes_get(cluster=whitepaper)
    assert (change.node_id, change.node_name, change.what()) == (
        stored("L2").pk,
        "L2",
        "0 → 10 shares",
    )
    assert (change.changed_by, change.reason) == (alice, "policy 2026")


def test_a_rename_keeps_the_node_its_children_and_memberships(
    whitepaper: Cluster, alice: User
) -> None:
    b3 = stored("B3")
    membership_set(user=alice, node=b3, role=Role.MANAGER)
    edit(whitepaper, alice, keep("B3", name="B3-renamed", shares=50), keep("L4"), keep("L3"))
    renamed = stored("B3-renamed")
    assert renamed.pk == b3.pk
    assert stored("L5").parent_id == b3.pk
    assert Membership.objects.get(user=alice).node_id == b3.pk
    assert not Node.objects.filter(cluster=whitepaper, name="B3").exists()
    [change] = share_changes_get(cluster=whitepaper)
    assert change.what() == "renamed from B3; 75 → 50 shares"
    # found by its old name
    assert list(share_changes_get(cluster=whitepaper, name="B3")) == [change]


def test_two_groups_swap_names_in_one_edit(whitepaper: Cluster, alice: User) -> None:
    b1, b4 = stored("B1").pk, stored("B4").pk
    edit(whitepaper, alice, keep("B1", name="B4"), keep("B4", name="B1"), keep("L7"), keep("B2"))
    assert (stored("B4").pk, stored("B1").pk) == (b1, b4)
    assert stored("L8").parent_id == b4  # still under the node, now named B1


def test_a_move_is_stored_and_audited_from_where_to_where(whitepaper: Cluster, alice: User) -> None:
    edit(whitepaper, alice, keep("L5", parent="B1"), keep("L6"))
    assert stored("L5").parent_id == stored("B1").pk
    assert stored("L5").fairshare_perc == pytest.approx(0.05)
    [change] = share_changes_get(cluster=whitepaper)
    assert change.what() == "moved from B3 to B1"


def test_removing_b3_takes_its_subtree_and_its_entities_keep_their_usage_under_unknown(
    whitepaper: Cluster, alice: User
) -> None:
    membership_set(user=alice, node=stored("B3"), role=Role.MEMBER)
    preview = tree_edit_preview_get(cluster=whitepaper, edits=[keep("B3", remove=True)])
    assert preview.edited.removed == ["B3", "L6", "L5"]
    assert preview.memberships_removed == 1
    edit(whitepaper, alice, keep("B3", remove=True), keep("L4"), keep("L3"))
    assert not Node.objects.filter(cluster=whitepaper, name="B3").exists()
    assert stored("unknown").pk == stored("L5").parent_id
    assert (stored("L5").origin, stored("L5").usage) == (NodeOrigin.USAGE, 100.0)
    assert not Membership.objects.exists()
    assert sorted(change.what() for change in share_changes_get(cluster=whitepaper)) == [
        "removed from B2 (had 75 shares)",
        "removed from B3 (had 10 shares)",
        "removed from B3 (had 5 shares)",
    ]


def test_an_edit_made_on_an_older_tree_is_refused_with_what_changed(
    whitepaper: Cluster, alice: User
) -> None:
    bob = User.objects.create_user("bob", is_staff=True)
    opened, version = timezone.now() - timedelta(seconds=1), tree_version_get(cluster=whitepaper)
    edit(whitepaper, alice, keep("L1", shares=20), keep("L2"))  # alice saves first
    with pytest.raises(TreeChanged) as refused:
        tree_edit(
            cluster=whitepaper,
            edits=[keep("L1", shares=30), keep("L2")],
            reason="mine",
            version=version,
            opened_at=opened,
            user=bob,
        )
    assert [change.what() for change in refused.value.changes] == ["10 → 20 shares"]
    assert "alice" in str(refused.value)
    assert stored("L1").shares == 20
    assert ShareChange.objects.count() == 1


def test_an_edit_with_problems_saves_nothing(whitepaper: Cluster, alice: User) -> None:
    before = pbs_state_get(cluster=whitepaper).groups
    with pytest.raises(EditRefused) as refused:
        edit(whitepaper, alice, keep("B2", parent="L6"), keep("L7", shares=5))
    assert [problem.field for problem in refused.value.problems] == ["parent"]
    assert pbs_state_get(cluster=whitepaper).groups == before
    assert not ShareChange.objects.exists()


def test_a_reason_is_required(whitepaper: Cluster, alice: User) -> None:
    with pytest.raises(ValidationError, match="a reason is required"):
        edit(whitepaper, alice, keep("L7", shares=5), reason="  ")
    assert stored("L7").shares == 40


def test_the_exported_resource_group_reads_back_as_the_edited_entries(
    whitepaper: Cluster, alice: User
) -> None:
    edit(whitepaper, alice, keep("B4", parent="B1"), keep("L7"), keep("B2"), keep("B1"))
    text = resource_group_text_get(cluster=whitepaper, now=timezone.now())
    assert parse_resource_group(text.encode()).groups == pbs_state_get(cluster=whitepaper).groups
    lines = [line.split("\t") for line in text.splitlines() if not line.startswith("#")]
    order = [fields[0] for fields in lines]
    assert order.index("B1") < order.index("B4") < order.index("L8")
