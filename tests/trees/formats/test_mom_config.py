"""trees.formats.mom_config: a MoM's mom_priv/config read as pbs_mom reads it (mom_main.c
parse_config, set_int, read_config)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.formats.mom_config import c_strtol, parse_mom_config


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("120", (120, "")),
        ("010", (8, "")),  # a leading 0 is octal
        ("0x1e", (30, "")),
        ("0X1E", (30, "")),
        ("  42", (42, "")),
        ("+7", (7, "")),
        ("-5", (-5, "")),
        ("12abc", (12, "abc")),
        ("0x", (0, "x")),  # the 0 is read, the x is not a hex prefix without a digit
        ("08", (0, "8")),  # 8 is no octal digit
        ("abc", (0, "abc")),
        ("99999999999999999999999", (2**63 - 1, "")),  # saturated at LONG_MAX
        ("9" * 5000, (2**63 - 1, "")),  # int() refuses 4,300 digits: it raised ValueError
        ("-" + "9" * 5000 + "s", (-(2**63), "s")),
        ("0x" + "f" * 5000, (2**63 - 1, "")),
        ("0" * 5000 + "7", (7, "")),
    ],
)
def test_strtol_base_0_as_c_reads_it(text: str, read: tuple[int, str]) -> None:
    assert c_strtol(text) == read


@given(st.integers(-(2**62), 2**62))
def test_strtol_reads_any_decimal_back(number: int) -> None:
    assert c_strtol(str(number)) == (number, "")


def test_the_poll_settings_and_pbs_s_defaults() -> None:
    config = parse_mom_config(
        "# comment\n$clienthost pbsserver\n$min_check_poll 120\r\n$max_check_poll\t0xf0  \n"
        "$logevent 0x1ff\nsize[fs=/tmp] 100\n   \n"
    )
    assert (config.min_check_poll, config.max_check_poll, config.problems) == (120, 240, ())
    assert config.settings == {"min_check_poll", "max_check_poll"}
    empty = parse_mom_config("")
    assert (empty.min_check_poll, empty.max_check_poll, empty.settings) == (10, 120, frozenset())


def test_each_refused_line_is_named_and_the_good_ones_kept() -> None:
    config = parse_mom_config(
        "$max_check_poll 300\n$min_check_poll 0\n$min_check_poll 60s\n$min_check_poll\n"
        "$no_such_thing 1\n  $min_check_poll 30\n"
    )
    assert (config.min_check_poll, config.max_check_poll) == (30, 300)
    assert [(p.line, p.field, p.reason) for p in config.problems] == [
        (2, "$min_check_poll", 'bad value "0": a whole number of seconds above 0 is needed'),
        (3, "$min_check_poll", 'bad value "60s": a whole number of seconds above 0 is needed'),
        (4, "$min_check_poll", "no value specified"),
        (5, "$no_such_thing", "command name no_such_thing not found: pbs_mom refuses the file"),
    ]


def test_a_minimum_above_the_maximum_puts_both_back_to_the_defaults() -> None:
    config = parse_mom_config("$min_check_poll 300\n$max_check_poll 240\n")
    assert (config.min_check_poll, config.max_check_poll) == (10, 120)
    ((line, reason),) = [(p.line, p.reason) for p in config.problems]
    assert (line, reason) == (
        1,
        "min_check_poll(300) > max_check_poll(240): pbs_mom runs with its defaults, 10 and 120",
    )


def test_a_value_past_an_int_wraps_as_pbs_mom_s_cast_does() -> None:
    # (int) 4294967416 is 120: pbs_mom takes it, as odd as it is.
    assert parse_mom_config("$max_check_poll 4294967416\n").max_check_poll == 120
    assert parse_mom_config("$max_check_poll 4294967296\n").problems[0].field == "$max_check_poll"


def test_a_comment_is_a_hash_in_the_first_column_only() -> None:
    config = parse_mom_config("#$min_check_poll 5\n  # $bogus\n")
    assert (config.min_check_poll, config.problems) == (10, ())


def test_a_poll_of_thousands_of_digits_is_a_refused_line() -> None:
    config = parse_mom_config("$clienthost pbs\n$min_check_poll " + "9" * 5000 + "\n")
    assert [(bad.line, bad.field) for bad in config.problems] == [(2, "$min_check_poll")]
