"""The replay's core (trees.engine.simulate): textbook schedules worked by hand, and properties
on random traces."""

import gc
import random
from collections.abc import Sequence
from dataclasses import replace

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


def job(
    job_id: str,
    submit: int,
    run: int,
    cores: int,
    asked: int | None = None,
    *,
    gpus: int = 0,
    nodes: int = 0,
) -> SimJob:
    return SimJob(job_id, f"u{job_id}", submit, run, cores, asked, gpus=gpus, nodes=nodes)


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


# Eight cores, four GPUs. A holds 2 GPUs. B asks all four: it waits for A's end (100) while six
# cores stand free; its shadow is 100, when everything is free, so the extra is 6 cores and no
# GPU. C (1 GPU, asks 200) fits now but would end after 100 and takes a GPU the extra lacks.
# D, CPU-only (4 cores, asks 300), fits in the extra cores; E (1 GPU, asks 50) ends by 90.
GPU_BOUND = [
    job("A", 0, 100, 2, 100, gpus=2),
    job("B", 10, 50, 2, 60, gpus=4),
    job("C", 20, 30, 1, 200, gpus=1),
    job("D", 30, 300, 4, 300),
    job("E", 40, 30, 1, 50, gpus=1),
]


def test_easy_backfills_cpu_jobs_around_a_job_waiting_for_gpus() -> None:
    # B at A's end, 100 (4 cores free then, and all four GPUs); C, refused at every pass before
    # (it would hold past the shadow a GPU that B needs), starts at B's end, 150.
    schedule = simulate(GPU_BOUND, capacity=8, gpus=4, backfill="easy")
    assert starts(schedule) == {"A": 0, "B": 100, "C": 150, "D": 30, "E": 40}
    assert (schedule.capacity, schedule.gpus, schedule.nodes) == (8, 4, None)
    # The GPUs not counted: B starts at 10 beside A, C at 20, and D (4 cores of the 3 free at
    # 30) waits for B's end at 60; E takes the one extra core of D's shadow (B's limit, 70).
    assert starts(simulate(GPU_BOUND, capacity=8)) == {"A": 0, "B": 10, "C": 20, "D": 60, "E": 40}


# Eight cores, two GPUs. C (4 cores, both GPUs) is blocked: A's end (50) frees the cores, but
# the GPUs only come back at B's (100), its shadow time; the extra is 4 cores and no GPU. D
# (2 cores, asks 70) ends by 90, before the shadow, so it starts in the last 2 free cores.
GPU_SHADOW = [
    job("A", 0, 50, 4, 50),
    job("B", 0, 100, 2, 100, gpus=2),
    job("C", 10, 100, 4, 100, gpus=2),
    job("D", 20, 60, 2, 70),
]


def test_the_shadow_time_waits_for_every_pool() -> None:
    schedule = simulate(GPU_SHADOW, capacity=8, gpus=2, backfill="easy")
    assert starts(schedule) == {"A": 0, "B": 0, "C": 100, "D": 20}
    # Cores alone: C's shadow is A's end (50), extra 2 cores, which D (ending at 90) takes.
    assert starts(simulate(GPU_SHADOW, capacity=8)) == {"A": 0, "B": 0, "C": 50, "D": 20}


# Eight cores, four GPUs. B asks 3 GPUs with 2 free: shadow 100 (A's end), extra 6 cores and
# 1 GPU. C and D, each 1 core and 1 GPU for 200 s, arrive together and both fit now; C takes
# the extra GPU, which leaves D none.
EXTRA_GPU = [
    job("A", 0, 100, 2, 100, gpus=2),
    job("B", 10, 50, 2, 50, gpus=3),
    job("C", 20, 200, 1, 200, gpus=1),
    job("D", 20, 200, 1, 200, gpus=1),
]


def test_backfilled_jobs_use_the_extra_up_in_every_pool() -> None:
    # D waits for B (100 to 150) to give back its GPUs.
    schedule = simulate(EXTRA_GPU, capacity=8, gpus=4, backfill="easy")
    assert starts(schedule) == {"A": 0, "B": 100, "C": 20, "D": 150}


# Sixteen cores on four nodes. A spreads 4 cores over 2 nodes; B asks 3 nodes, so it waits with
# twelve cores free. EASY: shadow 100, extra 10 cores and 1 node. C (2 nodes, asks 200) fits
# now but not in the one extra node; D (1 node, asks 200) does; E (1 node, asks 50) ends by 90.
NODE_BOUND = [
    job("A", 0, 100, 4, 100, nodes=2),
    job("B", 10, 50, 6, 50, nodes=3),
    job("C", 20, 200, 4, 200, nodes=2),
    job("D", 30, 200, 4, 200, nodes=1),
    job("E", 40, 40, 2, 50, nodes=1),
]


