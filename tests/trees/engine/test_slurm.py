"""trees.engine.slurm: Slurm 22.05's Fair Tree and classic fairshare, ties and quirks included.

Expected values come from slurm-fairtree-behaviour.md (the reference, §n below), from the real
sshare capture of ft_basic, or are computed by hand in the comments next to them.
"""

import itertools
import math
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import examples_or_skip
from trees.engine.slurm import (
    DBL_MIN,
    NO_VAL,
    ROOT_ACCOUNT,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    Comparison,
    SlurmTree,
    UsageResetPeriod,
    charge,
    compare,
    compute,
    decay_factor,
    decay_over,
    decay_usage,
    fs_factor_classic,
    level_share,
    new_usage,
    next_usage_reset,
    target_share,
)
from trees.engine.tree import ROOT

A = AssociationDef
INF = math.inf


def user(account, name, shares=1, usage=0):
    return A(account, user=name, shares=shares, usage=usage)


def account(name, parent=ROOT_ACCOUNT, shares=1, usage=0):
    return A(name, parent, shares=shares, usage=usage)


def node(tree, account_name, user_name=None):
    found = tree.find(account_name, user_name)
    assert found is not None, (account_name, user_name)
    return found


def ranks(tree, metrics, *keys):
    """The Fair Tree rank of each (account, user)."""
    return [int(metrics.rank[node(tree, a, u)]) for a, u in keys]


def lfs20(value):
    """A long double as slurmctld's `%.20Lf` debug trace prints it (§5)."""
    return np.format_float_positional(value, precision=20, unique=False)


# ---------------------------------------------------------------------------------------------
# ft_basic: the real cluster's tree (examples/README.md, "slurm/")

FT_BASIC = (
    user("root", "root", 1, 0),
    account("phys", shares=40, usage=1222),
    user("phys", "alice", 10, 376),
    user("phys", "bob", 20, 188),
    account("theory", "phys", 30, 376),
    user("theory", "carol", 1, 94),
    user("theory", "dave", 3, 282),
    account("exp", "phys", 10, 282),
    user("exp", "erin", USE_PARENT, 188),
    user("exp", "frank", 5, 94),
    account("chem", shares=60, usage=564),
    user("chem", "alice", 5, 188),
    user("chem", "gina", 0, 282),
    user("chem", "hank", 10, 94),
    account("bio", shares=25, usage=0),
    user("bio", "ivan", 1),
    user("bio", "judy", 2),
)


def capture_path() -> Path:
    path = examples_or_skip().parent / "slurm" / "ft_basic_sshare_l_P.txt"
    if not path.is_file():
        pytest.skip(f"the Slurm capture is not at {path}")
    return path


def read_capture(path):
    """The rows of `sshare -a -l -P` as dicts, and the associations they describe.

    The Account column is indented one space per depth (§4): an account row's parent is the last
    account row one space less indented; a user row belongs to the account named in it."""
    lines = path.read_text().splitlines()
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"), strict=True)) for line in lines[1:]]
    defs: list[AssociationDef] = []
    last_account: dict[int, str] = {}
    for row in rows:
        cell = row["Account"]
        name, depth = cell.strip(), len(cell) - len(cell.lstrip(" "))
        raw = row["RawShares"]
        shares = USE_PARENT if raw == "parent" else int(raw) if raw else 1
        usage = int(row["RawUsage"])
        if row["User"]:
            defs.append(user(name, row["User"], shares, usage))
        else:
            parent = None if depth == 0 else last_account[depth - 1]
            defs.append(A(name, parent, shares=shares, usage=usage))
            last_account[depth] = name
    return rows, defs


def sshare_double(value: float | np.floating) -> str:
    """print_fields_double (§4): NO_VAL64, INFINITE64, NO_VAL and INFINITE print empty."""
    value = float(value)
    if value in (float(0xFFFFFFFFFFFFFFFE), float(0xFFFFFFFFFFFFFFFF), NO_VAL, 0xFFFFFFFF):
        return ""
    return f"{value:f}"


@pytest.fixture
def ft_basic():
    return SlurmTree.build(FT_BASIC)


class TestFtBasicCapture:
    def test_every_computed_cell_matches_the_real_sshare_output(self):
        rows, defs = read_capture(capture_path())
        assert len(rows) == 18
        tree = SlurmTree.build(reversed(defs))  # input order must not matter
        metrics = compute(tree)
        mismatches = []
        for row in rows:
            key = (row["Account"].strip(), row["User"] or None)
            n = node(tree, *key)
            is_user = tree.is_user[n]
            parent_shares = tree.tree.shares[n] == USE_PARENT
            got = {
                "NormShares": sshare_double(metrics.norm_shares[n]),
                "NormUsage": sshare_double(metrics.norm_usage[n]),
                "EffectvUsage": sshare_double(metrics.effectv_usage[n]),
                # Fair Tree prints FairShare for users only, LevelFS blank for `parent` rows.
                "FairShare": sshare_double(metrics.fairshare[n]) if is_user else "",
                "LevelFS": "" if parent_shares else sshare_double(metrics.level_fs[n]),
            }
            for column, text in got.items():
                if text != row[column]:
                    mismatches.append((key, column, row[column], text))
            if not is_user:
                assert math.isnan(metrics.fairshare[n]), key
        assert mismatches == []

    def test_rows_come_out_in_sshare_order(self):
        rows, defs = read_capture(capture_path())
        tree = SlurmTree.build(reversed(defs))
        keys = [(r["Account"].strip(), r["User"] or None) for r in rows]
        assert [(d.account, d.user) for d in tree.records()] == keys

    def test_the_capture_is_the_documented_tree(self):
        _, defs = read_capture(capture_path())
        from_file = {(d.account, d.user): (d.shares, d.usage) for d in defs}
        from_readme = {(d.account, d.user): (d.shares, d.usage) for d in FT_BASIC}
        from_readme[("root", None)] = (1, 1786)
        assert from_file == from_readme


