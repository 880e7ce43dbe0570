"""The replay's core (trees.engine.simulate): textbook schedules worked by hand, and properties
on random traces."""

import gc
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.simulate import (
    Backfill,
    Schedule,
    Scheduled,
    SimJob,
    job_id_key,
    simulate,
    walltime_limit,
)


def job(job_id: str, submit: int, run: int, cores: int, asked: int | None = None) -> SimJob:
    return SimJob(job_id, f"u{job_id}", submit, run, cores, asked)


def starts(schedule: Schedule) -> dict[str, int]:
    return {placed.job_id: placed.start for placed in schedule.jobs}


# Six cores. A takes two from 0 to 10. B (5 cores) cannot start beside it: its shadow time is
# A's end, 10, when 6 are free, so 1 core is extra. C (6 cores) is the second job that does not
# fit. D (1 core for 30 s) fits now, beside A, but ends after the shadow time.
SIX = [
    job("A", 0, 10, 2, 10),
    job("B", 1, 10, 5, 10),
    job("C", 2, 10, 6, 10),
    job("D", 3, 30, 1, 30),
]


@pytest.mark.parametrize(
    ("backfill", "expected"),
    [
        # In order, stopping at the first that does not fit: B at A's end (10), C at B's (20),
        # D behind C at C's end (30).
        ("none", {"A": 0, "B": 10, "C": 20, "D": 30}),
        # Whatever fits now: D at 3; B at 10 beside D (5 + 1 = 6); C needs all six, at D's end.
        ("greedy", {"A": 0, "B": 10, "C": 33, "D": 3}),
        # D takes B's one extra core, which delays only C (not reserved): as greedy here.
        ("easy", {"A": 0, "B": 10, "C": 33, "D": 3}),
        # Two reservations: B at 10 and C at 20 (B's estimated end); D would hold a core C's
        # reservation needs over [20, 30), so it waits, and starts at C's end.
        (2, {"A": 0, "B": 10, "C": 20, "D": 30}),
    ],
)
def test_the_disciplines_on_a_textbook_queue(backfill: Backfill, expected: dict[str, int]) -> None:
    assert starts(simulate(SIX, capacity=6, backfill=backfill)) == expected


# Ten cores. A (6) runs 0-100. B (8, asks 60) cannot start: shadow 100, when 10 are free, extra
# 10 - 8 = 2. C (4, asks 200) fits now but would end after 100 and takes more than the extra 2.
# D (2, asks 300) ends after 100 but takes just the extra 2. E (2, asks 50) ends by 90 <= 100.
TEN = [
    job("A", 0, 100, 6, 100),
    job("B", 10, 50, 8, 60),
    job("C", 20, 30, 4, 200),
    job("D", 30, 40, 2, 300),
    job("E", 40, 20, 2, 50),
]


@pytest.mark.parametrize(
    ("backfill", "expected"),
    [
        # All behind B: B at A's end (100); C, D, E at B's end (150), 4 + 2 + 2 of 10 cores.
        ("none", {"A": 0, "B": 100, "C": 150, "D": 150, "E": 150}),
        # C at 20 (fits); D and E find no core until C ends at 50; B at A's end.
        ("greedy", {"A": 0, "B": 100, "C": 20, "D": 50, "E": 50}),
        # EASY: C neither ends by 100 nor fits in the extra 2; D takes them at 30; E ends by
        # 90, so it starts at 40 in the last 2 free. At 70 (D's end) C fits (4 free) but still
        # ends after the shadow (100) with only 2 extra. B at 100, C at B's end, 150.
        ("easy", {"A": 0, "B": 100, "C": 150, "D": 30, "E": 40}),
    ],
)
def test_easy_backfills_only_what_does_not_delay_the_first_job(
    backfill: Backfill, expected: dict[str, int]
) -> None:
    schedule = simulate(TEN, capacity=10, backfill=backfill)
    assert starts(schedule) == expected
    assert {placed.job_id: placed.end - placed.start for placed in schedule.jobs} == {
        "A": 100,
        "B": 50,
        "C": 30,
        "D": 40,
        "E": 20,
    }  # fmt: skip  (each runs its recorded time, whatever its request)


def test_the_walltime_limit_is_the_request_unless_none_or_shorter_than_the_run() -> None:
    assert walltime_limit(100, 3600) == 3600
    assert walltime_limit(100, None) == 100
    assert walltime_limit(100, 0) == 100
    assert walltime_limit(100, 50) == 100  # the run outlasted its request: it ran anyway


def test_jobs_that_cannot_run_are_left_out_and_counted() -> None:
    jobs = [job("1", 0, 0, 1), job("2", 0, -5, 1), job("3", 0, 10, 0), job("4", 0, 10, 9)]
    schedule = simulate([*jobs, job("5", 0, 10, 8)], capacity=8)
    assert schedule.left_out == {"run_time": 2, "cores": 1, "capacity": 1}
    assert starts(schedule) == {"5": 0}


