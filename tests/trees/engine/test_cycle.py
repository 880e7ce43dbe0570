"""trees.engine.cycle: accrual of a run's usage over the cycles it spans, and due decays."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.cycle import (
    Accrual,
    Run,
    accrued_by,
    cycle_slot,
    cycle_usage,
    decay_instants,
    decayed_at,
    half_life_factor,
)
from trees.engine.formula import parse_formula
from trees.engine.pbs import GroupDef


def test_a_run_accrues_in_proportion_to_the_time_it_ran() -> None:
    # 4 cores for 2 hours (7200 s) under ncpus*walltime: 28,800 in all.
    assert accrued_by(28_800.0, 1_000, 8_200, 1_000) == 0.0
    assert accrued_by(28_800.0, 1_000, 8_200, 1_600) == 2_400.0  # 600 s of 7200
    assert accrued_by(28_800.0, 1_000, 8_200, 4_600) == 14_400.0
    assert accrued_by(28_800.0, 1_000, 8_200, 8_200) == 28_800.0
    assert accrued_by(28_800.0, 1_000, 8_200, 99_999) == 28_800.0
    assert accrued_by(28_800.0, 1_000, 8_200, 0) == 0.0


def test_a_run_of_no_duration_accrues_at_its_end() -> None:
    assert accrued_by(5.0, 100, 100, 99) == 0.0
    assert accrued_by(5.0, 100, 100, 100) == 5.0


@given(
    usage=st.floats(0, 1e12),
    start=st.integers(0, 10**9),
    length=st.integers(0, 10**7),
    cuts=st.lists(st.integers(0, 2 * 10**7), max_size=20),
)
def test_the_cycles_a_run_spans_add_up_to_its_usage(
    usage: float, start: int, length: int, cuts: list[int]
) -> None:
    # What each cycle adds is what is due by its time less what was accrued before, and the
    # cycle after the end adds the remainder: the sum is the run's usage exactly.
    end = start + length
    accrued = 0.0
    for now in sorted(start - 10 + cut for cut in cuts):
        due = accrued_by(usage, start, end, now)
        assert due >= accrued - 1e-6 * usage  # never less than before
        accrued = due
    accrued = accrued_by(usage, start, end, end + 1)
    assert accrued == usage


def test_decays_fall_due_once_per_interval_while_more_than_one_is_left() -> None:
    # fifo.cpp:401: `while ((t - last_decay) > decay_time)`, strict: a cycle a day after the
    # last decay decays nothing; one a second later decays once.
    day = 86_400
    assert decay_instants(0, day, day - 1) == []
    assert decay_instants(0, day, day) == []
    assert decay_instants(0, day, day + 1) == [day]
    assert decay_instants(100, day, 100 + 3 * day + 5) == [100 + day, 100 + 2 * day, 100 + 3 * day]
    assert decay_instants(500, day, 400) == []  # a clock behind the last decay: none due
    # Two days on the dot: one decay, and last_decay set to the cycle (the second is lost).
    assert (decay_instants(0, day, 2 * day), decayed_at(0, day, 2 * day)) == ([day], 2 * day)
    assert decayed_at(100, day, 100 + 3 * day + 5) == 100 + 3 * day


def test_a_decay_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        decay_instants(0, 0, 10)


def test_a_half_life_is_a_decay_factor_per_interval() -> None:
    week = 168 * 3600
    assert half_life_factor(week, week) == 0.5  # seed 003
    assert half_life_factor(week, 24 * 3600) == pytest.approx(0.5 ** (1 / 7))
    assert half_life_factor(week, 24 * 3600) ** 7 == pytest.approx(0.5)
    with pytest.raises(ValueError, match="must be positive"):
        half_life_factor(0, week)


def test_ticks_of_one_slot_name_the_same_cycle() -> None:
    ten_minutes = 600
    assert cycle_slot(1_772_352_000, ten_minutes) == 1_772_352_000
    assert cycle_slot(1_772_352_599, ten_minutes) == 1_772_352_000
    assert cycle_slot(1_772_352_600, ten_minutes) == 1_772_352_600
    with pytest.raises(ValueError, match="must be positive"):
        cycle_slot(5, 0)


def test_a_cycle_decays_what_ran_before_each_decay_and_not_what_ran_after() -> None:
    day = 86_400
    run = Run(key=1, entity="ann", start=0, end=2 * day, usage=2000.0, accrued=0.0)
    records = {"bob": 101.0, "bad name!": 5.0}  # PBS reads no record of an invalid name
    accrual = Accrual(parse_formula("walltime", ["walltime"]))
    groups = [GroupDef("ann", 10, "root", 1), GroupDef("bob", 11, "root", 1)]
    stored, last_decay, decays = cycle_usage(
        accrual, [run], records, now=2 * day + 30, last_decay=60, groups=groups,
        decay_interval=day, decay_factor=0.5, unknown_shares=0,
    )  # fmt: skip
    assert decays == [day + 60]
    assert last_decay == day + 60
    # ann: 1 + 1,000.6944 (the run up to the decay), halved, then the remaining 999.3056.
    before = 2000.0 * (day + 60) / (2 * day)
    assert stored == {"ann": (1 + before) * 0.5 + (2000.0 - before), "bob": 50.5}
    assert (accrual.added, run.accrued) == (2000.0, 2000.0)


def test_a_first_cycle_starts_the_decay_clock() -> None:
    accrual = Accrual(parse_formula("walltime", ["walltime"]))
    stored, last_decay, decays = cycle_usage(
        accrual, [], {}, now=500, last_decay=0, groups=[], decay_interval=10,
        decay_factor=0.5, unknown_shares=0,
    )  # fmt: skip
    assert (stored, last_decay, decays) == ({}, 500, [])
