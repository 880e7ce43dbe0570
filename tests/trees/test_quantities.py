"""trees.quantities: a target share as pbsfs -g prints it, usage with its unit, spans."""

import ctypes
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.quantities import (
    SLURM_UNIT,
    UsageUnit,
    fixed,
    larger_unit_number,
    mean_percent,
    part_percent,
    percent_text,
    points_text,
    span_text,
    usage_number,
    usage_text,
    usage_unit,
    wait_text,
)
from trees.templatetags.quantities import clock

LIBC = ctypes.CDLL(None)  # pbsfs prints with the C library's printf


def printf(form: bytes, value: float) -> str:
    out = ctypes.create_string_buffer(512)
    LIBC.snprintf(out, len(out), form, ctypes.c_double(value))
    return out.value.decode()


def test_a_target_reads_as_pbsfs_g_prints_it() -> None:
    # The white paper's L5: 0.2222 of the root, 0.75 of that, 10/15 of that, in float32.
    assert percent_text(0.10000000894069672) == "10.000001"
    assert percent_text(20 / 90) == "22.222223"  # float32 multiply, as PBS
    assert percent_text(20 / 90, slurm=True) == "22.222222"  # Slurm's doubles
    assert percent_text(None) == ""


@pytest.mark.parametrize(
    ("formula", "name", "human"),
    [
        ("ncpus*walltime", "core-seconds", "core-hours"),
        ("walltime * ncpus", "core-seconds", "core-hours"),
        ("ngpus*walltime", "GPU-seconds", "GPU-hours"),
        ("cput", "CPU-seconds", "CPU-hours"),
        ("mem*walltime", "usage units of `mem*walltime`", ""),
    ],
)
def test_the_usage_unit_is_named_from_the_formula(formula: str, name: str, human: str) -> None:
    unit = usage_unit(formula)
    assert (unit.name, unit.human) == (name, human)


def test_usage_reads_with_thousands_and_its_human_form() -> None:
    assert usage_text(1_234_567.4, usage_unit("ncpus*walltime")) == (
        "1,234,567 core-seconds (342.9 core-hours)"
    )
    assert usage_text(90.0, usage_unit("ncpus*walltime", slurm=True)) == (
        "90 TRES-seconds (1.5 TRES-minutes)"
    )
    assert usage_unit("anything", slurm=True) == SLURM_UNIT
    assert usage_text(5.0, UsageUnit("usage units of `mem`")) == "5 usage units of `mem`"
    assert usage_text(None, SLURM_UNIT) == ""


def test_a_small_usage_keeps_two_digits_in_the_larger_unit() -> None:
    cput = usage_unit("cput")
    assert usage_text(100.0, cput) == "100 CPU-seconds (0.028 CPU-hours)"  # not "0.0 CPU-hours"
    assert usage_text(3599.0, cput) == "3,599 CPU-seconds (1.0 CPU-hours)"
    assert usage_text(400.0, cput) == "400 CPU-seconds (0.1 CPU-hours)"
    assert usage_text(0.0, cput) == "0 CPU-seconds"
    assert usage_text(150.5, cput, digits=1) == "150.5 CPU-seconds (0.042 CPU-hours)"
    assert usage_text(-100.0, cput) == "-100 CPU-seconds (-0.028 CPU-hours)"


def test_usage_and_usage_perc_round_as_pbsfs_does() -> None:
    # "%.0f" rounds half to even: the decayed 2.5 prints 2, and the hpc root's usage/perc
    # 123876906.5 prints 123876906.
    assert usage_number(2.5) == "2"
    assert usage_number(3.5) == "4"
    assert usage_number(123876906.5) == "123,876,906"
    assert usage_number(-1.0) == "-1"  # pbsfs's usage/perc with no target share
    assert usage_number(None) == ""


def test_a_factor_rounds_on_its_binary_value_as_printf_does() -> None:
    # 0.1234565 is stored just below its decimal form: printf's "%f" says 0.123456, where
    # rounding the shortest decimal half up (Django's floatformat) said 0.123457.
    assert printf(b"%f", 0.1234565) == "0.123456"
    assert fixed(0.1234565) == "0.123456"
    assert fixed(float("inf")) == "inf"  # sshare's Level FS with no usage
    assert fixed(4.55, 1) == "4.5"  # 4.55 is 4.5499... in binary
    assert fixed(None) == ""


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_fixed_and_usage_number_print_what_printf_prints(value: float) -> None:
    assert fixed(value) == printf(b"%f", value)
    assert usage_number(value).replace(",", "") == printf(b"%.0f", value)


def test_report_hours_and_period_averages_read_as_their_tables_and_charts() -> None:
    assert larger_unit_number(26058.49) == "26,058.5"
    assert larger_unit_number(0.04) == "0.04"  # a tenth would read 0.0
    assert larger_unit_number(0.05000001) == "0.1"
    assert larger_unit_number(None) == ""
    assert mean_percent(0.64689592) == "64.7"  # the trends chart's hover says 64.7 %
    assert mean_percent(0.14035087) == "14.0"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (7 * 86400, "7 days"),
        (86400, "1 day"),
        (86400 + 12 * 3600, "1 day 12 hours"),
        (90, "1 minute 30 seconds"),
        (1, "1 second"),
        (0, "0 seconds"),
    ],
)
def test_a_span_reads_in_days_and_hours_not_as_a_clock(seconds: int, text: str) -> None:
    assert span_text(timedelta(seconds=seconds)) == text
    assert span_text(None) == ""


def test_a_wait_reads_to_the_minute_in_its_two_largest_units() -> None:
    assert wait_text(timedelta(days=2, hours=3, minutes=7)) == "2 days 3 hours"
    assert wait_text(timedelta(hours=3, minutes=20, seconds=59)) == "3 hours 20 minutes"
    assert wait_text(timedelta(minutes=45)) == "45 minutes"
    assert wait_text(timedelta(seconds=59)) == "under a minute"
    assert wait_text(timedelta(seconds=-5)) == "under a minute"  # a clock a little behind


def test_parts_of_usage_read_as_percents_and_their_differences_as_points() -> None:
    assert part_percent(0.04308222549793841) == "4.3 %"
    assert part_percent(0.3274932068916253, 2) == "32.75 %"
    assert part_percent(1.0) == "100.0 %"
    assert points_text(0.002249577199260333) == "+0.22 points"
    assert points_text(-0.25) == "-25.00 points"
    assert points_text(-0.0000412) == "-0.0041 points"  # two places would read -0.00
    assert points_text(0.0) == "+0.00 points"


def test_a_job_s_cycle_reads_as_a_time_of_day_beside_its_end() -> None:
    end = datetime(2026, 11, 21, 20, 27, 51, tzinfo=UTC)
    assert clock(datetime(2026, 11, 21, 20, 20, tzinfo=UTC), end) == "20:20:00"
    assert clock(datetime(2026, 11, 20, 23, 59, 2, tzinfo=UTC), end) == "2026-11-20 23:59:02"
    assert clock(None, end) == ""