def test_submit_ties_go_by_job_number() -> None:
    jobs = [job("10", 0, 5, 1), job("9", 0, 5, 1), job("x", 0, 5, 1)]
    schedule = simulate(jobs, capacity=1, backfill="none")
    assert starts(schedule) == {"9": 0, "10": 5, "x": 10}
    assert job_id_key("9") < job_id_key("10") < job_id_key("a")


def test_a_bad_discipline_or_pool_is_refused() -> None:
    with pytest.raises(ValueError, match="backfill must be"):
        simulate([], capacity=4, backfill=0)
    with pytest.raises(ValueError, match="at least one core"):
        simulate([], capacity=0)


def test_progress_is_reported_as_jobs_start() -> None:
    seen: list[tuple[int, int]] = []
    simulate(
        [job(str(n), n, 1, 1) for n in range(5)],
        capacity=1,
        progress=lambda done, total: seen.append((done, total)),
        progress_every=2,
    )
    assert seen == [(2, 5), (4, 5), (5, 5)]


CAPACITY = 8
traces = st.lists(
    st.builds(
        job,
        job_id=st.just(""),
        submit=st.integers(0, 200),
        run=st.integers(-2, 60),
        cores=st.integers(0, CAPACITY + 1),
        asked=st.one_of(st.none(), st.integers(0, 90)),
    ),
    max_size=40,
).map(lambda jobs: [SimJob(str(n), *_fields(one)[1:]) for n, one in enumerate(jobs)])
disciplines = st.sampled_from(["none", "greedy", "easy", 1, 2, 3])


def _fields(one: SimJob) -> tuple[str, str, int, int, int, int | None]:
    return (one.job_id, one.entity, one.submit, one.run_time, one.cores, one.requested_walltime)


@given(traces, disciplines)
def test_each_job_starts_once_after_its_submit_within_the_pool(
    jobs: list[SimJob], backfill: Backfill
) -> None:
    schedule = simulate(jobs, capacity=CAPACITY, backfill=backfill)
    runnable = [one for one in jobs if one.run_time > 0 and 0 < one.cores <= CAPACITY]
    assert sorted(placed.job_id for placed in schedule.jobs) == sorted(
        one.job_id for one in runnable
    )
    assert sum(schedule.left_out.values()) == len(jobs) - len(runnable)
    by_id = {one.job_id: one for one in jobs}
    for placed in schedule.jobs:
        assert placed.start >= placed.submit
        assert placed.end == placed.start + by_id[placed.job_id].run_time
    moments = sorted({placed.start for placed in schedule.jobs})
    for moment in moments:  # cores in use change only at starts and ends; check each start
        in_use = sum(p.cores for p in schedule.jobs if p.start <= moment < p.end)
        assert in_use <= CAPACITY


def plain_fcfs(jobs: Sequence[SimJob], capacity: int) -> dict[str, int]:
    """First come, first served with no backfilling, written plainly: at each moment anything
    happens, start queued jobs in order while the first fits."""
    waiting = sorted(
        (one for one in jobs if one.run_time > 0 and 0 < one.cores <= capacity),
        key=lambda one: (one.submit, job_id_key(one.job_id)),
    )
    running: list[tuple[int, int]] = []  # (end, cores)
    started: dict[str, int] = {}
    moments = sorted({one.submit for one in waiting})
    while waiting:
        now = moments.pop(0)
        running = [(end, cores) for end, cores in running if end > now]
        free = capacity - sum(cores for _, cores in running)
        while waiting and waiting[0].submit <= now and waiting[0].cores <= free:
            first = waiting.pop(0)
            started[first.job_id] = now
            running.append((now + first.run_time, first.cores))
            free -= first.cores
        later = [end for end, _ in running] + [one.submit for one in waiting]
        moments = sorted({moment for moment in later + moments if moment > now})
    return started


@given(traces)
def test_fifo_without_backfilling_is_plain_first_come_first_served(jobs: list[SimJob]) -> None:
    assert starts(simulate(jobs, capacity=CAPACITY, backfill="none")) == plain_fcfs(jobs, CAPACITY)


class SubmitOrder:
    """Submit order as a policy gives it: the simulator cannot tell it is FIFO, so it weighs the
    whole queue at every pass."""

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        return sorted(queued, key=lambda one: (one.submit, job_id_key(one.job_id)))

    def job_started(self, job: SimJob, now: int) -> None:
        pass

    def job_ended(self, job: SimJob, now: int) -> None:
        pass


