"""trees.engine.pbs: the fairshare tree and numbers of OpenPBS, float32 quirks included.

The expected values come from pbsfs-behaviour.md (the reference) and the seeds 000 and 001.
"""

import dataclasses
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.pbs import (
    TREEROOT,
    UNKNOWN,
    GroupDef,
    PbsTree,
    UsageRecord,
    compare,
    compute,
    deserving_key,
    deserving_ranks,
    deserving_ranks_of_tree,
    f32,
    fairshare_factors,
    is_valid_pbs_name,
    key_rows,
    node_depths,
)
from trees.engine.tree import ROOT


def make(*lines, records=(), unknown_shares=0, trim=False, last_decay=0):
    """A PbsTree from resource_group lines (`name cgroup parent shares`) and (name, usage)."""
    groups = []
    for line in lines:
        name, cgroup, parent, shares = line.split()
        groups.append(GroupDef(name, int(cgroup), parent, int(shares)))
    return PbsTree.build(
        groups,
        [UsageRecord(name, usage) for name, usage in records],
        unknown_shares=unknown_shares,
        trim=trim,
        last_decay=last_decay,
    )


def node(pbs, name):
    found = pbs.find(name)
    assert found is not None, name
    return found


def usage(pbs, name):
    return pbs.usage(node(pbs, name))


def perc(pbs, metrics, name):
    return float(metrics.fairshare_perc[node(pbs, name)])


def tree_usage(pbs, metrics, name):
    return float(metrics.fairshare_tree_usage[node(pbs, name)])


def names(pbs, nodes):
    return [pbs.name(n) for n in nodes]


def record_names(pbs):
    return [record.name for record in pbs.records()]


def cmp(pbs, a, b):
    return compare(pbs, compute(pbs), node(pbs, a), node(pbs, b))


class TestF32:
    def test_rounds_to_the_nearest_single(self):
        assert f32(0.1) == 0.10000000149011612
        assert f32(1 / 3) == 0.3333333432674408

    def test_keeps_values_a_single_holds_exactly(self):
        assert f32(0.5) == 0.5
        assert f32(100.0) == 100.0

    def test_decay_factor_0_7_is_not_0_7(self):
        assert f32(0.7) == 0.699999988079071


class TestIsValidPbsName:
    @pytest.mark.parametrize("name", ["alice", "L5", "a.b-c_d e:f", "A" * 49, "0123"])
    def test_accepts_letters_digits_and_dot_dash_underscore_space_colon(self, name):
        assert is_valid_pbs_name(name)

    @pytest.mark.parametrize(
        "name", ["A" * 50, "a/b", "a@b", "tab\there", "café", "a\nb", "\u0663", "é" * 30]
    )
    def test_refuses_other_characters_and_names_of_50_bytes_or_more(self, name):
        assert not is_valid_pbs_name(name)


class TestRecordTypes:
    def test_group_def_is_frozen(self):
        group = GroupDef("A", 1, "root", 5)
        with pytest.raises(dataclasses.FrozenInstanceError):
            group.shares = 6  # type: ignore[misc]

    def test_usage_record_is_frozen_and_compares_by_value(self):
        record = UsageRecord("a", 1.5)
        assert record == UsageRecord("a", 1.5)
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.usage = 2.0  # type: ignore[misc]


class TestPreload:
    def test_treeroot_has_cgroup_0_resgroup_minus_1_shares_minus_1_usage_1(self):
        pbs = PbsTree()

        assert pbs.name(ROOT) == TREEROOT
        assert pbs.cresgroup[ROOT] == 0
        assert pbs.resgroup(ROOT) == -1
        assert pbs.shares(ROOT) == -1
        assert pbs.usage(ROOT) == 1.0

    def test_unknown_has_cgroup_1_resgroup_0_and_the_unknown_shares(self):
        pbs = PbsTree(unknown_shares=7)

        assert pbs.name(pbs.unknown) == UNKNOWN
        assert pbs.cresgroup[pbs.unknown] == 1
        assert pbs.resgroup(pbs.unknown) == 0
        assert pbs.shares(pbs.unknown) == 7
        assert pbs.usage(pbs.unknown) == 1.0

    def test_unknown_shares_default_to_0(self):
        assert PbsTree().shares(PbsTree().unknown) == 0

    def test_last_decay_is_kept(self):
        assert make(last_decay=1_700_000_000).last_decay == 1_700_000_000


