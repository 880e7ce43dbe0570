"""parse_resource_group / format_resource_group against pbsfs-behaviour.md §1.3."""

from __future__ import annotations

import io
import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES
from tests.trees.engine.conftest import FORUM_GROUPS
from trees.engine.pbs import GroupDef
from trees.formats.rejected import RejectedLine
from trees.formats.resource_group import (
    ResourceGroup,
    format_resource_group,
    parse_resource_group,
)

needs_examples = pytest.mark.skipif(
    not EXAMPLES.is_dir(), reason="the shared PBS example files are not on this machine"
)
CRLF_REASON = (
    "shares '10' ends with a carriage return: the file has CRLF (DOS) line endings, which PBS "
    "does not accept; convert it with dos2unix"
)


def parse(text: str) -> ResourceGroup:
    return parse_resource_group(text.encode())


def only_rejection(result: ResourceGroup) -> RejectedLine:
    assert len(result.rejected) == 1, result.rejected
    return result.rejected[0]


class TestAcceptedLines:
    def test_it_reads_name_cgroup_parent_shares(self) -> None:
        result = parse("grp\t10\troot\t40\nalice 11 grp 50\n")
        assert result.entries == [
            (1, GroupDef(name="grp", cgroup=10, parent="root", shares=40)),
            (2, GroupDef(name="alice", cgroup=11, parent="grp", shares=50)),
        ]
        assert result.rejected == []
        assert result.pbs_messages == []

    def test_groups_lists_the_entries_without_line_numbers(self) -> None:
        result = parse("# header\ngrp 10 root 40\n")
        assert result.groups == [GroupDef("grp", 10, "root", 40)]

    def test_it_splits_on_runs_of_spaces_and_tabs(self) -> None:
        result = parse("  grp \t 10\t\t root  \t40   \n")
        assert result.groups == [GroupDef("grp", 10, "root", 40)]

    def test_it_ignores_tokens_after_the_fourth(self) -> None:
        result = parse("grp 10 root 40 these words are ignored\n")
        assert result.groups == [GroupDef("grp", 10, "root", 40)]
        assert result.rejected == []

    def test_it_reads_a_last_line_without_newline(self) -> None:
        assert parse("grp 10 root 40").groups == [GroupDef("grp", 10, "root", 40)]

    def test_it_keeps_parent_root_as_written(self) -> None:
        assert parse("grp 1 root 5\n").groups[0].parent == "root"

    def test_it_accepts_treeroot_as_a_parent_by_name(self) -> None:
        result = parse("grp 1 TREEROOT 5\n")
        assert result.groups == [GroupDef("grp", 1, "TREEROOT", 5)]
        assert result.rejected == []

    def test_it_accepts_unknown_as_a_parent(self) -> None:
        result = parse("late 1 unknown 5\n")
        assert result.groups == [GroupDef("late", 1, "unknown", 5)]
        assert result.rejected == []

    def test_it_accepts_an_entry_named_root(self) -> None:
        result = parse("root 1 root 5\nchild 2 root 3\n")
        assert result.groups == [GroupDef("root", 1, "root", 5), GroupDef("child", 2, "root", 3)]

    @pytest.mark.parametrize(
        ("token", "value"),
        [("+7", 7), ("007", 7), ("0", 0), ("-0", 0), ("2147483647", 2**31 - 1)],
    )
    def test_it_reads_shares_as_strtol_does(self, token: str, value: int) -> None:
        result = parse(f"grp 1 root {token}\n")
        assert result.groups == [GroupDef("grp", 1, "root", value)]
        assert result.rejected == []

    @pytest.mark.parametrize(
        ("token", "value"),
        [
            ("-10", -10),
            ("+3", 3),
            ("0042", 42),
            ("-2147483648", -(2**31)),
            ("2147483647", 2**31 - 1),
        ],
    )
    def test_it_reads_any_c_int_as_cgroup(self, token: str, value: int) -> None:
        assert parse(f"grp {token} root 1\n").groups == [GroupDef("grp", value, "root", 1)]

    def test_it_cuts_a_line_at_a_nul_byte(self) -> None:
        result = parse_resource_group(b"grp 1 root 5\0 junk that strlen never sees\n")
        assert result.groups == [GroupDef("grp", 1, "root", 5)]
        assert result.rejected == []

    def test_it_accepts_a_file_object(self) -> None:
        stream = io.BytesIO(b"grp 1 root 5\nalice 2 grp 3\n")
        result = parse_resource_group(stream)
        assert result.entries == [
            (1, GroupDef("grp", 1, "root", 5)),
            (2, GroupDef("alice", 2, "grp", 3)),
        ]

    def test_an_empty_file_has_no_entries_and_no_rejections(self) -> None:
        result = parse_resource_group(b"")
        assert result.entries == []
        assert result.rejected == []


