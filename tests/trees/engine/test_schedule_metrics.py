"""trees.engine.schedule_metrics: what a schedule gave each entity and the cluster, and how a
baseline replay matches reality."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.schedule_metrics import (
    TWO_WEEKS,
    Calibration,
    WaitStats,
    calibrate,
    calibration_sentence,
    calibration_window,
    delivered_share,
    jain_index,
    job_arrays,
    share_attainment,
    share_over_time,
    trailing_mean,
    utilization,
    wait_changes,
    wait_stats,
)


@dataclass(frozen=True)
class Job:
    job_id: str
    entity: str
    submit: int
    start: int
    end: int
    cores: int = 1
    group: str = ""
    real_start: int | None = None


def job(
    entity: str,
    submit: int,
    wait: int,
    run: int,
    *,
    cores: int = 1,
    group: str = "",
    real_start: int | None = None,
) -> Job:
    """A job submitted at `submit` that waited `wait` s and ran `run` s."""
    start = submit + wait
    return Job(
        f"{entity}.{submit}.{wait}", entity, submit, start, start + run, cores, group, real_start
    )


def test_waits_are_counted_averaged_and_interpolated_per_entity() -> None:
    jobs = [job("alice", 0, wait, 100) for wait in (20, 0, 100, 10)] + [job("bob", 5, 7, 100)]
    stats = wait_stats(jobs)
    alice = stats["alice"]
    assert alice.jobs == 4
    assert alice.mean_wait == 32.5  # (0 + 10 + 20 + 100) / 4
    assert alice.median_wait == 15.0  # position 3 * 0.5 = 1.5: 10 + 0.5 * (20 - 10)
    assert alice.p90_wait == pytest.approx(76.0)  # position 3 * 0.9 = 2.7: 20 + 0.7 * (100 - 20)
    assert alice.p90_wait == pytest.approx(np.percentile([0, 10, 20, 100], 90))
    assert stats["bob"] == WaitStats(1, 7.0, 7.0, 7.0, 1.07)  # (7 + 100) / 100


def test_bounded_slowdown_takes_a_job_shorter_than_10_s_over_10_s() -> None:
    jobs = [
        job("alice", 0, 20, 5),  # (20 + 5) / max(5, 10) = 2.5
        job("alice", 0, 0, 3),  # (0 + 3) / 10 = 0.3, raised to 1
        job("alice", 0, 30, 60),  # (30 + 60) / 60 = 1.5
    ]
    assert wait_stats(jobs)["alice"].bounded_slowdown == pytest.approx(5 / 3)  # (2.5+1+1.5)/3


def test_waits_by_group_gather_a_project_s_entities_and_those_of_none() -> None:
    jobs = [
        job("alice", 0, 10, 50, group="physics"),
        job("bob", 0, 30, 50, group="physics"),
        job("carol", 0, 4, 50),
    ]
    stats = wait_stats(jobs, by="group")
    assert set(stats) == {"physics", ""}
    assert stats["physics"].jobs == 2
    assert stats["physics"].mean_wait == 20.0  # (10 + 30) / 2
    assert stats["physics"].median_wait == 20.0
    assert stats[""].mean_wait == 4.0
    assert wait_stats([]) == {}


def test_the_columns_built_once_give_what_the_jobs_give() -> None:
    jobs = [job("bob", 3, 9, 40, cores=2), job("alice", 0, 5, 10), job("bob", 1, 0, 1)]
    arrays = job_arrays(jobs)
    assert arrays.entities == ("alice", "bob")
    assert wait_stats(arrays) == wait_stats(jobs)
    assert delivered_share(arrays) == delivered_share(jobs)


def test_a_job_ending_before_it_starts_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="job broken"):
        job_arrays([Job("broken", "alice", 0, 10, 5)])


def test_a_variant_s_change_is_variant_minus_baseline_for_entities_in_both() -> None:
    baseline = {"alice": WaitStats(4, 32.5, 15.0, 76.0, 1.0), "bob": WaitStats(1, 7, 7, 7, 1)}
    variant = {"alice": WaitStats(4, 30.0, 10.0, 100.0, 1.0), "carol": WaitStats(1, 1, 1, 1, 1)}
    changes = wait_changes(baseline, variant)
    assert set(changes) == {"alice"}
    assert changes["alice"].median == -5.0  # 10 - 15
    assert changes["alice"].p90 == 24.0  # 100 - 76


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=40))
def test_percentiles_are_numpy_s_default_linear_interpolation(waits: list[int]) -> None:
    stats = wait_stats([job("alice", 0, wait, 1) for wait in waits])["alice"]
    assert stats.median_wait == pytest.approx(np.percentile(waits, 50))
    assert stats.p90_wait == pytest.approx(np.percentile(waits, 90))


def test_a_job_spanning_three_bins_is_split_exactly_at_their_edges() -> None:
    jobs = [
        Job("long", "alice", 0, 50, 270, cores=2),  # 2 * 50, 2 * 100, 2 * 70 in bins 0, 1, 2
        Job("short", "bob", 0, 0, 100),  # 1 * 100 in bin 0, ending on its edge
    ]
    series = share_over_time(jobs, targets={"alice": 0.5, "carol": 0.2}, bin_seconds=100)
    assert series.bin_starts.tolist() == [0, 100, 200]
    assert series.core_seconds["alice"].tolist() == [100, 200, 140]  # 440 = 2 * 220
    assert series.core_seconds["bob"].tolist() == [100, 0, 0]
    assert series.core_seconds["carol"].tolist() == [0, 0, 0]  # a target and no job
    assert series.share["alice"].tolist() == [0.5, 1.0, 1.0]  # 100 / 200, 200 / 200, 140 / 140
    assert series.share["bob"].tolist() == [0.5, 0.0, 0.0]
    assert series.target == {"alice": 0.5, "bob": 0.0, "carol": 0.2}
    assert series.delivered == {"alice": 440 / 540, "bob": 100 / 540, "carol": 0.0}
    assert delivered_share(jobs) == {"alice": 440 / 540, "bob": 100 / 540}


def test_bins_start_on_a_multiple_of_the_width_and_cover_a_job_ending_on_the_last_edge() -> None:
    series = share_over_time([Job("j", "alice", 0, 1234, 3000)], targets={}, bin_seconds=1000)
    assert series.bin_starts.tolist() == [1000, 2000]  # 1234 rounded down; 3000 ends bin 2000
    assert series.core_seconds["alice"].tolist() == [766, 1000]  # 2000 - 1234, 3000 - 2000
    explicit = share_over_time(
        [Job("j", "alice", 0, 1234, 3000)], targets={}, bin_seconds=1000, origin=234
    )
    assert explicit.bin_starts.tolist() == [234, 1234, 2234]
    assert explicit.core_seconds["alice"].tolist() == [0, 1000, 766]


def test_a_bin_that_delivered_nothing_has_no_share() -> None:
    jobs = [Job("a", "alice", 0, 0, 100), Job("b", "alice", 0, 300, 400)]
    series = share_over_time(jobs, targets={}, bin_seconds=100)
    assert series.core_seconds["alice"].tolist() == [100, 0, 0, 100]
    share = series.share["alice"].tolist()
    assert share[0] == share[3] == 1.0
    assert math.isnan(share[1])
    assert math.isnan(share[2])


def test_targets_beyond_the_whole_and_an_origin_after_the_first_start_are_refused() -> None:
    jobs = [Job("a", "alice", 0, 50, 100)]
    with pytest.raises(ValueError, match="at most 1"):
        share_over_time(jobs, targets={"alice": 0.7, "bob": 0.4}, bin_seconds=10)
    with pytest.raises(ValueError, match="origin"):
        share_over_time(jobs, targets={}, bin_seconds=10, origin=60)


def test_no_jobs_give_no_bins_and_no_delivered_share() -> None:
    series = share_over_time([], targets={"alice": 1.0}, bin_seconds=60)
    assert len(series.bin_starts) == 0
    assert series.core_seconds["alice"].tolist() == []
    assert series.delivered == {}
    assert delivered_share([]) == {}


jobs_strategy = st.lists(
    st.builds(
        job,
        st.sampled_from(["alice", "bob", "carol"]),
        st.integers(0, 1000),
        st.integers(0, 500),
        st.integers(0, 800),
        cores=st.integers(0, 8),
    ),
    max_size=30,
)


@settings(deadline=None)
@given(jobs_strategy, st.integers(1, 300))
def test_bins_hold_every_core_second_and_their_shares_add_up_to_one(
    jobs: list[Job], bin_seconds: int
) -> None:
    series = share_over_time(jobs, targets={}, bin_seconds=bin_seconds)
    for name in {j.entity for j in jobs}:
        own = sum(j.cores * (j.end - j.start) for j in jobs if j.entity == name)
        assert int(series.core_seconds[name].sum()) == own
    in_bin = sum(series.core_seconds.values(), np.zeros(len(series.bin_starts), np.int64))
    assert int(in_bin.sum()) == sum(j.cores * (j.end - j.start) for j in jobs)
    for moment in np.flatnonzero(in_bin > 0):
        assert sum(share[moment] for share in series.share.values()) == pytest.approx(1.0)


def test_utilization_is_core_seconds_used_over_those_the_cluster_had() -> None:
    jobs = [
        Job("a", "alice", 0, 10, 110, cores=4),  # 400 core-seconds
        Job("b", "bob", 50, 60, 210, cores=2),  # 300 core-seconds
    ]
    # 700 / (10 cores * (210 - 0) s)
    assert utilization(jobs, capacity=10) == pytest.approx(1 / 3)
    assert utilization([], capacity=10) is None
    assert utilization([Job("c", "carol", 5, 5, 5)], capacity=10) is None  # an empty span


def test_jain_s_index_is_one_for_equal_attainment_and_a_half_for_one_of_two() -> None:
    assert jain_index([0.8, 0.8, 0.8]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0]) == 0.5  # 1^2 / (2 * 1)
    assert jain_index([1.0, 2.0, 3.0]) == pytest.approx(6 / 7)  # 6^2 / (3 * 14)
    assert jain_index([]) is None
    assert jain_index([0.0, 0.0]) is None
    with pytest.raises(ValueError, match=">= 0"):
        jain_index([1.0, -1.0])


def test_attainment_is_delivered_over_target_for_entities_with_a_target() -> None:
    attainment = share_attainment(
        {"alice": 0.5, "bob": 0.1, "erin": 0.4},
        {"alice": 0.25, "bob": 0.5, "carol": 0.25, "dan": 0.0},
    )
    assert attainment == pytest.approx({"alice": 2.0, "bob": 0.2, "carol": 0.0})
    # (2 + 0.2 + 0)^2 / (3 * (4 + 0.04 + 0))
    assert jain_index(attainment.values()) == pytest.approx(4.84 / 12.12)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=20).filter(lambda xs: any(xs)))
def test_jain_s_index_lies_between_one_over_n_and_one(values: list[float]) -> None:
    index = jain_index(values)
    assert index is not None
    assert 1 / len(values) - 1e-12 <= index <= 1 + 1e-12


def real(entity: str, submit: int, real_wait: int, simulated_wait: int) -> Job:
    """A replayed job that really waited `real_wait` s and in the replay `simulated_wait` s."""
    return job(entity, submit, simulated_wait, 60, real_start=submit + real_wait)


def test_the_window_is_two_weeks_or_a_tenth_of_a_shorter_trace() -> None:
    assert calibration_window(40 * 7 * 86400) == TWO_WEEKS
    assert calibration_window(20 * 7 * 86400) == TWO_WEEKS  # a tenth is exactly two weeks
    assert calibration_window(10 * 7 * 86400) == 7 * 86400
    assert calibration_window(1009) == 100  # rounded down to whole seconds
    assert calibration_window(0) == 0


def test_the_trailing_mean_takes_the_window_s_both_ends_and_every_tie() -> None:
    times = np.array([0, 0, 10, 15], np.int64)
    values = np.array([1, 3, 8, 4], np.int64)
    # at 0: (1 + 3) / 2 for both; at 10: [5, 10] holds 8; at 15: [10, 15] holds 8 and 4
    assert trailing_mean(times, values, 5).tolist() == [2.0, 2.0, 8.0, 6.0]


def test_a_tiny_replay_is_calibrated_as_computed_by_hand() -> None:
    jobs = [
        real("alice", 0, 10, 20),
        real("alice", 50, 30, 30),
        real("bob", 100, 20, 0),
        real("bob", 1000, 0, 3600),  # 3600 s from its real start: within the hour
        real("carol", 1000, 0, 3601),  # 3601 s: not within it
        job("carol", 5000, 9, 60),  # no real start: left out, span included
    ]
    calibration = calibrate(jobs)
    assert calibration.jobs == 5
    assert calibration.window_seconds == 100  # the submits span 1000 s: a tenth of it
    # The trailing means over [t - 100, t], real then simulated:
    #   t=0:    {10} and {20}                  -> |20 - 10| / 10 = 1
    #   t=50:   (10+30)/2=20 and (20+30)/2=25  -> 5 / 20 = 0.25
    #   t=100:  60/3=20 and 50/3               -> (10/3) / 20 = 1/6
    #   t=1000: real mean (0+0)/2 = 0 twice    -> left out
    assert calibration.mape == pytest.approx(100 * (1 + 0.25 + 1 / 6) / 3)  # 47.2 %
    assert calibration.mean_wait_ratio == {
        "alice": 1.25,  # (20 + 30) / (10 + 30)
        "bob": 180.0,  # (0 + 3600) / (20 + 0)
        "carol": None,  # a real mean wait of 0
    }
    assert calibration.within_1h == 0.8  # 4 of 5


def test_a_replay_without_real_starts_has_nothing_to_calibrate() -> None:
    calibration = calibrate([job("alice", 0, 10, 10)])
    assert calibration == Calibration(None, {}, None, 0, 0)
    assert calibration_sentence(calibration) == (
        "No job of the replay has a real start to compare it with."
    )


def test_real_waits_all_zero_leave_the_mape_undefined() -> None:
    calibration = calibrate([real("alice", 0, 0, 5), real("alice", 10, 0, 0)])
    assert calibration.mape is None
    assert calibration.within_1h == 1.0


@settings(deadline=None)
@given(jobs_strategy.filter(bool))
def test_a_replay_equal_to_reality_is_calibrated_perfectly(jobs: list[Job]) -> None:
    exact = [Job(j.job_id, j.entity, j.submit, j.start, j.end, real_start=j.start) for j in jobs]
    calibration = calibrate(exact)
    assert calibration.mape in (0.0, None)  # None only when every real wait is 0
    if any(j.start > j.submit for j in jobs):
        assert calibration.mape == 0.0
    for name, ratio in calibration.mean_wait_ratio.items():
        real_waits = sum(j.start - j.submit for j in jobs if j.entity == name)
        assert ratio == (1.0 if real_waits else None)
    assert calibration.within_1h == 1.0


def test_the_sentence_states_the_error_and_the_starts_within_the_hour() -> None:
    assert calibration_sentence(Calibration(23.4, {}, 0.61, TWO_WEEKS, 100)) == (
        "Against what really happened, the baseline's two-week moving-average wait is off by "
        "23.4 % on average (MAPE); 61.0 % of jobs start within an hour of their real start."
    )
    short = calibration_sentence(Calibration(5.0, {}, 1.0, 302_400, 10))
    assert "3.5-day moving-average wait is off by 5.0 %" in short
    assert "100.0 % of jobs" in short
    undefined = calibration_sentence(Calibration(None, {}, 0.5, 100, 2))
    assert "is 0 throughout" in undefined
    assert "100-second" in undefined