class TestDefine:
    def test_children_are_listed_in_reverse_definition_order(self, seed_tree):
        assert names(seed_tree, seed_tree.chain(ROOT)) == ["B1", "B2", "L7", "B4", UNKNOWN]
        assert names(seed_tree, seed_tree.chain(node(seed_tree, "B2"))) == ["L3", "L4", "B3"]

    def test_resgroup_is_the_parent_cgroup(self, seed_tree):
        l5 = node(seed_tree, "L5")
        assert seed_tree.resgroup(l5) == 210
        assert seed_tree.cresgroup[l5] == 211

    def test_parent_root_means_treeroot(self):
        pbs = make("A 5 root 1")
        assert pbs.tree.parent[node(pbs, "A")] == ROOT

    def test_parent_treeroot_by_name_is_found_as_well(self):
        pbs = make("A 5 TREEROOT 1")
        assert pbs.tree.parent[node(pbs, "A")] == ROOT

    def test_a_group_named_root_cannot_be_a_parent(self):
        pbs = make("root 5 root 1", "a 6 root 1")
        assert pbs.tree.parent[node(pbs, "a")] == ROOT
        assert pbs.is_leaf(node(pbs, "root"))

    @pytest.mark.parametrize("name", ["A", TREEROOT, UNKNOWN])
    def test_a_name_already_in_the_tree_is_refused(self, name):
        pbs = make("A 5 root 1")
        with pytest.raises(ValueError, match=f"^entity {name} is not unique$"):
            pbs.define(GroupDef(name, 9, "root", 1))

    def test_a_parent_defined_later_is_refused(self):
        pbs = PbsTree()
        with pytest.raises(ValueError, match=r"^Parent ginfo of a doesnt exist\.$"):
            pbs.define(GroupDef("a", 9, "A", 1))

    def test_gpath_runs_from_treeroot_to_the_node(self, seed_tree):
        assert names(seed_tree, seed_tree.gpath(node(seed_tree, "L5"))) == [
            TREEROOT,
            "B2",
            "B3",
            "L5",
        ]

    def test_gpath_of_treeroot_is_empty(self, seed_tree):
        assert seed_tree.gpath(ROOT) == []

    def test_preorder_is_node_then_subtree_then_next_sibling_newest_first(self, seed_tree):
        expected = [TREEROOT, "B1", "L1", "L2", "B2", "L3", "L4", "B3", "L5", "L6", "L7", "B4"]
        assert names(seed_tree, seed_tree.preorder()) == [*expected, "L8", UNKNOWN]


class TestReadUsage:
    def test_a_leaf_record_adds_to_every_ancestor_and_groups_start_at_1(self, seed_tree):
        assert usage(seed_tree, "L5") == 100.0
        assert usage(seed_tree, "B3") == 201.0
        assert usage(seed_tree, "B2") == 401.0
        assert usage(seed_tree, TREEROOT) == 801.0

    def test_a_leaf_without_a_record_is_1_and_adds_nothing(self):
        pbs = make("G 1 root 1", "a 2 G 1", "b 3 G 1", records=[("a", 5.0)])
        assert usage(pbs, "b") == 1.0
        assert usage(pbs, "G") == 6.0
        assert usage(pbs, TREEROOT) == 6.0

    @pytest.mark.parametrize(("value", "group"), [(1.0, 6.0), (1.00001, 7.00001)])
    def test_a_record_of_just_above_1_is_propagated_one_of_1_is_not(self, value, group):
        """A record of exactly 1 is an entity PBS holds without usage (find_alloc_ginfo makes
        one for a job and adds nothing up its path; rec_write_usage never writes a 1)."""
        pbs = make("G 1 root 1", "a 2 G 1", "b 3 G 1", records=[("a", 5.0), ("b", value)])
        assert usage(pbs, "G") == group

    def test_a_record_of_0_stays_0(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("a", 0.0)])
        assert usage(pbs, "a") == 0.0
        assert usage(pbs, "G") == 1.0

    def test_a_fractional_record_below_1_is_kept(self):
        pbs = make("a 2 root 1", records=[("a", 0.5)])
        assert usage(pbs, "a") == 0.5
        assert usage(pbs, TREEROOT) == 1.5

    @pytest.mark.parametrize("bad", [-1.0, -0.001, math.nan, -math.inf])
    def test_negative_and_nan_records_are_dropped(self, bad):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("a", bad)])
        assert usage(pbs, "a") == 1.0
        assert usage(pbs, "G") == 1.0

    @pytest.mark.parametrize("name", ["a/b", "x" * 50, "é"])
    def test_records_with_invalid_names_are_dropped(self, name):
        pbs = make("a 2 root 1", records=[(name, 5.0)])
        assert pbs.find(name) is None
        assert usage(pbs, TREEROOT) == 1.0

    def test_a_group_record_overwrites_the_group_and_later_leaves_add_on_top(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("G", 50.0), ("a", 5.0)])
        assert usage(pbs, "G") == 55.0
        assert usage(pbs, TREEROOT) == 6.0

    def test_a_group_record_after_the_leaves_wipes_their_sum(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("a", 5.0), ("G", 50.0)])
        assert usage(pbs, "G") == 50.0

    def test_a_record_named_treeroot_overwrites_the_root(self):
        pbs = make("a 2 root 1", records=[("a", 5.0), (TREEROOT, 3.0)])
        assert usage(pbs, TREEROOT) == 3.0

    def test_a_repeated_leaf_record_overwrites_the_leaf_and_adds_again(self):
        pbs = make("a 2 root 1", records=[("a", 5.0), ("a", 7.0)])
        assert usage(pbs, "a") == 7.0
        assert usage(pbs, TREEROOT) == 13.0

    def test_an_unknown_name_becomes_a_child_of_unknown_with_1_share(self):
        pbs = make("a 2 root 1", records=[("x", 5.0)])
        x = node(pbs, "x")

        assert pbs.tree.parent[x] == pbs.unknown
        assert pbs.shares(x) == 1
        assert pbs.cresgroup[x] == -1
        assert pbs.resgroup(x) == 1
        assert usage(pbs, UNKNOWN) == 6.0
        assert usage(pbs, TREEROOT) == 6.0

    def test_unknown_children_are_in_reverse_record_order(self):
        pbs = make(records=[("x", 2.0), ("y", 3.0), ("z", 4.0)])
        assert names(pbs, pbs.chain(pbs.unknown)) == ["z", "y", "x"]
        assert names(pbs, pbs.unknown_entities()) == ["z", "y", "x"]

    def test_trim_ignores_names_not_in_the_tree(self):
        pbs = make("a 2 root 1", records=[("x", 5.0), ("a", 3.0)], trim=True)
        assert pbs.find("x") is None
        assert pbs.unknown_entities() == []
        assert usage(pbs, TREEROOT) == 4.0

    def test_set_usage_changes_only_the_node(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("a", 5.0)])
        pbs.set_usage(node(pbs, "a"), 9.0)
        assert usage(pbs, "a") == 9.0
        assert usage(pbs, "G") == 6.0


