"""The fairshare keys of sched_config, as PBS's parse_config() and scan() read them."""

from __future__ import annotations

import io

import pytest

from tests.conftest import EXAMPLES
from trees.formats.sched_config import (
    MAX_DECAY_TIME,
    ConfigProblem,
    FairshareConfig,
    UnappliedLine,
    parse_decay_time,
    parse_sched_config,
)

needs_examples = pytest.mark.skipif(
    not EXAMPLES.is_dir(), reason="the shared PBS example files are not on this machine"
)
ENTITIES = "euser, egroup, Account_Name, queue, egroup:euser"


def parse(text: str) -> FairshareConfig:
    return parse_sched_config(text.encode())


class TestDefaults:
    def test_an_empty_file_gives_the_pbs_defaults(self) -> None:
        config = parse("")
        assert config == FairshareConfig(
            fairshare_usage_res="cput",
            fairshare_entity="euser",
            decay_time=86400,
            decay_factor=0.5,
            unknown_shares=0,
            fair_share=False,
            by_queue=False,
            strict_ordering=False,
            backfill=True,
            backfill_depth=1,
            job_sort_key=[],
            found={},
            problems=[],
            unapplied=[],
            ignored=0,
        )

    def test_unrelated_keys_leave_the_defaults(self) -> None:
        config = parse("round_robin: False all\nby_queue: True prime\n")
        assert (config.fairshare_usage_res, config.fairshare_entity) == ("cput", "euser")
        assert (config.decay_time, config.decay_factor, config.unknown_shares) == (86400, 0.5, 0)


class TestKeys:
    def test_it_reads_the_five_fairshare_keys(self) -> None:
        config = parse(
            "fairshare_usage_res: ncpus\n"
            "fairshare_entity: egroup\n"
            "fairshare_decay_time: 12:00:00\n"
            "fairshare_decay_factor: 0.7\n"
            "unknown_shares: 25\n"
        )
        assert config.fairshare_usage_res == "ncpus"
        assert config.fairshare_entity == "egroup"
        assert config.decay_time == 43200
        assert config.decay_factor == 0.7
        assert config.unknown_shares == 25
        assert config.found == {
            "fairshare_usage_res": 1,
            "fairshare_entity": 2,
            "fairshare_decay_time": 3,
            "fairshare_decay_factor": 4,
            "unknown_shares": 5,
        }
        assert config.problems == []
        assert config.ignored == 0

    def test_a_quoted_usage_res_keeps_its_spaces(self) -> None:
        config = parse('fairshare_usage_res: "ncpus * pow(walltime, 0.85)"\n')
        assert config.fairshare_usage_res == "ncpus * pow(walltime, 0.85)"

    def test_a_quoted_formula_without_spaces_is_read_whole(self) -> None:
        config = parse('fairshare_usage_res: "ncpus*pow(walltime,0.85)"\n')
        assert config.fairshare_usage_res == "ncpus*pow(walltime,0.85)"

    def test_single_quotes_work_too(self) -> None:
        config = parse("fairshare_usage_res: 'mem + ncpus' prime\n")
        assert config.fairshare_usage_res == "mem + ncpus"

    def test_an_unquoted_usage_res_keeps_only_the_first_word(self) -> None:
        config = parse("fairshare_usage_res: ncpus * walltime\n")
        assert config.fairshare_usage_res == "ncpus"

    def test_a_prime_option_after_the_value_is_ignored(self) -> None:
        config = parse("fairshare_entity: Account_Name all\n")
        assert config.fairshare_entity == "Account_Name"
        assert config.problems == []

    def test_the_colon_may_touch_the_value(self) -> None:
        assert parse("unknown_shares:7\n").unknown_shares == 7

    def test_leading_spaces_before_the_key_are_allowed(self) -> None:
        assert parse("   unknown_shares:   7\n").unknown_shares == 7

    def test_a_space_before_the_colon_makes_the_colon_the_value_as_scan_does(self) -> None:
        config = parse("unknown_shares : 7\n")
        assert config.unknown_shares == 0
        assert config.problems == [
            ConfigProblem(
                1,
                "unknown_shares",
                "unknown_shares ':' is not a whole number of shares (0 or more)",
            )
        ]

    def test_the_last_setting_of_a_key_wins(self) -> None:
        config = parse("unknown_shares: 3\nunknown_shares: 9\n")
        assert config.unknown_shares == 9
        assert config.found == {"unknown_shares": 2}

    def test_crlf_line_endings_are_read(self) -> None:
        config = parse("fairshare_decay_factor: 0.25\r\nunknown_shares: 4\r\n")
        assert (config.decay_factor, config.unknown_shares) == (0.25, 4)
        assert config.problems == []

    def test_it_accepts_a_file_object(self) -> None:
        config = parse_sched_config(io.BytesIO(b"unknown_shares: 12\n"))
        assert config.unknown_shares == 12
        assert config.found == {"unknown_shares": 1}


