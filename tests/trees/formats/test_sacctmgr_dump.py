"""parse_sacctmgr_dump against sacctmgr load, Slurm 22.05 src/sacctmgr/file_functions.c."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.slurm import ROOT_ACCOUNT, USE_PARENT, AssociationDef
from trees.formats.rejected import RejectedLine
from trees.formats.sacctmgr_dump import SacctmgrDump, parse_sacctmgr_dump

EXAMPLE = """\
# To edit this file start with a cluster line for the new cluster
# Cluster - 'cluster_name':MaxNodesPerJob=50
# ...comments...
Cluster - 'snowflake':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'cs':Description='Computer Science':Organization='LC':Fairshare=399
Account - 'phys':Description='physics':Organization='phys':Fairshare=parent
Parent - 'cs'
User - 'lipari':DefaultAccount='cs':Fairshare=1
Account - 'test':Description='Test Account':Organization='Test':Fairshare=2147483647
Parent - 'test'
User - 'bob':DefaultAccount='cs':Fairshare=5:MaxJobs=3:GrpTRESMins=cpu=20
"""
CLUSTER = "Cluster - 'snowflake'\n"


def parse(text: str, **options: bool) -> SacctmgrDump:
    return parse_sacctmgr_dump(text.encode(), **options)


def only_rejection(result: SacctmgrDump) -> RejectedLine:
    assert len(result.rejected) == 1, result.rejected
    return result.rejected[0]


def account(
    name: str, parent: str = ROOT_ACCOUNT, shares: int = 1, priority: int | None = None
) -> AssociationDef:
    return AssociationDef(name, parent=parent, shares=shares, priority=priority)


def user(
    name: str, in_account: str, shares: int = 1, priority: int | None = None
) -> AssociationDef:
    return AssociationDef(in_account, parent=in_account, user=name, shares=shares,
                          priority=priority)  # fmt: skip


class TestTheExample:
    def test_it_reads_every_association_with_root_first(self) -> None:
        result = parse(EXAMPLE)
        assert result.cluster == "snowflake"
        assert result.root_shares == 1
        assert result.associations == [
            AssociationDef("root", parent=None, shares=1),
            user("root", "root"),
            account("cs", shares=399),
            account("phys", shares=USE_PARENT),
            user("lipari", "cs"),
            account("test", parent="cs", shares=USE_PARENT),
            user("bob", "test", shares=5),
        ]
        assert result.rejected == []

    def test_entries_carry_their_line_numbers_and_leave_out_root(self) -> None:
        result = parse(EXAMPLE)
        assert [number for number, _ in result.entries] == [6, 7, 8, 10, 11, 13]
        assert all(a.account != "root" or a.user is not None for _, a in result.entries)

    def test_it_keeps_grp_tres_mins_only_where_given(self) -> None:
        assert parse(EXAMPLE).grp_tres_mins == {("test", "bob"): "cpu=20"}


class TestShares:
    @pytest.mark.parametrize("value", ["parent", "Parent", "PARENT", "'parent'", "2147483647"])
    def test_parent_and_2147483647_both_mean_use_parent(self, value: str) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Fairshare={value}\n")
        assert result.associations[1:] == [account("a", shares=USE_PARENT)]

    @pytest.mark.parametrize(
        "key",
        ["Fairshare", "FairShare", "FAIRSHARE", "F", "Fair", "Shares", "shares", "S", "Share"],
    )
    def test_it_takes_any_abbreviation_of_fairshare_or_shares(self, key: str) -> None:
        result = parse(f"{CLUSTER}Account - 'a':{key}=7\n")
        assert result.associations[1:] == [account("a", shares=7)]
        assert result.rejected == []

    @pytest.mark.parametrize(("value", "shares"), [("0", 0), ("+12", 12), ("'40'", 40)])
    def test_it_reads_whole_numbers(self, value: str, shares: int) -> None:
        result = parse(f"{CLUSTER}User - 'u':Fairshare={value}\n")
        assert result.associations[1:] == [user("u", "root", shares=shares)]

    def test_a_missing_or_blank_fairshare_is_slurms_default_of_one(self) -> None:
        result = parse(
            f"{CLUSTER}Account - 'a'\nAccount - 'b':Fairshare=\nUser - 'u':Fairshare=''\n"
        )
        assert result.associations[1:] == [account("a"), account("b"), user("u", "root")]
        assert result.rejected == []

    def test_the_cluster_line_gives_the_root_its_shares(self) -> None:
        result = parse("Cluster - 'c':Fairshare=30\nAccount - 'a':Fairshare=2\n")
        assert result.root_shares == 30
        assert result.associations == [
            AssociationDef("root", parent=None, shares=30),
            account("a", shares=2),
        ]

    def test_without_a_fairshare_the_root_has_one_share(self) -> None:
        assert parse(CLUSTER).root_shares == 1
        assert parse(CLUSTER).associations == [AssociationDef("root", parent=None, shares=1)]

    def test_the_last_fairshare_on_a_line_wins(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Fairshare=3:Shares=9\n")
        assert result.associations[1:] == [account("a", shares=9)]


class TestTheHierarchy:
    def test_with_no_parent_line_lines_hang_from_root(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a'\nUser - 'u'\n")
        assert result.associations[1:] == [account("a"), user("u", "root")]

    def test_a_parent_line_moves_the_following_lines(self) -> None:
        text = (
            f"{CLUSTER}Account - 'a'\nParent - 'a'\nAccount - 'b'\nUser - 'u'\n"
            "Parent - 'root'\nAccount - 'c'\nParent - 'b'\nUser - 'u'\n"
        )
        result = parse(text)
        assert result.associations[1:] == [
            account("a"),
            account("b", parent="a"),
            user("u", "a"),
            account("c"),
            user("u", "b"),
        ]
        assert result.rejected == []

    def test_a_user_in_two_accounts_is_two_associations(self) -> None:
        result = parse(
            f"{CLUSTER}Account - 'a'\nUser - 'u':Fairshare=2\nParent - 'a'\nUser - 'u'\n"
        )
        assert result.associations[1:] == [account("a"), user("u", "root", 2), user("u", "a")]
        assert result.rejected == []

    @pytest.mark.parametrize(
        ("cluster", "acct", "usr"),
        [
            ("Machine", "Project", "user"),
            ("CLUSTER", "ACCOUNT", "USER"),
            ("cluster", "account", "User"),
        ],
    )
    def test_object_words_are_case_insensitive_with_their_old_names(
        self, cluster: str, acct: str, usr: str
    ) -> None:
        result = parse(f"{cluster} - 'c'\n{acct} - 'a'\nparent - 'a'\n{usr} - 'u'\n")
        assert result.cluster == "c"
        assert result.associations[1:] == [account("a"), user("u", "a")]


class TestNamesAndQuotes:
    def test_names_may_be_single_double_or_unquoted(self) -> None:
        result = parse('Cluster - "c"\nAccount - a\nAccount - "b"\nParent - b\nUser - \'u\'\n')
        assert result.associations[1:] == [account("a"), account("b"), user("u", "b")]

    def test_quoted_values_may_hold_colons(self) -> None:
        text = (
            f"{CLUSTER}Account - 'a':Description='ratio 1:2: and more':"
            'Organization="x:y":Fairshare=4\n'
        )
        result = parse(text)
        assert result.associations[1:] == [account("a", shares=4)]
        assert result.rejected == []

    def test_a_quoted_name_may_hold_a_colon(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a:b':Fairshare=3\nParent - 'a:b'\nUser - 'u'\n")
        assert result.associations[1:] == [account("a:b", shares=3), user("u", "a:b")]

    def test_names_are_lowercased_as_sacctmgr_does(self) -> None:
        result = parse("Cluster - 'Snow'\nAccount - 'CS'\nParent - 'Cs'\nUser - 'Bob'\n")
        assert result.cluster == "snow"
        assert result.associations[1:] == [account("cs"), user("bob", "cs")]

    def test_preserve_case_user_keeps_user_names_as_written(self) -> None:
        result = parse(
            f"{CLUSTER}Account - 'CS'\nParent - 'cs'\nUser - 'Bob'\n", preserve_case_user=True
        )
        assert result.associations[1:] == [account("cs"), user("Bob", "cs")]

    def test_spaces_around_the_object_word_and_the_name_are_ignored(self) -> None:
        result = parse(f"{CLUSTER}  Account   -   'a'  :Fairshare=2\nUser - u \n")
        assert result.associations[1:] == [account("a", shares=2), user("u", "root")]

    def test_a_dash_inside_the_name_is_part_of_the_name(self) -> None:
        result = parse(f"{CLUSTER}Account - 'phys-lab'\nParent - phys-lab\nUser - 'a-b'\n")
        assert result.associations[1:] == [account("phys-lab"), user("a-b", "phys-lab")]


class TestOptions:
    def test_it_ignores_the_other_options_a_dump_writes(self) -> None:
        text = (
            f"{CLUSTER}Account - 'a':Description='d':Organization='o':DefaultQOS='normal':"
            "Fairshare=5:GrpTRESMins=cpu=10:GrpTRESRunMins=cpu=3:GrpTRES=cpu=4,mem=100:"
            "GrpJobs=4:GrpJobsAccrue=2:GrpSubmitJobs=9:GrpWall=60:MaxTRESMinsPerJob=cpu=5:"
            "MaxTRESRunMins=cpu=6:MaxTRESPerJob=node=2:MaxTRESPerNode=cpu=8:MaxJobs=3:"
            "MaxJobsAccrue=1:MaxSubmitJobs=5:MaxWallDurationPerJob=120:Priority=10:"
            "QOS='normal,high'\n"
            "Parent - 'a'\nUser - 'u':Partition='debug':DefaultAccount='a':DefaultWCKey='w':"
            "AdminLevel='Operator':Coordinator='a':WCKeys='w,x':Fairshare=2\n"
        )
        result = parse(text)
        assert result.associations[1:] == [
            account("a", shares=5, priority=10),
            user("u", "a", shares=2),
        ]
        assert result.grp_tres_mins == {("a", None): "cpu=10"}
        assert result.rejected == []

    def test_it_keeps_the_cluster_lines_grp_tres_mins_for_root(self) -> None:
        result = parse("Cluster - 'c':GrpTRESMins=cpu=100,mem=5\n")
        assert result.grp_tres_mins == {("root", None): "cpu=100,mem=5"}

    def test_it_glues_back_a_typed_gres_the_colon_split(self) -> None:
        text = f"{CLUSTER}User - 'u':GrpTRESMins=cpu=20,gres/gpu:a100=5:Fairshare=6\n"
        result = parse(text)
        assert result.associations[1:] == [user("u", "root", shares=6)]
        assert result.grp_tres_mins == {("root", "u"): "cpu=20,gres/gpu:a100=5"}
        assert result.rejected == []

    def test_it_ignores_empty_options_between_colons(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a'::Fairshare=2:\n")
        assert result.associations[1:] == [account("a", shares=2)]


class TestPriority:
    """Priority= on the Cluster line (the root association), accounts and users, as set;
    the inherited value is the engine's (SlurmTree.effective_priorities)."""

    def test_it_is_read_where_it_is_set(self) -> None:
        text = (
            "Cluster - 'c':Fairshare=1:Priority=3\nParent - 'root'\n"
            "Account - 'a':Fairshare=5:Priority=10\nAccount - 'b':Fairshare=2\n"
            "Parent - 'a'\nUser - 'u':Fairshare=2:Priority=30\nUser - 'v':Fairshare=1\n"
        )
        result = parse(text)
        assert result.associations == [
            AssociationDef(ROOT_ACCOUNT, parent=None, shares=1, priority=3),
            account("a", shares=5, priority=10),
            account("b", shares=2),
            user("u", "a", shares=2, priority=30),
            user("v", "a"),
        ]

    def test_minus_one_clears_it(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Priority=-1\n")
        assert result.associations[1] == account("a")

    @pytest.mark.parametrize("value", ["high", "4294967295", "-2", "1.5"])
    def test_a_bad_one_rejects_the_line(self, value: str) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Priority={value}\nAccount - 'b'\n")
        assert [(r.line, r.field) for r in result.rejected] == [(2, "Priority")]
        assert [a.account for a in result.associations] == [ROOT_ACCOUNT, "b"]


class TestCommentsAndContinuations:
    def test_it_skips_comments_and_blank_lines_but_counts_them(self) -> None:
        text = f"# header\n\n   \n\t# indented\n{CLUSTER}Account - 'a' # note\n"
        result = parse(text)
        assert result.entries == [(6, account("a"))]
        assert result.rejected == []

    def test_a_trailing_backslash_continues_the_line(self) -> None:
        text = f"{CLUSTER}Account - 'a':\\\nDescription='d':\\  \n  Fairshare=8\nUser - 'u'\n"
        result = parse(text)
        assert result.entries == [(2, account("a", shares=8)), (5, user("u", "root"))]
        assert result.rejected == []

    def test_a_backslash_before_a_comment_continues_the_line(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a' \\ # continued\n:Fairshare=3\n")
        assert result.entries == [(2, account("a", shares=3))]

    def test_an_even_run_of_backslashes_is_an_escaped_backslash_not_a_continuation(
        self,
    ) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Description=x\\\\\nUser - 'u'\n")
        assert result.entries == [(2, account("a")), (3, user("u", "root"))]

    def test_an_escaped_hash_is_not_a_comment(self) -> None:
        text = f"{CLUSTER}Account - 'a':Description='team \\#1':Fairshare=4\n"
        result = parse(text)
        assert result.associations[1:] == [account("a", shares=4)]
        assert result.rejected == []

    def test_a_backslash_on_the_last_line_continues_into_nothing(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Fairshare=2\\")
        assert result.entries == [(2, account("a", shares=2))]

    def test_it_accepts_crlf_line_endings(self) -> None:
        text = EXAMPLE.replace("\n", "\r\n")
        assert parse(text).associations == parse(EXAMPLE).associations
        assert parse(text).rejected == []

    def test_it_accepts_crlf_with_continuations(self) -> None:
        result = parse(f"{CLUSTER}Account - a:\\\r\nFairshare=5\r\nUser - u\r\n")
        assert result.entries == [(2, account("a", shares=5)), (4, user("u", "root"))]

    def test_an_empty_file_has_no_cluster_and_only_root(self) -> None:
        result = parse("")
        assert result.cluster is None
        assert result.associations == [AssociationDef("root", parent=None, shares=1)]
        assert result.rejected == []


class TestRejectedShares:
    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            ("abc", "'abc' is not a number of shares or 'parent'"),
            ("5x", "'5x' is not a number of shares or 'parent'"),
            ("parents", "'parents' is not a number of shares or 'parent'"),
            ("1.5", "'1.5' is not a number of shares or 'parent'"),
            ("-1", "-1 is negative; shares must be 0 or more"),
            (
                "2147483648",
                "2147483648 is more than Slurm stores (at most 2147483647, which means parent)",
            ),
            (
                "4294967296",
                "4294967296 is more than Slurm stores (at most 2147483647, which means parent)",
            ),
        ],
    )
    def test_it_rejects_bad_shares_and_reads_on(self, value: str, reason: str) -> None:
        line = f"Account - 'b':Fairshare={value}"
        result = parse(f"{CLUSTER}Account - 'a'\n{line}\nAccount - 'c'\n")
        assert only_rejection(result) == RejectedLine(3, "Fairshare", reason, line)
        assert result.entries == [(2, account("a")), (4, account("c"))]
        assert str(result.rejected[0]).startswith("line 3: Fairshare: ")

    def test_the_message_names_the_field_once(self) -> None:
        bad = only_rejection(parse(f"{CLUSTER}User - 'u':Fairshare=abc\n"))
        assert str(bad) == "line 2: Fairshare: 'abc' is not a number of shares or 'parent'"

    def test_the_cluster_line_cannot_take_its_shares_from_a_parent(self) -> None:
        result = parse("Cluster - 'c':Fairshare=parent\nAccount - 'a'\n")
        assert result.rejected == [
            RejectedLine(
                1,
                "Fairshare",
                "the root account has no parent to take its shares from",
                "Cluster - 'c':Fairshare=parent",
            ),
            RejectedLine(2, "line", "the Cluster line (line 1) was rejected", "Account - 'a'"),
        ]
        assert result.cluster is None
        assert result.entries == []


class TestRejectedParents:
    def test_an_undefined_parent_rejects_the_lines_under_it(self) -> None:
        text = (
            f"{CLUSTER}Account - 'a'\nParent - 'x'\nAccount - 'b'\nUser - 'u'\n"
            "Parent - 'a'\nUser - 'v'\n"
        )
        result = parse(text)
        follow = "its parent account 'x' (Parent line 3) was rejected"
        assert result.rejected == [
            RejectedLine(3, "Parent", "account 'x' is not defined above this line", "Parent - 'x'"),
            RejectedLine(4, "Parent", follow, "Account - 'b'"),
            RejectedLine(5, "Parent", follow, "User - 'u'"),
        ]
        assert result.entries == [(2, account("a")), (7, user("v", "a"))]

    def test_a_parent_must_be_defined_above_not_below(self) -> None:
        result = parse(f"{CLUSTER}Parent - 'late'\nUser - 'u'\nParent - 'root'\nAccount - 'late'\n")
        assert [(bad.line, bad.field) for bad in result.rejected] == [(2, "Parent"), (3, "Parent")]
        assert result.entries == [(5, account("late"))]

    def test_a_parent_that_was_rejected_says_where(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a':Fairshare=-3\nParent - 'a'\nUser - 'u'\n")
        assert result.rejected[1:] == [
            RejectedLine(3, "Parent", "account 'a' was rejected on line 2", "Parent - 'a'"),
            RejectedLine(
                4, "Parent", "its parent account 'a' (Parent line 3) was rejected", "User - 'u'"
            ),
        ]
        assert result.entries == []

    def test_accounts_under_a_rejected_account_are_rejected_in_turn(self) -> None:
        text = (
            f"{CLUSTER}Parent - 'nope'\nAccount - 'a'\nParent - 'root'\nParent - 'a'\nUser - 'u'\n"
        )
        result = parse(text)
        assert [(bad.line, bad.reason) for bad in result.rejected] == [
            (2, "account 'nope' is not defined above this line"),
            (3, "its parent account 'nope' (Parent line 2) was rejected"),
            (5, "account 'a' was rejected on line 3"),
            (6, "its parent account 'a' (Parent line 5) was rejected"),
        ]
        assert result.entries == []

    def test_a_parent_line_that_cannot_be_read_rejects_the_lines_under_it(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a'\nParent - 'a\nUser - 'u'\n")
        assert [(bad.line, bad.field, bad.reason) for bad in result.rejected] == [
            (3, "line", 'the quote in "\'a" is never closed'),
            (4, "Parent", "the Parent line 3 was rejected"),
        ]
        assert result.entries == [(2, account("a"))]

    def test_a_good_parent_line_ends_the_rejections(self) -> None:
        result = parse(f"{CLUSTER}Parent - 'x'\nParent - 'root'\nUser - 'u'\n")
        assert result.entries == [(4, user("u", "root"))]


class TestRejectedClusterLines:
    @pytest.mark.parametrize("first", ["Account - 'a'", "User - 'u'", "Parent - 'root'"])
    def test_lines_before_any_cluster_line_are_rejected(self, first: str) -> None:
        word = first.split()[0]
        result = parse(f"{first}\n{CLUSTER}Account - 'b'\n")
        assert only_rejection(result) == RejectedLine(
            1, "line", f"{word} line before any Cluster line", first
        )
        assert result.entries == [(3, account("b"))]

    def test_a_user_line_before_the_cluster_line_says_so(self) -> None:
        bad = only_rejection(parse("User - 'bob'\n"))
        assert bad.reason == "User line before any Cluster line"

    def test_a_second_cluster_line_is_rejected(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a'\nCluster - 'other':Fairshare=9\nUser - 'u'\n")
        assert only_rejection(result) == RejectedLine(
            3,
            "object",
            "a second Cluster line (the first is line 1); sacctmgr loads one cluster at a time",
            "Cluster - 'other':Fairshare=9",
        )
        assert result.cluster == "snowflake"
        assert result.root_shares == 1
        assert result.entries == [(2, account("a")), (4, user("u", "root"))]


class TestRejectedDuplicates:
    def test_a_user_twice_in_one_account_is_rejected(self) -> None:
        text = f"{CLUSTER}Account - 'cs'\nParent - 'cs'\nUser - 'bob'\nUser - 'bob':Fairshare=9\n"
        result = parse(text)
        assert only_rejection(result) == RejectedLine(
            5,
            "name",
            "duplicate association: user bob in account cs (first on line 4)",
            "User - 'bob':Fairshare=9",
        )
        assert result.entries == [(2, account("cs")), (4, user("bob", "cs"))]

    def test_a_user_per_partition_is_rejected_with_a_note(self) -> None:
        text = f"{CLUSTER}User - 'u':Partition='a'\nUser - 'u':Partition='b'\n"
        bad = only_rejection(parse(text))
        assert bad.reason == (
            "duplicate association: user u in account root (first on line 2); "
            "associations per partition are not modelled"
        )

    def test_an_account_twice_is_rejected_even_under_another_parent(self) -> None:
        text = f"{CLUSTER}Account - 'a'\nAccount - 'cs'\nParent - 'a'\nAccount - 'cs':Fairshare=4\n"
        result = parse(text)
        assert only_rejection(result) == RejectedLine(
            5, "name", "account cs is defined twice (first on line 3)", "Account - 'cs':Fairshare=4"
        )
        assert result.entries == [(2, account("a")), (3, account("cs"))]

    def test_root_cannot_be_defined_as_an_account(self) -> None:
        result = parse(f"{CLUSTER}Account - 'root':Fairshare=5\nAccount - 'a'\n")
        assert only_rejection(result) == RejectedLine(
            2,
            "name",
            "root is the cluster's root account; its shares come from the Cluster line",
            "Account - 'root':Fairshare=5",
        )
        assert result.entries == [(3, account("a"))]


class TestRejectedSyntax:
    @pytest.mark.parametrize(
        ("line", "field", "reason"),
        [
            (
                "Acount - 'a'",
                "object",
                "unknown object 'Acount'; expected Cluster, Parent, Account or User",
            ),
            ("- 'a'", "object", "unknown object ''; expected Cluster, Parent, Account or User"),
            ("Account 'a'", "object", "has no ' - ' between the object word and the name"),
            ("Account -", "name", "nothing after 'Account -'"),
            ("Account - :Fairshare=3", "name", "no name given"),
            ("Account - '':Fairshare=3", "name", "the name is empty"),
            (
                "Account - 'a':Fairshare=3:'b'",
                "line",
                "\"'b'\" has no '='; only the name comes without one",
            ),
            ("Account - 'a':Fairshre=3", "line", "unknown option 'Fairshre'"),
            ("Account - 'a':FairShares=3", "line", "unknown option 'FairShares'"),
            ("Account - 'a:Fairshare=3", "line", 'the quote in "\'a:Fairshare=3" is never closed'),
            (
                "Account - 'a':Description='x:y' z:Fairshare=3",
                "line",
                "text ' z:Fairshare=3' follows the closing quote of \"Description='x:y'\"; "
                "sacctmgr would drop it and the rest of the line",
            ),
        ],
    )
    def test_it_rejects_a_malformed_line_and_reads_on(
        self, line: str, field: str, reason: str
    ) -> None:
        result = parse(f"{CLUSTER}Account - 'before'\n{line}\nUser - 'after'\n")
        assert only_rejection(result) == RejectedLine(3, field, reason, line)
        assert result.entries == [(2, account("before")), (4, user("after", "root"))]

    def test_an_unterminated_quote_after_a_hash_explains_the_comment(self) -> None:
        line = "Account - 'a':Description='team #1':Fairshare=3"
        bad = only_rejection(parse(f"{CLUSTER}{line}\n"))
        assert bad == RejectedLine(
            2,
            "line",
            'the quote in "Description=\'team" is never closed '
            "(a '#' starts a comment even inside quotes; write \\# for one)",
            line,
        )

    def test_a_continued_line_is_reported_at_its_first_physical_line(self) -> None:
        result = parse(f"{CLUSTER}Account - 'a':\\\nFairshare=x\nUser - 'u'\n")
        assert only_rejection(result) == RejectedLine(
            2,
            "Fairshare",
            "'x' is not a number of shares or 'parent'",
            "Account - 'a':\\\nFairshare=x",
        )
        assert result.entries == [(4, user("u", "root"))]

    def test_it_reports_bytes_that_are_not_utf8_and_reads_on(self) -> None:
        data = CLUSTER.encode() + b"Account - 'caf\xe9'\nAccount - 'b'\n"
        result = parse_sacctmgr_dump(data)
        assert only_rejection(result) == RejectedLine(
            2,
            "line",
            "is not valid UTF-8 (invalid continuation byte)",
            repr(b"Account - 'caf\xe9'"),
        )
        assert result.entries == [(3, account("b"))]

    def test_bytes_that_are_not_utf8_in_a_comment_are_harmless(self) -> None:
        data = CLUSTER.encode() + b"Account - 'a' # caf\xe9\n"
        result = parse_sacctmgr_dump(data)
        assert result.entries == [(2, account("a"))]
        assert result.rejected == []

    def test_a_line_longer_than_sacctmgrs_buffer_is_rejected(self) -> None:
        long_line = "Account - 'a':Description='" + "d" * 4100 + "':Fairshare=3"
        result = parse(f"{CLUSTER}{long_line}\nAccount - 'b'\n")
        assert only_rejection(result) == RejectedLine(
            2, "line", "is longer than the 4095 bytes sacctmgr reads as one line", long_line
        )
        assert result.entries == [(3, account("b"))]

    def test_a_line_just_inside_the_buffer_is_read(self) -> None:
        head = "Account - 'a':Fairshare=3:Description='"
        line = head + "d" * (4095 - len(head) - 1) + "'"
        assert len(line) == 4095
        assert parse(f"{CLUSTER}{line}\n").entries == [(2, account("a", shares=3))]


# Round trip: small trees written as print_file_slurmdb_hierarchical_rec_list() writes them.

_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-", min_size=1, max_size=6)
_SHARES = st.one_of(st.integers(0, USE_PARENT - 1), st.just(USE_PARENT))


@st.composite
def _trees(draw: st.DrawFn) -> tuple[int, list[AssociationDef]]:
    names = draw(st.lists(_NAME.filter(lambda n: n != ROOT_ACCOUNT), unique=True, max_size=6))
    known = [ROOT_ACCOUNT]
    associations = []
    for name in names:
        parent = draw(st.sampled_from(known))
        associations.append(account(name, parent=parent, shares=draw(_SHARES)))
        known.append(name)
    for acct in known:
        for name in draw(st.lists(_NAME, unique=True, max_size=3)):
            associations.append(user(name, acct, shares=draw(_SHARES)))
    return draw(st.integers(0, USE_PARENT - 1)), associations


def _write_dump(
    root_shares: int,
    associations: list[AssociationDef],
    draw: Callable[[st.SearchStrategy[str]], str],
) -> str:
    """Cluster line, then for each account with children in depth-first order its Parent line,
    its users and accounts, in the dump's quoting, with comments and continuations drawn in."""

    def quote(name: str) -> str:
        return draw(st.sampled_from([f"'{name}'", f'"{name}"', name]))

    def options(shares: int) -> str:
        key = draw(st.sampled_from(["Fairshare", "FairShare", "Shares", "fairshare", "F"]))
        text = str(shares)
        if shares == USE_PARENT:
            text = draw(st.sampled_from([text, "parent"]))
        described = draw(st.sampled_from(["", ":Description='a: b'", ":QOS='normal,high'"]))
        gap = draw(st.sampled_from([":", ":\\\n", ":\\ # note\n  "]))
        return f"{described}{gap}{key}={text}"

    lines = ["# sacctmgr dump", f"Cluster - {quote('snowflake')}:Fairshare={root_shares}"]
    children: dict[str, list[AssociationDef]] = {}
    for association in associations:
        children.setdefault(
            association.account if association.user else str(association.parent), []
        ).append(association)

    def write(acct: str) -> None:
        kids = sorted(children.get(acct, []), key=lambda a: (a.user is None, a.name))
        if not kids:
            return
        lines.append(f"Parent - {quote(acct)}")
        for kid in kids:
            word = "User" if kid.user is not None else "Account"
            lines.append(f"{word} - {quote(kid.name)}{options(kid.shares)}")
        for kid in kids:
            if kid.user is None:
                write(kid.account)

    write(ROOT_ACCOUNT)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(line.replace("\n", newline) for line in lines) + newline


@given(tree=_trees(), data=st.data())
def test_a_written_dump_reads_back_to_the_same_associations(
    tree: tuple[int, list[AssociationDef]], data: st.DataObject
) -> None:
    root_shares, associations = tree
    result = parse(_write_dump(root_shares, associations, data.draw))
    assert result.rejected == []
    assert result.root_shares == root_shares
    assert result.associations[0] == AssociationDef(ROOT_ACCOUNT, parent=None, shares=root_shares)

    def order(a: AssociationDef) -> tuple[str, str]:
        return (a.account, a.user or "")

    assert sorted(result.associations[1:], key=order) == sorted(associations, key=order)
    numbers = [number for number, _ in result.entries]
    assert numbers == sorted(numbers)