@pytest.mark.parametrize(
    ("backfill", "expected"),
    [
        # All behind B: B at A's end, 100; C, D and E at B's end, 150 (2 + 1 + 1 nodes).
        ("none", {"A": 0, "B": 100, "C": 150, "D": 150, "E": 150}),
        # C takes the two free nodes at 20; D and E find none until A's end (100), and B, with
        # D's node held, finds its three only at C's end, 220.
        ("greedy", {"A": 0, "B": 220, "C": 20, "D": 100, "E": 100}),
        # D and E backfill; C waits for B (100 to 150) to leave it two nodes.
        ("easy", {"A": 0, "B": 100, "C": 150, "D": 30, "E": 40}),
    ],
)
def test_a_job_waits_for_nodes_while_cores_are_free(
    backfill: Backfill, expected: dict[str, int]
) -> None:
    assert starts(simulate(NODE_BOUND, capacity=16, nodes=4, backfill=backfill)) == expected


# Eight cores, four GPUs. A holds 6 cores and 2 GPUs until 100. B (4 cores) and C (3 cores, all
# four GPUs) are blocked, and both fit from A's end: at depth 2 both are reserved from 100. D
# (1 core, 1 GPU, asks 250) fits now: EASY protects only B (whose extra at 100 is 4 cores and 4
# GPUs), so D starts at 30; depth 2 also holds C's four GPUs from 100 (the cores would do, 4 +
# 3 + 1 of 8), so D waits until B and C end, at 200.
DEPTH_WITH_GPUS = [
    job("A", 0, 100, 6, 100, gpus=2),
    job("B", 10, 100, 4, 100),
    job("C", 20, 100, 3, 100, gpus=4),
    job("D", 30, 50, 1, 250, gpus=1),
]


@pytest.mark.parametrize(
    ("backfill", "expected"),
    [
        ("easy", {"A": 0, "B": 100, "C": 100, "D": 30}),
        (1, {"A": 0, "B": 100, "C": 100, "D": 30}),
        (2, {"A": 0, "B": 100, "C": 100, "D": 200}),
    ],
)
def test_reservations_hold_the_gpus_too(backfill: Backfill, expected: dict[str, int]) -> None:
    assert starts(simulate(DEPTH_WITH_GPUS, capacity=8, gpus=4, backfill=backfill)) == expected


def test_jobs_beyond_a_pool_given_are_left_out_by_its_name() -> None:
    jobs = [
        job("1", 0, 0, 1, gpus=9),  # run time first, as before
        job("2", 0, 10, 0, gpus=9),  # no cores
        job("3", 0, 10, 9, gpus=9),  # more cores than the pool: capacity, whatever else
        job("4", 0, 10, 1, gpus=3),
        job("5", 0, 10, 1, gpus=-1),
        job("6", 0, 10, 1, nodes=5),
        job("7", 0, 10, 2, gpus=2, nodes=4),
    ]
    schedule = simulate(jobs, capacity=8, gpus=2, nodes=4)
    assert schedule.left_out == {"run_time": 1, "cores": 1, "capacity": 1, "gpus": 2, "nodes": 1}
    assert starts(schedule) == {"7": 0}
    # Pools not given are not counted: the GPUs and nodes asked are ignored.
    ignored = simulate(jobs, capacity=8)
    assert ignored.left_out == {"run_time": 1, "cores": 1, "capacity": 1}
    assert starts(ignored) == {"4": 0, "5": 0, "6": 0, "7": 0}
    assert starts(simulate(jobs, capacity=8, gpus=2)) == {"6": 0, "7": 0}


def test_a_pool_given_needs_one_of_its_kind() -> None:
    with pytest.raises(ValueError, match="GPU pool needs at least one GPU, not 0"):
        simulate([], capacity=4, gpus=0)
    with pytest.raises(ValueError, match="node pool needs at least one node, not -1"):
        simulate([], capacity=4, nodes=-1)


GPUS, NODES = 3, 4
pooled_traces = st.lists(
    st.builds(
        job,
        job_id=st.just(""),
        submit=st.integers(0, 200),
        run=st.integers(-2, 60),
        cores=st.integers(0, CAPACITY + 1),
        asked=st.one_of(st.none(), st.integers(0, 90)),
        gpus=st.integers(-1, GPUS + 1),
        nodes=st.integers(0, NODES + 1),
    ),
    max_size=40,
).map(lambda jobs: [replace(one, job_id=str(n)) for n, one in enumerate(jobs)])
Pools = tuple[int | None, int | None]  # the GPUs and nodes given, None where not
pool_sizes = st.sampled_from([(GPUS, None), (None, NODES), (GPUS, NODES)])


def counted(jobs: Sequence[SimJob], pools: Pools) -> dict[str, SimJob]:
    """The jobs the replay can run, by id, each with no GPUs or nodes where that pool is not
    given (the replay ignores them)."""
    gpus, nodes = pools
    kept: dict[str, SimJob] = {}
    for one in jobs:
        if one.run_time <= 0 or not 0 < one.cores <= CAPACITY:
            continue
        if gpus is not None and not 0 <= one.gpus <= gpus:
            continue
        if nodes is not None and not 0 <= one.nodes <= nodes:
            continue
        kept[one.job_id] = replace(
            one, gpus=0 if gpus is None else one.gpus, nodes=0 if nodes is None else one.nodes
        )
    return kept


