"""parse_preempt_rules against Altair's "Preemption Rules to Speed Up FairShare"
(https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules_fairshare.htm),
whose three rules (two /class/vcs examples and fastfairshare.tcl) are quoted here as the page
prints them, and "Preemption Rules"
(https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules.htm)."""

from __future__ import annotations

import pytest

from trees.formats.preempt_rules import (
    DEFAULT_POOL,
    PreemptRuleLine,
    PreemptRulesFile,
    parse_preempt_rules,
)

PAGE_RULES = """\
VovPreemptRule -rulename RuleThatDoesNotFire \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare -ruletype FAST_FAIRSHARE

VovPreemptRule -rulename RuleThatFires \\
   -preempting   "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL<0" \\
   -preemptable  "JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL>0 FSRANK9>@FSRANK9@" \\
    -pool fastfairshare  -ruletype FAST_FAIRSHARE

# Copyright (c) 1995-2020, Altair Engineering
# All Rights Reserved.
#
# We do preemption within the same jobclass  (JOBCLASS==@JOBCLASS@)
#
VovPreemptRule -rulename FastFairshare \\
    -preempting  "FSEXCESS<0 GROUP~/class FS_RUNNING_COUNT<=3" \\
    -bucketage   10 \\
    -preemptable "FSEXCESS>0 JOBCLASS==@JOBCLASS@ FS_RUNNING_COUNT>1 FSRANK9>@FSRANK9@ PRIORITY<=@PRIORITY@" \\
    -killage 2m  \\
    -pool FastFairshare \\
    -ruletype FAST_FAIRSHARE
"""  # noqa: E501


def rule(name: str, **fields: object) -> PreemptRuleLine:
    values: dict[str, object] = {
        "preempting": "",
        "preemptable": "",
        "bucketage": 0,
        "killage": None,
        "pool": DEFAULT_POOL,
        "ruletype": "",
        "order": None,
        "options": (),
        "line": 1,
    }
    values.update(fields)
    return PreemptRuleLine(name=name, **values)  # type: ignore[arg-type]


def test_it_reads_the_three_rules_of_altairs_page_exactly() -> None:
    parsed = parse_preempt_rules(PAGE_RULES)

    assert parsed.rules == (
        rule(
            "RuleThatDoesNotFire",
            preempting="JOBCLASS==vcs FS_EXCESS_RUNNING<0",
            preemptable="JOBCLASS==vcs FS_EXCESS_RUNNING>0 FSRANK9>@FSRANK9@",
            pool="fastfairshare",
            ruletype="FAST_FAIRSHARE",
            line=1,
        ),
        rule(
            "RuleThatFires",
            preempting="JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL<0",
            preemptable="JOBCLASS==vcs FS_EXCESS_RUNNING_LOCAL>0 FSRANK9>@FSRANK9@",
            pool="fastfairshare",
            ruletype="FAST_FAIRSHARE",
            line=6,
        ),
        rule(
            "FastFairshare",
            preempting="FSEXCESS<0 GROUP~/class FS_RUNNING_COUNT<=3",
            preemptable=(
                "FSEXCESS>0 JOBCLASS==@JOBCLASS@ FS_RUNNING_COUNT>1 FSRANK9>@FSRANK9@ "
                "PRIORITY<=@PRIORITY@"
            ),
            bucketage=10,
            killage=120,
            pool="FastFairshare",
            ruletype="FAST_FAIRSHARE",
            line=16,
        ),
    )


def test_it_reports_fsexcess_as_an_unknown_field_and_keeps_the_rule() -> None:
    # FSEXCESS is in fastfairshare.tcl but in no Altair page we could read: not an alias.
    problems = parse_preempt_rules(PAGE_RULES).problems

    assert [(p.line, p.field) for p in problems] == [(17, "-preempting"), (19, "-preemptable")]
    assert all("unknown field FSEXCESS" in p.reason for p in problems)
    assert all("FastFairshare is kept but never fires" in p.reason for p in problems)
    assert problems[0].text == '    -preempting  "FSEXCESS<0 GROUP~/class FS_RUNNING_COUNT<=3" \\'


def test_it_keeps_the_other_options_as_written_in_file_order() -> None:
    parsed = parse_preempt_rules(
        'VovPreemptRule -rulename R -order 3 -method SUSPEND -enabled 1 -waitingfor "License:abc"'
        " -multiqueueres License:hsim -reservetime 30 -skipresumedjob 2m -preempting {ID==1}\n"
    )

    assert parsed.problems == ()
    assert parsed.rules == (
        rule(
            "R",
            order=3,
            preempting="ID==1",
            options=(
                ("-method", "SUSPEND"),
                ("-enabled", "1"),
                ("-waitingfor", "License:abc"),
                ("-multiqueueres", "License:hsim"),
                ("-reservetime", "30"),
                ("-skipresumedjob", "2m"),
            ),
        ),
    )


def test_it_reads_timespecs_for_bucketage_and_killage() -> None:
    parsed = parse_preempt_rules("VovPreemptRule -rulename R -bucketage 1h30m -killage 90\n")

    assert (parsed.rules[0].bucketage, parsed.rules[0].killage) == (5400, 90)