class TestCommentsAndLineNumbers:
    @pytest.mark.parametrize(
        "comment", ["# hash", "#", "* star", "*", "   # indented", "\t* tabbed", "\v\f# odd space"]
    )
    def test_it_skips_comment_lines(self, comment: str) -> None:
        result = parse(f"{comment}\ngrp 1 root 5\n")
        assert result.entries == [(2, GroupDef("grp", 1, "root", 5))]
        assert result.rejected == []

    def test_it_counts_blank_and_comment_lines_in_line_numbers(self) -> None:
        result = parse("\n# comment\n   \n\t\n* star\ngrp 1 root 5\nbad\n")
        assert result.entries == [(6, GroupDef("grp", 1, "root", 5))]
        assert [bad.line for bad in result.rejected] == [7]
        assert result.pbs_messages == ["resgroup: error on line 7."]

    def test_a_hash_after_the_start_of_the_line_is_not_a_comment(self) -> None:
        result = parse("a#b 1 root 5\n")
        assert result.groups == [GroupDef("a#b", 1, "root", 5)]

    def test_a_hash_glued_to_the_shares_makes_them_invalid(self) -> None:
        bad = only_rejection(parse("grp 1 root 5#note\n"))
        assert bad == RejectedLine(
            1,
            "shares",
            "shares '5#note' is not a whole number",
            "grp 1 root 5#note",
            ("resgroup: error on line 1.",),
        )

    def test_a_non_utf8_comment_is_still_a_comment(self) -> None:
        result = parse_resource_group(b"# caf\xe9\ngrp 1 root 5\n")
        assert result.entries == [(2, GroupDef("grp", 1, "root", 5))]
        assert result.rejected == []


class TestLongLines:
    def test_a_line_of_255_bytes_is_one_line(self) -> None:
        long_comment = b"#" + b"x" * 253 + b"\n"  # 254 bytes and the newline
        result = parse_resource_group(long_comment + b"grp 1 root 5\n")
        assert result.entries == [(2, GroupDef("grp", 1, "root", 5))]
        assert result.rejected == []

    def test_the_newline_after_255_bytes_is_a_blank_line_of_its_own(self) -> None:
        long_comment = b"#" + b"x" * 254 + b"\n"  # 255 bytes, then the newline
        result = parse_resource_group(long_comment + b"grp 1 root 5\n")
        assert result.entries == [(3, GroupDef("grp", 1, "root", 5))]
        assert result.rejected == []

    def test_the_rest_of_a_long_comment_is_parsed_as_a_line(self) -> None:
        long_comment = b"#" + b"x" * 299 + b"\n"  # chunks of 255 and 45 bytes
        result = parse_resource_group(long_comment + b"grp 1 root 5\n")
        assert result.entries == [(3, GroupDef("grp", 1, "root", 5))]
        assert result.rejected == [
            RejectedLine(
                2,
                "line",
                "needs 4 fields (name cgroup parent shares); cgroup, parent, shares missing",
                "x" * 45,
                ("resgroup: error on line 2.",),
            )
        ]

    def test_each_255_byte_chunk_is_parsed_as_its_own_entry(self) -> None:
        first = b"grp 1 root 5".ljust(255, b" ")
        data = first + b"alice 2 grp 3\n" + b"bob 3 grp 4\n"
        result = parse_resource_group(data)
        assert result.entries == [
            (1, GroupDef("grp", 1, "root", 5)),
            (2, GroupDef("alice", 2, "grp", 3)),
            (3, GroupDef("bob", 3, "grp", 4)),
        ]

    def test_a_line_of_600_bytes_takes_three_line_numbers(self) -> None:
        data = b"*" + b"y" * 599 + b"\n" + b"grp 1 root 5\n"
        result = parse_resource_group(data)
        assert result.entries == [(4, GroupDef("grp", 1, "root", 5))]
        assert [(bad.line, bad.text) for bad in result.rejected] == [
            (2, "y" * 255),
            (3, "y" * 90),
        ]