def free_beside(running: Sequence[SimJob], pools: Pools) -> tuple[int, int, int]:
    """The cores, GPUs and nodes free beside the `running` jobs (none of a pool not given)."""
    gpus, nodes = pools
    return (
        CAPACITY - sum(one.cores for one in running),
        (gpus or 0) - sum(one.gpus for one in running),
        (nodes or 0) - sum(one.nodes for one in running),
    )


def running_at(schedule: Schedule, jobs: dict[str, SimJob], moment: int) -> list[SimJob]:
    return [jobs[placed.job_id] for placed in schedule.jobs if placed.start <= moment < placed.end]


def fits(one: SimJob, free: tuple[int, int, int]) -> bool:
    return one.cores <= free[0] and one.gpus <= free[1] and one.nodes <= free[2]


@given(pooled_traces, disciplines)
def test_pools_not_given_leave_the_cores_only_schedule(
    jobs: list[SimJob], backfill: Backfill
) -> None:
    cores_only = [replace(one, gpus=0, nodes=0) for one in jobs]
    schedule = simulate(jobs, capacity=CAPACITY, backfill=backfill)
    assert schedule == simulate(cores_only, capacity=CAPACITY, backfill=backfill)


@given(pooled_traces, disciplines)
def test_pools_too_big_to_fill_change_no_start(jobs: list[SimJob], backfill: Backfill) -> None:
    """The replay over several pools (counted together) against the one over cores alone (plain
    ints, with submit order's shortcuts), where the other pools never bind."""
    jobs = [one for one in jobs if one.gpus >= 0]
    many = simulate(jobs, capacity=CAPACITY, gpus=10_000, nodes=10_000, backfill=backfill)
    assert many.jobs == simulate(jobs, capacity=CAPACITY, backfill=backfill).jobs


@given(pooled_traces, disciplines, pool_sizes)
def test_each_job_starts_once_after_its_submit_within_every_pool(
    jobs: list[SimJob], backfill: Backfill, pools: Pools
) -> None:
    gpus, nodes = pools
    schedule = simulate(jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill=backfill)
    runnable = counted(jobs, pools)
    assert sorted(placed.job_id for placed in schedule.jobs) == sorted(runnable)
    assert sum(schedule.left_out.values()) == len(jobs) - len(runnable)
    for placed in schedule.jobs:
        assert placed.start >= placed.submit
    for moment in {placed.start for placed in schedule.jobs}:  # use grows only at starts
        free = free_beside(running_at(schedule, runnable, moment), pools)
        assert min(free) >= 0


@given(pooled_traces, pool_sizes)
def test_greedy_leaves_no_waiting_job_that_fits_in_every_pool(
    jobs: list[SimJob], pools: Pools
) -> None:
    gpus, nodes = pools
    schedule = simulate(jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill="greedy")
    runnable = counted(jobs, pools)
    moments = {placed.submit for placed in schedule.jobs} | {p.end for p in schedule.jobs}
    for moment in moments:
        free = free_beside(running_at(schedule, runnable, moment), pools)
        for placed in schedule.jobs:
            if placed.submit <= moment < placed.start:
                assert not fits(runnable[placed.job_id], free)


@given(pooled_traces, pool_sizes)
def test_easy_is_a_depth_of_one_over_every_pool(jobs: list[SimJob], pools: Pools) -> None:
    gpus, nodes = pools
    easy = simulate(jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill="easy")
    assert easy.jobs == simulate(jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill=1).jobs
    by_policy = simulate(
        jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill="easy", order=SubmitOrder()
    )
    assert by_policy.jobs == easy.jobs


@given(pooled_traces, st.one_of(st.just((None, None)), pool_sizes))
def test_easy_starts_each_first_job_by_the_shadow_time_it_got(
    jobs: list[SimJob], pools: Pools
) -> None:
    """A job becomes first in submit order when every job before it has started; if it does
    not fit then, the running jobs' estimated ends give its shadow time (the first by which it
    fits in every pool), and EASY's backfilling must not push it past that."""
    gpus, nodes = pools
    schedule = simulate(jobs, capacity=CAPACITY, gpus=gpus, nodes=nodes, backfill="easy")
    runnable = counted(jobs, pools)
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
        first = runnable[placed.job_id]
        assert not fits(first, free_beside([runnable[o.job_id] for o in running], pools))
        estimated = sorted((other.start + limit[other.job_id], other.job_id) for other in running)
        shadow = next(
            moment
            for moment, _ in estimated
            if fits(
                first, free_beside([runnable[i] for end, i in estimated if end > moment], pools)
            )
        )
        assert placed.start <= shadow