class TestEntity:
    @pytest.mark.parametrize("entity", ["euser", "egroup", "Account_Name", "queue", "egroup:euser"])
    def test_it_accepts_each_pbs_entity(self, entity: str) -> None:
        config = parse(f"fairshare_entity: {entity}\n")
        assert config.fairshare_entity == entity
        assert config.problems == []

    @pytest.mark.parametrize("entity", ["user", "EUSER", "group", "euser:egroup"])
    def test_it_refuses_an_unknown_entity(self, entity: str) -> None:
        config = parse(f"# entity\nfairshare_entity: {entity}\n")
        assert config.fairshare_entity == "euser"
        assert config.problems == [
            ConfigProblem(
                2,
                "fairshare_entity",
                f"fairshare_entity {entity} is erroneous (or deprecated); use one of {ENTITIES}",
            )
        ]
        assert config.found == {}


class TestDecayTime:
    @pytest.mark.parametrize(
        ("value", "seconds"),
        [
            ("24:00:00", 86400),
            ("01:30:15", 5415),
            ("1:00:00", 3600),
            ("100:00:00", 360000),
            ("30:00", 1800),
            ("2:05", 125),
            ("3600", 3600),
            ("1", 1),
        ],
    )
    def test_it_reads_hours_minutes_seconds_and_plain_seconds(
        self, value: str, seconds: int
    ) -> None:
        config = parse(f"fairshare_decay_time: {value}\n")
        assert config.decay_time == seconds
        assert config.found == {"fairshare_decay_time": 1}
        assert config.problems == []

    def test_half_life_is_an_alias(self) -> None:
        config = parse("half_life: 02:00:00\n")
        assert config.decay_time == 7200
        assert config.found == {"half_life": 1}
        assert config.problems == []

    @pytest.mark.parametrize("value", ["0", "00:00:00", "0:00", "abc", "-5", "1:2:3:4", "1h"])
    def test_it_refuses_a_time_that_is_not_positive_or_not_a_time(self, value: str) -> None:
        config = parse(f"\nfairshare_decay_time: {value}\n")
        assert config.decay_time == 86400
        assert config.problems == [
            ConfigProblem(
                2,
                "fairshare_decay_time",
                f"Invalid time {value}: give HH:MM:SS, MM:SS or seconds, more than 0",
            )
        ]

    def test_a_refused_half_life_is_reported_under_its_own_name(self) -> None:
        config = parse("half_life: never\n")
        assert [(p.line, p.key) for p in config.problems] == [(1, "half_life")]

    @pytest.mark.parametrize(
        ("value", "seconds"),
        [
            ("86400", 86400),
            ("10.9", 10),
            ("1:30", 90),
            ("1:30.5", 90),
            ("2:00:00", 7200),
            ("0", 0),
        ],
    )
    def test_parse_decay_time_gives_whole_seconds(self, value: str, seconds: int) -> None:
        assert parse_decay_time(value) == seconds

    @pytest.mark.parametrize("value", ["", "abc", "1:2:3:4", "-5", "1:", ":30", "1e3", " 60"])
    def test_parse_decay_time_gives_none_for_anything_else(self, value: str) -> None:
        assert parse_decay_time(value) is None