class TestRecords:
    def test_order_is_chain_leaves_then_subtrees_from_the_chain_end(self):
        pbs = make(
            *("P 1 root 1", "p1 2 P 1", "p2 3 P 1", "Q 4 root 1", "q1 5 Q 1"),
            *("Q2 6 Q 1", "q21 7 Q2 1", "R 8 root 1", "S 9 root 1"),
            records=[(n, 5.0) for n in ("p1", "p2", "q1", "q21", "R", "S", "x", "y")],
        )
        assert record_names(pbs) == ["S", "R", "y", "x", "p2", "p1", "q1", "q21"]

    def test_seed_tree_order(self, seed_tree):
        assert record_names(seed_tree) == ["L7", "L8", "L3", "L4", "L5", "L6", "L1", "L2"]

    def test_a_leaf_at_exactly_1_is_not_written(self):
        pbs = make("a 1 root 1", "b 2 root 1", records=[("a", 1.0), ("b", 1.00001)])
        assert pbs.records() == [UsageRecord("b", 1.00001)]

    def test_a_leaf_at_0_is_written(self):
        pbs = make("a 1 root 1", records=[("a", 0.0)])
        assert pbs.records() == [UsageRecord("a", 0.0)]

    def test_groups_are_never_written(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("G", 50.0)])
        assert pbs.records() == []

    def test_the_unknown_group_is_never_written_even_as_a_leaf(self):
        pbs = make(records=[(UNKNOWN, 5.0)])
        assert pbs.is_leaf(pbs.unknown)
        assert usage(pbs, UNKNOWN) == 5.0
        assert pbs.records() == []

    def test_usage_set_on_a_leaf_is_written(self):
        pbs = make("a 1 root 1")
        pbs.set_usage(node(pbs, "a"), 12.5)
        assert pbs.records() == [UsageRecord("a", 12.5)]


class TestDecay:
    def test_factor_0_5_halves_every_node(self):
        pbs = make("G 1 root 1", "a 2 G 1", records=[("a", 100.0)])
        pbs.decay(0.5)
        assert (usage(pbs, "a"), usage(pbs, "G"), usage(pbs, TREEROOT)) == (50.0, 50.5, 50.5)

    def test_factor_0_7_is_applied_as_a_float32(self):
        pbs = make("a 2 root 1", records=[("a", 100.0)])
        pbs.decay(0.7)
        assert usage(pbs, "a") == 69.9999988079071
        assert usage(pbs, "a") == 100 * f32(0.7)

    @pytest.mark.parametrize("value", [0.0, 0.5, 0.99999, 1.00001, 1.5])
    def test_values_falling_below_1_become_exactly_1_and_are_not_written(self, value):
        pbs = make("a 2 root 1", "b 3 root 1", records=[("a", value), ("b", 10.0)])
        pbs.decay(0.5)
        assert usage(pbs, "a") == 1.0
        assert pbs.records() == [UsageRecord("b", 5.0)]

    def test_groups_at_1_stay_at_1(self):
        pbs = make("G 1 root 1", "a 2 G 1")
        pbs.decay(0.5)
        assert usage(pbs, "G") == 1.0

    def test_an_unknown_entity_decayed_to_1_is_not_written(self):
        pbs = make(records=[("x", 1.5), ("y", 4.0)])
        pbs.decay(0.5)
        assert pbs.records() == [UsageRecord("y", 2.0)]