class TestFtBasic:
    def test_ranks_12_12_12_9_and_a_user_in_two_accounts_counted_twice(self, ft_basic):
        metrics = compute(ft_basic)
        # 12 user associations: root, ivan, judy, alice x2, gina, hank, bob, carol, dave, erin,
        # frank. The unused root user is first (12); bio (inf) is tied with it, so ivan and
        # judy keep 12; chem's hank gets rnt = 9.
        assert metrics.user_count == 12
        expected = {
            ("root", "root"): 12,
            ("bio", "ivan"): 12,
            ("bio", "judy"): 12,
            ("chem", "hank"): 9,
            ("chem", "alice"): 8,
            ("chem", "gina"): 7,
            ("phys", "bob"): 6,
            ("theory", "carol"): 5,
            ("theory", "dave"): 5,
            ("exp", "erin"): 3,
            ("exp", "frank"): 2,
            ("phys", "alice"): 1,
        }
        assert dict(zip(expected, ranks(ft_basic, metrics, *expected), strict=True)) == expected
        for key, rank in expected.items():
            assert metrics.fairshare[node(ft_basic, *key)] == rank / 12
        assert node(ft_basic, "chem", "alice") != node(ft_basic, "phys", "alice")

    def test_tied_flags(self, ft_basic):
        metrics = compute(ft_basic)
        tied = {ft_basic.key(n) for n in range(len(ft_basic)) if metrics.tied[n]}
        assert tied == {
            ("bio", None),  # inf after the inf root user
            ("bio", "ivan"),  # first child of a tied account
            ("bio", "judy"),
            ("theory", "dave"),  # 1.0 == 1.0 after carol
        }

    def test_level_shares_leave_out_the_parent_user(self, ft_basic):
        metrics = compute(ft_basic)
        level = {ft_basic.key(n): int(metrics.level_shares[n]) for n in range(len(ft_basic))}
        assert level[("root", None)] == NO_VAL
        assert level[("phys", None)] == 126  # 1 + 25 + 60 + 40
        assert level[("phys", "alice")] == 70  # 10 + 20 + 30 + 10
        assert level[("exp", "frank")] == 5  # erin (parent) adds 0
        assert level[("exp", "erin")] == 5
        assert level[("chem", "gina")] == 15
        assert level[("bio", "ivan")] == 3

    def test_parent_user_erin(self, ft_basic):
        """§2.5: LevelFS +inf, NormShares = exp's 10/70, EffectvUsage 188/282, top of exp."""
        metrics = compute(ft_basic)
        erin, frank, exp = (
            node(ft_basic, *k) for k in (("exp", "erin"), ("exp", "frank"), ("exp",))
        )
        assert metrics.level_fs[erin] == INF
        assert metrics.norm_shares[erin] == metrics.norm_shares[exp] == 10 / 70
        assert metrics.effectv_usage[erin] == np.longdouble(188) / np.longdouble(282)
        assert metrics.level_fs[frank] == 3  # 1.0 / (94/282)
        assert (metrics.rank[erin], metrics.rank[frank]) == (3, 2)

    def test_root_row(self, ft_basic):
        metrics = compute(ft_basic)
        assert metrics.norm_shares[ROOT] == 1 / 4294967294
        assert metrics.norm_usage[ROOT] == NO_VAL
        assert metrics.effectv_usage[ROOT] == 1
        assert metrics.level_fs[ROOT] == NO_VAL
        assert ft_basic.tree.usage[ROOT] == 1786  # 1222 + 564 + 0 + 0

    def test_compare(self, ft_basic):
        metrics = compute(ft_basic)
        chem_alice, phys_alice = node(ft_basic, "chem", "alice"), node(ft_basic, "phys", "alice")
        chem, phys = node(ft_basic, "chem"), node(ft_basic, "phys")
        # 1.507937 > 0.463980
        assert compare(metrics, chem_alice, phys_alice) == Comparison(ROOT, chem, phys, chem)
        carol, dave = node(ft_basic, "theory", "carol"), node(ft_basic, "theory", "dave")
        tie = compare(metrics, carol, dave)
        assert (tie.ancestor, tie.winner) == (node(ft_basic, "theory"), None)
        erin, frank = node(ft_basic, "exp", "erin"), node(ft_basic, "exp", "frank")
        assert compare(metrics, frank, erin).winner == erin
        # bio (inf) against the root user (inf): a tie at the root
        ivan = node(ft_basic, "bio", "ivan")
        assert compare(metrics, ivan, node(ft_basic, "root", "root")).winner is None
        with pytest.raises(ValueError, match="two different"):
            compare(metrics, carol, carol)
        with pytest.raises(ValueError, match="ancestor"):
            compare(metrics, phys, carol)


# ---------------------------------------------------------------------------------------------
# §2.3 tie rules