class TestDecayFactor:
    @pytest.mark.parametrize(
        ("value", "factor"), [("0.7", 0.7), (".25", 0.25), ("5e-1", 0.5), ("0.999", 0.999)]
    )
    def test_it_reads_a_factor_between_0_and_1(self, value: str, factor: float) -> None:
        config = parse(f"fairshare_decay_factor: {value}\n")
        assert config.decay_factor == factor
        assert config.found == {"fairshare_decay_factor": 1}

    @pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.5", "0.0", "1.0"])
    def test_it_refuses_a_factor_outside_0_and_1(self, value: str) -> None:
        config = parse(f"# decay\n\nfairshare_decay_factor: {value}\n")
        assert config.decay_factor == 0.5
        assert config.found == {}
        assert config.problems == [
            ConfigProblem(
                3,
                "fairshare_decay_factor",
                f"fairshare_decay_factor: Invalid value: {value}.  "
                "Valid values are between 0 and 1.",
            )
        ]

    @pytest.mark.parametrize("value", ["abc", "nan", "inf", "0.5x", "0,5"])
    def test_it_refuses_a_factor_that_is_not_a_number(self, value: str) -> None:
        config = parse(f"fairshare_decay_factor: {value}\n")
        assert config.decay_factor == 0.5
        assert config.problems == [
            ConfigProblem(
                1,
                "fairshare_decay_factor",
                f"Invalid fairshare_decay_factor {value!r}: not a number",
            )
        ]

    def test_a_problem_names_its_line_and_key(self) -> None:
        config = parse("\n\nfairshare_decay_factor: abc\n")
        assert str(config.problems[0]) == (
            "line 3: fairshare_decay_factor: Invalid fairshare_decay_factor 'abc': not a number"
        )


class TestUnknownShares:
    @pytest.mark.parametrize(("value", "shares"), [("0", 0), ("10", 10), ("2147483647", 2**31 - 1)])
    def test_it_reads_whole_shares(self, value: str, shares: int) -> None:
        assert parse(f"unknown_shares: {value}\n").unknown_shares == shares

    @pytest.mark.parametrize("value", ["-1", "1.5", "ten", "2147483648", "0x10"])
    def test_it_refuses_shares_that_are_negative_or_not_whole(self, value: str) -> None:
        config = parse(f"unknown_shares: {value}\n")
        assert config.unknown_shares == 0
        assert config.found == {}
        assert config.problems == [
            ConfigProblem(
                1,
                "unknown_shares",
                f"unknown_shares {value!r} is not a whole number of shares (0 or more)",
            )
        ]


class TestOtherLines:
    def test_unrelated_keys_are_counted_as_ignored(self) -> None:
        config = parse(
            "round_robin: False all\n"
            "by_queue: True prime\n"
            "strict_ordering: false ALL\n"
            "fair_share: true ALL\n"
            "unknown_shares: 5\n"
        )
        assert config.ignored == 1  # round_robin
        assert config.found == {"strict_ordering": 3, "fair_share": 4, "unknown_shares": 5}
        assert config.unapplied == [UnappliedLine(2, "by_queue", "prime")]

    def test_comments_and_blank_lines_are_skipped(self) -> None:
        config = parse(
            "# fairshare_decay_factor: 0.9\n"
            "   # unknown_shares: 5\n"
            "* fairshare_entity: nonsense\n"
            "\t*half_life: 0\n"
            "\n"
            "   \n"
            "\t\n"
        )
        assert config == FairshareConfig()

    def test_a_key_without_a_value_is_neither_read_nor_ignored(self) -> None:
        config = parse("unknown_shares:\nround_robin:   \n")
        assert config == FairshareConfig()

    def test_the_line_numbers_count_every_line(self) -> None:
        config = parse("# a\n\nround_robin: true\n\nunknown_shares: 3\nhalf_life: bad\n")
        assert config.found == {"unknown_shares": 5}
        assert [p.line for p in config.problems] == [6]
        assert config.ignored == 1

    def test_a_refused_value_keeps_the_earlier_good_one(self) -> None:
        config = parse("fairshare_decay_factor: 0.25\nfairshare_decay_factor: 2\n")
        assert config.decay_factor == 0.25
        assert config.found == {"fairshare_decay_factor": 1}
        assert [p.line for p in config.problems] == [2]