class TestTooFewFields:
    @pytest.mark.parametrize(
        ("line", "missing"),
        [
            ("grp", "cgroup, parent, shares"),
            ("grp 1", "parent, shares"),
            ("grp 1 root", "shares"),
            ("grp\t1\t\troot\t", "shares"),
        ],
    )
    def test_it_rejects_fewer_than_four_fields(self, line: str, missing: str) -> None:
        bad = only_rejection(parse(f"{line}\n"))
        assert bad == RejectedLine(
            1,
            "line",
            f"needs 4 fields (name cgroup parent shares); {missing} missing",
            line,
            ("resgroup: error on line 1.",),
        )


class TestNames:
    def test_it_rejects_a_duplicate_name(self) -> None:
        result = parse("grp 1 root 5\ngrp 2 root 6\n")
        assert result.groups == [GroupDef("grp", 1, "root", 5)]
        assert only_rejection(result) == RejectedLine(
            2,
            "name",
            "'grp' is already defined above",
            "grp 2 root 6",
            ("entity grp is not unique", "resgroup: error on line 2."),
        )

    @pytest.mark.parametrize("reserved", ["TREEROOT", "unknown"])
    def test_it_rejects_a_reserved_name_as_not_unique(self, reserved: str) -> None:
        bad = only_rejection(parse(f"{reserved} 1 root 5\n"))
        assert bad == RejectedLine(
            1,
            "name",
            f"{reserved!r} is reserved by PBS",
            f"{reserved} 1 root 5",
            (f"entity {reserved} is not unique", "resgroup: error on line 1."),
        )

    def test_the_name_is_checked_before_the_parent(self) -> None:
        bad = only_rejection(parse("grp 1 root 5\ngrp 2 nowhere ten\n"))
        assert bad.field == "name"
        assert bad.pbs_messages == ("entity grp is not unique", "resgroup: error on line 2.")

    def test_it_rejects_bytes_that_are_not_utf8(self) -> None:
        result = parse_resource_group(b"caf\xe9 1 root 5\ngrp 2 root 6\n")
        assert result.entries == [(2, GroupDef("grp", 2, "root", 6))]
        assert result.rejected == [
            RejectedLine(
                1,
                "line",
                "is not valid UTF-8 (invalid continuation byte)",
                repr(b"caf\xe9 1 root 5"),
                (),
            )
        ]


class TestParents:
    def test_it_rejects_a_parent_defined_after_its_child(self) -> None:
        result = parse("alice 2 grp 5\ngrp 1 root 10\n")
        assert result.entries == [(2, GroupDef("grp", 1, "root", 10))]
        assert only_rejection(result) == RejectedLine(
            1,
            "parent",
            "'grp' is not defined above this line (a parent must come before its children)",
            "alice 2 grp 5",
            ("Parent ginfo of alice doesnt exist.", "resgroup: error on line 1."),
        )

    def test_it_rejects_a_parent_that_is_never_defined(self) -> None:
        bad = only_rejection(parse("grp 1 root 10\nalice 2 nowhere 5\n"))
        assert bad == RejectedLine(
            2,
            "parent",
            "'nowhere' is not defined above this line (a parent must come before its children)",
            "alice 2 nowhere 5",
            ("Parent ginfo of alice doesnt exist.", "resgroup: error on line 2."),
        )

    def test_a_rejected_parent_leaves_its_children_without_a_parent(self) -> None:
        result = parse("grp 1 root ten\nalice 2 grp 5\n")
        assert result.entries == []
        assert [(bad.line, bad.field) for bad in result.rejected] == [(1, "shares"), (2, "parent")]

    def test_the_parent_is_checked_before_the_numbers(self) -> None:
        bad = only_rejection(parse("alice x nowhere ten\n"))
        assert bad.field == "parent"

    def test_the_parent_name_is_case_sensitive(self) -> None:
        bad = only_rejection(parse("grp 1 ROOT 5\n"))
        assert bad.field == "parent"
        assert bad.pbs_messages == (
            "Parent ginfo of grp doesnt exist.",
            "resgroup: error on line 1.",
        )


