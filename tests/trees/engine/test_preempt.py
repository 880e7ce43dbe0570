"""trees.engine.preempt: selection rules as Altair's "Selection Rules"
(https://help.altair.com/accelerator/html/vov/topics/shared/selection_rules.htm) and "Selection
Rules Operators" (https://help.altair.com/accelerator/html/vov/topics/vov/operators.htm) define
them, and the /class/vcs scenario of "Preemption Rules to Speed Up FairShare"
(https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules_fairshare.htm)
end to end, its FS_* fields computed by trees.engine.accelerator."""

from __future__ import annotations

import re

import pytest

from tests.trees.formats.test_preempt_rules import PAGE_RULES
from trees.engine.accelerator import FsGroup, FsJob, fs_fields
from trees.engine.preempt import (
    Job,
    Selection,
    SelectionError,
    TermResult,
    canonical_field,
    evaluate,
    job_of,
    parse_selection,
    preemptions,
)
from trees.formats.preempt_rules import PreemptRuleLine, parse_preempt_rules

NOW = 100_000
JOB: Job = {
    "ID": "42",
    "USER": "bob",
    "GROUP": "/class/vcs.bob",
    "JOBCLASS": "vcs",
    "PRIORITY": 4,
    "STATUS": "Queued",
    "FS_RANK9": 9_999_999,
    "FS_EXCESS_RUNNING": -625,
}


def holds(text: str, job: Job = JOB, preempting: Job | None = None) -> bool:
    return evaluate(parse_selection(text), job, preempting)[0]


# --- field names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("fsrank9", "FS_RANK9"),
        ("FSRANK9", "FS_RANK9"),
        ("FS_EXCESS_RUNNING_LOCAL", "FS_EXCESS_RUNNING_LOCAL"),
        ("FSEXCESSRUNNINGLOCAL", "FS_EXCESS_RUNNING_LOCAL"),
        ("Fs_Excess__Running", "FS_EXCESS_RUNNING"),
        ("job_class", "JOBCLASS"),
        ("submitted", "SUBMITTED"),
    ],
)
def test_field_names_ignore_case_and_underscores(name: str, field: str) -> None:
    assert canonical_field(name) == field


def test_fsexcess_is_an_unknown_field_not_an_alias() -> None:
    with pytest.raises(SelectionError, match="unknown field FSEXCESS"):
        canonical_field("FSEXCESS")


# --- operators -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("JOBCLASS==vcs", True),
        ("JOBCLASS=vcs", True),
        ("JOBCLASS!=vcs", False),
        ("PRIORITY<5", True),
        ("PRIORITY<=4", True),
        ("PRIORITY>4", False),
        ("PRIORITY>=4", True),
        ("PRIORITY==04", True),  # numeric: 04 is 4
        ("GROUP~^/class/v.s", True),  # a regular expression, searched
        ("GROUP~VCS", False),
        ("GROUP~~VCS", True),  # ignoring case
        ("GROUP!~vcs", False),
        ("GROUP!~~VCS", False),
        ("GROUP^vcs.b", True),  # substring, no pattern: the dot is a dot
        ("GROUP^vcs.x", False),
        ("GROUP^^VCS", True),
        ("GROUP!^hsim", True),
        ("GROUP!^^VCS", False),
        ("GROUP:/class/*", True),  # a glob matches the whole value
        ("GROUP:/class", False),
        ("GROUP:/class/???.bob", True),
        ("GROUP::/CLASS/*", True),
        ("GROUP!:/class/*", False),
        ("GROUP!::/CLASS/*", False),
    ],
)
def test_every_operator(text: str, expected: bool) -> None:
    assert holds(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("JOBCLASS==hsim,vcs", True),
        ("JOBCLASS==hsim,spice", False),
        ("JOBCLASS!=hsim,vcs", False),  # none of them
        ("JOBCLASS!=hsim,spice", True),
        ('JOBCLASS=="hsim,vcs"', False),  # a quoted comma is literal
        ("GROUP~hsim,vcs", True),
        ("PRIORITY>9,3", True),  # any of them
    ],
)
def test_a_comma_list_means_any_of_the_values(text: str, expected: bool) -> None:
    assert holds(text) is expected