@needs_examples
class TestExamples:
    def test_the_forum_example_parses(self) -> None:
        config = parse_sched_config((EXAMPLES / "forum_example" / "sched_config").read_bytes())
        assert config == FairshareConfig(
            fairshare_usage_res="cput",
            decay_factor=0.5,
            unknown_shares=0,
            found={"fairshare_usage_res": 1, "fairshare_decay_factor": 2},
        )

    def test_the_seed_tree_example_parses(self) -> None:
        with (EXAMPLES / "seed_tree" / "sched_config").open("rb") as stream:
            config = parse_sched_config(stream)
        assert config == FairshareConfig(
            fairshare_usage_res="cput",
            decay_factor=0.5,
            unknown_shares=10,
            found={"fairshare_usage_res": 1, "fairshare_decay_factor": 2, "unknown_shares": 3},
        )


class TestDecayTimeBound:
    """Ten years at most: 400 decays ahead (the recovery projection) must stay in the calendar,
    and the value must fit a timedelta."""

    def test_ten_years_is_the_longest_taken(self) -> None:
        config = parse("fairshare_decay_time: 87840:00:00\n")
        assert (config.decay_time, config.problems) == (MAX_DECAY_TIME, [])
        assert MAX_DECAY_TIME == 87840 * 3600

    @pytest.mark.parametrize(
        ("value", "seconds"),
        [
            ("87840:00:01", 316224001),
            ("1000000000:00:00", 3600000000000),
            ("99999999999999999999:00:00", 359999999999999999996400),
            ("316224001", 316224001),
        ],
    )
    def test_a_longer_one_is_refused_with_line_key_and_reason(
        self, value: str, seconds: int
    ) -> None:
        config = parse(f"# site\nfairshare_decay_time: {value}\nunknown_shares: 4\n")
        assert config.problems == [
            ConfigProblem(
                2,
                "fairshare_decay_time",
                f"Invalid time {value}: {seconds} s is more than ten years (87840:00:00),"
                " past which decays leave the calendar",
            )
        ]
        assert (config.decay_time, config.found) == (86400, {"unknown_shares": 3})
        assert config.refused == ""

    def test_seconds_past_a_double_are_not_a_time(self) -> None:
        config = parse(f"half_life: {'9' * 400}\n")
        assert [(p.line, p.key) for p in config.problems] == [(1, "half_life")]
        assert config.problems[0].reason.endswith("give HH:MM:SS, MM:SS or seconds, more than 0")


