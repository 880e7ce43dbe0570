"""Edits of the white paper's tree (seed 000, every leaf at 100, unknown_shares 10), checked by
hand and against a fresh build of the edited resource_group."""

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.trees.engine.conftest import SEED_GROUPS, SEED_RECORDS
from trees.engine.edit import (
    WHOLE_EDIT,
    ChildEdit,
    EditedTree,
    EntryChange,
    StandingChange,
    edit_tree,
    entries_diff,
    name_problem,
    standing_changes,
    tree_version,
)
from trees.engine.pbs import GroupDef, PbsTree, UsageRecord, compute

BY_NAME = {group.name: group for group in SEED_GROUPS}


def keep(entry: str, /, **changes: object) -> ChildEdit:
    """The row of an existing entry, as the form shows it, with `changes` made."""
    group = BY_NAME[entry]
    fields = {"original": entry, "name": entry, "parent": group.parent, "shares": group.shares}
    return ChildEdit(**{**fields, **changes})  # type: ignore[arg-type]


def new(name: str, parent: str, shares: int) -> ChildEdit:
    return ChildEdit(original="", name=name, parent=parent, shares=shares)


def build(groups: Sequence[GroupDef], records: Sequence[UsageRecord] = SEED_RECORDS) -> PbsTree:
    return PbsTree.build(groups, records, unknown_shares=10)


def at(tree: PbsTree, name: str) -> int:
    node = tree.find(name)
    assert node is not None, name
    return node


def edited(*edits: ChildEdit, usage_names: tuple[str, ...] | set[str] = ()) -> EditedTree:
    result = edit_tree(SEED_GROUPS, edits, usage_names=usage_names)
    assert result.problems == []
    return result


def problems(
    *edits: ChildEdit, usage_names: tuple[str, ...] | set[str] = ()
) -> list[tuple[int, str, str]]:
    result = edit_tree(SEED_GROUPS, edits, usage_names=usage_names)
    assert result.groups == list(SEED_GROUPS)  # nothing applied
    return [(problem.row, problem.field, problem.message) for problem in result.problems]


def changes_of(
    result: EditedTree, records: Sequence[UsageRecord] = SEED_RECORDS
) -> list[StandingChange]:
    return standing_changes(
        build(SEED_GROUPS, records), build(result.groups, records), result.renamed
    )


class TestShares:
    def test_l2_from_0_to_10_halves_l1s_target_and_gives_l2_its_own(self):
        result = edited(keep("L1"), keep("L2", shares=10))
        assert result.groups == [
            *SEED_GROUPS[:10],
            GroupDef("L2", 102, "B1", 10),
            SEED_GROUPS[11],
        ]
        rows = {row.name: row for row in changes_of(result)}
        assert set(rows) == {"L1", "L2"}  # B1's target and usage stay: nothing else moves
        l1, l2 = rows["L1"], rows["L2"]
        assert (l1.perc_before, l1.perc_after) == pytest.approx((0.10, 0.05))
        assert (l2.perc_before, l2.perc_after) == (0.0, l1.perc_after)
        # fairshare_tree_usage of L1: 201/801 alone in B1; 100/801 + (201/801 - 100/801) / 2.
        assert l1.factor_before == pytest.approx(2 ** -((201 / 801) / 0.10), rel=1e-6)
        assert l1.factor_after == pytest.approx(2 ** -((150.5 / 801) / 0.05), rel=1e-6)
        assert l2.factor_before == 0.0  # perc 0
        assert l2.factor_after == l1.factor_after
        assert (l1.old_name, l1.parent, l1.leaf) == ("L1", "B1", True)

    def test_after_is_what_a_fresh_build_of_the_edited_file_computes(self):
        result = edited(keep("B1", shares=30), keep("B4", shares=0))
        fresh = build(result.groups)
        metrics = compute(fresh)
        for row in changes_of(result):
            node = at(fresh, row.name)
            assert row.perc_after == float(metrics.fairshare_perc[node])
            assert row.factor_after == metrics.fairshare_factor(node)

    def test_negative_or_too_large_shares_are_field_problems(self):
        assert problems(keep("L1", shares=-1), keep("L2", shares=2**31)) == [
            (0, "shares", "shares must be from 0 to 2,147,483,647"),
            (1, "shares", "shares must be from 0 to 2,147,483,647"),
        ]

    def test_rows_as_shown_change_nothing(self):
        assert problems(keep("L1"), keep("L2")) == [(WHOLE_EDIT, "__all__", "nothing is changed")]

    def test_parent_treeroot_counts_as_root(self):
        assert problems(keep("B1", parent="TREEROOT", shares=10))[0][1] == "parent"
        assert problems(keep("B1", parent="root")) == [
            (WHOLE_EDIT, "__all__", "nothing is changed")
        ]