class TestNumbers:
    @pytest.mark.parametrize("token", ["0x10", "ten", "1.5", "5x", "1e3", "--5", "+-5", "5-"])
    def test_it_rejects_shares_that_are_not_a_whole_number(self, token: str) -> None:
        bad = only_rejection(parse(f"grp 1 root {token}\n"))
        assert bad == RejectedLine(
            1,
            "shares",
            f"shares {token!r} is not a whole number",
            f"grp 1 root {token}",
            ("resgroup: error on line 1.",),
        )

    @pytest.mark.parametrize("token", ["0x10", "ten", "1.5", "+"])
    def test_it_rejects_a_cgroup_that_is_not_a_whole_number(self, token: str) -> None:
        bad = only_rejection(parse(f"grp {token} root 5\n"))
        assert bad == RejectedLine(
            1,
            "cgroup",
            f"cgroup {token!r} is not a whole number",
            f"grp {token} root 5",
            ("resgroup: error on line 1.",),
        )

    def test_the_shares_are_checked_before_the_cgroup(self) -> None:
        bad = only_rejection(parse("grp x root y\n"))
        assert bad.field == "shares"
        assert bad.reason == "shares 'y' is not a whole number"

    @pytest.mark.parametrize("shares", [-1, -5, -(2**31), -(2**40)])
    def test_it_rejects_negative_shares_without_a_pbs_message(self, shares: int) -> None:
        result = parse(f"grp 1 root {shares}\n")
        assert result.entries == []
        assert only_rejection(result) == RejectedLine(
            1,
            "shares",
            f"shares {shares} is negative; shares must be 0 or more",
            f"grp 1 root {shares}",
            (),
        )
        assert result.pbs_messages == []

    def test_a_bad_cgroup_beats_negative_shares_with_the_pbs_message(self) -> None:
        bad = only_rejection(parse("grp x root -5\n"))
        assert bad.field == "cgroup"
        assert bad.pbs_messages == ("resgroup: error on line 1.",)

    @pytest.mark.parametrize("shares", [2**31, 2**32 + 5, 2**63, 10**30])
    def test_it_rejects_shares_larger_than_a_c_int(self, shares: int) -> None:
        bad = only_rejection(parse(f"grp 1 root {shares}\n"))
        assert bad == RejectedLine(
            1,
            "shares",
            f"shares {shares} is larger than PBS can hold (2147483647)",
            f"grp 1 root {shares}",
            (),
        )

    @pytest.mark.parametrize("cgroup", [2**31, -(2**31) - 1, 10**20])
    def test_it_rejects_a_cgroup_outside_a_c_int(self, cgroup: int) -> None:
        bad = only_rejection(parse(f"grp {cgroup} root 5\n"))
        assert bad == RejectedLine(
            1, "cgroup", f"cgroup {cgroup} does not fit a C int", f"grp {cgroup} root 5", ()
        )