class TestAnotherKindOfFile:
    """Refused whole: what is not a sched_config must not read as one with PBS's defaults."""

    def test_a_file_with_control_bytes_is_refused(self) -> None:
        config = parse_sched_config(b"unknown_shares: 3\n\x01\x02\x03\n")
        assert config == FairshareConfig(
            refused="line 2 holds control bytes: not a sched_config, which is text"
        )

    def test_an_accounting_log_is_refused_though_its_lines_hold_colons(self) -> None:
        log = "03/01/2026 10:00:00;Q;1.pbs;queue=workq\n03/01/2026 10:00:05;S;1.pbs;user=alice\n"
        config = parse(log)
        assert config.refused == "none of its 2 lines is `name: value`: not a sched_config"
        assert (config.found, config.problems) == ({}, [])

    def test_more_lines_of_another_kind_than_settings_is_refused(self) -> None:
        text = "# qmgr?\nset server scheduling = True\nset server acl = x\nmax_starve: 1\n"
        assert parse(text).refused == "2 of its 3 lines are not `name: value`: not a sched_config"

    def test_a_file_of_nuls_or_blank_lines_is_refused(self) -> None:
        nuls = parse_sched_config(b"\0" * 4096 + b"\n\0\n")
        assert nuls.refused == "none of its 2 lines is `name: value`: not a sched_config"
        assert parse(" \n\t\n\n").refused == "holds only blank lines: not a sched_config"

    def test_comments_alone_are_a_sched_config_of_pbs_defaults(self) -> None:
        config = parse("# all defaults\n\n* starred\n")
        assert config == FairshareConfig()

    def test_a_few_bad_lines_among_settings_are_not_a_refusal(self) -> None:
        config = parse("round_robin: False all\nstray words\nfairshare_decay_factor: 0.7\n")
        assert (config.refused, config.decay_factor, config.ignored) == ("", 0.7, 2)


class TestJobOrderKeys:
    def test_the_policies_are_off_unless_the_file_says_so(self) -> None:
        config = parse("fairshare_usage_res: ncpus\n")
        assert (config.fair_share, config.by_queue, config.job_sort_key) == (False, False, [])

    def test_it_reads_fair_share_by_queue_and_the_sort_keys_in_order(self) -> None:
        config = parse(
            "fair_share: true ALL\n"
            "by_queue: True NON_PRIME\n"
            'job_sort_key: "ncpus HIGH" ALL\n'
            "job_sort_key: 'walltime low'\n"
            'job_sort_key: "sort_priority High"\n'
        )
        assert config.fair_share is True
        assert config.by_queue is True
        assert config.job_sort_key == [
            ("ncpus", "HIGH"),
            ("walltime", "LOW"),
            ("job_priority", "HIGH"),  # sort_priority is job_priority's old name
        ]
        assert config.found["job_sort_key"] == 5

    def test_a_switch_that_is_not_true_or_false_is_a_problem(self) -> None:
        config = parse("fair_share: maybe\n")
        assert config.problems == [
            ConfigProblem(1, "fair_share", "fair_share 'maybe' is neither true nor false")
        ]
        assert config.fair_share is False

    @pytest.mark.parametrize("value", ['"ncpus"', '"ncpus UP"', "ncpus"])
    def test_a_sort_key_without_high_or_low_is_a_problem(self, value: str) -> None:
        config = parse(f"job_sort_key: {value}\n")
        assert [problem.key for problem in config.problems] == ["job_sort_key"]
        assert config.job_sort_key == []

    def test_an_unquoted_sort_key_is_named_for_its_value_not_for_its_second_word(self) -> None:
        config = parse("job_sort_key: ncpus HIGH\n")  # parse.cpp reads HIGH as the prime option
        assert config.problems == [
            ConfigProblem(
                1,
                "job_sort_key",
                'job_sort_key \'ncpus\': give "RESOURCE HIGH" or "RESOURCE LOW"',
            )
        ]
        assert (config.job_sort_key, config.unapplied) == ([], [])