@given(traces, disciplines)
def test_fifos_shortcut_for_arrivals_changes_nothing(
    jobs: list[SimJob], backfill: Backfill
) -> None:
    fifo = simulate(jobs, capacity=CAPACITY, backfill=backfill)
    policy = simulate(jobs, capacity=CAPACITY, backfill=backfill, order=SubmitOrder())
    assert fifo.jobs == policy.jobs


@given(traces)
def test_easy_is_a_depth_of_one(jobs: list[SimJob]) -> None:
    easy = simulate(jobs, capacity=CAPACITY, backfill="easy", order=SubmitOrder())
    assert starts(easy) == starts(simulate(jobs, capacity=CAPACITY, backfill=1))


def test_the_schedule_spans_the_first_submit_to_the_last_end() -> None:
    schedule = simulate([job("1", 5, 10, 1), job("2", 7, 30, 1), job("3", 0, 0, 1)], capacity=1)
    assert (schedule.first_submit, schedule.last_end) == (5, 45)  # 1 over 5-15, 2 over 15-45
    empty = simulate([], capacity=1)
    assert (empty.first_submit, empty.last_end) == (None, None)


def test_job_ids_of_other_digits_are_text() -> None:
    assert job_id_key("²") == (1, 0, "²")  # str.isdigit, but no number int() reads
    assert job_id_key("0042") == (0, 42, "")


def test_the_collector_is_left_as_it_was() -> None:
    jobs = [job("1", 0, 10, 1)]
    simulate(jobs, capacity=1)
    assert gc.isenabled()
    gc.disable()
    try:
        simulate(jobs, capacity=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


def in_use(jobs: Sequence[Scheduled], moment: int) -> int:
    return sum(placed.cores for placed in jobs if placed.start <= moment < placed.end)


@given(traces)
def test_greedy_leaves_no_waiting_job_that_fits(jobs: list[SimJob]) -> None:
    schedule = simulate(jobs, capacity=CAPACITY, backfill="greedy")
    moments = {placed.submit for placed in schedule.jobs} | {p.end for p in schedule.jobs}
    for moment in moments:  # after each pass, every job still waiting is too big for the rest
        free = CAPACITY - in_use(schedule.jobs, moment)
        for placed in schedule.jobs:
            if placed.submit <= moment < placed.start:
                assert placed.cores > free


@given(traces)
def test_easy_starts_each_first_job_by_the_shadow_time_it_got(jobs: list[SimJob]) -> None:
    """A job becomes first in submit order when every job before it has started; if it does
    not fit then, the running jobs' estimated ends give its shadow time, and EASY's backfilling
    must not push it past that."""
    schedule = simulate(jobs, capacity=CAPACITY, backfill="easy")
    rank = {one.job_id: (one.submit, job_id_key(one.job_id)) for one in jobs}
    limit = {one.job_id: walltime_limit(one.run_time, one.requested_walltime) for one in jobs}
    placed_in_order = sorted(schedule.jobs, key=lambda placed: rank[placed.job_id])
    latest_before: int | None = None  # the latest start of the jobs before it in order
    for placed in placed_in_order:
        first_at = placed.submit if latest_before is None else max(placed.submit, latest_before)
        latest_before = placed.start if latest_before is None else max(latest_before, placed.start)
        if placed.start <= first_at:
            continue  # it started as it became first, or backfilled before
        # Running as it is weighed: started before, or at that pass but ahead of it in order.
        running = [
            other
            for other in schedule.jobs
            if other.start <= first_at < other.end
            and (other.start < first_at or rank[other.job_id] < rank[placed.job_id])
        ]
        free = CAPACITY - sum(other.cores for other in running)
        assert placed.cores > free  # it did not fit
        estimated = sorted((other.start + limit[other.job_id], other.cores) for other in running)
        shadow = next(
            moment
            for moment, _ in estimated
            if free + sum(cores for end, cores in estimated if end <= moment) >= placed.cores
        )
        assert placed.start <= shadow


@pytest.mark.parametrize("backfill", ["none", "greedy", "easy"])
def test_fifos_shortcuts_hold_on_a_long_busy_queue(backfill: Backfill) -> None:
    """Over a thousand jobs waiting at once, of every size: the shortcuts' index by core count,
    and its lookups again after a start, beyond what the small random traces reach."""
    rng = random.Random(26)
    jobs = [
        SimJob(
            str(n),
            "u",
            n * 30,
            rng.choice((60, 600, 3600, 36_000)),
            rng.choice((1, 1, 1, 2, 4, 8, 16, 32, 48, 64)),
            rng.choice((None, 600, 7200, 86_400)),
        )
        for n in range(1500)
    ]
    fifo = simulate(jobs, capacity=64, backfill=backfill)
    assert fifo.jobs == simulate(jobs, capacity=64, backfill=backfill, order=SubmitOrder()).jobs
    assert max(placed.start - placed.submit for placed in fifo.jobs) > 86_400  # it was busy