class TestCrlf:
    def test_a_carriage_return_after_the_shares_is_named_as_crlf(self) -> None:
        bad = only_rejection(parse("grp 1 root 10\r\n"))
        assert bad == RejectedLine(
            1, "shares", CRLF_REASON, "grp 1 root 10\r", ("resgroup: error on line 1.",)
        )
        assert "CRLF" in bad.reason
        assert "carriage return" in bad.reason

    def test_a_carriage_return_in_the_cgroup_is_named_too(self) -> None:
        bad = only_rejection(parse("grp 7\r root 10\n"))
        assert bad.field == "cgroup"
        assert bad.reason.startswith("cgroup '7' ends with a carriage return")

    def test_a_crlf_line_with_extra_tokens_is_accepted(self) -> None:
        assert parse("grp 1 root 10 note\r\n").groups == [GroupDef("grp", 1, "root", 10)]

    def test_a_whole_crlf_file_gives_no_entries(self) -> None:
        text = "# comment\r\ngrp 1 root 10\r\n\r\nalice 2 grp 5\r\nbob 3 root 10\r\n"
        result = parse(text)
        assert result.entries == []
        assert [(bad.line, bad.field) for bad in result.rejected] == [
            (2, "shares"),
            (4, "parent"),
            (5, "shares"),
        ]
        assert result.rejected[0].reason == CRLF_REASON
        assert result.rejected[2].reason == CRLF_REASON

    @needs_examples
    @pytest.mark.parametrize("example", ["forum_example", "seed_tree"])
    def test_an_example_converted_to_crlf_loses_every_entry(self, example: str) -> None:
        data = (EXAMPLES / example / "resource_group").read_bytes()
        entries = len(parse_resource_group(data).entries)
        result = parse_resource_group(data.replace(b"\n", b"\r\n"))
        assert result.entries == []
        assert len(result.rejected) == entries


class TestRecovery:
    def test_it_keeps_the_good_lines_after_a_bad_one(self) -> None:
        result = parse("grp 1 root 5\nbad line\nalice 2 grp ten\nbob 3 grp 4\ncarol 4 root 6\n")
        assert result.entries == [
            (1, GroupDef("grp", 1, "root", 5)),
            (4, GroupDef("bob", 3, "grp", 4)),
            (5, GroupDef("carol", 4, "root", 6)),
        ]
        assert [bad.line for bad in result.rejected] == [2, 3]

    def test_pbs_messages_come_in_file_order(self) -> None:
        result = parse("grp 1 root 5\ngrp 1 root 5\nx 1 none 1\ny 1 root -1\nz 1\n")
        assert result.pbs_messages == [
            "entity grp is not unique",
            "resgroup: error on line 2.",
            "Parent ginfo of x doesnt exist.",
            "resgroup: error on line 3.",
            "resgroup: error on line 5.",
        ]

    def test_a_rejected_line_names_its_line_and_field(self) -> None:
        bad = only_rejection(parse("\ngrp 1 root ten\n"))
        assert str(bad) == "line 2: shares: shares 'ten' is not a whole number"


@needs_examples
class TestExamples:
    @pytest.mark.parametrize(("example", "count"), [("seed_tree", 12), ("forum_example", 6)])
    def test_the_example_files_parse_without_rejections(self, example: str, count: int) -> None:
        result = parse_resource_group((EXAMPLES / example / "resource_group").read_bytes())
        assert len(result.entries) == count
        assert result.rejected == []

    def test_the_seed_tree_starts_after_its_comment_line(self) -> None:
        result = parse_resource_group((EXAMPLES / "seed_tree" / "resource_group").read_bytes())
        assert result.entries[0] == (2, GroupDef("B4", 300, "root", 20))
        assert result.entries[-1] == (13, GroupDef("L1", 101, "B1", 10))

    def test_the_forum_example_reads_as_written(self) -> None:
        with (EXAMPLES / "forum_example" / "resource_group").open("rb") as stream:
            result = parse_resource_group(stream)
        assert result.groups == list(FORUM_GROUPS)

    @pytest.mark.parametrize("example", ["seed_tree", "forum_example"])
    def test_formatting_an_example_reads_back_the_same_groups(self, example: str) -> None:
        groups = parse_resource_group((EXAMPLES / example / "resource_group").read_bytes()).groups
        again = parse(format_resource_group(groups, header=f"from {example}"))
        assert again.groups == groups
        assert again.rejected == []