class TestStrictOrderingAndBackfill:
    def test_pbs_defaults_are_no_strict_ordering_backfill_on_and_depth_1(self) -> None:
        config = parse("fair_share: true\n")
        assert (config.strict_ordering, config.backfill, config.backfill_depth) == (False, True, 1)

    @pytest.mark.parametrize(
        ("value", "switch"),
        [("true", True), ("TRUE", True), ("True", True), ("tRuE", True), ("false", False),
         ("FALSE", False), ("False", False)],
    )  # fmt: skip
    def test_the_switches_are_true_or_false_in_any_case(self, value: str, switch: bool) -> None:
        config = parse(f"strict_ordering: {value}\nbackfill: {value}\n")
        assert (config.strict_ordering, config.backfill) == (switch, switch)
        assert config.found == {"strict_ordering": 1, "backfill": 2}
        assert config.problems == []

    @pytest.mark.parametrize("value", ["yes", "1", "on", "truth"])
    def test_a_switch_that_is_not_true_or_false_is_a_problem(self, value: str) -> None:
        config = parse(f"backfill: {value} ALL\n")
        assert config.problems == [
            ConfigProblem(1, "backfill", f"backfill {value!r} is neither true nor false")
        ]
        assert (config.backfill, config.found) == (True, {})

    @pytest.mark.parametrize(
        ("value", "depth"), [("0", 0), ("1", 1), ("12", 12), ("2147483647", 2**31 - 1)]
    )
    def test_it_reads_a_backfill_depth_of_0_or_more(self, value: str, depth: int) -> None:
        config = parse(f"backfill_depth: {value}\n")
        assert (config.backfill_depth, config.found, config.problems) == (
            depth,
            {"backfill_depth": 1},
            [],
        )

    @pytest.mark.parametrize("value", ["-1", "x", "1.5", "+3", "2147483648", "１"])
    def test_it_refuses_a_backfill_depth_that_is_negative_or_not_whole(self, value: str) -> None:
        config = parse(f"# depth\nbackfill_depth: {value}\n")
        assert config.problems == [
            ConfigProblem(
                2,
                "backfill_depth",
                f"backfill_depth {value!r} is not a whole number of jobs (0 to 2147483647)",
            )
        ]
        assert (config.backfill_depth, config.found) == (1, {})

    def test_a_word_after_the_depth_is_ignored_as_it_takes_no_prime_option(self) -> None:
        config = parse("backfill_depth: 3 prime\nbackfill_depth: 4 Whatever\n")
        assert (config.backfill_depth, config.found) == (4, {"backfill_depth": 2})
        assert (config.problems, config.unapplied) == ([], [])

    def test_the_last_line_of_each_key_wins(self) -> None:
        config = parse(
            "strict_ordering: true\n"
            "backfill: false\n"
            "backfill_depth: 2\n"
            "strict_ordering: false ALL\n"
            "backfill: true non_prime\n"
            "backfill_depth: 0\n"
        )
        assert (config.strict_ordering, config.backfill, config.backfill_depth) == (False, True, 0)
        assert config.found == {"strict_ordering": 4, "backfill": 5, "backfill_depth": 6}