class TestTieRules:
    def test_tied_sibling_users_share_the_first_rank_and_ranks_are_skipped(self):
        # Under root, 1 share each (S = 0.2), root usage 55: LF a = 0.2/(5/55) = 2.2,
        # b = c = d = 0.2/(10/55) = 1.1, e = 0.2/(20/55) = 0.55. Ranks 5, 4,4,4, 1.
        tree = SlurmTree.build(
            [
                user("root", "a", 1, 5),
                user("root", "b", 1, 10),
                user("root", "c", 1, 10),
                user("root", "d", 1, 10),
                user("root", "e", 1, 20),
            ]
        )
        metrics = compute(tree)
        keys = [("root", u) for u in "abcde"]
        assert ranks(tree, metrics, *keys) == [5, 4, 4, 4, 1]
        assert [metrics.fairshare[node(tree, *k)] for k in keys] == [1.0, 0.8, 0.8, 0.8, 0.2]
        assert [bool(metrics.tied[node(tree, *k)]) for k in keys] == [
            False,
            False,
            True,
            True,
            False,
        ]

    @staticmethod
    def user_and_account_tree(sub_usage):
        """root: unused root user; T (30 + sub usage): tu1..3 (10 each), sub: su1 3, su2 rest.

        All shares 1. In T, S = 0.25 for tu1..3 and sub."""
        return SlurmTree.build(
            [
                user("root", "root", 1, 0),
                account("T", usage=30 + sub_usage),
                *(user("T", f"tu{i}", 1, 10) for i in (1, 2, 3)),
                account("sub", "T", 1, sub_usage),
                user("sub", "su1", 1, 3),
                user("sub", "su2", 1, sub_usage - 3),
            ]
        )

    def test_user_tied_with_a_sibling_account_shares_its_rank_with_the_accounts_first_user(self):
        # T: tu1..3 and sub all 0.25/(10/40) = 1.0. Users sort first: tu1 takes rnt 5, tu2 and
        # tu3 tie with it; sub ties with tu3, so its first user su1 (0.5/0.3 = 1.67) keeps 5
        # although its own LevelFS is higher; su2 (0.5/0.7) gets rnt 1. (test24.4 aG shape.)
        tree = self.user_and_account_tree(sub_usage=10)
        metrics = compute(tree)
        keys = [("root", "root"), ("T", "tu1"), ("T", "tu2"), ("T", "tu3")]
        keys += [("sub", "su1"), ("sub", "su2")]
        assert metrics.level_fs[node(tree, "sub")] == metrics.level_fs[node(tree, "T", "tu3")] == 1
        assert ranks(tree, metrics, *keys) == [6, 5, 5, 5, 5, 1]
        assert metrics.fairshare[node(tree, "sub", "su1")] == 5 / 6
        assert metrics.tied[node(tree, "sub")]
        assert metrics.tied[node(tree, "sub", "su1")]
        assert not metrics.tied[node(tree, "sub", "su2")]

    def test_the_same_tree_without_the_tie_gives_su1_its_own_rank(self):
        # sub 12 of T's 42: tu = 0.25/(10/42) = 1.05 > sub = 0.25/(12/42) = 0.875.
        tree = self.user_and_account_tree(sub_usage=12)
        metrics = compute(tree)
        keys = [("T", "tu1"), ("T", "tu2"), ("T", "tu3"), ("sub", "su1"), ("sub", "su2")]
        assert ranks(tree, metrics, *keys) == [5, 5, 5, 2, 1]
        assert not metrics.tied[node(tree, "sub", "su1")]

    @staticmethod
    def two_tied_accounts(a_name):
        """16 users: p1..p4 unused under root (inf), accounts `a_name` and tb (10 each of 100,
        S = 1/7: equal LevelFS), zz (80, 8 users tied at 1.0).

        a: a1 2 (0.5/0.2 = 2.5), a2 8 (0.625); tb: b1 5, b2 5 (1.0, tied)."""
        return SlurmTree.build(
            [
                *(user("root", f"p{i}", 1, 0) for i in (1, 2, 3, 4)),
                account(a_name, usage=10),
                user(a_name, "a1", 1, 2),
                user(a_name, "a2", 1, 8),
                account("tb", usage=10),
                user("tb", "b1", 1, 5),
                user("tb", "b2", 1, 5),
                account("zz", usage=80),
                *(user("zz", f"z{i}", 1, 10) for i in range(1, 9)),
            ]
        )

    def test_tied_accounts_are_not_merged_first_account_first(self):
        # ta before tb (name order): a1 rnt 12, a2 rnt 11; tb is tied, so b1 keeps the last
        # rank (a2's 11) and b2 ties with b1: .75, .6875, .6875, .6875 (reference §2.4).
        # Merging would rank a1 2.5, b1 = b2 1.0, a2 0.625: 12, 11, 11, 9.
        tree = self.two_tied_accounts("ta")
        metrics = compute(tree)
        assert metrics.user_count == 16
        assert metrics.level_fs[node(tree, "ta")] == metrics.level_fs[node(tree, "tb")]
        keys = [("ta", "a1"), ("ta", "a2"), ("tb", "b1"), ("tb", "b2")]
        assert [metrics.fairshare[node(tree, *k)] for k in keys] == [0.75, 0.6875, 0.6875, 0.6875]
        assert ranks(tree, metrics, ("root", "p1"), ("root", "p4"), ("zz", "z1"), ("zz", "z8")) == [
            16,
            16,
            8,
            8,
        ]

    def test_tied_accounts_are_not_merged_second_account_first(self):
        # Renamed so that tb comes first (as after a slurmctld restart in the capture):
        # b1/b2 .75, a1 keeps .75, a2 gets rnt 9 = .5625.
        tree = self.two_tied_accounts("tz")
        metrics = compute(tree)
        keys = [("tb", "b1"), ("tb", "b2"), ("tz", "a1"), ("tz", "a2")]
        assert [metrics.fairshare[node(tree, *k)] for k in keys] == [0.75, 0.75, 0.75, 0.5625]

    def test_unused_accounts_x_and_y(self):
        # §2.3 rule 3: X and Y unused (inf); X: x1 (1 share, inf) rank 5, x0 (0 shares, LF 0)
        # rank 4; Y tied with X, so y1 keeps x0's 4 and y2 ties with y1: 0.8, not 1.0. The fifth
        # user u (1/3 of the shares, all the usage: LF 1/3) gets rnt 1.
        tree = SlurmTree.build(
            [
                account("X"),
                user("X", "x1", 1, 0),
                user("X", "x0", 0, 0),
                account("Y"),
                user("Y", "y1"),
                user("Y", "y2"),
                user("root", "u", 1, 10),
            ]
        )
        metrics = compute(tree)
        keys = [("X", "x1"), ("X", "x0"), ("Y", "y1"), ("Y", "y2"), ("root", "u")]
        assert [metrics.fairshare[node(tree, *k)] for k in keys] == [1.0, 0.8, 0.8, 0.8, 0.2]
        lf = [metrics.level_fs[node(tree, *k)] for k in keys]
        assert lf[:4] == [INF, 0, INF, INF]
        assert lf[4] == np.longdouble(1 / 3)
        assert metrics.tied[node(tree, "Y")]
        assert not metrics.tied[node(tree, "X")]

    def test_long_double_quotients_that_are_equal_in_theory_do_not_tie(self):
        # §2.1 fa/fb: S = 40/170 and 50/170 (double), U = 4/11 and 5/11 (long double).
        # fc: (80/170)/(2/11) = 2.59 ranks first; fb's quotient is 3 ulps above fa's.
        tree = SlurmTree.build(
            [
                account("F", usage=11),
                user("F", "fa", 40, 4),
                user("F", "fb", 50, 5),
                user("F", "fc", 80, 2),
            ]
        )
        metrics = compute(tree)
        fa, fb = node(tree, "F", "fa"), node(tree, "F", "fb")
        assert lfs20(metrics.level_fs[fa]) == "0.64705882352941175573"
        assert lfs20(metrics.level_fs[fb]) == "0.64705882352941178625"
        assert sshare_double(metrics.level_fs[fa]) == sshare_double(metrics.level_fs[fb])
        assert ranks(tree, metrics, ("F", "fc"), ("F", "fb"), ("F", "fa")) == [3, 2, 1]
        assert not metrics.tied[fa]
        assert compare(metrics, fa, fb).winner == fb

    def test_0_2_over_0_2_ties_with_0_4_over_0_4(self):
        # Under root, level shares 5, root usage 5: p 0.2/0.2, q 0.4/0.4 both
        # 1.00000000000000005551 (double S over long double U); r1 0.2/0.4; r2 unused (inf).
        tree = SlurmTree.build(
            [
                user("root", "p", 1, 1),
                user("root", "q", 2, 2),
                user("root", "r1", 1, 2),
                user("root", "r2", 1, 0),
            ]
        )
        metrics = compute(tree)
        p, q = node(tree, "root", "p"), node(tree, "root", "q")
        assert lfs20(metrics.level_fs[p]) == "1.00000000000000005551"
        assert metrics.level_fs[p] == metrics.level_fs[q]
        assert metrics.level_fs[p] > 1
        keys = [("root", "r2"), ("root", "p"), ("root", "q"), ("root", "r1")]
        assert ranks(tree, metrics, *keys) == [4, 3, 3, 1]
        assert metrics.tied[q]
        assert compare(metrics, p, q).winner is None


# ---------------------------------------------------------------------------------------------
# §2.5 special cases


# G (30 usage): g1 (1 share, 10), P (FairShare=parent, 20): p1 (1, 5), p2 (2, 15).
PARENT_SHARES = [
    account("G", usage=30),
    user("G", "g1", 1, 10),
    account("P", "G", USE_PARENT, 20),
    user("P", "p1", 1, 5),
    user("P", "p2", 2, 15),
]