class TestFormat:
    def test_it_writes_a_header_then_tab_separated_entries(self) -> None:
        groups = [GroupDef("grp", 10, "root", 40), GroupDef("alice", -3, "grp", 0)]
        assert format_resource_group(groups) == (
            "# name\tcgroup\tparent\tshares\ngrp\t10\troot\t40\nalice\t-3\tgrp\t0\n"
        )

    def test_header_lines_become_comments(self) -> None:
        text = format_resource_group([], header="exported by us\n\nsecond line")
        assert text == "# exported by us\n#\n# second line\n# name\tcgroup\tparent\tshares\n"
        assert parse(text).entries == []
        assert parse(text).rejected == []

    def test_it_writes_treeroot_as_root(self) -> None:
        text = format_resource_group([GroupDef("grp", 1, "TREEROOT", 5)])
        assert text.splitlines()[-1] == "grp\t1\troot\t5"

    def test_it_writes_unknown_as_a_parent(self) -> None:
        text = format_resource_group([GroupDef("late", 1, "unknown", 5)])
        assert parse(text).groups == [GroupDef("late", 1, "unknown", 5)]

    def test_an_entry_is_held_back_until_its_parent_is_written(self) -> None:
        groups = [
            GroupDef("kid1", 1, "grp", 1),
            GroupDef("other", 2, "root", 1),
            GroupDef("kid2", 3, "grp", 1),
            GroupDef("grp", 4, "root", 1),
            GroupDef("kid3", 5, "grp", 1),
        ]
        result = parse(format_resource_group(groups))
        assert [g.name for g in result.groups] == ["other", "grp", "kid1", "kid2", "kid3"]
        assert result.rejected == []

    def test_a_chain_of_forward_references_is_written_parents_first(self) -> None:
        groups = [
            GroupDef("leaf", 1, "mid", 1),
            GroupDef("mid", 2, "top", 1),
            GroupDef("sib", 3, "top", 1),
            GroupDef("top", 4, "root", 1),
        ]
        result = parse(format_resource_group(groups))
        assert [g.name for g in result.groups] == ["top", "mid", "leaf", "sib"]
        assert set(result.groups) == set(groups)

    def test_it_refuses_an_orphan(self) -> None:
        groups = [GroupDef("grp", 1, "root", 1), GroupDef("b", 2, "nowhere", 1)]
        groups.append(GroupDef("a", 3, "b", 1))
        message = "entries whose parent is not in the tree: a, b"
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            format_resource_group(groups)

    def test_it_refuses_a_cycle(self) -> None:
        groups = [GroupDef("a", 1, "b", 1), GroupDef("b", 2, "a", 1)]
        with pytest.raises(ValueError, match=r"not in the tree: a, b$"):
            format_resource_group(groups)


NAME_CHARS = string.ascii_letters + string.digits + "._-"
names = st.text(alphabet=NAME_CHARS, min_size=1, max_size=20).filter(
    lambda name: name not in {"TREEROOT", "unknown", "root"}
)


@st.composite
def trees(draw: st.DrawFn) -> list[GroupDef]:
    """Groups in an order PBS can read: each parent is `root` or an earlier entry."""
    chosen = draw(st.lists(names, unique=True, max_size=25))
    return [
        GroupDef(
            name=name,
            cgroup=draw(st.integers(-10, 10**6)),
            parent=draw(st.sampled_from(["root", *chosen[:index]])),
            shares=draw(st.integers(0, 10**6)),
        )
        for index, name in enumerate(chosen)
    ]


@settings(max_examples=150, deadline=None)
@given(trees())
def test_formatting_then_parsing_gives_the_same_groups(groups: list[GroupDef]) -> None:
    result = parse(format_resource_group(groups, header="property test"))
    assert result.groups == groups
    assert result.rejected == []


@settings(max_examples=150, deadline=None)
@given(trees(), st.randoms(use_true_random=False))
def test_formatting_shuffled_groups_keeps_siblings_in_order(
    groups: list[GroupDef], rng: random.Random
) -> None:
    shuffled = groups[:]
    rng.shuffle(shuffled)
    result = parse(format_resource_group(shuffled))
    assert result.rejected == []
    assert sorted(result.groups, key=lambda g: g.name) == sorted(groups, key=lambda g: g.name)
    for parent in {g.parent for g in groups}:
        written = [g.name for g in result.groups if g.parent == parent]
        given_order = [g.name for g in shuffled if g.parent == parent]
        assert written == given_order