class TestRename:
    def test_b3_renamed_takes_its_children_and_keeps_its_cgroup_and_numbers(self):
        result = edited(keep("B3", name="B3x"), keep("L4"), keep("L3"))
        assert result.renamed == {"B3": "B3x"}
        assert GroupDef("B3x", 210, "B2", 75) in result.groups
        assert GroupDef("L5", 211, "B3x", 10) in result.groups
        assert GroupDef("L6", 212, "B3x", 5) in result.groups
        [row] = changes_of(result)  # listed for its name; its numbers are the same
        assert (row.name, row.old_name) == ("B3x", "B3")
        assert row.perc_before == row.perc_after
        assert row.factor_before == row.factor_after

    def test_a_renamed_leaf_leaves_its_usage_under_its_old_name_as_pbs_does(self):
        result = edited(keep("L7", name="L7b"))
        rows = {row.name: row for row in changes_of(result)}
        assert rows["L7"].parent == "unknown"
        assert rows["L7"].old_name == ""
        after = build(result.groups)
        assert after.usage(at(after, "L7b")) == 1.0

    def test_two_entries_may_swap_names(self):
        result = edited(keep("B1", name="B4"), keep("B4", name="B1"))
        assert result.renamed == {"B1": "B4", "B4": "B1"}
        assert GroupDef("L8", 301, "B1", 5) in result.groups  # B4's child follows its entry
        build(result.groups)

    def test_a_name_in_use_elsewhere_is_refused(self):
        assert problems(keep("B1", name="L5")) == [
            (0, "name", "L5 is another entry's name (PBS names are unique)")
        ]

    def test_renaming_to_an_entity_with_usage_under_unknown_is_refused(self):
        [(row, field, message)] = problems(keep("L7", name="ghost"), usage_names={"ghost"})
        assert (row, field) == (0, "name")
        assert "merge two entities' usage" in message

    @pytest.mark.parametrize(
        ("name", "why"),
        [
            ("", "a name is required"),
            ("unknown", "'unknown' is reserved by PBS"),
            ("root", "'root' is reserved by PBS"),
            ("TREEROOT", "'TREEROOT' is reserved by PBS"),
            (
                "two words",
                "use only letters, digits and . _ : - (resource_group splits names on spaces)",
            ),
            ("#x", "use only letters, digits and . _ : - (resource_group splits names on spaces)"),
            ("x" * 50, "PBS keeps names of at most 49 characters"),
        ],
    )
    def test_names_pbs_cannot_keep_are_refused_with_why(self, name, why):
        assert name_problem(name) == why
        assert problems(keep("L7", name=name)) == [(0, "name", why)]

    def test_49_characters_are_fine(self):
        assert name_problem("x" * 49) == ""