class TestParentShares:
    def test_parent_account_users_join_the_grandparents_siblings(self):
        # root: G (30): g1 (1 share, 10), P (parent, 20): p1 (1, 5), p2 (2, 15).
        # G's fs children: g1, P, p1, p2; level shares 1 + 0 + 1 + 2 = 4.
        # LF: g1 0.25/(10/30) = 0.75, p1 0.25/(5/30) = 1.5, p2 0.5/(15/30) = 1.0, P NO_VAL.
        tree = SlurmTree.build(PARENT_SHARES)
        metrics = compute(tree)
        g, g1, p = node(tree, "G"), node(tree, "G", "g1"), node(tree, "P")
        p1, p2 = node(tree, "P", "p1"), node(tree, "P", "p2")
        assert [metrics.fs_parent[n] for n in (g1, p, p1, p2)] == [g, g, g, g]
        assert [int(metrics.level_shares[n]) for n in (g1, p, p1, p2)] == [4, 4, 4, 4]
        assert [metrics.norm_shares[n] for n in (g1, p, p1, p2)] == [0.25, 1.0, 0.25, 0.5]
        assert metrics.effectv_usage[p] == np.longdouble(20) / np.longdouble(30)
        assert metrics.effectv_usage[p1] == np.longdouble(5) / np.longdouble(30)
        assert metrics.level_fs[p] == NO_VAL
        assert metrics.level_fs[p2] == 1
        assert ranks(tree, metrics, ("P", "p1"), ("P", "p2"), ("G", "g1")) == [3, 2, 1]
        assert metrics.tied[p]  # rule 4: NO_VAL == the initial prev, no visible effect
        assert compare(metrics, g1, p1) == Comparison(g, g1, p1, p1)

    def test_parent_user_directly_under_root(self):
        # pu's fs parent is root: NormShares = 1/NO_VAL, printed 0.000000; LevelFS inf.
        # v has all the level's shares: S 1.0, U 0.5, LF 2.
        tree = SlurmTree.build([user("root", "pu", USE_PARENT, 10), user("root", "v", 1, 10)])
        metrics = compute(tree)
        pu, v = node(tree, "root", "pu"), node(tree, "root", "v")
        assert metrics.norm_shares[pu] == 1 / 4294967294
        assert f"{metrics.norm_shares[pu]:f}" == "0.000000"
        assert metrics.norm_shares[v] == 1.0
        assert metrics.level_fs[pu] == INF
        assert metrics.level_fs[v] == 2
        assert metrics.effectv_usage[pu] == 0.5
        assert ranks(tree, metrics, ("root", "pu"), ("root", "v")) == [2, 1]


class TestSpecialCases:
    def test_unused_account_not_tied_its_users_all_tie_at_the_next_rank(self):
        # U (inf) first, not tied (prev is NO_VAL): u1 (S .25) and u2 (S .75) both inf, rank 3.
        # A: S .5, U 1 -> 0.5; a1 rank 1.
        tree = SlurmTree.build(
            [
                account("U"),
                user("U", "u1", 1),
                user("U", "u2", 3),
                account("A", usage=10),
                user("A", "a1", 1, 10),
            ]
        )
        metrics = compute(tree)
        u1, u2 = node(tree, "U", "u1"), node(tree, "U", "u2")
        assert metrics.level_fs[node(tree, "U")] == INF
        assert [metrics.norm_shares[u1], metrics.norm_shares[u2]] == [0.25, 0.75]
        assert [metrics.level_fs[u1], metrics.level_fs[u2]] == [INF, INF]
        assert [metrics.effectv_usage[u1], metrics.norm_usage[u1]] == [0, 0]
        assert ranks(tree, metrics, ("U", "u1"), ("U", "u2"), ("A", "a1")) == [3, 3, 1]
        assert not metrics.tied[node(tree, "U")]
        assert metrics.tied[u2]

    def test_zero_shares_give_level_fs_0_even_without_usage(self):
        # A: a0 (0 shares, no usage) LF 0 not inf: last. a1 (1 share, all of A's usage) LF 1.
        # A0 (0 shares, unused) LF 0, ranked after B (1.0) although its user w is inf.
        tree = SlurmTree.build(
            [
                account("A", usage=10),
                user("A", "a0", 0, 0),
                user("A", "a1", 1, 10),
                account("A0", shares=0),
                user("A0", "w", 1, 0),
                account("B", usage=10),
                user("B", "b", 1, 10),
            ]
        )
        metrics = compute(tree)
        # top level: A and B S .5, U .5 -> 1.0 (tied, A first); A0 0.
        assert metrics.level_fs[node(tree, "A", "a0")] == 0
        assert metrics.level_fs[node(tree, "A0")] == 0
        assert metrics.level_fs[node(tree, "A0", "w")] == INF
        keys = [("A", "a1"), ("A", "a0"), ("B", "b"), ("A0", "w")]
        # a1 rnt 4, a0 rnt 3, B tied with A: b keeps 3, w rnt 1
        assert ranks(tree, metrics, *keys) == [4, 3, 3, 1]

    def test_account_whose_children_all_have_0_shares(self):
        # Z (10 of 40): z1, z2 0 shares -> level shares 0, NormShares 0, LF 0, tied. Z itself
        # 0.5/0.25 = 2 beats B 0.5/0.75, so the 0-share users still rank first.
        tree = SlurmTree.build(
            [
                account("Z", usage=10),
                user("Z", "z1", 0, 4),
                user("Z", "z2", 0, 6),
                account("B", usage=30),
                user("B", "b1", 1, 30),
            ]
        )
        metrics = compute(tree)
        z1, z2 = node(tree, "Z", "z1"), node(tree, "Z", "z2")
        assert [int(metrics.level_shares[z1]), int(metrics.level_shares[z2])] == [0, 0]
        assert [metrics.norm_shares[z1], metrics.norm_shares[z2]] == [0.0, 0.0]
        assert [metrics.level_fs[z1], metrics.level_fs[z2]] == [0, 0]
        assert metrics.level_fs[node(tree, "Z")] == 2
        assert ranks(tree, metrics, ("Z", "z1"), ("Z", "z2"), ("B", "b1")) == [3, 3, 1]

    def test_a_user_in_two_accounts_is_two_associations(self):
        # A: 0.5/0.25 = 2, B: 0.5/0.75; al in A rank 2 of 2, al in B rank 1.
        tree = SlurmTree.build(
            [
                account("A", usage=10),
                user("A", "al", 1, 10),
                account("B", usage=30),
                user("B", "al", 1, 30),
            ]
        )
        metrics = compute(tree)
        assert metrics.user_count == tree.user_count() == 2
        assert [
            metrics.fairshare[node(tree, "A", "al")],
            metrics.fairshare[node(tree, "B", "al")],
        ] == [
            1.0,
            0.5,
        ]

    def test_one_level_tree(self):
        # Only users under root, 5 shares, 60 usage: a 0.6/0.5 = 1.2, b 0.2/0.5 = 0.4, c inf.
        tree = SlurmTree.build(
            [user("root", "a", 3, 30), user("root", "b", 1, 30), user("root", "c", 1, 0)]
        )
        metrics = compute(tree)
        a, b, c = (node(tree, "root", u) for u in "abc")
        assert [int(metrics.level_shares[n]) for n in (a, b, c)] == [5, 5, 5]
        assert [metrics.norm_shares[n] for n in (a, b, c)] == [0.6, 0.2, 0.2]
        assert [metrics.norm_usage[n] for n in (a, b, c)] == [0.5, 0.5, 0]
        assert sshare_double(metrics.level_fs[a]) == "1.200000"
        assert sshare_double(metrics.level_fs[b]) == "0.400000"
        assert metrics.level_fs[c] == INF
        assert [metrics.fairshare[n] for n in (c, a, b)] == [1.0, 2 / 3, 1 / 3]
        assert compare(metrics, a, b) == Comparison(ROOT, a, b, a)

    def test_five_level_tree_is_walked_depth_first(self):
        # Each level: a user and an account, 1 share each (S .5):
        #   root 100: r1 40 (1.25)         A1 60 (0.833)
        #   A1 60:    a1 20 (1.5)          A2 40 (0.75)
        #   A2 40:    a2 30 (0.667)        A3 10 (2.0)
        #   A3 10:    a3 2 (2.5)           A4 8 (0.625)
        #   A4 8:     a4 6 (0.667)         a5 2 (2.0)
        # Order: r1, a1, [A3: a3, [A4: a5, a4]], a2 -> ranks 6, 5, 4, 3, 2, 1.
        tree = SlurmTree.build(
            [
                user("root", "r1", 1, 40),
                account("A1", usage=60),
                user("A1", "a1", 1, 20),
                account("A2", "A1", 1, 40),
                user("A2", "a2", 1, 30),
                account("A3", "A2", 1, 10),
                user("A3", "a3", 1, 2),
                account("A4", "A3", 1, 8),
                user("A4", "a4", 1, 6),
                user("A4", "a5", 1, 2),
            ]
        )
        metrics = compute(tree)
        assert tree.tree.depth[node(tree, "A4", "a5")] == 5
        keys = [("root", "r1"), ("A1", "a1"), ("A3", "a3"), ("A4", "a5"), ("A4", "a4")]
        keys.append(("A2", "a2"))
        assert ranks(tree, metrics, *keys) == [6, 5, 4, 3, 2, 1]
        assert metrics.level_fs[node(tree, "A3")] == 2
        assert metrics.level_fs[node(tree, "A3", "a3")] == 2.5
        assert not metrics.tied.any()
        verdict = compare(metrics, node(tree, "A2", "a2"), node(tree, "A4", "a5"))
        assert (verdict.ancestor, verdict.winner) == (node(tree, "A2"), node(tree, "A3"))

    def test_root_row_sets_root_usage_norm_usage_is_capped_effectv_usage_is_not(self):
        tree = SlurmTree.build(
            [
                A("root", None, shares=1, usage=100),
                account("A", usage=150),
                user("A", "a1", 1, 150),
                account("B", usage=50),
                user("B", "b1", 1, 50),
            ]
        )
        metrics = compute(tree)
        a, b = node(tree, "A"), node(tree, "B")
        assert tree.tree.usage[ROOT] == 100
        assert [metrics.norm_usage[a], metrics.norm_usage[b]] == [1, 0.5]
        assert metrics.effectv_usage[a] == 1.5
        assert metrics.level_fs[b] == 1  # 0.5 / 0.5
        assert ranks(tree, metrics, ("B", "b1"), ("A", "a1")) == [2, 1]


