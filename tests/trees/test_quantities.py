"""trees.quantities: a target share as pbsfs -g prints it, usage with its unit, spans."""

from datetime import timedelta

import pytest

from trees.quantities import (
    SLURM_UNIT,
    UsageUnit,
    percent_text,
    span_text,
    usage_text,
    usage_unit,
    wait_text,
)


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