class TestPercentages:
    def test_seed_tree_percentages(self, seed_tree):
        metrics = compute(seed_tree)
        printed = {seed_tree.name(n): f"{metrics.percent(n):6.3f}" for n in seed_tree.preorder()}
        assert printed == {
            TREEROOT: "100.000",
            "B1": "10.000",
            "L1": "10.000",
            "L2": " 0.000",
            "B2": "20.000",
            "L3": " 2.000",
            "L4": " 3.000",
            "B3": "15.000",
            "L5": "10.000",
            "L6": " 5.000",
            "L7": "40.000",
            "B4": "20.000",
            "L8": "20.000",
            UNKNOWN: "10.000",
        }

    def test_seed_l5_percentage_is_10_000001(self, seed_tree):
        metrics = compute(seed_tree)
        assert f"{metrics.percent(node(seed_tree, 'L5')):f}" == "10.000001"

    def test_group_percentage_is_shares_over_the_sibling_sum_in_float32(self, seed_tree):
        metrics = compute(seed_tree)
        assert float(metrics.group_percentage[node(seed_tree, "L5")]) == f32(10 / 15)
        assert float(metrics.group_percentage[node(seed_tree, "B3")]) == 0.75
        assert float(metrics.group_percentage[node(seed_tree, "B2")]) == f32(20 / 100)

    def test_tree_percentage_is_the_float32_product_down_the_path(self, seed_tree):
        metrics = compute(seed_tree)
        b2 = f32(20 / 100)
        b3 = f32(0.75 * b2)
        assert perc(seed_tree, metrics, "B3") == b3
        assert perc(seed_tree, metrics, "L5") == f32(f32(10 / 15) * b3)

    def test_unknown_shares_count_in_the_root_sibling_sum(self):
        metrics_pbs = make("A 1 root 30", unknown_shares=10)
        metrics = compute(metrics_pbs)
        assert perc(metrics_pbs, metrics, "A") == 0.75
        assert perc(metrics_pbs, metrics, UNKNOWN) == 0.25

    @pytest.mark.parametrize(
        ("a", "b", "printed"),
        [(3, 2, "60.000004"), (1, 8, "11.111112"), (2, 7, "22.222223")],
    )
    def test_float32_artifacts_in_the_percentage(self, a, b, printed):
        pbs = make(f"A 1 root {a}", f"B 2 root {b}")
        assert f"{compute(pbs).percent(node(pbs, 'A')):f}" == printed

    def test_zero_shares_give_0_to_the_node(self, seed_tree):
        metrics = compute(seed_tree)
        l2 = node(seed_tree, "L2")
        assert float(metrics.group_percentage[l2]) == 0.0
        assert float(metrics.fairshare_perc[l2]) == 0.0
        assert metrics.usage_perc(l2) == -1.0
        assert metrics.fairshare_factor(l2) == 0.0

    def test_a_zero_share_group_gives_0_to_its_whole_subtree(self):
        pbs = make("Z 1 root 0", "z1 2 Z 5", "Z2 3 Z 5", "z21 4 Z2 1", "A 5 root 1")
        metrics = compute(pbs)
        for name in ("Z", "z1", "Z2", "z21"):
            n = node(pbs, name)
            assert float(metrics.fairshare_perc[n]) == 0.0, name
            assert float(metrics.group_percentage[n]) == 0.0, name
            assert metrics.usage_perc(n) == -1.0, name
            assert metrics.fairshare_factor(n) == 0.0, name
        assert perc(pbs, metrics, "A") == 1.0

    def test_siblings_summing_to_zero_all_get_0(self):
        pbs = make("A 1 root 0", "B 2 root 0")
        metrics = compute(pbs)
        assert perc(pbs, metrics, "A") == perc(pbs, metrics, "B") == 0.0
        assert perc(pbs, metrics, TREEROOT) == 1.0

    def test_negative_shares_give_negative_percentages(self):
        pbs = make("A 1 root 10", "B 2 root -3")
        metrics = compute(pbs)
        assert float(metrics.group_percentage[node(pbs, "B")]) == f32(-3 / 7)
        assert f"{metrics.percent(node(pbs, 'B')):f}" == "-42.857143"
        assert f"{metrics.percent(node(pbs, 'A')):f}" == "142.857147"

    def test_shares_cancelling_to_zero_give_0_to_both(self):
        pbs = make("A 1 root 5", "B 2 root -5")
        metrics = compute(pbs)
        assert perc(pbs, metrics, "A") == perc(pbs, metrics, "B") == 0.0

    def test_unknown_shares_0_give_unknown_entities_nothing(self):
        pbs = make("A 1 root 1", records=[("x", 5.0)])
        metrics = compute(pbs)
        x = node(pbs, "x")
        assert float(metrics.fairshare_perc[x]) == 0.0
        assert metrics.usage_perc(x) == -1.0
        assert metrics.fairshare_factor(x) == 0.0

    def test_unknown_entities_split_the_unknown_percentage_one_share_each(self):
        pbs = make("A 1 root 10", records=[("x", 5.0), ("y", 6.0), ("z", 7.0)], unknown_shares=10)
        metrics = compute(pbs)
        assert perc(pbs, metrics, UNKNOWN) == 0.5
        for name in ("x", "y", "z"):
            assert float(metrics.group_percentage[node(pbs, name)]) == f32(1 / 3)
            assert perc(pbs, metrics, name) == f32(f32(1 / 3) * 0.5)