class TestWarnings:
    def test_zero_shares_and_zero_usage_compute_without_warning(self):
        """S == 0 gives 0 before any division in Slurm (_calc_assoc_fs); the 0/0 of a 0-share
        user in an unused account must not surface as numpy's invalid-value warning."""
        tree = SlurmTree.build([account("X"), user("X", "x0", 0, 0), user("X", "x1", 1, 0)])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            metrics = compute(tree)
        assert metrics.level_fs[node(tree, "X", "x0")] == 0
        assert metrics.level_fs[node(tree, "X", "x1")] == INF


# ---------------------------------------------------------------------------------------------
# §3 classic


class TestClassic:
    def test_ft_basic_norm_shares_are_products_down_the_path(self, ft_basic):
        metrics = compute(ft_basic, Algorithm.CLASSIC)
        ns = {ft_basic.key(n): float(metrics.norm_shares[n]) for n in range(len(ft_basic))}
        assert ns[("root", None)] == 1.0
        assert ns[("phys", None)] == pytest.approx(40 / 126, rel=1e-15)
        assert ns[("theory", "dave")] == pytest.approx(
            0.10204081632653061, rel=1e-15
        )  # 40/126·30/70·3/4
        assert ns[("chem", "alice")] == pytest.approx(0.15873015873015872, rel=1e-15)  # 60/126·5/15
        assert ns[("exp", None)] == pytest.approx(0.045351473922902494, rel=1e-15)  # 40/126·10/70
        assert ns[("exp", "erin")] == ns[("exp", None)]  # parent: copies exp's
        assert ns[("exp", "frank")] == ns[("exp", None)]  # 5 of exp's 5
        assert ns[("chem", "gina")] == 0.0
        fair_tree = compute(ft_basic)
        assert np.array_equal(target_share(ft_basic, fair_tree), metrics.norm_shares)
        assert np.array_equal(level_share(ft_basic, metrics), fair_tree.norm_shares)

    def test_ft_basic_effectv_usage_mixes_own_and_parent_usage(self, ft_basic):
        metrics = compute(ft_basic, Algorithm.CLASSIC)
        ue = {ft_basic.key(n): float(metrics.effectv_usage[n]) for n in range(len(ft_basic))}
        assert ue[("root", None)] == 1.0
        assert ue[("phys", None)] == pytest.approx(1222 / 1786, rel=1e-15)  # top: NormUsage
        # theory: 376/1786 + (1222/1786 - 376/1786)·30/70 = 5170/12502
        assert ue[("theory", None)] == pytest.approx(0.41353383458646614, rel=1e-14)
        # dave: 282/1786 + (ue_theory - 282/1786)·3/4
        assert ue[("theory", "dave")] == pytest.approx(0.34962406015037595, rel=1e-14)
        # exp: 282/1786 + (ue_phys - 282/1786)·10/70; erin (parent) copies it
        assert ue[("exp", None)] == pytest.approx(0.23308270676691728, rel=1e-14)
        assert ue[("exp", "erin")] == ue[("exp", None)]
        assert ue[("chem", "gina")] == pytest.approx(282 / 1786, rel=1e-14)  # × 0/15

    def test_ft_basic_factors(self, ft_basic):
        metrics = compute(ft_basic, Algorithm.CLASSIC)
        fs = {ft_basic.key(n): float(metrics.fairshare[n]) for n in range(len(ft_basic))}
        assert fs[("root", None)] == 0.5  # 2^-(1/1)
        # 2^-(0.349624/0.102041) = 2^-3.4263
        assert fs[("theory", "dave")] == pytest.approx(0.0930199652109431, rel=1e-12)
        assert fs[("chem", "gina")] == 0.0  # NormShares 0
        assert fs[("bio", "ivan")] == 1.0  # no usage: 2^0
        assert (metrics.rank == 0).all()
        assert (metrics.level_fs == NO_VAL).all()

    def test_dampening_2_halves_the_exponent(self, ft_basic):
        metrics = compute(ft_basic, Algorithm.CLASSIC, dampening=2)
        assert metrics.fairshare[ROOT] == pytest.approx(2**-0.5, rel=1e-15)
        dave = node(ft_basic, "theory", "dave")
        assert metrics.fairshare[dave] == pytest.approx(0.3049917461357653, rel=1e-12)
        assert fs_factor_classic(0.5, 0.25) == 0.25
        assert fs_factor_classic(0.5, 0.25, dampening=2) == 0.5
        assert fs_factor_classic(NO_VAL, 0.5) == 0.0
        assert fs_factor_classic(0.5, 0.0) == 0.0

    def test_parent_account_is_skipped_on_the_way_up(self):
        # root 40: G (1 of 4 shares, 30): g1 (1, 10), P (parent, 20): p1 (1, 5), p2 (2, 15);
        # H (3, 10): h1. G's fs children g1, p1, p2 share 4.
        tree = SlurmTree.build(
            [
                *PARENT_SHARES,
                account("H", shares=3, usage=10),
                user("H", "h1", 1, 10),
            ]
        )
        metrics = compute(tree, Algorithm.CLASSIC)
        p, p1, p2 = node(tree, "P"), node(tree, "P", "p1"), node(tree, "P", "p2")
        # NormShares: p2 2/4 · 1/4 (P skipped), p1 1/4 · 1/4, P copies G's 1/4
        assert [metrics.norm_shares[n] for n in (p, p1, p2)] == [0.25, 0.0625, 0.125]
        # EffectvUsage (fs parent G, 0.75): p1 0.125 + (0.75 - 0.125)·1/4 = 0.28125,
        # p2 0.375 + (0.75 - 0.375)·2/4 = 0.5625, P = G's 0.75
        assert [float(metrics.effectv_usage[n]) for n in (p, p1, p2)] == [0.75, 0.28125, 0.5625]
        assert metrics.fairshare[p2] == pytest.approx(2**-4.5, rel=1e-15)  # 0.5625/0.125

    def test_level_shares_0_takes_the_parents_effectv_usage(self):
        # Z (10 of 40): z1 0 shares of 0 -> ue = Z's 0.25, not its own 4/40.
        tree = SlurmTree.build(
            [
                account("Z", usage=10),
                user("Z", "z1", 0, 4),
                account("B", usage=30),
                user("B", "b1", 1, 30),
            ]
        )
        metrics = compute(tree, Algorithm.CLASSIC)
        z1 = node(tree, "Z", "z1")
        assert metrics.effectv_usage[z1] == 0.25
        assert metrics.norm_usage[z1] == np.longdouble(4) / np.longdouble(40)
        assert metrics.fairshare[z1] == 0.0
        # b1: ua 0.75 + (0.75 - 0.75)·1 = 0.75, NormShares 0.5: 2^-1.5
        assert metrics.fairshare[node(tree, "B", "b1")] == pytest.approx(2**-1.5, rel=1e-15)