class TestPrimeOption:
    """The dashboard keeps non-prime time: all and non_prime lines apply, prime and none ones
    are read and listed as not applied."""

    @pytest.mark.parametrize("option", ["", "all", "ALL", "non_prime", "NON_PRIME"])
    @pytest.mark.parametrize("key", ["fair_share", "by_queue", "strict_ordering"])
    def test_a_line_for_all_or_non_prime_time_applies(self, key: str, option: str) -> None:
        config = parse(f"{key}: true {option}\n")
        assert getattr(config, key) is True
        assert (config.found, config.unapplied, config.problems) == ({key: 1}, [], [])

    @pytest.mark.parametrize(("option", "period"), [("prime", "prime"), ("PRIME", "prime"),
                                                   ("none", "none"), ("NONE", "none")])  # fmt: skip
    def test_a_line_for_prime_time_or_none_is_read_but_not_applied(
        self, option: str, period: str
    ) -> None:
        config = parse(f"# site\nstrict_ordering: true {option}\nbackfill: false\t{option}\n")
        assert (config.strict_ordering, config.backfill) == (False, True)
        assert config.unapplied == [
            UnappliedLine(2, "strict_ordering", period),
            UnappliedLine(3, "backfill", period),
        ]
        assert (config.found, config.problems) == ({}, [])

    def test_an_unapplied_line_says_which_and_why(self) -> None:
        config = parse("\n" * 11 + "strict_ordering: true prime\nfair_share: true NONE\n")
        assert [str(line) for line in config.unapplied] == [
            "strict_ordering prime-only line 12 not applied",
            "fair_share line 13 not applied: its option none puts it in no period",
        ]

    def test_a_prime_line_leaves_the_earlier_line_in_force(self) -> None:
        config = parse(
            "strict_ordering: true ALL\n"
            "strict_ordering: false prime\n"
            "fair_share: false non_prime\n"
            "fair_share: true prime\n"
        )
        assert (config.strict_ordering, config.fair_share) == (True, False)
        assert config.found == {"strict_ordering": 1, "fair_share": 3}
        assert config.unapplied == [
            UnappliedLine(2, "strict_ordering", "prime"),
            UnappliedLine(4, "fair_share", "prime"),
        ]

    def test_openpbs_default_by_queue_lines_read_as_on(self) -> None:
        config = parse("by_queue: True\t\tprime\nby_queue: True\t\tnon_prime\n")
        assert (config.by_queue, config.found) == (True, {"by_queue": 2})
        assert config.unapplied == [UnappliedLine(1, "by_queue", "prime")]

    def test_a_sort_key_line_takes_the_option_too(self) -> None:
        config = parse(
            'job_sort_key: "ncpus HIGH" prime\n'
            'job_sort_key: "walltime LOW" NON_PRIME\n'
            'job_sort_key: "mem HIGH" none\n'
        )
        assert config.job_sort_key == [("walltime", "LOW")]
        assert config.found == {"job_sort_key": 2}
        assert config.unapplied == [
            UnappliedLine(1, "job_sort_key", "prime"),
            UnappliedLine(3, "job_sort_key", "none"),
        ]

    @pytest.mark.parametrize("option", ["Prime", "nonprime", "non-prime", "All", "both", "#"])
    def test_an_unknown_option_is_a_problem_and_the_key_is_not_set(self, option: str) -> None:
        config = parse(f"# site\n\nstrict_ordering: true {option}\nbackfill: false {option}\n")
        options = "all, ALL, prime, PRIME, non_prime, NON_PRIME, none, NONE"
        assert config.problems == [
            ConfigProblem(
                3, "strict_ordering", f"Invalid prime keyword {option!r}: give one of {options}"
            ),
            ConfigProblem(
                4, "backfill", f"Invalid prime keyword {option!r}: give one of {options}"
            ),
        ]
        assert (config.strict_ordering, config.backfill) == (False, True)
        assert (config.found, config.unapplied) == ({}, [])

    def test_an_unknown_option_problem_names_line_key_and_option(self) -> None:
        config = parse("fair_share: true Prime\n")
        assert str(config.problems[0]) == (
            "line 1: fair_share: Invalid prime keyword 'Prime': give one of all, ALL, prime,"
            " PRIME, non_prime, NON_PRIME, none, NONE"
        )

    def test_a_bad_value_on_a_prime_line_is_a_problem_not_an_unapplied_line(self) -> None:
        config = parse("fair_share: maybe prime\nbackfill: yes Prime\n")
        assert config.problems == [
            ConfigProblem(1, "fair_share", "fair_share 'maybe' is neither true nor false"),
            ConfigProblem(2, "backfill", "backfill 'yes' is neither true nor false"),
        ]
        assert config.unapplied == []

    @pytest.mark.parametrize("option", ["prime", "none", "Prime"])
    def test_keys_without_a_prime_option_ignore_the_word_after_their_value(
        self, option: str
    ) -> None:
        config = parse(
            f"fairshare_decay_factor: 0.25 {option}\nunknown_shares: 7 {option}\n"
            f"fairshare_usage_res: ncpus {option}\n"
        )
        assert (config.decay_factor, config.unknown_shares, config.fairshare_usage_res) == (
            0.25,
            7,
            "ncpus",
        )
        assert (config.problems, config.unapplied) == ([], [])