class TestTreeUsage:
    def test_seed_l5_intermediate_values(self, seed_tree):
        metrics = compute(seed_tree)
        assert tree_usage(seed_tree, metrics, "B2") == f32(401 / 801) == f32(0.50062424)
        assert tree_usage(seed_tree, metrics, "B3") == f32(0.43820226)
        assert tree_usage(seed_tree, metrics, "L5") == f32(0.33374950)
        assert f"{tree_usage(seed_tree, metrics, 'L5'):f}" == "0.333750"

    def test_follows_the_float32_formula_step_by_step(self, seed_tree):
        metrics = compute(seed_tree)
        u = f32(201 / 801)
        expected = f32(u + f32(f32(f32(401 / 801) - u) * 0.75))
        assert tree_usage(seed_tree, metrics, "B3") == expected

    def test_the_usage_ratio_is_rounded_to_float32_before_the_blend(self):
        pbs = make(
            *("G 1 root 1", "a 2 G 7", "b 3 G 4", "c 4 root 1"),
            records=[("a", 667.0), ("b", 388.0), ("c", 807.0)],
        )
        u = f32(667 / 1863)
        expected = f32(u + f32(f32(f32(1056 / 1863) - u) * f32(7 / 11)))
        assert expected == 0.49089932441711426
        assert tree_usage(pbs, compute(pbs), "a") == expected

    def test_treeroot_tree_usage_is_0(self, seed_tree):
        assert tree_usage(seed_tree, compute(seed_tree), TREEROOT) == 0.0

    def test_a_zero_share_node_keeps_its_own_usage_ratio(self, seed_tree):
        assert tree_usage(seed_tree, compute(seed_tree), "L2") == f32(100 / 801)

    def test_forum_scott(self, forum_tree):
        metrics = compute(forum_tree)
        assert f"{tree_usage(forum_tree, metrics, 'Scott'):f}" == "0.832973"
        assert usage(forum_tree, TREEROOT) == 1201.0


class TestMetricsHelpers:
    @pytest.mark.parametrize(
        ("name", "factor"), [("Bob", 0.6477), ("Suzy", 0.3818), ("Scott", 0.0902)]
    )
    def test_forum_fairshare_factor(self, forum_tree, name, factor):
        """Suzy: 2^-(0.500083 / 0.36) from pbsfs's own `-g Suzy` numbers is 0.3818, not the
        0.3816 examples/README.md gives (that is Suzy without a usage record, see below)."""
        metrics = compute(forum_tree)
        assert round(metrics.fairshare_factor(node(forum_tree, name)), 4) == factor

    def test_forum_suzy_factor_is_0_3816_only_without_a_usage_record(self):
        pbs = make(
            *("group1 10 root 40", "Bob 11 group1 50", "Cathy 12 group1 50"),
            *("group2 20 root 60", "Suzy 21 group2 60", "Scott 22 group2 40"),
            records=[("Bob", 100.0), ("Cathy", 100.0), ("Scott", 1000.0)],
        )
        assert usage(pbs, "Suzy") == 1.0
        assert round(compute(pbs).fairshare_factor(node(pbs, "Suzy")), 4) == 0.3816

    def test_fairshare_factor_is_2_to_minus_the_float32_quotient(self, forum_tree):
        metrics = compute(forum_tree)
        bob = node(forum_tree, "Bob")
        quotient = metrics.fairshare_tree_usage[bob] / metrics.fairshare_perc[bob]
        assert quotient.dtype == np.float32
        assert metrics.fairshare_factor(bob) == 2.0 ** -float(quotient)

    def test_usage_perc_is_the_double_usage_over_the_float_percentage(self, seed_tree):
        metrics = compute(seed_tree)
        l5 = node(seed_tree, "L5")
        assert metrics.usage_perc(l5) == 100.0 / perc(seed_tree, metrics, "L5")
        assert metrics.usage_perc(l5) != 1000.0
        assert f"{metrics.usage_perc(l5):.0f}" == "1000"

    def test_percent_is_a_float32_multiply_by_100(self, seed_tree):
        metrics = compute(seed_tree)
        l5 = node(seed_tree, "L5")
        assert metrics.percent(l5) == f32(float(metrics.fairshare_perc[l5]) * 100)