# ---------------------------------------------------------------------------------------------
# properties on random trees

USER_NAMES = ("u0", "u1", "u2", "u3")
USER_SHARES = st.sampled_from([1, 2, 3, 4, 5, 1, 2, 3, 0, USE_PARENT])
ACCOUNT_SHARES = st.sampled_from([1, 2, 3, 4, 5, 10, 0, USE_PARENT])
USAGE = st.one_of(st.just(0), st.integers(1, 10**6), st.integers(1, 10**6))
# Fewer of the values that tie (0 shares, 0 usage, `parent` users), for the no-tie property.
RARE_TIE_USER_SHARES = st.sampled_from([1, 2, 3, 4, 5] * 4 + [0, USE_PARENT])
RARE_TIE_USAGE = st.integers(0, 10**6)


@st.composite
def slurm_trees(draw, user_shares=USER_SHARES, account_shares=ACCOUNT_SHARES, usages=USAGE):
    """Associations of a random tree 1-4 levels deep, each account's usage the sum of its
    children's; users reuse a few names, so some user is in several accounts."""
    max_depth = draw(st.integers(1, 4))
    defs = []
    numbers = itertools.count()

    def fill(account_name, depth):
        total = 0
        names = draw(
            st.lists(
                st.sampled_from(USER_NAMES),
                unique=True,
                min_size=1 if depth == 0 else 0,
                max_size=3,
            )
        )
        for name in names:
            usage = draw(usages)
            defs.append(user(account_name, name, draw(user_shares), usage))
            total += usage
        if depth + 1 < max_depth:
            for _ in range(draw(st.integers(1 if depth == 0 else 0, 3 if depth == 0 else 2))):
                sub = f"a{next(numbers)}"
                shares = draw(account_shares)
                usage = fill(sub, depth + 1)
                defs.append(account(sub, account_name, shares, usage))
                total += usage
        return total

    fill(ROOT_ACCOUNT, 0)
    return defs


PROPERTY = settings(max_examples=120, deadline=None)


def user_nodes(tree):
    return [n for n in range(len(tree)) if tree.is_user[n]]


def two_level(a1: float = 30, a2: float = 10, b: float = 60) -> SlurmTree:
    """root: A (1 share: a1 1, a2 3) and B (1 share); usage a1 30, a2 10, B 60 of 100."""
    return SlurmTree.build([
        AssociationDef(ROOT_ACCOUNT, parent=None, shares=1, usage=a1 + a2 + b),
        AssociationDef("A", shares=1, usage=a1 + a2),
        AssociationDef("B", shares=1, usage=b),
        AssociationDef("A", parent="A", user="a1", shares=1, usage=a1),
        AssociationDef("A", parent="A", user="a2", shares=3, usage=a2),
    ])  # fmt: skip


