"""parse_fsgroups / parse_timespec against Altair's "Configure FairShare via File" page
(https://help.altair.com/accelerator/html/accel/topics/shared/fairshare_configure_via_file.htm)
and "Time Specifications" (https://help.altair.com/accelerator/html/accel/topics/shared/time_specs.htm)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ
from trees.formats.fsgroups import (
    MAX_NESTING,
    MAX_WEIGHT,
    FsGroupLine,
    FsGroupsFile,
    parse_fsgroups,
    parse_timespec,
)
from trees.formats.rejected import RejectedLine

# config.normal.tcl as the page prints it (its tabs are spaces here; see the tab test below).
CONFIG_NORMAL = """\
FSGROUP "class" {
    FSGROUP "sim" -w 0 -t 0 {
        # In this branch, fairshare is disabled
        # because the timewindow is zero (-t 0)
        FSGROUP jolly
        FSGROUP cronos  -w 100 -t 3h
    }
    FSGROUP "urgent" -window 10m {
        FSGROUP h2p -w 300
        FSGROUP jolly
        FSGROUP cronos
    }
    FSGROUP projects -w 133 {
        FSGROUP jolly  {
            FSGROUP normal -w 200 {}
            FSGROUP random -w  80 {}
        }
        FSGROUP cronos {
            FSGROUP normal
            FSGROUP random
        }
    }
}
"""
# (path, weight, window, line) of every group in it.
CONFIG_NORMAL_GROUPS = [
    ("/class", None, None, 1),
    ("/class/sim", 0, 0, 2),
    ("/class/sim/jolly", None, None, 5),
    ("/class/sim/cronos", 100, 10800, 6),
    ("/class/urgent", None, 600, 8),
    ("/class/urgent/h2p", 300, None, 9),
    ("/class/urgent/jolly", None, None, 10),
    ("/class/urgent/cronos", None, None, 11),
    ("/class/projects", 133, None, 13),
    ("/class/projects/jolly", None, None, 14),
    ("/class/projects/jolly/normal", 200, None, 15),
    ("/class/projects/jolly/random", 80, None, 16),
    ("/class/projects/cronos", None, None, 18),
    ("/class/projects/cronos/normal", None, None, 19),
    ("/class/projects/cronos/random", None, None, 20),
]


def summary(result: FsGroupsFile) -> list[tuple[str, int | None, int | None, int]]:
    return [(group.path, group.weight, group.window, group.line) for group in result.groups]


def paths(text: str) -> list[str]:
    return [group.path for group in parse_fsgroups(text).groups]


def only_problem(text: str) -> RejectedLine:
    problems = parse_fsgroups(text).problems
    assert len(problems) == 1, problems
    return problems[0]


def problem_of(text: str) -> tuple[int, str, str]:
    problem = only_problem(text)
    return problem.line, problem.field, problem.reason


class TestTheDocumentationsExample:
    def test_it_reads_every_group_with_its_weight_window_and_line(self) -> None:
        result = parse_fsgroups(CONFIG_NORMAL)
        assert summary(result) == CONFIG_NORMAL_GROUPS
        assert result.problems == ()

    def test_no_group_of_it_has_users_or_is_user_level(self) -> None:
        groups = parse_fsgroups(CONFIG_NORMAL).groups
        assert {(group.users, group.user_level) for group in groups} == {((), False)}

    def test_it_reads_the_page_s_tabs_and_trailing_blanks(self) -> None:
        as_printed = (
            CONFIG_NORMAL.replace("\n        ", "\n\t")
            .replace("FSGROUP jolly\n", "FSGROUP jolly \n")
            .replace("FSGROUP random\n", "FSGROUP random \n")
        )
        assert "\tFSGROUP jolly \n" in as_printed
        assert summary(parse_fsgroups(as_printed)) == CONFIG_NORMAL_GROUPS

    def test_it_reads_the_page_s_header_comments(self) -> None:
        header = "#\n# This is an example of config for fairshare.\n#\n"
        result = parse_fsgroups(header + CONFIG_NORMAL)
        assert summary(result)[0] == ("/class", None, None, 4)
        assert len(result.groups) == 15
        assert result.problems == ()

    def test_the_whole_file_as_one_group_type(self) -> None:
        first = parse_fsgroups(CONFIG_NORMAL).groups[1]
        assert first == FsGroupLine(
            path="/class/sim", weight=0, window=0, users=(), user_level=False, line=2
        )


class TestNames:
    def test_a_name_is_relative_to_its_enclosing_group_and_the_top_to_the_root(self) -> None:
        text = "FSGROUP class {\n    FSGROUP vcs {\n        FSGROUP u\n    }\n}\nFSGROUP time\n"
        assert paths(text) == ["/class", "/class/vcs", "/class/vcs/u", "/time"]

    def test_an_absolute_name_is_taken_as_it_is_at_any_depth(self) -> None:
        text = "FSGROUP /class/vcs\nFSGROUP class {\n    FSGROUP /time/users\n    FSGROUP hsim\n}\n"
        assert paths(text) == ["/class/vcs", "/class", "/time/users", "/class/hsim"]

    def test_a_relative_name_may_hold_slashes(self) -> None:
        assert paths("FSGROUP class {\n    FSGROUP sim/jolly\n}\n") == [
            "/class",
            "/class/sim/jolly",
        ]

    def test_names_may_be_quoted_braced_or_bare(self) -> None:
        assert paths('FSGROUP "a"\nFSGROUP {b}\nFSGROUP c\n') == ["/a", "/b", "/c"]

    def test_genconfig_leaf_user_leaves_are_user_level_groups_named_group_dot_user(self) -> None:
        text = (
            'FSGROUP "class" {\n'
            '    FSGROUP "vcs" -w 200 {}\n'
            '    FSGROUP "vcs.u1" -user\n'
            "    FSGROUP vcs.u2 -w 50 -user\n"
            "}\n"
        )
        result = parse_fsgroups(text)
        assert result.groups[1:] == (
            FsGroupLine("/class/vcs", 200, None, (), False, 2),
            FsGroupLine("/class/vcs.u1", None, None, (), True, 3),
            FsGroupLine("/class/vcs.u2", 50, None, (), True, 4),
        )
        assert result.problems == ()

    def test_a_subgroup_leaf_keeps_its_colon(self) -> None:
        assert paths("FSGROUP /time/users.john:sub -user\n") == ["/time/users.john:sub"]


class TestOptions:
    def test_what_the_file_does_not_say_is_none(self) -> None:
        assert parse_fsgroups("FSGROUP a\n").groups == (
            FsGroupLine("/a", None, None, (), False, 1),
        )

    @pytest.mark.parametrize(
        ("written", "users"),
        [
            ("-u {u1 u2}", ("u1", "u2")),
            ('-u "u1 u2"', ("u1", "u2")),
            ("-u u1", ("u1",)),
            ("-u {}", ()),
            ("-u {  u1\tu2  }", ("u1", "u2")),
        ],
    )
    def test_u_takes_a_tcl_list_of_users(self, written: str, users: tuple[str, ...]) -> None:
        result = parse_fsgroups(f"FSGROUP a {written}\n")
        assert [group.users for group in result.groups] == [users]
        assert result.problems == ()

    def test_t_and_window_are_the_same_option(self) -> None:
        result = parse_fsgroups("FSGROUP a -t 2h\nFSGROUP b -window 2h\n")
        assert [group.window for group in result.groups] == [7200, 7200]

    def test_options_come_in_any_order_before_the_body(self) -> None:
        result = parse_fsgroups("FSGROUP a -user -u {x} -window 1m -w 7 {FSGROUP b}\n")
        assert result.groups == (
            FsGroupLine("/a", 7, 60, ("x",), True, 1),
            FsGroupLine("/a/b", None, None, (), False, 1),
        )

    def test_an_option_given_twice_takes_its_last_value(self) -> None:
        result = parse_fsgroups("FSGROUP a -w 1 -w 2 -t 1h -window 3h\n")
        assert [(group.weight, group.window) for group in result.groups] == [(2, 10800)]
        assert result.problems == ()

    def test_weights_0_and_100000_are_allowed(self) -> None:
        result = parse_fsgroups(f"FSGROUP a -w 0\nFSGROUP b -w {MAX_WEIGHT}\n")
        assert [group.weight for group in result.groups] == [0, 100_000]
        assert result.problems == ()

    def test_a_weight_with_leading_zeros_is_decimal(self) -> None:
        assert parse_fsgroups("FSGROUP a -w 0100\n").groups[0].weight == 100

    def test_a_zero_window_is_kept_as_zero_not_none(self) -> None:
        assert parse_fsgroups("FSGROUP sim -t 0\n").groups[0].window == 0


class TestTclSyntax:
    def test_hash_comments_start_a_command_and_semicolon_hash_follows_one(self) -> None:
        text = (
            "# a comment\n"
            "    # an indented one, FSGROUP ignored\n"
            "FSGROUP a -w 5 ;# after a command\n"
            "FSGROUP b;# no blank needed\n"
        )
        result = parse_fsgroups(text)
        assert summary(result) == [("/a", 5, None, 3), ("/b", None, None, 4)]
        assert result.problems == ()

    def test_a_backslash_newline_continues_a_comment(self) -> None:
        assert paths("# comment \\\nFSGROUP hidden\nFSGROUP seen\n") == ["/seen"]

    def test_a_backslash_newline_continues_a_command(self) -> None:
        text = "FSGROUP a \\\n    -w 5 \\\n    -t 1h30m\nFSGROUP b\n"
        result = parse_fsgroups(text)
        assert summary(result) == [("/a", 5, 5400, 1), ("/b", None, None, 4)]
        assert result.problems == ()

    def test_a_group_s_line_is_that_of_its_fsgroup_word(self) -> None:
        text = "\n\n  FSGROUP a {\n\n    FSGROUP b ; FSGROUP c\n  }\n"
        assert summary(parse_fsgroups(text)) == [
            ("/a", None, None, 3),
            ("/a/b", None, None, 5),
            ("/a/c", None, None, 5),
        ]

    def test_a_body_may_sit_on_one_line(self) -> None:
        assert paths("FSGROUP a { FSGROUP b {FSGROUP c}; FSGROUP d }\n") == [
            "/a",
            "/a/b",
            "/a/b/c",
            "/a/d",
        ]

    def test_crlf_line_endings_read_as_lf(self) -> None:
        text = CONFIG_NORMAL.replace("\n", "\r\n")
        assert summary(parse_fsgroups(text)) == CONFIG_NORMAL_GROUPS

    def test_an_empty_file_or_only_comments_gives_nothing(self) -> None:
        assert parse_fsgroups("") == FsGroupsFile((), ())
        assert parse_fsgroups("# nothing\n\n   \n") == FsGroupsFile((), ())

    def test_braces_in_a_comment_count_as_tcl_counts_them(self) -> None:
        # Tcl matches a body's braces before it reads its comments: the `{` below is counted,
        # so the body of a ends at the last line, and the `}` on line 4 closes nothing.
        text = "FSGROUP a {\n    # was: FSGROUP b {\n    FSGROUP c\n}\n}\n"
        result = parse_fsgroups(text)
        assert paths(text) == ["/a", "/a/c"]
        assert [(problem.line, problem.reason) for problem in result.problems] == [
            (4, "a `}` with no `{` open")
        ]


class TestProblems:
    def test_an_unclosed_brace_is_named_on_the_line_it_opened(self) -> None:
        text = "FSGROUP a\nFSGROUP b {\n    FSGROUP c\n"
        result = parse_fsgroups(text)
        assert paths(text) == ["/a"]
        assert result.problems == (
            RejectedLine(
                2,
                "line",
                "this `{` is never closed: the rest of the file is left out",
                "FSGROUP b {",
            ),
        )

    def test_a_missing_close_brace_inside_is_named_at_the_outer_brace(self) -> None:
        text = "FSGROUP a {\n    FSGROUP b {\n}\n"
        assert problem_of(text) == (
            1,
            "line",
            "this `{` is never closed: the rest of the file is left out",
        )

    def test_an_unclosed_brace_on_a_continuation_line_is_named_on_that_line(self) -> None:
        assert problem_of("FSGROUP a -w 5 \\\n    {\n    FSGROUP b\n")[0] == 2

    def test_a_stray_close_brace_is_named_where_it_is(self) -> None:
        text = "FSGROUP a {\n    FSGROUP b {}\n    }\n    FSGROUP c\n}\nFSGROUP d\n"
        result = parse_fsgroups(text)
        # The `}` on line 3 closes a's body, so c is read at the top: Tcl reads it so too.
        assert paths(text) == ["/a", "/a/b", "/c", "/d"]
        assert result.problems == (RejectedLine(5, "line", "a `}` with no `{` open", "}"),)

    def test_a_close_brace_too_many_after_a_body_leaves_its_group_out(self) -> None:
        text = "FSGROUP a {FSGROUP b}}\nFSGROUP c\n"
        assert paths(text) == ["/c"]
        assert problem_of(text) == (1, "line", "a `}` with no `{` open; FSGROUP a is left out")

    def test_an_unclosed_quote_is_named_on_the_line_it_opened(self) -> None:
        text = 'FSGROUP a\nFSGROUP "b -w 5\nFSGROUP c\n'
        assert paths(text) == ["/a"]
        assert problem_of(text) == (
            2,
            "line",
            'this `"` is never closed: the rest of the file is left out',
        )

    def test_an_unclosed_quote_in_a_body_loses_only_the_rest_of_that_body(self) -> None:
        text = 'FSGROUP a {\n    FSGROUP b\n    FSGROUP "c\n}\nFSGROUP d\n'
        assert paths(text) == ["/a", "/a/b", "/d"]
        assert problem_of(text) == (
            3,
            "line",
            'this `"` is never closed: the rest of the body of /a is left out',
        )

    def test_characters_after_a_closing_quote(self) -> None:
        assert problem_of('FSGROUP "a"b -w 5\n') == (
            1,
            "line",
            "extra characters after a closing `\"`: 'b'",
        )

    @pytest.mark.parametrize(
        ("weight", "reason"),
        [
            ("1.5", "weight '1.5' is not a whole number"),
            ("abc", "weight 'abc' is not a whole number"),
            ("+5", "weight '+5' is not a whole number"),
            ("100001", "weight 100001 is over the maximum of 100,000"),
            ("-5", "weight -5 is negative: it is 0 to 100,000"),
        ],
    )
    def test_a_bad_weight(self, weight: str, reason: str) -> None:
        text = f"FSGROUP a\nFSGROUP b -w {weight}\nFSGROUP c\n"
        assert paths(text) == ["/a", "/c"]
        assert only_problem(text) == RejectedLine(2, "-w", reason, f"FSGROUP b -w {weight}")

    def test_a_bad_timespec_names_its_option(self) -> None:
        assert problem_of("FSGROUP a -t 2x\n") == (
            1,
            "-t",
            "'2x' is not a timespec: 'x' is neither a digit nor a unit (s, m, h, d or w)",
        )
        assert problem_of("FSGROUP a -window -1h\n") == (1, "-window", "'-1h' is negative")

    def test_an_unknown_option(self) -> None:
        assert problem_of("FSGROUP a -x 3\n") == (
            1,
            "-x",
            "unknown option -x (FSGROUP takes -w, -t, -window, -u and -user)",
        )

    def test_options_are_case_sensitive(self) -> None:
        assert problem_of("FSGROUP a -W 3\n")[1:] == (
            "-W",
            "unknown option -W (FSGROUP takes -w, -t, -window, -u and -user)",
        )

    @pytest.mark.parametrize("option", ["-w", "-t", "-window", "-u"])
    def test_an_option_missing_its_value(self, option: str) -> None:
        assert problem_of(f"FSGROUP a {option}\n") == (1, option, f"{option} has no value after it")

    def test_an_option_before_the_body_has_no_value_and_the_body_goes_with_its_group(
        self,
    ) -> None:
        text = "FSGROUP a -w {\n    FSGROUP b\n}\nFSGROUP c\n"
        assert paths(text) == ["/c"]
        assert problem_of(text) == (
            1,
            "-w",
            "-w has no value after it; left out with the 1 group of its body",
        )

    def test_a_command_other_than_fsgroup(self) -> None:
        text = "set weight 5\nFSGROUP a {\n    fsgroup b\n    FSGROUP c\n}\n"
        result = parse_fsgroups(text)
        assert paths(text) == ["/a", "/a/c"]
        assert [(problem.line, problem.field, problem.reason) for problem in result.problems] == [
            (1, "line", "not an FSGROUP command: 'set'"),
            (3, "line", "not an FSGROUP command: 'fsgroup'"),
        ]

    def test_a_group_defined_twice_keeps_the_first(self) -> None:
        text = "FSGROUP class {\n    FSGROUP vcs -w 10\n}\nFSGROUP /class/vcs -w 20\n"
        result = parse_fsgroups(text)
        assert summary(result) == [("/class", None, None, 1), ("/class/vcs", 10, None, 2)]
        assert result.problems == (
            RejectedLine(
                4,
                "name",
                "/class/vcs is defined before, on line 2: the first is kept",
                "FSGROUP /class/vcs -w 20",
            ),
        )

    def test_a_second_definition_is_left_out_with_its_body(self) -> None:
        text = "FSGROUP a\nFSGROUP a {\n    FSGROUP b {\n        FSGROUP c\n    }\n}\n"
        assert paths(text) == ["/a"]
        assert problem_of(text) == (
            2,
            "name",
            "/a is defined before, on line 1: the first is kept; "
            "left out with the 2 groups of its body",
        )

    @pytest.mark.parametrize("name", ['""', "{}"])
    def test_an_empty_name(self, name: str) -> None:
        assert problem_of(f"FSGROUP {name} -w 5\n") == (1, "name", "the name is empty")

    def test_fsgroup_without_a_name(self) -> None:
        assert problem_of("FSGROUP\n") == (1, "name", "FSGROUP without a name")

    @pytest.mark.parametrize(
        ("name", "reason"),
        [
            ("-w", "no name before the option -w"),
            ('"a b"', "name 'a b' holds a blank or a control character"),
            ("/", "the root / is the server's, not a group of the file"),
            ("a//b", "name 'a//b' has an empty part between slashes"),
            ("a/", "name 'a/' has an empty part between slashes"),
            ("../a", "name '../a' has a '.' or '..' part"),
            ("$group", "'$group' holds a Tcl substitution ($ or [ ]), not read"),
            ("[pwd]", "'[pwd]' holds a Tcl substitution ($ or [ ]), not read"),
        ],
    )
    def test_a_bad_name(self, name: str, reason: str) -> None:
        assert problem_of(f"FSGROUP {name}\n") == (1, "name", reason)

    def test_a_substitution_in_a_value_is_not_evaluated(self) -> None:
        assert problem_of("FSGROUP a -w $FSGROUP(weights)\n") == (
            1,
            "-w",
            "'$FSGROUP(weights)' holds a Tcl substitution ($ or [ ]), not read",
        )

    def test_braced_values_are_not_substituted(self) -> None:
        assert parse_fsgroups("FSGROUP {$a}\n").groups[0].path == "/$a"

    def test_users_holding_braces(self) -> None:
        assert problem_of("FSGROUP a -u {u1 {u 2}}\n") == (
            1,
            "-u",
            "users 'u1 {u 2}' hold braces or quotes: one word a user",
        )

    def test_a_hash_after_a_command_is_not_a_comment(self) -> None:
        assert problem_of("FSGROUP a # the class\n") == (
            1,
            "line",
            "a comment after a command is written `;#`, not `#`",
        )

    def test_a_stray_word(self) -> None:
        assert problem_of("FSGROUP my group\n") == (
            1,
            "line",
            "'group' is neither an option nor a body in braces",
        )

    def test_a_body_that_is_not_the_last_word(self) -> None:
        assert problem_of("FSGROUP a {} -w 5\n") == (
            1,
            "body",
            "a body in braces must be the last word",
        )

    def test_only_the_first_fault_of_a_group_is_reported(self) -> None:
        assert problem_of("FSGROUP a -w x -t y -z\n") == (
            1,
            "-w",
            "weight 'x' is not a whole number",
        )

    def test_a_fault_on_a_continuation_line_is_named_there(self) -> None:
        assert problem_of("FSGROUP a \\\n    -w 5 \\\n    -t soon\n")[:2] == (3, "-t")

    def test_a_bad_group_goes_with_every_group_of_its_body_and_the_rest_is_kept(self) -> None:
        text = (
            "FSGROUP class {\n"
            "    FSGROUP sim -w lots {\n"
            "        FSGROUP jolly\n"
            "        FSGROUP cronos {\n"
            "            FSGROUP normal\n"
            "        }\n"
            "        FSGROUP cronos -t bad\n"
            "    }\n"
            "    FSGROUP urgent\n"
            "}\n"
        )
        result = parse_fsgroups(text)
        assert paths(text) == ["/class", "/class/urgent"]
        # One problem for sim and its body; the bad cronos within it is not reported apart.
        assert result.problems == (
            RejectedLine(
                2,
                "-w",
                "weight 'lots' is not a whole number; left out with the 3 groups of its body",
                "    FSGROUP sim -w lots {",
            ),
        )

    def test_a_bad_child_is_left_out_and_its_siblings_kept(self) -> None:
        text = "FSGROUP a {\n    FSGROUP b -w -1\n    FSGROUP c\n}\n"
        assert paths(text) == ["/a", "/a/c"]
        assert problem_of(text)[:2] == (2, "-w")

    def test_a_file_with_no_fsgroup_is_one_problem(self) -> None:
        text = "/class 100 7200\n/class/sim 0 0\n/class/sim/jolly 100 7200\n"
        assert parse_fsgroups(text) == FsGroupsFile(
            (),
            (
                RejectedLine(
                    1,
                    "line",
                    "not a vovfsgroup genconfig Tcl file: no command in it is FSGROUP "
                    "(the first is '/class'); genconfig's -serial form is not read",
                    "/class 100 7200",
                ),
            ),
        )

    def test_the_problem_keeps_its_whole_line_as_text(self) -> None:
        problem = only_problem("FSGROUP a {\n\tFSGROUP b -w 1e3\n}\n")
        assert (problem.line, problem.text) == (2, "\tFSGROUP b -w 1e3")


class TestTimespec:
    @pytest.mark.parametrize(
        ("text", "seconds"),
        [
            ("2h", 7200),
            ("10m", 600),
            ("7200", 7200),
            ("2h00m", 7200),
            ("1m00s", 60),
            ("1h30m", 5400),
            ("3h", 10800),
            ("0", 0),
            ("45s", 45),
            ("1d", 86400),
            ("1w", 604800),
            ("2M", 120),  # the page's own example: units are case insensitive
            ("3h30m", 12600),
            ("1h30", 3630),  # digits without a unit are seconds
            ("1d2h3m4s", 93784),
        ],
    )
    def test_it_reads(self, text: str, seconds: int) -> None:
        assert parse_timespec(text) == seconds

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ("", "an empty timespec"),
            ("-5", "'-5' is negative"),
            ("2x", "'2x' is not a timespec: 'x' is neither a digit nor a unit (s, m, h, d or w)"),
            ("h", "'h' is not a timespec: 'h' has no number before it"),
            ("1hm", "'1hm' is not a timespec: 'm' has no number before it"),
            (
                "1.5h",
                "'1.5h' is not a timespec: '.' is neither a digit nor a unit (s, m, h, d or w)",
            ),
            (
                "1h 30m",
                "'1h 30m' is not a timespec: ' ' is neither a digit nor a unit (s, m, h, d or w)",
            ),
            (
                "2 hours",
                "'2 hours' is not a timespec: ' ' is neither a digit nor a unit (s, m, h, d or w)",
            ),
        ],
    )
    def test_it_refuses(self, text: str, reason: str) -> None:
        with pytest.raises(ValueError, match=f"^{re.escape(reason)}$"):
            parse_timespec(text)


# The round trip: groups written back in the Tcl form, in genconfig's manner and a hand's.
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,5}(\.[a-z][a-z0-9]{0,3})?", fullmatch=True)
USERS = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), max_size=3).map(tuple)


@dataclass(frozen=True)
class Node:
    name: str
    weight: int | None
    window: int | None
    users: tuple[str, ...]
    user_level: bool
    children: tuple[Node, ...]
    quoted: bool  # `"name"`, as genconfig writes it, or bare
    window_option: str  # -t or -window
    hms: bool  # the window as 1h30m00s, or in seconds
    users_form: str  # braces, quotes or bare (one user)
    empty_body: bool  # `{}` after a leaf
    continued: bool  # one option a line, joined by backslash-newline
    comment: bool  # a comment line before it


def siblings(depth: int, most: int) -> st.SearchStrategy[tuple[Node, ...]]:
    """Up to `most` nodes `depth` levels deep, their names distinct: none is defined twice."""
    return st.lists(nodes(depth), max_size=most, unique_by=lambda node: node.name).map(tuple)


def nodes(depth: int) -> st.SearchStrategy[Node]:
    children = siblings(depth - 1, 3) if depth else st.just(())
    return st.builds(
        Node,
        name=NAMES,
        weight=st.none() | st.integers(0, MAX_WEIGHT),
        window=st.none() | st.integers(0, 10**6),
        users=USERS,
        user_level=st.booleans(),
        children=children,
        quoted=st.booleans(),
        window_option=st.sampled_from(["-t", "-window"]),
        hms=st.booleans(),
        users_form=st.sampled_from(["braces", "quotes", "bare"]),
        empty_body=st.booleans(),
        continued=st.booleans(),
        comment=st.booleans(),
    )


FORESTS = siblings(2, 4)


def timespec(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m{rest % 60:02d}s"


def users_word(node: Node) -> str:
    if node.users_form == "bare" and len(node.users) == 1:
        return node.users[0]
    if node.users_form == "quotes":
        return '"' + " ".join(node.users) + '"'
    return "{" + " ".join(node.users) + "}"


def write_tcl(
    forest: tuple[Node, ...], parent: str = "", lines: list[str] | None = None
) -> tuple[list[str], list[tuple[str, int | None, int | None, tuple[str, ...], bool, int]]]:
    """The forest in the Tcl form, and the groups it should give, each with its line."""
    lines = [] if lines is None else lines
    expected: list[tuple[str, int | None, int | None, tuple[str, ...], bool, int]] = []
    pad = "    " * parent.count("/")
    for node in forest:
        if node.comment:
            lines.append(f"{pad}# {node.name}: {{ braces in a comment, balanced }}")
        words = [f'"{node.name}"' if node.quoted else node.name]
        if node.weight is not None:
            words.append(f"-w {node.weight}")
        if node.window is not None:
            shown = timespec(node.window) if node.hms else str(node.window)
            words.append(f"{node.window_option} {shown}")
        if node.users or node.users_form == "braces":
            words.append(f"-u {users_word(node)}")
        if node.user_level:
            words.append("-user")
        head = pad + "FSGROUP " + (f" \\\n{pad}    " if node.continued else " ").join(words)
        path = f"{parent}/{node.name}"
        line = sum(written.count("\n") + 1 for written in lines) + 1  # a head may span lines
        expected.append((path, node.weight, node.window, node.users, node.user_level, line))
        if node.children:
            lines.append(head + " {")
            expected.extend(write_tcl(node.children, path, lines)[1])
            lines.append(pad + "}")
        else:
            lines.append(head + (" {}" if node.empty_body else ""))
    return lines, expected


@given(FORESTS)
def test_groups_written_back_in_the_tcl_form_read_the_same(forest: tuple[Node, ...]) -> None:
    lines, expected = write_tcl(forest)
    result = parse_fsgroups("\n".join(lines) + "\n")
    assert result.problems == ()
    assert [
        (group.path, group.weight, group.window, group.users, group.user_level, group.line)
        for group in result.groups
    ] == expected


@FUZZ
@given(st.text(alphabet=st.sampled_from(list('FSGROUP ab-wtu{}"\\\n;#$[]/0123456789hm\t'))))
def test_any_text_reads_without_raising_and_each_problem_names_a_line(text: str) -> None:
    result = parse_fsgroups(text)
    lines = text.count("\n") + 1
    assert all(1 <= problem.line <= lines and problem.reason for problem in result.problems)
    assert all(1 <= group.line <= lines and group.path.startswith("/") for group in result.groups)
    assert len({group.path for group in result.groups}) == len(result.groups)


def nested(depth: int) -> str:
    return "".join("FSGROUP a {\n" for _ in range(depth)) + "}\n" * depth


def test_nesting_past_the_limit_is_refused_with_its_line_not_recursed_into() -> None:
    # 20,000 levels raised RecursionError out of the import (after 19 s).
    parsed = parse_fsgroups(nested(20_000))
    assert [group.path.count("/") for group in parsed.groups] == list(range(1, MAX_NESTING))
    ((line, field, reason),) = [(p.line, p.field, p.reason) for p in parsed.problems]
    assert (line, field) == (MAX_NESTING, "body")
    assert reason == (
        "FSGROUP 'a' is 100 groups deep: the groups of its body would be deeper than 100, which"
        " no FairShare tree is; left out with its body"
    )


def test_nesting_up_to_the_limit_is_read_whole() -> None:
    parsed = parse_fsgroups(nested(MAX_NESTING - 1))
    assert (len(parsed.groups), parsed.problems) == (MAX_NESTING - 1, ())


def test_a_path_longer_than_a_node_name_is_a_problem() -> None:
    text = "FSGROUP " + "b" * 255 + " {\n    FSGROUP c\n}\nFSGROUP d\n"
    assert paths(text) == ["/d"]
    line, field, reason = problem_of(text)
    assert (line, field) == (1, "name")
    assert reason.endswith(
        "is over 255 characters, a node's name; left out with the 1 group of its body"
    )


@pytest.mark.parametrize("option", ["-w", "-t"])
def test_a_number_of_thousands_of_digits_is_a_problem_not_a_crash(option: str) -> None:
    # int() of 4,300 digits and more raised ValueError out of the import.
    line, field, reason = problem_of(f"FSGROUP a {option} {'9' * 5000}\nFSGROUP b\n")
    assert (line, field) == (1, option)
    expected = {
        "-w": "is over the maximum of 100,000: it is 0 to 100,000",
        "-t": "is not a timespec: 5,000 characters",
    }
    assert reason.endswith(expected[option])


def test_a_file_of_junk_is_read_no_further_than_its_first_commands() -> None:
    text = "junk line here\n" * 200_000
    parsed = parse_fsgroups(text)
    assert [(p.line, p.field) for p in parsed.problems] == [(1, "line")]
    assert parsed.problems[0].reason.startswith("not a vovfsgroup genconfig Tcl file")
