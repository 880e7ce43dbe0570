"""Cycles with usage_recording `pbs`: a run's usage accrued as PBS records it (its MoM's samples
read at the scheduler's cycles while it runs; trees.engine.recording), live and replayed alike.
The site and runs are tests/accounting/services/test_cycles.py's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from accounting.models import Cycle, Job
from accounting.services.cycles import _accruing, cycle_run
from accounting.services.replay import replay
from tests.accounting.services.test_cycles import T0, at, job, site, twin_sites, usages
from trees.models import Cluster, Node, UsageRecording

pytestmark = pytest.mark.django_db


def recorded_as_pbs(cluster: Cluster, min_poll: int = 60, max_poll: int = 60) -> Cluster:
    Cluster.objects.filter(pk=cluster.pk).update(
        usage_recording=UsageRecording.PBS,
        mom_min_check_poll=min_poll,
        mom_max_check_poll=max_poll,
    )
    return Cluster.objects.get(pk=cluster.pk)


def accrual(cluster: Cluster, job_id: str) -> tuple[float, bool]:
    found = Job.objects.get(cluster=cluster, job_id=job_id)
    return found.accrued, found.accrual_closed


def test_a_run_is_charged_what_pbs_recorded_at_its_last_cycle() -> None:
    # 4 CPUs from T0+5 to T0+1000: 3,980 core-seconds. PBS's cycles: the one it started in
    # (T0+5), the timer's 600 s later (T0+605), its end's. Samples every 60 s from T0+5; the
    # cycle at T0+605 reads the one at T0+545: 4 × 540 = 2,160; its end's adds nothing.
    cluster = recorded_as_pbs(site())
    job(cluster, "1", "ann", T0 + 5, T0 + 1000, 4)
    cycle_run(cluster=cluster, now=at(T0 + 600))
    assert accrual(cluster, "1") == (0.0, False)  # no cycle of PBS's has read a sample yet
    cycle_run(cluster=cluster, now=at(T0 + 610))
    assert accrual(cluster, "1") == (2160.0, False)
    cycle_run(cluster=cluster, now=at(T0 + 1200))
    assert accrual(cluster, "1") == (2160.0, True)  # over: nothing more to record
    assert usages(cluster)["ann"] == 1 + 2160
    assert [run.key for run in _accruing(cluster, at(T0 + 1800))] == []
    ledger = Cycle.objects.filter(cluster=cluster).order_by("at")
    assert [(c.jobs_accrued, c.usage_added) for c in ledger] == [(0, 0.0), (1, 2160.0), (1, 0.0)]


def test_exact_recording_charges_the_whole_run() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0 + 5, T0 + 1000, 4)
    for moment in (T0 + 600, T0 + 1200):
        cycle_run(cluster=cluster, now=at(moment))
    assert accrual(cluster, "1") == (3980.0, False)
    assert usages(cluster)["ann"] == 1 + 3980


def test_another_jobs_end_makes_a_cycle_that_records_more() -> None:
    # bob's job on the same MoM from T0+700 to T0+800: its start restarts the MoM's interval
    # (samples at T0+760, then T0+821: its exit at T0+800 and the server's answer at T0+801
    # moved the MoM's wake-ups to odd seconds); its end's cycle at T0+800 reads ann's T0+760
    # sample, 4 × 755 = 3,020. bob's own job ended before a sample was read: unseen.
    cluster = recorded_as_pbs(site())
    job(cluster, "1", "ann", T0 + 5, T0 + 1000, 4)
    job(cluster, "2", "bob", T0 + 700, T0 + 800, 1)
    cycle_run(cluster=cluster, now=at(T0 + 1200))
    assert accrual(cluster, "1") == (3020.0, True)
    assert accrual(cluster, "2") == (0.0, True)
    assert usages(cluster)["bob"] == 1.0


def test_a_running_job_is_priced_at_the_sample_pbs_read() -> None:
    # Running 8 CPUs since T0+100, sampled at the defaults' offsets 10, 26, ..., 516, 598: the
    # timer's cycle at T0+700 reads the sample at T0+698 (taken 2 s before), so
    # ncpus*walltime is priced on a walltime of 598 s.
    cluster = recorded_as_pbs(site(), 10, 120)
    job(cluster, "1", "ann", T0 + 100, None, 8)
    cycle_run(cluster=cluster, now=at(T0 + 650))
    assert accrual(cluster, "1") == (0.0, False)  # only the cycle it started in so far
    cycle_run(cluster=cluster, now=at(T0 + 710))
    assert accrual(cluster, "1") == (8 * 598.0, False)


def test_pbs_recording_live_and_replayed_alike() -> None:
    live, replayed = (recorded_as_pbs(cluster, 10, 120) for cluster in twin_sites())
    step, last = 1800, T0 + 2 * 86_400 + 12 * 3600
    for moment in range(T0, last + 1, step):
        cycle_run(cluster=live, now=at(moment))
    replay(cluster=replayed, start=at(T0), until=at(last), step=timedelta(seconds=step))

    def state(cluster: Cluster) -> tuple[Any, ...]:
        nodes = sorted(Node.objects.filter(cluster=cluster).values_list("name", "usage"))
        runs = sorted(
            Job.objects.filter(cluster=cluster).values_list("job_id", "accrued", "accrual_closed")
        )
        ledger = list(
            Cycle.objects.filter(cluster=cluster).order_by("at").values_list("at", "usage_added")
        )
        return nodes, runs, ledger

    assert state(live) == state(replayed)
    runs = {job_id: (accrued, closed) for job_id, accrued, closed in state(live)[1]}
    # ann's first run used 4 × 3600 = 14,400 and lost what followed its last poll before its
    # last cycle; the one-second run was never seen; the run of no duration used nothing, so
    # there was nothing to record.
    assert 0 < runs["1"][0] < 14_400
    assert runs["1"][1]
    assert (runs["3"], runs["5"]) == ((0.0, True), (0.0, False))
    assert runs["4"][1] is False  # still running
