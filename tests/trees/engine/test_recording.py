"""trees.engine.recording: what PBS records of a job's usage, its MoM's polls and the
scheduler's cycles (pbs-job-priority-and-polling.md §C and its worked example D.2; seed 000's
figure 2). Every number is worked out by hand in the comments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.recording import (
    CycleClock,
    EntityLoss,
    FinishedRun,
    PbsRecording,
    Polling,
    entity_losses,
    job_recording,
    recorded_total,
    usage_at,
)


def recording(min_poll: int, max_poll: int, iteration: int, ends: list[int]) -> PbsRecording:
    return PbsRecording(Polling(min_poll, max_poll), CycleClock(iteration, sorted(ends)))


def test_the_default_polls_grow_by_6_s_from_10_to_120() -> None:
    # inc_check_poll = (120 - 10 + 19) // 20 = 6: intervals 10, 16, 22, ..., 118, then 120.
    polling = Polling()
    assert polling.increment == 6
    assert polling.polls(0, 1400) == [
        0, 10, 26, 48, 76, 110, 150, 196, 248, 306, 370, 440, 516, 598, 686, 780, 880, 986,
        1098, 1216, 1336,
    ]  # fmt: skip
    assert [polling.last_poll_before(0, moment) for moment in (1, 10, 11, 1336, 1337, 1457)] == [
        0, 0, 10, 1216, 1336, 1456,
    ]  # fmt: skip
    with pytest.raises(ValueError, match="no poll is before 5"):
        polling.last_poll_before(5, 5)


def test_equal_minimum_and_maximum_poll_every_that_many_seconds() -> None:
    polling = Polling(60, 60)
    assert polling.increment == 0
    assert polling.polls(5, 300) == [5, 65, 125, 185, 245]
    assert polling.last_poll_before(5, 600) == 545


def test_a_minimum_above_the_maximum_is_refused() -> None:
    with pytest.raises(ValueError, match="min_check_poll 300 and max_check_poll 240"):
        Polling(300, 240)


def test_worked_example_d2_a_job_loses_what_it_used_after_the_last_timer_cycle() -> None:
    # 4 CPUs from t=5 to t=1000: cput 3980. Polls every 60 s from 5; the cycle at 600 reads
    # the 545 poll (4 × 540 = 2160); the cycle its end triggers at 1000 adds nothing.
    found = job_recording(3980, 5, 1000, recording(60, 60, 600, [1000]))
    assert (found.recorded, found.lost, found.last_cycle, found.last_poll) == (
        2160.0, 1820.0, 600, 545,
    )  # fmt: skip
    # Another job's end at 800 makes a cycle that reads the 785 poll: 4 × 780 = 3120.
    also = job_recording(3980, 5, 1000, recording(60, 60, 600, [800, 1000]))
    assert (also.recorded, also.last_cycle, also.last_poll) == (3120.0, 800, 785)


def test_seed_000s_figure_2_a_30_minute_job_loses_about_13_minutes() -> None:
    # $min_check_poll 120, $max_check_poll 240 (increment 6), scheduler_iteration 20 min. The
    # job uses one CPU from 100 s after a cycle for 30 minutes (cput 1800 s): polls at 100,
    # 220, 346, 478, 616, 760, 910, 1066, 1228, ...; the timer's cycle at 1200 reads the 1066
    # poll (966 s); the cycle at its end, 1900, finds it over: 834 s lost, 13.9 minutes.
    found = job_recording(1800, 100, 1900, recording(120, 240, 1200, [1900]))
    assert (found.recorded, found.lost, found.last_poll) == (966.0, 834.0, 1066)
    assert found.lost / 60 == pytest.approx(13.9)


def test_a_job_shorter_than_a_cycle_goes_unseen() -> None:
    # Five minutes between the cycles at 600 and 1200, no other job ending meanwhile.
    found = job_recording(300, 700, 1000, recording(10, 120, 600, [1000]))
    assert (found.recorded, found.unseen, found.last_cycle) == (0.0, True, None)
    # A job that used nothing is not unseen: there was nothing to see.
    assert not job_recording(0, 700, 1000, recording(10, 120, 600, [])).unseen


def test_a_job_ending_just_after_a_cycle_keeps_the_poll_that_cycle_read() -> None:
    # Polls every 60 s from 0; the cycle at 1200 reads the 1140 poll; the job ends at 1201.
    found = job_recording(1201, 0, 1201, recording(60, 60, 600, [1201]))
    assert (found.recorded, found.last_cycle, found.last_poll) == (1140.0, 1200, 1140)
    # Ending at 1200 itself, the cycle at its end does not count: the one at 600 does.
    at_the_cycle = job_recording(1200, 0, 1200, recording(60, 60, 600, [1200]))
    assert (at_the_cycle.recorded, at_the_cycle.last_cycle) == (540.0, 600)


def test_a_cycle_at_the_start_reads_nothing_and_the_poll_at_a_cycle_is_not_yet_read() -> None:
    clock = CycleClock(600, [])
    assert clock.last_cycle(600, None, 600) is None  # started in that cycle
    assert clock.last_cycle(599, None, 600) == 600
    # A poll taken exactly at the cycle reaches the server after it.
    assert Polling(60, 60).last_poll_before(0, 600) == 540


def test_usage_grows_evenly_over_the_run() -> None:
    assert [usage_at(100.0, 10, 20, moment) for moment in (5, 10, 15, 20, 25)] == [
        0.0, 0.0, 50.0, 100.0, 100.0,
    ]  # fmt: skip
    assert usage_at(7.0, 10, 10, 10) == 7.0  # a run of no length used it all at once


def test_entity_losses_add_up_each_entitys_jobs() -> None:
    rec = recording(60, 60, 600, [1000, 1201, 1000])
    runs = [
        FinishedRun("alice", 3980, 5, 1000),  # 2160 recorded
        FinishedRun("alice", 300, 700, 1000),  # unseen
        FinishedRun("bob", 1201, 0, 1201),  # 1140 recorded
    ]
    losses = entity_losses(runs, rec)
    assert losses == [
        EntityLoss("alice", 4280, 2160.0, 2, 1),
        EntityLoss("bob", 1201, 1140.0, 1, 0),
    ]
    assert (losses[0].lost, losses[0].lost_fraction) == (2120.0, 2120 / 4280)
    assert recorded_total(runs, rec) == 3300.0
    assert EntityLoss("idle", 0.0, 0.0, 1, 0).lost_fraction == 0.0


spans = st.tuples(st.integers(0, 5000), st.integers(1, 5000)).map(lambda t: (t[0], t[0] + t[1]))


@given(
    st.lists(spans, min_size=1, max_size=8),
    st.integers(1, 300),
    st.integers(0, 300),
    st.sampled_from([60, 300, 600]),
    st.integers(2, 4),
)
def test_pbs_records_at_most_what_ran_and_more_often_records_more(
    jobs: list[tuple[int, int]], min_poll: int, spread: int, iteration: int, times: int
) -> None:
    """What PBS records is at most what a job used; cycles that come more often (a divisor of
    the iteration) never record less, nor does a poll every second (the latest poll there is
    before any cycle)."""
    ends = sorted(end for _, end in jobs)
    polling = Polling(min_poll, min_poll + spread)
    base = PbsRecording(polling, CycleClock(iteration * times, ends))
    faster = PbsRecording(polling, CycleClock(iteration, ends))
    steady = PbsRecording(Polling(1, 1), CycleClock(iteration * times, ends))
    for start, end in jobs:
        usage = float(end - start)
        recorded = job_recording(usage, start, end, base).recorded
        assert 0 <= recorded <= usage
        assert job_recording(usage, start, end, faster).recorded >= recorded
        assert job_recording(usage, start, end, steady).recorded >= recorded