def test_an_unknown_option_leaves_that_rule_out_and_keeps_the_others() -> None:
    parsed = parse_preempt_rules(
        "VovPreemptRule -rulename A -pool p\n"
        "VovPreemptRule -rulename B \\\n    -colour red\n"
        "VovPreemptRule -rulename C\n"
    )

    assert [r.name for r in parsed.rules] == ["A", "C"]
    assert [(p.line, p.field) for p in parsed.problems] == [(3, "-colour")]
    assert "unknown option -colour" in parsed.problems[0].reason


@pytest.mark.parametrize(
    "text",
    ["VovPreemptRule -rulename R -pool\n", "VovPreemptRule -rulename R -pool -ruletype GENERIC\n"],
)
def test_an_option_without_a_value_is_a_problem(text: str) -> None:
    parsed = parse_preempt_rules(text)

    assert parsed.rules == ()
    assert [(p.line, p.field, p.reason) for p in parsed.problems] == [
        (1, "-pool", "-pool has no value after it")
    ]


def test_a_preempting_that_does_not_parse_is_a_problem_at_its_line() -> None:
    parsed = parse_preempt_rules(
        'VovPreemptRule -rulename R \\\n  -preempting "JOBCLASS== FS_RANK>0" \\\n  -pool p\n'
    )

    assert [r.name for r in parsed.rules] == ["R"]
    assert [(p.line, p.field) for p in parsed.problems] == [(2, "-preempting")]
    assert "== has no value after it" in parsed.problems[0].reason


def test_a_command_other_than_vovpreemptrule_is_a_problem() -> None:
    parsed = parse_preempt_rules(
        "set vovpreempt(doPolicies) 0\nVovPreemptRule -rulename R ; puts hello\n"
    )

    assert [r.name for r in parsed.rules] == ["R"]
    assert [(p.line, p.field) for p in parsed.problems] == [(1, "line"), (2, "line")]
    assert "not a VovPreemptRule command: 'set'" in parsed.problems[0].reason


def test_a_missing_backslash_makes_the_next_line_a_command_of_its_own() -> None:
    # Altair's "Preempt Jobs with Unrequested Resources" page prints its rule so.
    parsed = parse_preempt_rules(
        "VovPreemptRule -rulename PunishCheatersAbc \\\n"
        '   -preemptable "LM_HANDLES_NRU~License:abc" \\\n'
        "   -method AUTOMATIC\n"
        "   -pool   PunishPool\n"
    )

    assert parsed.rules[0].pool == DEFAULT_POOL
    assert [(p.line, p.field) for p in parsed.problems] == [(2, "-preemptable"), (4, "line")]


def test_an_unbalanced_quote_loses_the_rest_of_the_file() -> None:
    parsed = parse_preempt_rules(
        "VovPreemptRule -rulename A\n"
        'VovPreemptRule -rulename B -preempting "JOBCLASS==vcs\n'
        "VovPreemptRule -rulename C\n"
    )

    assert [r.name for r in parsed.rules] == ["A"]
    assert [(p.line, p.field) for p in parsed.problems] == [(2, "line")]
    assert "never closed" in parsed.problems[0].reason
    assert "the rest of the file is left out" in parsed.problems[0].reason


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("VovPreemptRule -pool p\n", "-rulename", "without a -rulename"),
        ("VovPreemptRule -rulename R -bucketage soon\n", "-bucketage", "not a timespec"),
        ("VovPreemptRule -rulename R -order first\n", "-order", "not a whole number"),
        ("VovPreemptRule -rulename $name\n", "-rulename", "Tcl substitution"),
        ("VovPreemptRule -rulename R stray\n", "line", "is not an option"),
        ('VovPreemptRule -rulename "R"x\n', "line", "extra characters"),
    ],
)
def test_a_faulty_rule_is_left_out_with_one_problem(text: str, field: str, reason: str) -> None:
    parsed = parse_preempt_rules(text)

    assert parsed.rules == ()
    assert len(parsed.problems) == 1
    assert (parsed.problems[0].line, parsed.problems[0].field) == (1, field)
    assert reason in parsed.problems[0].reason


def test_a_braced_selection_keeps_its_text_and_comments_are_skipped() -> None:
    parsed = parse_preempt_rules(
        "# a comment \\\n still the comment\n"
        "VovPreemptRule -rulename R -preemptable {USER==bob,alice (PRIORITY>3 | !GROUP)};# end\n"
    )

    assert parsed.problems == ()
    assert parsed.rules[0].preemptable == "USER==bob,alice (PRIORITY>3 | !GROUP)"
    assert parsed.rules[0].line == 3


def test_an_empty_file_has_nothing() -> None:
    assert parse_preempt_rules("") == PreemptRulesFile((), ())


def test_a_file_of_junk_is_refused_after_its_first_commands_not_listed_line_by_line() -> None:
    # 2 million junk lines ran past 120 s and 840 MB, one problem a line.
    parsed = parse_preempt_rules("junk line here\n" * 100_000)
    assert parsed.rules == ()
    assert len(parsed.problems) == 101
    assert (parsed.problems[-1].line, parsed.problems[-1].field, parsed.problems[-1].reason) == (
        101,
        "file",
        "not a VovPreemptRule file: none of its first 100 commands is a rule that could be read;"
        " the rest of the file is not read",
    )


def test_junk_after_a_rule_is_each_a_problem() -> None:
    parsed = parse_preempt_rules(PAGE_RULES + "junk\n" * 150)
    assert len(parsed.rules) == 3
    assert (
        sum(problem.reason == "not a VovPreemptRule command: 'junk'" for problem in parsed.problems)
        == 150
    )