class TestCompare:
    def test_seed_pairs(self, seed_tree):
        assert cmp(seed_tree, "L5", "L1") == -1
        assert cmp(seed_tree, "L1", "L2") == -1
        assert cmp(seed_tree, "L7", "L8") == -1
        assert cmp(seed_tree, "L3", "L4") == 1

    def test_decided_at_the_first_differing_level_by_the_ancestors(self):
        pbs = make(
            *("G1 1 root 1", "a 2 G1 1", "a2 3 G1 1", "G2 4 root 1", "c 5 G2 1"),
            records=[("a", 0.0), ("a2", 1000.0), ("c", 100.0)],
        )
        metrics = compute(pbs)
        assert metrics.usage_perc(node(pbs, "a")) < metrics.usage_perc(node(pbs, "c"))
        assert cmp(pbs, "a", "c") == 1
        assert cmp(pbs, "c", "a") == -1

    def test_an_exact_tie_goes_on_to_the_next_level(self):
        pbs = make(
            *("G1 1 root 1", "a 2 G1 1", "b 3 G1 1"),
            *("G2 4 root 1", "c 5 G2 1", "d 6 G2 1"),
            records=[("a", 10.0), ("c", 10.0)],
        )
        assert usage(pbs, "G1") == usage(pbs, "G2")
        assert cmp(pbs, "a", "d") == 1
        assert cmp(pbs, "b", "c") == -1
        assert cmp(pbs, "a", "c") == 0

    def test_a_node_against_its_ancestor_is_a_tie(self, seed_tree):
        assert cmp(seed_tree, "L5", "B2") == 0
        assert cmp(seed_tree, "B3", "L5") == 0
        assert cmp(seed_tree, "L5", "L5") == 0

    @pytest.mark.parametrize("other", ["B1", "L5", UNKNOWN, TREEROOT])
    def test_treeroot_ties_with_anything(self, seed_tree, other):
        assert cmp(seed_tree, TREEROOT, other) == 0
        assert cmp(seed_tree, other, TREEROOT) == 0

    def test_zero_percentage_loses_whatever_the_usage(self):
        pbs = make("Z 1 root 0", "P 2 root 1", records=[("Z", 0.0), ("P", 1e6)])
        assert cmp(pbs, "Z", "P") == 1
        assert cmp(pbs, "P", "Z") == -1

    def test_negative_percentage_loses(self):
        pbs = make("N 1 root -1", "P 2 root 3", records=[("P", 1e6)])
        assert perc(pbs, compute(pbs), "N") < 0
        assert cmp(pbs, "N", "P") == 1
        assert cmp(pbs, "P", "N") == -1

    def test_two_nonpositive_percentages_tie_without_looking_deeper(self):
        # G1 has a negative percentage; its child n has -1 of 1 shares, so n is positive again.
        # Going one level deeper would make n (> 0) beat c (0); PBS stops at G1 vs G2.
        pbs = make(
            *("G1 1 root -1", "n 2 G1 -1", "n2 3 G1 2"),
            *("G2 4 root 0", "c 5 G2 1", "H 6 root 2"),
        )
        metrics = compute(pbs)
        assert perc(pbs, metrics, "G1") < 0
        assert perc(pbs, metrics, "G2") == 0
        assert perc(pbs, metrics, "n") > 0
        assert cmp(pbs, "n", "c") == 0

    def test_unknown_entity_without_unknown_shares_loses_to_a_known_one(self):
        pbs = make("a 1 root 1", records=[("a", 1e6), ("x", 0.0)])
        assert cmp(pbs, "x", "a") == 1
        assert cmp(pbs, "a", "x") == -1

    def test_forum_pairs(self, forum_tree):
        assert cmp(forum_tree, "Bob", "Suzy") == -1
        assert cmp(forum_tree, "Scott", "Suzy") == 1
        assert cmp(forum_tree, "Bob", "Cathy") == 0

    def test_usage_overflowing_the_quotient_compares_without_warning(self):
        pbs = make("a 1 root 1", "b 2 root 9", records=[("a", 1e308)])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cmp(pbs, "a", "b") == 1


class TestFairshareFactorOverflow:
    def test_a_tiny_percentage_gives_factor_0_without_warning(self):
        lines, parent = [], "root"
        for level in range(11):
            lines += [f"g{level} {level} {parent} 1", f"s{level} {100 + level} {parent} 10000"]
            parent = f"g{level}"
        pbs = make(*lines, f"leaf 999 {parent} 1")
        metrics = compute(pbs)
        leaf = node(pbs, "leaf")
        assert 0 < float(metrics.fairshare_perc[leaf]) < 1e-38
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert metrics.fairshare_factor(leaf) == 0.0


EXACT_USAGE = st.one_of(
    st.just(0.0),
    st.integers(2, 10**6).map(float),
    st.integers(0, 4 * 10**4).map(lambda quarter: quarter / 4).filter(lambda u: u != 1.0),
)
ANY_USAGE = st.floats(0, 1e9, allow_nan=False, allow_infinity=False)


@st.composite
def cases(draw, *, usages=ANY_USAGE, min_shares=0):
    """Random resource groups (depth <= 4 under TREEROOT), leaf and unknown-entity records."""
    depth = {"root": 0}
    groups = []
    for i in range(draw(st.integers(0, 14))):
        parent = draw(st.sampled_from([name for name, d in depth.items() if d < 4]))
        name = f"n{i}"
        depth[name] = depth[parent] + 1
        groups.append(GroupDef(name, 100 + i, parent, draw(st.integers(min_shares, 100))))
    parents = {group.parent for group in groups}
    leaves = [group.name for group in groups if group.name not in parents]
    unknown = [f"x{i}" for i in range(draw(st.integers(0, 3)))]
    named = (
        draw(st.lists(st.sampled_from(leaves + unknown), unique=True)) if leaves or unknown else []
    )
    records = [UsageRecord(name, draw(usages)) for name in named]
    return groups, records, draw(st.integers(0, 100))


def lost_percentage(pbs, metrics):
    """The percentages of the nodes whose children all have 0 shares (TREEROOT included)."""
    lost = 0.0
    for n in range(len(pbs)):
        kids = pbs.chain(n)
        if kids and sum(pbs.shares(k) for k in kids) == 0:
            lost += float(metrics.fairshare_perc[n])
    return lost


def exact_percentages(pbs):
    """The percentages in rational arithmetic: shares / sibling sum, times the parent's."""
    exact = {ROOT: Fraction(1)}
    for n in pbs.preorder():
        if n == ROOT:
            continue
        parent = pbs.tree.parent[n]
        total = sum(pbs.shares(k) for k in pbs.chain(parent))
        exact[n] = Fraction(pbs.shares(n), total) * exact[parent] if total else Fraction(0)
    return exact


