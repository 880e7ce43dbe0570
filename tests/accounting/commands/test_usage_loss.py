"""manage.py usage_loss: what PBS recorded of finished jobs, against what they used; seed 000's
figure 2 rebuilt by hand. The site is tests/accounting/services/test_cycles.py's."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from accounting.usage_loss import usage_loss_whatifs_get
from tests.accounting.services.test_cycles import T0, at, job, site
from tests.conftest import Run
from trees.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def figure_2() -> Cluster:
    """$min_check_poll 120, $max_check_poll 240, a 17-minute scheduler_iteration: ann's job
    uses one CPU for 30 minutes from T0+100; bob's runs 5 minutes between two cycles."""
    cluster = site()
    Cluster.objects.filter(pk=cluster.pk).update(
        mom_min_check_poll=120, mom_max_check_poll=240, scheduler_iteration=timedelta(minutes=17)
    )
    job(cluster, "1", "ann", T0 + 100, T0 + 1900, 1)
    job(cluster, "2", "bob", T0 + 2500, T0 + 2800, 2)
    return Cluster.objects.get(pk=cluster.pk)


def test_figure_2_s_job_loses_about_13_minutes(figure_2: Cluster, run: Run) -> None:
    # ann's samples: +120, 246, 378, 516, 660, 810, 966, 1128 (increment 6); the timer's cycle
    # 1020 s after the one it started in, at T0+1120, reads the one at T0+1066 (966 s used);
    # the cycle at its end finds it over. bob's job starts in a cycle and ends before the
    # timer's next: no cycle reads it.
    ran = run("usage_loss", "--cluster", "site", "--format", "json")
    assert ran.status == 0
    assert json.loads(ran.out) == [
        {"entity": "ann", "actual": 1800.0, "recorded": 966.0, "lost": 834.0,
         "lost_fraction": 834 / 1800, "jobs": 1, "jobs_unseen": 0},
        {"entity": "bob", "actual": 600.0, "recorded": 0.0, "lost": 600.0,
         "lost_fraction": 1.0, "jobs": 1, "jobs_unseen": 1},
    ]  # fmt: skip
    jobs = json.loads(run("usage_loss", "--cluster", "site", "--format", "json", "--jobs").out)
    assert jobs[0] == {
        "job_id": "1", "entity": "ann", "start": at(T0 + 100).isoformat(),
        "end": at(T0 + 1900).isoformat(), "actual": 1800.0, "recorded": 966.0, "lost": 834.0,
        "unseen": False, "last_cycle": at(T0 + 1120).isoformat(),
        "last_poll": at(T0 + 1066).isoformat(),
    }  # fmt: skip
    assert (jobs[1]["job_id"], jobs[1]["unseen"], jobs[1]["last_cycle"]) == ("2", True, None)


def test_the_text_says_the_settings_and_the_totals(figure_2: Cluster, run: Run) -> None:
    lines = run("usage_loss", "--cluster", "site").out.splitlines()
    assert lines[0] == (
        "cluster site: 2 jobs ended; $min_check_poll 120 s, $max_check_poll 240 s,"
        " scheduler_iteration 1020 s; used 2400, recorded 966, lost 1434 (59.8 %); 1 jobs unseen"
    )
    assert lines[1].split() == ["ENTITY", "USED", "RECORDED", "LOST", "LOST", "%", "JOBS", "UNSEEN"]
    assert lines[2].split() == ["ann", "1800", "966", "834", "46.3", "1", "0"]
    assert lines[3].split() == ["bob", "600", "0", "600", "100.0", "1", "1"]


def test_the_window_takes_jobs_by_their_end(figure_2: Cluster, run: Run) -> None:
    since = at(T0 + 2000).isoformat()
    only_bob = json.loads(
        run("usage_loss", "--cluster", "site", "--from", since, "--format", "json").out
    )
    assert [entity["entity"] for entity in only_bob] == ["bob"]
    until = at(T0 + 1900).isoformat()
    none = json.loads(
        run("usage_loss", "--cluster", "site", "--until", until, "--format", "json").out
    )
    assert none == []
    backwards = run("usage_loss", "--cluster", "site", "--from", since, "--until", until)
    assert backwards.status == 1
    assert backwards.err == f"--until {until} is not after --from {since}\n"


def test_what_other_settings_would_record(figure_2: Cluster) -> None:
    found = {(w.setting, w.value): w for w in usage_loss_whatifs_get(cluster=figure_2)}
    # A 510 s iteration: timers at T0+610, 1120, 1630; the last reads ann's sample at
    # +1470 (intervals 168, 174 after 1128), taken at T0+1570. bob: still unseen.
    assert found["scheduler_iteration", 510].recorded == 1470.0
    assert found["scheduler_iteration", 510].more == pytest.approx(1470 / 966 - 1)
    # Sampling every 120 s: the cycle at T0+1120 reads the sample at +960.
    assert found["$max_check_poll", 120].recorded == 960.0
    # From 10 s by 12 s (10, 32, 66, ..., 770, 912, 1066): the sample at +912 is the last
    # the cycle at T0+1120 reads; the one at +1066 is taken after it.
    assert found["$min_check_poll", 10].recorded == 912.0
    assert found["scheduler_iteration", 2040].recorded == 0.0  # no cycle during either job


def test_only_a_pbs_cluster_has_recorded_usage(run: Run) -> None:
    Cluster.objects.create(name="s", scheduler="slurm")
    ran = run("usage_loss", "--cluster", "s")
    assert (ran.status, ran.err) == (1, "cluster s is a Slurm cluster, not PBS\n")