class TestDepthOblivious:
    """_depth_oblivious_set_usage_efctv (priority_multifactor.c at slurm-22-05-8-1); sshare
    of a real 22.05.8 in that mode is the depth_oblivious capture (tests/captures/slurm)."""

    def test_top_accounts_take_their_normalised_usage(self):
        metrics = compute(two_level(), Algorithm.DEPTH_OBLIVIOUS)
        tree = two_level()
        ue = {tree.key(n): float(metrics.effectv_usage[n]) for n in range(len(tree))}
        assert ue[("A", None)] == pytest.approx(0.4, rel=1e-15)
        assert ue[("B", None)] == pytest.approx(0.6, rel=1e-15)

    def test_a_user_over_its_share_under_a_parent_below_its_own(self):
        # ratio_p = 0.4/0.5 = 0.8; ratio_s = (0.3 + 0.1)/0.5 = 0.8; ratio_l = (0.3/0.125)/0.8 = 3;
        # ln 0.8 < 0 < ln 3: k = 1/(1 + (5 ln 0.8)²) = 0.4454751; UE = 0.8 · 3^k · 0.125
        tree = two_level()
        metrics = compute(tree, Algorithm.DEPTH_OBLIVIOUS)
        a1 = tree.find("A", "a1")
        assert a1 is not None
        k = 1 / (1 + (5 * math.log(0.8)) ** 2)
        assert float(metrics.effectv_usage[a1]) == pytest.approx(0.8 * 3**k * 0.125, rel=1e-12)
        assert float(metrics.effectv_usage[a1]) == pytest.approx(0.1631333, abs=1e-7)
        assert metrics.fairshare[a1] == pytest.approx(2 ** -(0.1631333 / 0.125), rel=1e-6)

    def test_logs_of_one_sign_keep_k_at_1(self):
        # a2: ratio_l = (0.1/0.375)/0.8 = 1/3, ln 0.8 and ln 1/3 both < 0: UE = 0.8 · 1/3 · 0.375
        tree = two_level()
        metrics = compute(tree, Algorithm.DEPTH_OBLIVIOUS)
        a2 = tree.find("A", "a2")
        assert a2 is not None
        assert float(metrics.effectv_usage[a2]) == pytest.approx(0.1, rel=1e-12)
        assert metrics.fairshare[a2] == pytest.approx(2 ** -(0.1 / 0.375), rel=1e-12)

    def test_without_own_usage_it_is_the_normalised_usage(self):
        tree = two_level(a2=0)
        metrics = compute(tree, Algorithm.DEPTH_OBLIVIOUS)
        a2 = tree.find("A", "a2")
        assert a2 is not None
        assert float(metrics.effectv_usage[a2]) == 0.0
        assert metrics.fairshare[a2] == 1.0

    def test_it_differs_from_classic_and_keeps_its_norm_shares(self):
        tree = two_level()
        classic, oblivious = (
            compute(tree, Algorithm.CLASSIC),
            compute(tree, Algorithm.DEPTH_OBLIVIOUS),
        )
        assert np.array_equal(classic.norm_shares, oblivious.norm_shares)
        a1 = tree.find("A", "a1")
        # classic: 0.3 + (0.4 - 0.3)·1/4 = 0.325, depth-oblivious 0.1631333
        assert float(classic.effectv_usage[a1]) == pytest.approx(0.325, rel=1e-15)
        assert float(oblivious.effectv_usage[a1]) < float(classic.effectv_usage[a1])

    @pytest.mark.parametrize(
        ("flags", "algorithm"),
        [
            ((), Algorithm.FAIR_TREE),
            (("NO_FAIR_TREE",), Algorithm.CLASSIC),
            (("DEPTH_OBLIVIOUS",), Algorithm.DEPTH_OBLIVIOUS),
            (("DEPTH_OBLIVIOUS", "NO_FAIR_TREE"), Algorithm.DEPTH_OBLIVIOUS),
        ],
    )
    def test_the_flags_choose_it(self, flags, algorithm):
        assert Algorithm.of_flags(flags) is algorithm
        assert algorithm.classic is (algorithm is not Algorithm.FAIR_TREE)


class TestAssociationPriority:
    """An association's Priority: its own, else its parent's (slurmdbd fills unset limits
    from the parent), 0 when unset up to the root."""

    def tree(self, root: int | None = None) -> SlurmTree:
        return SlurmTree.build([
            AssociationDef(ROOT_ACCOUNT, parent=None, priority=root),
            AssociationDef("phys", priority=10),
            AssociationDef("theory", parent="phys"),
            AssociationDef("theory", parent="theory", user="news"),
            AssociationDef("phys", parent="phys", user="mail", priority=30),
            AssociationDef("chem"),
            AssociationDef("chem", parent="chem", user="list"),
        ])  # fmt: skip

    def held(self, tree: SlurmTree) -> dict[tuple[str, str | None], int]:
        priorities = tree.effective_priorities()
        return {tree.key(n): priorities[n] for n in range(len(tree))}

    def test_unset_ones_take_the_nearest_set_above(self):
        held = self.held(self.tree())
        assert held[("theory", "news")] == 10  # theory's, which is phys's
        assert held[("phys", "mail")] == 30
        assert held[("chem", "list")] == 0
        assert held[("root", None)] == 0

    def test_the_roots_priority_reaches_every_unset_one(self):
        held = self.held(self.tree(root=7))
        assert held[("chem", "list")] == 7
        assert held[("theory", "news")] == 10

    def test_records_keep_the_priority_as_set(self):
        tree = self.tree()
        rebuilt = SlurmTree.build(tree.records())
        assert rebuilt.priorities == tree.priorities
        assert self.held(rebuilt) == self.held(tree)


@PROPERTY
@given(slurm_trees())
def test_ranks_are_competition_ranks_counted_from_the_top(defs):
    """Every user has 1 <= rank <= count and FairShare rank/count; the first user ranked gets
    count (rank starts at g_user_assoc_count), so the best FairShare is 1.0; ranks never
    increase along the traversal, so for every rank r given, exactly count - r users rank
    above it. Accounts get no rank and no FairShare."""
    tree = SlurmTree.build(defs)
    metrics = compute(tree)
    users = user_nodes(tree)
    count = metrics.user_count
    assert count == len(users) == sum(d.user is not None for d in defs)
    given_ranks = [int(metrics.rank[n]) for n in users]
    assert all(1 <= r <= count for r in given_ranks)
    assert max(given_ranks) == count
    assert max(metrics.fairshare[n] for n in users) == 1.0
    for n in users:
        assert metrics.fairshare[n] == metrics.rank[n] / count
    for r in set(given_ranks):
        assert sum(g > r for g in given_ranks) == count - r
    for n in range(len(tree)):
        if not tree.is_user[n]:
            assert metrics.rank[n] == 0
            assert math.isnan(metrics.fairshare[n])


