"""trees.engine.recording: what PBS records of a job's usage, its MoM's samples and the
scheduler's cycles (pbs-job-priority-and-polling.md §C, as a running OpenPBS 23.06 showed it;
seed 000's figure 2). Every number is worked out by hand in the comments; the captures of a
running OpenPBS are replayed in tests/accounting/commands/test_pbs_oracle.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.recording import (
    CycleKind,
    EntityLoss,
    FinishedRun,
    MomRun,
    PbsCycle,
    PbsRecording,
    Polling,
    derived_cycles,
    entity_losses,
    job_recording,
    logged_cycles,
    mom_samples,
    recorded_total,
    running_at,
    usage_at,
    wake_up,
)

Q, T, E = CycleKind.QUEUED, CycleKind.TIMER, CycleKind.ENDED


def test_the_default_polls_grow_by_6_s_from_10_to_120() -> None:
    # inc_check_poll = (120 - 10 + 19) // 20 = 6: intervals 10, 16, 22, ..., 118, then 120;
    # from the one start at 0 the MoM wakes on even seconds, where every sample falls.
    polling = Polling()
    assert polling.increment == 6
    assert mom_samples([MomRun(0, None, None)], polling, 1400) == [
        10, 26, 48, 76, 110, 150, 196, 248, 306, 370, 440, 516, 598, 686, 780, 880, 986,
        1098, 1216, 1336,
    ]  # fmt: skip


def test_equal_minimum_and_maximum_poll_every_that_many_seconds() -> None:
    polling = Polling(60, 60)
    assert polling.increment == 0
    assert mom_samples([MomRun(5, None, None)], polling, 300) == [65, 125, 185, 245]


def test_a_minimum_above_the_maximum_is_refused() -> None:
    with pytest.raises(ValueError, match="min_check_poll 300 and max_check_poll 240"):
        Polling(300, 240)


def test_a_sample_waits_for_the_moms_wake_up_two_seconds_apart_from_its_last_event() -> None:
    # Events at 0 and 7: a sample due at 12 is taken at 13 (7 + 6), one due at 14 at 15.
    assert [wake_up(due, [0, 7]) for due in (5, 6, 7, 12, 13, 14)] == [6, 6, 7, 13, 13, 15]
    assert wake_up(3, []) == 3


def test_a_job_start_restarts_the_moms_interval_for_all_its_jobs() -> None:
    # $min_check_poll 5, $max 30: increment 2. From the start at 0: due 5, taken at 6; the
    # next would be due at 13, after the start at 7, which restarts: due 12 (taken at 13, 6 s
    # after 7), then 13 + 7 = 20 (21), 21 + 9 = 30 (31), 31 + 11 = 42 (43): the capture
    # cput_fast_polls's first samples.
    runs = [MomRun(0, None, None), MomRun(7, None, None)]
    assert mom_samples(runs, Polling(5, 30), 45) == [6, 13, 21, 31, 43]


def test_a_job_exit_and_its_obituarys_answer_move_the_wake_ups() -> None:
    # One job runs from 0; another from 1 exits at 4 (walltime 3), ends at 5, the server
    # answering at 6: every 10 s from 1, the sample due at 11 waits for 12 (6 + 6).
    runs = [MomRun(0, None, None), MomRun(1, 4, 5)]
    assert mom_samples(runs, Polling(10, 10), 40) == [12, 22, 32]


def test_a_moms_samples_stop_when_its_jobs_have_exited() -> None:
    assert mom_samples([MomRun(0, 95, 96)], Polling(), 500) == [10, 26, 48, 76]
    assert mom_samples([MomRun(0, 9, 10)], Polling(), 500) == []  # over before the first


def test_cycles_at_submissions_and_ends_and_the_timer_after_the_previous_cycle() -> None:
    # Submissions at 0 and 100, two ends at 50, a start at 30 with neither (qrun, or a timer
    # cycle); timers 60 s after the previous cycle: none before 100, then 160, 220, 280.
    cycles = derived_cycles([0, 100], [50, 50], [0, 30, 100], 60, 300)
    assert cycles == [
        PbsCycle(0, Q), PbsCycle(30, T), PbsCycle(50, E), PbsCycle(50, E), PbsCycle(100, Q),
        PbsCycle(160, T), PbsCycle(220, T), PbsCycle(280, T),
    ]  # fmt: skip
    assert derived_cycles([0], [200], [], 60, 200) == [
        PbsCycle(0, Q), PbsCycle(60, T), PbsCycle(120, T), PbsCycle(180, T), PbsCycle(200, E),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="scheduler_iteration must be positive"):
        derived_cycles([], [], [], 0, 10)


def test_a_logs_cycles_are_named_by_the_submissions_and_ends_of_their_second() -> None:
    # Two at 0 with no event (the scheduler's start: timers); one at 7, a submission's; two
    # at 95, a submission's then an end's; one at 241, the timer's.
    cycles = logged_cycles([0, 0, 7, 95, 95, 241], [7, 95], [95])
    assert cycles == [
        PbsCycle(0, T), PbsCycle(0, T), PbsCycle(7, Q), PbsCycle(95, Q), PbsCycle(95, E),
        PbsCycle(241, T),
    ]  # fmt: skip
    # Three events but one cycle: the server asked once for them all, after the last.
    assert logged_cycles([10], [10, 10], [10]) == [PbsCycle(10, E)]


def test_a_job_runs_at_the_cycles_after_its_start_up_to_the_one_its_end_makes() -> None:
    assert [
        running_at(cycle, 10, 50)
        for cycle in (PbsCycle(10, E), PbsCycle(11, T), PbsCycle(50, T), PbsCycle(50, Q),
                      PbsCycle(50, E), PbsCycle(51, T))
    ] == [False, True, True, True, False, False]  # fmt: skip
    assert running_at(PbsCycle(100, E), 10, None)


def one_job(cycles: list[PbsCycle], walltime: int = 95) -> float:
    """What PBS recorded of a job from 0 that exits at `walltime` and ends a second later,
    alone on its MoM with the default polls (samples at 10, 26, 48, 76)."""
    run = FinishedRun("ann", float(walltime), 0, walltime + 1, walltime, "m1")
    samples = mom_samples([MomRun(0, walltime, walltime + 1)], Polling(), walltime + 1)
    return job_recording(run, PbsRecording(cycles, {"m1": samples})).recorded


def test_a_cycle_reads_the_samples_taken_two_seconds_or_more_before_it() -> None:
    end = PbsCycle(96, E)
    assert one_job([PbsCycle(0, Q), PbsCycle(60, T), end]) == 48.0
    assert one_job([PbsCycle(0, Q), PbsCycle(50, T), end]) == 48.0  # 48 + 2 <= 50
    assert one_job([PbsCycle(0, Q), PbsCycle(49, T), end]) == 26.0
    # A submission's cycle in its end's second, before the end: it reads the sample at 76.
    assert one_job([PbsCycle(0, Q), PbsCycle(60, T), PbsCycle(96, Q), end]) == 76.0
    # Only the cycle its end made: unseen.
    assert one_job([PbsCycle(0, Q), end]) == 0.0


def test_seed_000s_figure_2_a_30_minute_job_loses_about_13_minutes() -> None:
    # $min_check_poll 120, $max_check_poll 240 (increment 6), scheduler_iteration 1000 s. The
    # job uses one CPU from 0 for 30 minutes (cput 1800 s): samples at 120, 246, 378, 516,
    # 660, 810, 966, 1128, ...; the timer's cycle at 1000 reads the one at 966; the cycle its
    # end makes at 1801 finds it over: 834 s lost, 13.9 minutes.
    run = FinishedRun("ann", 1800.0, 0, 1801, 1800, "m1")
    cycles = derived_cycles([0], [1801], [0], 1000, 1801)
    assert cycles == [PbsCycle(0, Q), PbsCycle(1000, T), PbsCycle(1801, E)]
    samples = mom_samples([MomRun(0, 1800, 1801)], Polling(120, 240), 1801)
    assert samples[:8] == [120, 246, 378, 516, 660, 810, 966, 1128]
    found = job_recording(run, PbsRecording(cycles, {"m1": samples}))
    assert (found.recorded, found.lost, found.last_cycle, found.last_poll) == (
        966.0, 834.0, 1000, 966,
    )  # fmt: skip
    assert found.lost / 60 == pytest.approx(13.9)


def test_usage_grows_evenly_over_the_run() -> None:
    assert [usage_at(100.0, 10, 20, moment) for moment in (5, 10, 15, 20, 25)] == [
        0.0, 0.0, 50.0, 100.0, 100.0,
    ]  # fmt: skip
    assert usage_at(7.0, 10, 10, 10) == 7.0  # a run of no length used it all at once


def test_entity_losses_add_up_each_entitys_jobs_each_on_its_moms_samples() -> None:
    # Cycles: the submissions' at 5 and 700, the timer's at 605 (600 s after 5), the ends' at
    # 731 and (two) at 1001. m1: ann's 4-CPU job from 5 exits at 1000 (3980 core-seconds),
    # polls every 60 s: samples 65, 125, ..., 965. Its last cycle is 731 (both at 1001 are
    # ends'): it reads the sample at 725, 4 × 720 = 2880. m2: ann's job from 700 to 730 and
    # bob's from 700 to 1000, samples 760, ..., 1000: ann's ends at 731 (its own end's cycle:
    # unseen); bob's last cycle, 731, comes before m2's first sample: unseen too.
    polling = Polling(60, 60)
    runs = [
        FinishedRun("ann", 3980.0, 5, 1001, 995, "m1"),
        FinishedRun("ann", 30.0, 700, 731, 30, "m2"),
        FinishedRun("bob", 300.0, 700, 1001, 300, "m2"),
    ]
    cycles = derived_cycles([5, 700], [1001, 731, 1001], [5, 700, 700], 600, 1001)
    assert [cycle.at for cycle in cycles] == [5, 605, 700, 731, 1001, 1001]
    samples = {
        "m1": mom_samples([MomRun(5, 1000, 1001)], polling, 1001),
        "m2": mom_samples([MomRun(700, 730, 731), MomRun(700, 1000, 1001)], polling, 1001),
    }
    assert (samples["m1"][0], samples["m1"][-1], len(samples["m1"])) == (65, 965, 16)
    assert samples["m2"] == [760, 820, 880, 940, 1000]
    rec = PbsRecording(cycles, samples)
    losses = entity_losses(runs, rec)
    assert losses == [
        EntityLoss("ann", 4010.0, 2880.0, 2, 1),
        EntityLoss("bob", 300.0, 0.0, 1, 1),
    ]
    assert (losses[0].lost, losses[0].lost_fraction) == (1130.0, 1130 / 4010)
    assert recorded_total(runs, rec) == 2880.0
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
    the iteration: the same cycles and more) never record less, nor does a sample at every
    wake-up of the MoM."""
    queued = [start for start, _ in jobs]
    ends = [end + 1 for _, end in jobs]
    until = max(ends)
    runs = [MomRun(start, end, end + 1) for start, end in jobs]
    polling = Polling(min_poll, min_poll + spread)

    def recording(polls: Polling, every: int) -> PbsRecording:
        cycles = derived_cycles(queued, ends, queued, every, until)
        return PbsRecording(cycles, {"m": mom_samples(runs, polls, until)})

    base = recording(polling, iteration * times)
    faster = recording(polling, iteration)
    steady = recording(Polling(1, 1), iteration * times)
    for start, end in jobs:
        run = FinishedRun("ann", float(end - start), start, end + 1, end - start, "m")
        recorded = job_recording(run, base).recorded
        assert 0 <= recorded <= run.usage
        assert job_recording(run, faster).recorded >= recorded
        assert job_recording(run, steady).recorded >= recorded
