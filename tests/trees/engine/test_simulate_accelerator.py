"""Accelerator FairShare as the replay's order (trees.engine.simulate_accelerator)."""

from trees.engine.accelerator import FsGroup
from trees.engine.simulate import Schedule, SimJob, simulate
from trees.engine.simulate_accelerator import AcceleratorOrder

GROUPS = [FsGroup("/a", weight=1), FsGroup("/b", weight=1)]  # equal targets, 2-hour windows


def job(job_id: str, group: str, submit: int, run: int) -> SimJob:
    return SimJob(job_id, group.rsplit(".", 1)[-1], submit, run, 1, None, group=group)


def starts(schedule: Schedule) -> dict[str, int]:
    return {placed.job_id: placed.start for placed in schedule.jobs}


JOBS = [job("X", "/a.u1", 0, 1000), job("P", "/a.u1", 1, 10), job("Q", "/b.u2", 2, 10)]


def test_the_group_with_less_history_in_its_window_goes_first() -> None:
    # One core. /a's X ran 0-1000: at 1000 /a has 1000 s of history in its window and /b none,
    # so /b ranks first and its Q (submitted at 2) passes /a's P (submitted at 1).
    order = AcceleratorOrder(GROUPS)
    assert starts(simulate(JOBS, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Q": 1000, "P": 1010,
    }  # fmt: skip
    assert starts(simulate(JOBS, capacity=1, backfill="none")) == {"X": 0, "P": 1000, "Q": 1010}


def test_history_older_than_the_window_no_longer_counts() -> None:
    # One core. /a's X runs 0-100; /a's P and /b's Q are both submitted at 1000. With 2-hour
    # windows /a still has X's 100 s: Q first. With 500 s windows X ended before 500: neither
    # group has history, their distances tie, so do their oldest queued jobs, and the path
    # decides: /a's P first. With FairShare off (window 0) the same tie-breaks give P.
    jobs = [job("X", "/a.u1", 0, 100), job("P", "/a.u1", 1000, 10), job("Q", "/b.u2", 1000, 10)]
    for window, first in ((None, "Q"), (500, "P"), (0, "P")):
        groups = [FsGroup(path, weight=1, window=window) for path in ("/a", "/b")]
        schedule = simulate(jobs, capacity=1, backfill="none", order=AcceleratorOrder(groups))
        assert starts(schedule)[first] == 1000, window