class TestMove:
    def test_l5_under_b1_shares_b1s_target_with_l1_and_l2(self):
        result = edited(keep("L5", parent="B1"), keep("L6"))
        assert result.moved == {"L5": ("B3", "B1")}
        rows = {row.name: row for row in changes_of(result)}
        assert rows["L5"].perc_after == pytest.approx(0.10 * 10 / 20)
        assert rows["L5"].parent == "B1"
        assert rows["L6"].perc_after == pytest.approx(0.15)  # alone in B3 now

    def test_an_entry_defined_before_its_new_parent_is_written_after_it(self):
        result = edited(keep("B4", parent="B1"), keep("L7"), keep("B2"), keep("B1"))
        names = [group.name for group in result.groups]
        assert names.index("B4") > names.index("B1")
        assert names.index("L8") > names.index("B4")
        after = build(result.groups)
        assert after.tree.parent[at(after, "B4")] == at(after, "B1")

    def test_under_its_own_descendant_is_refused(self):
        assert problems(keep("B2", parent="L6")) == [
            (0, "parent", "B2 cannot move under L6: it is inside B2's own subtree")
        ]

    def test_under_itself_is_refused(self):
        assert problems(keep("B2", parent="B2")) == [
            (0, "parent", "B2 cannot move under B2: it is inside B2's own subtree")
        ]

    @pytest.mark.parametrize(
        ("parent", "why"),
        [
            ("nowhere", "nowhere is not in the tree"),
            ("", "(empty) is not in the tree"),
            ("unknown", "use `root` for the top; unknown is PBS's own"),
        ],
    )
    def test_a_parent_that_cannot_be_is_refused(self, parent, why):
        assert problems(keep("L7", parent=parent)) == [(0, "parent", why)]

    def test_under_an_entry_removed_in_the_same_edit_is_refused(self):
        assert problems(keep("B1", remove=True), keep("L7", parent="B1")) == [
            (1, "parent", "B1 is being removed")
        ]


class TestAddAndRemove:
    def test_a_new_entity_under_b4_gets_the_next_cgroup_and_halves_l8(self):
        result = edited(keep("L8"), new("L9", "B4", 5))
        assert result.added == ["L9"]
        assert result.groups[-1] == GroupDef("L9", 401, "B4", 5)
        rows = {row.name: row for row in changes_of(result)}
        assert set(rows) == {"L8", "L9"}  # L9 has no usage: B4's usage stays 101
        assert rows["L9"].perc_before is None
        assert rows["L9"].old_name == ""
        assert rows["L8"].perc_after == rows["L9"].perc_after == pytest.approx(0.10)

    def test_a_new_entry_named_like_an_entity_under_unknown_takes_its_usage(self):
        records = (*SEED_RECORDS, UsageRecord("ghost", 500.0))
        result = edited(new("ghost", "B4", 5), usage_names={"ghost"})
        after = build(result.groups, records)
        assert after.name(after.tree.parent[at(after, "ghost")]) == "B4"
        assert after.usage(at(after, "B4")) == 601.0
        rows = {row.name: row for row in changes_of(result, records)}
        assert rows["ghost"].old_name == "ghost"
        assert rows["ghost"].parent == "B4"

    def test_removing_b3_takes_its_subtree_and_its_entities_usage_goes_under_unknown(self):
        result = edited(keep("B3", remove=True), keep("L4"), keep("L3"))
        assert result.removed == ["B3", "L6", "L5"]
        rows = {row.name: row for row in changes_of(result)}
        assert rows["B3"].perc_after is None
        assert rows["B3"].factor_after is None
        assert rows["L5"].parent == rows["L6"].parent == "unknown"
        assert rows["L5"].perc_after == pytest.approx(0.10 / 2)  # unknown's 10%, 1 share each
        assert "B2" in rows  # its usage fell from 401 to 201

    def test_two_new_rows_of_one_name_are_refused_on_the_second(self):
        assert problems(new("x", "B4", 1), new("x", "B1", 1)) == [
            (1, "name", "x is another row's name (PBS names are unique)")
        ]

    def test_a_new_row_named_like_an_entry_is_refused(self):
        assert problems(new("L1", "B4", 1)) == [
            (0, "name", "L1 is another entry's name (PBS names are unique)")
        ]

    def test_a_row_for_an_entry_no_longer_there_is_refused(self):
        assert problems(ChildEdit("L99", "L99", "B1", 5)) == [
            (0, "name", "L99 is no longer in the tree")
        ]

    def test_one_entry_in_two_rows_is_refused(self):
        assert problems(keep("L1", shares=1), keep("L1", shares=2)) == [
            (1, "name", "L1 is edited twice")
        ]