@PROPERTY
@given(slurm_trees())
def test_level_fs_special_values_and_norm_shares_sum_to_1(defs):
    tree = SlurmTree.build(defs)
    metrics = compute(tree)
    shares = tree.tree.shares
    for n in range(1, len(tree)):
        lf = metrics.level_fs[n]
        if shares[n] == USE_PARENT:
            assert lf == (INF if tree.is_user[n] else NO_VAL)
            assert metrics.norm_shares[n] == metrics.norm_shares[metrics.fs_parent[n]]
        elif metrics.norm_shares[n] == 0:
            assert lf == 0
        elif metrics.effectv_usage[n] == 0:
            assert lf == INF
        else:
            assert 0 < lf < INF
    for parent in {metrics.fs_parent[n] for n in range(1, len(tree))}:
        kids = [n for n in range(1, len(tree)) if metrics.fs_parent[n] == parent]
        own = [n for n in kids if shares[n] != USE_PARENT]
        if own and sum(shares[n] for n in own) > 0:
            assert math.fsum(metrics.norm_shares[n] for n in own) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(slurm_trees(user_shares=RARE_TIE_USER_SHARES, usages=RARE_TIE_USAGE))
def test_compare_agrees_with_fairshare_when_nothing_ties(defs):
    """Without ties, Fair Tree's order is the depth-first walk over siblings sorted by Level FS:
    the user on the side of the higher Level FS at the first common fs ancestor has the higher
    FairShare, and the ranks are exactly 1..count."""
    tree = SlurmTree.build(defs)
    metrics = compute(tree)
    users = user_nodes(tree)
    assume(not metrics.tied[users].any())
    by_parent: dict[int, list[np.longdouble]] = {}
    for n in range(1, len(tree)):
        by_parent.setdefault(metrics.fs_parent[n], []).append(metrics.level_fs[n])
    assume(all(len(set(v)) == len(v) for v in by_parent.values()))
    assert sorted(int(metrics.rank[n]) for n in users) == list(range(1, len(users) + 1))
    for a, b in itertools.permutations(users, 2):
        verdict = compare(metrics, a, b)
        assert verdict.winner is not None
        assert (verdict.winner == verdict.child_a) == (metrics.fairshare[a] > metrics.fairshare[b])


# ---------------------------------------------------------------------------------------------
# decay and reset (§0 raw usage)

HALF_LIFE_2MIN = 1 - 0.693 / 120


class TestDecay:
    def test_decay_factor(self):
        assert decay_factor(timedelta(minutes=2)) == HALF_LIFE_2MIN
        assert decay_factor(timedelta(days=7)) == 1 - 0.693 / 604800
        assert decay_factor(timedelta(0)) == 1.0

    def test_the_reference_job_53_then_60_seconds(self):
        """A 4-CPU job running 53 s before the first pass: 155.9638…, printed 155; the next
        pass 60 s later decays it and adds 60·df^60·4: 279.728…"""
        first = new_usage(53, HALF_LIFE_2MIN, 4)
        assert first == pytest.approx(155.9638213, abs=1e-7)
        assert int(first) == 155
        tree = SlurmTree.build([account("A"), user("A", "j")])
        job = node(tree, "A", "j")
        charge(tree, job, first)
        assert tree.tree.usage == [first, first, first]
        decay_usage(tree, HALF_LIFE_2MIN, 60)
        charge(tree, job, new_usage(60, HALF_LIFE_2MIN, 4))
        for usage in tree.tree.usage:
            assert usage == pytest.approx(279.7282117, abs=1e-7)

    def test_qos_usage_factor_multiplies(self):
        assert new_usage(10, 1.0, 4, usage_factor=0.5) == 20.0

    def test_no_decay_with_half_life_0(self):
        tree = SlurmTree.build([account("A", usage=7), user("A", "j", 1, 7)])
        decay_usage(tree, decay_factor(timedelta(0)), 3600)
        assert tree.tree.usage == [7, 7, 7]
        assert decay_over(1.0, 1e9) == 1.0
        assert new_usage(60, 1.0, 4) == 240.0

    def test_real_decay_never_below_dbl_min(self):
        assert decay_over(0.5, 1e6) == DBL_MIN
        assert decay_over(0.5, 2) == 0.25


class TestNextUsageReset:
    WEDNESDAY = datetime(2024, 5, 15, 13, 30, 12)

    @pytest.mark.parametrize(
        ("period", "expected"),
        [
            (UsageResetPeriod.DAILY, datetime(2024, 5, 16)),
            (UsageResetPeriod.WEEKLY, datetime(2024, 5, 19)),  # the next Sunday
            (UsageResetPeriod.MONTHLY, datetime(2024, 6, 1)),
            (UsageResetPeriod.QUARTERLY, datetime(2024, 7, 1)),
            (UsageResetPeriod.YEARLY, datetime(2025, 1, 1)),
            (UsageResetPeriod.NONE, None),
            (UsageResetPeriod.NOW, None),
        ],
    )
    def test_from_a_wednesday_afternoon(self, period, expected):
        assert next_usage_reset(self.WEDNESDAY, period) == expected

    @pytest.mark.parametrize(
        ("after", "period", "expected"),
        [
            # on a Sunday the next reset is the following Sunday (7 - tm_wday 0)
            (datetime(2024, 5, 19, 0, 0), UsageResetPeriod.WEEKLY, datetime(2024, 5, 26)),
            (datetime(2024, 5, 18, 23, 59), UsageResetPeriod.WEEKLY, datetime(2024, 5, 19)),
            (datetime(2024, 12, 31, 23, 0), UsageResetPeriod.DAILY, datetime(2025, 1, 1)),
            (datetime(2024, 12, 5), UsageResetPeriod.MONTHLY, datetime(2025, 1, 1)),
            (datetime(2024, 1, 31), UsageResetPeriod.MONTHLY, datetime(2024, 2, 1)),
            (datetime(2024, 3, 31, 12), UsageResetPeriod.QUARTERLY, datetime(2024, 4, 1)),
            (datetime(2024, 4, 1), UsageResetPeriod.QUARTERLY, datetime(2024, 7, 1)),
            (datetime(2024, 11, 2), UsageResetPeriod.QUARTERLY, datetime(2025, 1, 1)),
            (datetime(2024, 1, 1), UsageResetPeriod.YEARLY, datetime(2025, 1, 1)),
        ],
    )
    def test_boundaries(self, after, period, expected):
        assert next_usage_reset(after, period) == expected


class TestBuild:
    def test_root_usage_is_the_sum_of_top_level_usage_without_a_root_row(self):
        tree = SlurmTree.build([account("A", usage=3), user("root", "r", 1, 4)])
        assert tree.tree.usage[ROOT] == 7
        assert tree.tree.shares[ROOT] == 1

    def test_rejects_undefined_parents_and_duplicates(self):
        with pytest.raises(ValueError, match="parent accounts not defined: nowhere"):
            SlurmTree.build([user("nowhere", "u")])
        with pytest.raises(ValueError, match="user u is in account A twice"):
            SlurmTree.build([account("A"), user("A", "u"), user("A", "u")])
        with pytest.raises(ValueError, match="account A is defined twice"):
            SlurmTree.build([account("A"), account("A")])