@pytest.mark.parametrize(
    ("job", "text", "expected"),
    [
        ({"PRIORITY": 10}, "PRIORITY>9", True),  # numbers: 10 > 9
        ({"PRIORITY": "10"}, "PRIORITY>9", True),  # a number written as a string too
        ({"USER": "10"}, "USER>9", True),
        ({"USER": "bob"}, "USER>alice", True),  # strings: compared as strings
        ({"USER": "10a"}, "USER>9", False),  # "10a" < "9" as strings
        ({"PRIORITY": 7}, "PRIORITY==7.0", True),
        ({"SUBMITTED": 600}, "SUBMITTED>=10m", True),  # a timespec where a number is
        ({"SUBMITTED": 599}, "SUBMITTED>=10m", False),
    ],
)
def test_comparisons_are_numeric_when_both_sides_are_numbers(
    job: Job, text: str, expected: bool
) -> None:
    assert holds(text, job) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("JOBCLASS==hsim | USER==bob", True),
        ("JOBCLASS==hsim OR USER==bob", True),
        ("JOBCLASS==vcs & USER==alice", False),
        ("JOBCLASS==vcs and USER==bob", True),
        ("!USER==alice", True),
        ("not USER==bob", False),
        ("USER==alice | USER==bob & JOBCLASS==hsim", False),  # AND binds tighter
        ("(USER==alice | USER==bob) & JOBCLASS==vcs", True),
        ("!(USER==alice | JOBCLASS==hsim)", True),
        ("PRIORITY", True),  # a field alone: non-zero
        ("FS_RANK", False),  # absent: ""
        ("USER", True),  # non-empty
        ("", True),  # an empty selection selects every job
    ],
)
def test_logical_operators_and_parentheses(text: str, expected: bool) -> None:
    assert holds(text) is expected


def test_at_field_takes_the_preempting_jobs_value() -> None:
    selection = parse_selection("JOBCLASS==@JOBCLASS@ FSRANK9>@FS_RANK9@ GROUP:/class/@JOBCLASS@.*")
    queued: Job = {"JOBCLASS": "vcs", "FS_RANK9": 0}

    matched, terms = evaluate(selection, JOB, queued)

    assert matched
    assert terms == [
        TermResult("JOBCLASS==@JOBCLASS@", True, "vcs", "vcs"),
        TermResult("FSRANK9>@FS_RANK9@", True, 9_999_999, 0),
        TermResult("GROUP:/class/@JOBCLASS@.*", True, "/class/vcs.bob", "/class/vcs.*"),
    ]
    assert not evaluate(selection, JOB, {"JOBCLASS": "hsim", "FS_RANK9": 0})[0]


def test_a_substituted_value_is_literal_in_a_pattern() -> None:
    assert not holds("USER~@USER@", {"USER": "bob"}, {"USER": "b.b"})
    assert holds("USER~@USER@", {"USER": "b.b"}, {"USER": "b.b"})


def test_at_field_without_a_preempting_job_is_an_error() -> None:
    with pytest.raises(SelectionError, match="needs the preempting job"):
        evaluate(parse_selection("FSRANK9>@FSRANK9@"), JOB)


def test_every_term_is_reported_in_text_order() -> None:
    matched, terms = evaluate(parse_selection("JOBCLASS==vcs FS_EXCESS_RUNNING>0"), JOB)

    assert not matched
    assert terms == [
        TermResult("JOBCLASS==vcs", True, "vcs", "vcs"),
        TermResult("FS_EXCESS_RUNNING>0", False, -625, 0),
    ]