class TestVersion:
    def test_the_same_entries_have_the_same_version(self):
        assert tree_version(SEED_GROUPS) == tree_version(list(SEED_GROUPS))

    @pytest.mark.parametrize("field", ["name", "cgroup", "parent", "shares"])
    def test_any_field_of_any_entry_changes_it(self, field):
        group = SEED_GROUPS[4]
        value = {"name": "B3x", "cgroup": 999, "parent": "B1", "shares": 76}[field]
        changed = [*SEED_GROUPS[:4], GroupDef(**{**group.__dict__, field: value}), *SEED_GROUPS[5:]]
        assert tree_version(changed) != tree_version(SEED_GROUPS)

    def test_order_changes_it(self):
        assert tree_version(SEED_GROUPS[::-1]) != tree_version(SEED_GROUPS)


@given(
    shares=st.lists(st.integers(min_value=0, max_value=1000), min_size=12, max_size=12),
    remove=st.sets(st.sampled_from([1, 2, 5, 6, 7, 8, 10, 11]), max_size=3),  # leaves
)
def test_preview_rows_are_exactly_the_nodes_whose_numbers_differ(shares, remove):
    """Whatever the shares: a node is listed iff its perc or factor differs, and the values
    listed are both trees' own."""
    edits = [
        keep(group.name, shares=share, remove=index in remove)
        for index, (group, share) in enumerate(zip(SEED_GROUPS, shares, strict=True))
    ]
    result = edit_tree(SEED_GROUPS, edits)
    if result.problems:
        assert [problem.field for problem in result.problems] == ["__all__"]
        return
    before, after = build(SEED_GROUPS), build(result.groups)
    old, now = compute(before), compute(after)
    rows = {row.name: row for row in standing_changes(before, after, result.renamed)}
    for node in range(1, len(after)):
        name = after.name(node)
        was = before.find(name)
        differs = was is None or (
            float(old.fairshare_perc[was]) != float(now.fairshare_perc[node])
            or old.fairshare_factor(was) != now.fairshare_factor(node)
        )
        assert (name in rows) == differs, name
        if differs:
            assert rows[name].factor_after == now.fairshare_factor(node)
    gone = {before.name(n) for n in range(1, len(before))} - {
        after.name(n) for n in range(1, len(after))
    }
    assert {name for name, row in rows.items() if row.perc_after is None} == gone


def test_entries_diff_names_every_kind_of_change_by_hand() -> None:
    old = [
        GroupDef("B1", 100, "root", 10),
        GroupDef("L1", 101, "B1", 10),
        GroupDef("B2", 200, "root", 20),
        GroupDef("L3", 201, "B2", 10),
        GroupDef("L7", 400, "root", 40),
    ]
    new = [
        GroupDef("B1", 100, "root", 10),  # loses L1: now an entity
        GroupDef("Bx", 200, "root", 25),  # B2's cgroup: renamed, and re-shared
        GroupDef("L3", 201, "Bx", 10),  # under the renamed group: moved
        GroupDef("L7", 400, "root", 40),  # as it was: not listed
        GroupDef("L9", 900, "L7", 1),  # new, and L7 now a group
    ]
    assert entries_diff(old, new) == [
        EntryChange("B1", "now an entity", "under root, 10 shares", "under root, 10 shares"),
        EntryChange(
            "Bx",
            "renamed from B2 (same cgroup; usage stays with the old name), re-shared",
            "under root, 20 shares",
            "under root, 25 shares",
        ),
        EntryChange("L3", "moved", "under B2, 10 shares", "under Bx, 10 shares"),
        EntryChange("L7", "now a group", "under root, 40 shares", "under root, 40 shares"),
        EntryChange("L9", "added", "", "under L7, 1 shares"),
        EntryChange("L1", "removed", "under B1, 10 shares", ""),
    ]


def test_entries_diff_of_a_file_with_the_same_tree_is_empty() -> None:
    assert entries_diff(SEED_GROUPS, list(SEED_GROUPS)) == []