def by_name(pbs, metrics):
    return {
        pbs.name(n): (
            float(metrics.group_percentage[n]),
            float(metrics.fairshare_perc[n]),
            float(metrics.fairshare_tree_usage[n]),
            float(metrics.usage[n]),
        )
        for n in range(len(pbs))
    }


def scalar_metrics(pbs):
    """§2 and §4 one node at a time, rounding to float32 after every operation."""
    group, perc, tree_use = {ROOT: 0.0}, {ROOT: 1.0}, {ROOT: 0.0}
    root_usage = pbs.usage(ROOT)
    for n in pbs.preorder():
        if n == ROOT:
            continue
        parent = pbs.tree.parent[n]
        total = f32(sum(pbs.shares(k) for k in pbs.chain(parent)))
        if f32(total * perc[parent]) == 0:
            group[n] = perc[n] = 0.0
        else:
            group[n] = f32(f32(pbs.shares(n)) / total)
            perc[n] = f32(group[n] * perc[parent])
        u = f32(pbs.usage(n) / root_usage)
        tree_use[n] = u if parent == ROOT else f32(u + f32(f32(tree_use[parent] - u) * group[n]))
    return group, perc, tree_use


PROPERTY = settings(max_examples=150, deadline=None)


@PROPERTY
@given(cases())
def test_leaf_percentages_add_up_to_1_minus_what_share_less_groups_lose(case):
    """With shares >= 0, every node with a positive child-share sum hands its whole percentage
    to its children; a node whose children all have 0 shares (TREEROOT too, when every root
    child and `unknown` have 0) hands down nothing. So the sum of fairshare_perc over the
    leaves (a childless `unknown` is a leaf) is 1 minus the fairshare_perc of those nodes,
    up to float32 rounding (1e-4); each leaf is also within float32 rounding of the exact
    rational product of shares / sibling sum down its path."""
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    leaves = [n for n in range(len(pbs)) if pbs.is_leaf(n)]
    total = sum(float(metrics.fairshare_perc[n]) for n in leaves)

    assert total == pytest.approx(1.0 - lost_percentage(pbs, metrics), abs=1e-4)
    exact = exact_percentages(pbs)
    for n in leaves:
        assert float(metrics.fairshare_perc[n]) == pytest.approx(float(exact[n]), abs=1e-6)


@PROPERTY
@given(cases(min_shares=-5))
def test_compute_matches_the_float32_formulas_node_by_node(case):
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    group, perc, tree_use = scalar_metrics(pbs)
    for n in range(len(pbs)):
        assert float(metrics.group_percentage[n]) == group[n], pbs.name(n)
        assert float(metrics.fairshare_perc[n]) == perc[n], pbs.name(n)
        assert float(metrics.fairshare_tree_usage[n]) == tree_use[n], pbs.name(n)


@PROPERTY
@given(cases())
def test_compare_is_antisymmetric_and_reflexive(case):
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    for a in range(len(pbs)):
        assert compare(pbs, metrics, a, a) == 0
        for b in range(a + 1, len(pbs)):
            assert compare(pbs, metrics, a, b) == -compare(pbs, metrics, b, a)


def levels(pbs, metrics, node):
    return [
        (float(metrics.fairshare_perc[n]), float(metrics.usage[n]))
        for n in pbs.gpath(node)
        if n != ROOT
    ]


@PROPERTY
@given(cases(min_shares=-2))
def test_deserving_key_orders_entities_as_compare_does(case):
    """Sorting by the key is pbsfs -c: the more deserving entity has the smaller key, a tie the
    same key (except entities at different depths tying all the way, which the key sorts
    shallower first, and entities under a common group of perc <= 0, which the key ties)."""
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    leaves = [n for n in range(1, len(pbs)) if pbs.is_leaf(n)]
    keys = {n: deserving_key(levels(pbs, metrics, n)) for n in leaves}
    for a in leaves:
        for b in leaves:
            order = (keys[a] > keys[b]) - (keys[a] < keys[b])
            answer = compare(pbs, metrics, a, b)
            common = set(pbs.gpath(a)) & set(pbs.gpath(b)) - {ROOT}
            if any(metrics.fairshare_perc[n] <= 0 for n in common):
                assert order == 0, (pbs.name(a), pbs.name(b))
            elif answer or len(pbs.gpath(a)) == len(pbs.gpath(b)):
                assert order == answer, (pbs.name(a), pbs.name(b))


@PROPERTY
@given(cases(min_shares=-2), st.data())
def test_deserving_ranks_of_a_whole_tree_sort_each_paths_deserving_key(case, data):
    """Built a depth at a time from the parent's key, each node's rank is 1 plus the counted
    nodes whose root path's key is smaller (under groups of perc <= 0 too; the root's key is
    empty): equal keys share the first place of them. The rows of key_rows rank the same."""
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    parent = np.array([pbs.tree.parent[n] for n in range(len(pbs))], dtype=np.int64)
    counted = np.array(data.draw(st.lists(st.booleans(), min_size=len(pbs), max_size=len(pbs))))
    order = deserving_ranks_of_tree(parent, metrics.fairshare_perc, metrics.usage, counted)
    keys = [deserving_key(levels(pbs, metrics, n)) if n != ROOT else () for n in range(len(pbs))]
    for a in range(len(pbs)):
        smaller = sum(key < keys[a] for n, key in enumerate(keys) if counted[n])
        assert order.ranks[a] == 1 + smaller, pbs.name(a)
        assert order.ended[a] == (bool(keys[a]) and keys[a][-1] == (1, 0.0))
        assert order.depth[a] == len(pbs.gpath(a)) - (a != ROOT)
    everyone = deserving_ranks_of_tree(parent, metrics.fairshare_perc, metrics.usage)
    assert everyone.ranks.tolist() == deserving_ranks(key_rows(keys)).tolist()