def test_a_selection_keeps_its_text() -> None:
    assert parse_selection("USER==bob").text == "USER==bob"
    assert isinstance(parse_selection("USER==bob"), Selection)


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ("FSEXCESS<0 GROUP~/class", 0, "unknown field FSEXCESS"),
        ("USER==bob FSEXCESS>0", 10, "unknown field FSEXCESS"),
        ("USER==@NOPE@", 7, "unknown field NOPE"),
        ("USER== PRIORITY>1", 6, "== has no value after it"),
        ("(USER==bob", 0, "this ( is never closed"),
        ("(USER==bob))", 11, "a ) with no ( open"),
        ('USER=="bob', 6, 'this " is never closed'),
        ("USER==bob |", 11, "a condition is missing"),
        ("USER==a,,b", 8, "an empty value"),
        ("USER!bob", 4, "expected an operator"),
        ("==bob", 0, "expected a field name"),
        ("GROUP~(", 0, "not a regular expression"),
        ("()", 0, "empty parentheses"),
    ],
)
def test_errors_say_where(text: str, position: int, message: str) -> None:
    with pytest.raises(SelectionError, match=re.escape(message)) as caught:
        parse_selection(text)

    assert caught.value.position == position
    assert f"at offset {position}" in str(caught.value)


# --- the /class/vcs scenario ---------------------------------------------------------------

# Altair's page: /class/vcs has u1 running 3 jobs and u5 running 1; /class/hsim has most of the
# running jobs (u2's 12 here); all weights are equal; u5 has one job queued.
GROUPS = [FsGroup("/class"), FsGroup("/class/hsim"), FsGroup("/class/vcs")]
RUNNING = [("/class/vcs.u1", 3, "vcs"), ("/class/vcs.u5", 1, "vcs"), ("/class/hsim.u2", 12, "hsim")]
QUEUED_ID = "q7"


@pytest.fixture(scope="module")
def scenario() -> tuple[list[Job], list[Job]]:
    jobs: list[tuple[FsJob, str]] = []
    for group, count, jobclass in RUNNING:
        for n in range(count):
            job_id = f"{group.rpartition('.')[2]}-{n}"
            jobs.append((FsJob(job_id, group, "running", NOW - 600, NOW - 500), jobclass))
    jobs.append((FsJob(QUEUED_ID, "/class/vcs.u5", "queued", NOW - 60), "vcs"))
    by_group = {f.group: f for f in fs_fields(GROUPS, [job for job, _ in jobs], NOW)}
    mappings = [
        (job, job_of(job, by_group[job.group], user=job.group.rpartition(".")[2], jobclass=cls))
        for job, cls in jobs
    ]
    queued: list[Job] = [m for job, m in mappings if job.status == "queued"]
    running: list[Job] = [m for job, m in mappings if job.status == "running"]
    return queued, running


def page_rules() -> tuple[PreemptRuleLine, ...]:
    return parse_preempt_rules(PAGE_RULES).rules


def test_the_scenario_has_the_fields_the_page_describes(
    scenario: tuple[list[Job], list[Job]],
) -> None:
    queued, running = scenario
    u1 = next(job for job in running if job["GROUP"] == "/class/vcs.u1")

    # u1: 3/16 running against a 1/4 target; locally 3/4 of vcs against 1/2.
    assert (u1["FS_EXCESS_RUNNING"], u1["FS_EXCESS_RUNNING_LOCAL"], u1["FS_RANK9"]) == (
        -625,
        2500,
        9_999_999,
    )
    # u5: 1/16 against 1/4; locally 1/4 against 1/2; its queued job ranks first.
    assert (queued[0]["FS_EXCESS_RUNNING"], queued[0]["FS_EXCESS_RUNNING_LOCAL"]) == (-1875, -2500)
    assert queued[0]["FS_RANK9"] == 0


def test_rule_that_does_not_fire_does_not_fire(scenario: tuple[list[Job], list[Job]]) -> None:
    queued, running = scenario

    result = preemptions(page_rules(), queued, running, NOW)[0]

    assert (result.rule, result.queued_job, result.fires, result.victims) == (
        "RuleThatDoesNotFire",
        QUEUED_ID,
        False,
        (),
    )
    assert result.why.startswith("RuleThatDoesNotFire: job q7 (/class/vcs.u5) matches -preempting")
    # hsim's jobs have FS_EXCESS_RUNNING 2500 but are not of JOBCLASS vcs.
    assert result.why == (
        "RuleThatDoesNotFire: job q7 (/class/vcs.u5) matches -preempting, but no running job"
        " with JOBCLASS == vcs has FS_EXCESS_RUNNING > 0 (/class/vcs.u1's 3 jobs have -625,"
        " /class/vcs.u5's 1 job has -1875)."
    )