def test_deserving_ranks_of_no_rows_and_of_rows_without_levels() -> None:
    assert deserving_ranks(np.empty((0, 4))).tolist() == []
    assert deserving_ranks(np.empty((3, 0))).tolist() == [1, 1, 1]


def test_node_depths_and_a_parent_loop() -> None:
    assert node_depths(np.array([-1, 0, 1, 0, 3, 4])).tolist() == [0, 1, 2, 1, 2, 3]
    with pytest.raises(ValueError, match="loop"):
        node_depths(np.array([-1, 2, 1]))


def test_deserving_key_ties_everything_under_a_group_of_perc_0_or_less() -> None:
    """Negative shares can make a perc positive again below a group of perc <= 0; there
    compare_path() is no order (n1 beats n2 by their own levels, yet both tie with a cousin
    under another such group), so the key stops at that group and ties them."""
    groups = [
        GroupDef("n0", 100, "root", -1),
        GroupDef("n1", 101, "n0", 1),
        GroupDef("n2", 102, "n0", -2),
        GroupDef("n3", 103, "root", 0),
    ]
    pbs = PbsTree.build(groups, [], unknown_shares=2)
    metrics = compute(pbs)
    n1, n2 = node(pbs, "n1"), node(pbs, "n2")
    assert [float(metrics.fairshare_perc[n]) for n in (n1, n2)] == [1.0, -2.0]
    assert compare(pbs, metrics, n1, n2) == -1
    assert deserving_key(levels(pbs, metrics, n1)) == deserving_key(levels(pbs, metrics, n2))


def test_deserving_key_stops_at_a_level_without_a_target():
    assert deserving_key([(0.5, 10.0), (0.25, 2.0)]) == ((0, 20.0), (0, 8.0))
    assert deserving_key([(0.0, 10.0), (0.0, 2.0)]) == ((1, 0.0),)
    assert deserving_key([(0.5, 10.0), (0.5, 4.0)]) < deserving_key([(0.5, 10.0), (0.0, 1.0)])


@PROPERTY
@given(cases(usages=st.one_of(ANY_USAGE, st.floats(0, 2))), st.floats(0.01, 0.99))
def test_decay_never_raises_usage_above_1_and_never_leaves_it_below_1(case, factor):
    """After decay every node holds max(1, usage × float32(factor)): so at least 1, and never
    more than its usage before (only values already below 1 are raised, to exactly 1)."""
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    before = list(pbs.tree.usage)
    pbs.decay(factor)
    for n, old in enumerate(before):
        new = pbs.usage(n)
        assert 1.0 <= new <= max(old, 1.0)
        assert new == max(1.0, old * f32(factor))


@PROPERTY
@given(cases(usages=EXACT_USAGE))
def test_records_read_back_give_the_same_tree(case):
    """Usages are integers or quarters (order-free sums) and never 1 (pbsfs never writes 1).
    Reading records() back gives the same metrics for every name, and writing again gives the
    same records: known entities in the same order, unknown ones reversed (a read prepends
    them), so two round trips give back the very same list."""
    groups, records, unknown_shares = case
    first = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    written = first.records()
    second = PbsTree.build(groups, written, unknown_shares=unknown_shares)
    rewritten = second.records()

    assert by_name(second, compute(second)) == by_name(first, compute(first))
    assert sorted(written, key=lambda r: r.name) == sorted(records, key=lambda r: r.name)
    known = {group.name for group in groups}
    assert [r for r in rewritten if r.name in known] == [r for r in written if r.name in known]
    assert [r for r in rewritten if r.name not in known] == [
        r for r in written if r.name not in known
    ][::-1]
    third = PbsTree.build(groups, rewritten, unknown_shares=unknown_shares)
    assert third.records() == written


@PROPERTY
@given(cases())
def test_fairshare_factor_is_between_0_and_1_for_non_negative_shares(case):
    groups, records, unknown_shares = case
    pbs = PbsTree.build(groups, records, unknown_shares=unknown_shares)
    metrics = compute(pbs)
    for n in range(len(pbs)):
        assert 0.0 <= metrics.fairshare_factor(n) <= 1.0


def test_fairshare_factors_follow_c_at_the_edges():
    """perc 0 gives 0; a perc so small the quotient overflows gives 2^-inf = 0; a negative perc
    (negative shares) whose power overflows gives inf, as C's pow returns HUGE_VAL."""
    perc = np.array([0.0, 1e-44, -1e-30, 0.2], dtype=np.float32)
    tree_usage = np.array([0.5, 0.5, 0.5, 0.125312], dtype=np.float32)
    factors = fairshare_factors(perc, tree_usage)
    assert factors[:3].tolist() == [0.0, 0.0, math.inf]
    assert round(float(factors[3]), 4) == 0.6477