def test_rule_that_fires_preempts_exactly_u1s_running_jobs(
    scenario: tuple[list[Job], list[Job]],
) -> None:
    queued, running = scenario

    result = preemptions(page_rules(), queued, running, NOW)[1]

    assert (result.rule, result.fires) == ("RuleThatFires", True)
    assert result.victims == ("u1-0", "u1-1", "u1-2")
    assert result.why == (
        "RuleThatFires: job q7 (/class/vcs.u5) may preempt 3 running jobs of /class/vcs.u1 "
        "(JOBCLASS vcs == vcs, FS_EXCESS_RUNNING_LOCAL 2500 > 0, FS_RANK9 9999999 > 0)."
    )


def test_fastfairshare_never_fires_because_fsexcess_is_unknown(
    scenario: tuple[list[Job], list[Job]],
) -> None:
    queued, running = scenario

    result = preemptions(page_rules(), queued, running, NOW)[2]

    assert (result.rule, result.fires) == ("FastFairshare", False)
    assert "-preempting does not parse" in result.why
    assert "unknown field FSEXCESS" in result.why


# --- preemptions, other stops ----------------------------------------------------------------


def one_rule(**options: str) -> tuple[PreemptRuleLine, ...]:
    text = "VovPreemptRule -rulename R " + " ".join(f"-{k} {{{v}}}" for k, v in options.items())
    parsed = parse_preempt_rules(text)
    assert parsed.problems == ()
    return parsed.rules


QUEUED: Job = {"ID": "7", "GROUP": "/a.u", "JOBCLASS": "x", "SUBMITTED": NOW - 5, "PRIORITY": 1}
VICTIM: Job = {"ID": "9", "GROUP": "/b.v", "JOBCLASS": "x", "PRIORITY": 0}


def test_a_job_that_does_not_match_preempting_names_the_condition() -> None:
    [result] = preemptions(one_rule(preempting="JOBCLASS==x PRIORITY>3"), [QUEUED], [VICTIM], NOW)

    assert not result.fires
    assert (
        result.why == "R: job 7 (/a.u) does not match -preempting: it needs PRIORITY > 3 and has 1."
    )


def test_a_job_that_has_not_waited_bucketage_does_not_fire() -> None:
    [result] = preemptions(one_rule(bucketage="10"), [QUEUED], [VICTIM], NOW)

    assert not result.fires
    assert "has waited 5 s, less than -bucketage 10 s" in result.why
    assert preemptions(one_rule(bucketage="5"), [QUEUED], [VICTIM], NOW)[0].fires


def test_with_no_running_job_nothing_fires() -> None:
    [result] = preemptions(one_rule(), [QUEUED], [], NOW)

    assert not result.fires
    assert "no job is running" in result.why


def test_a_disabled_rule_never_fires() -> None:
    [result] = preemptions(one_rule(enabled="0"), [QUEUED], [VICTIM], NOW)

    assert not result.fires
    assert "disabled" in result.why


def test_rules_are_considered_by_order_then_file_order() -> None:
    rules = parse_preempt_rules(
        "VovPreemptRule -rulename A\n"
        "VovPreemptRule -rulename B -order 2\n"
        "VovPreemptRule -rulename C -order 1\n"
        "VovPreemptRule -rulename D\n"
    ).rules

    assert [p.rule for p in preemptions(rules, [QUEUED], [VICTIM], NOW)] == ["C", "B", "A", "D"]


def test_victims_from_several_groups_are_counted_by_group() -> None:
    other: Job = {**VICTIM, "ID": "10", "GROUP": "/c.w"}

    [result] = preemptions(
        one_rule(preemptable="JOBCLASS==@JOBCLASS@"), [QUEUED], [VICTIM, other], NOW
    )

    assert result.victims == ("9", "10")
    assert "may preempt 2 running jobs of /b.v (1), /c.w (1)" in result.why
