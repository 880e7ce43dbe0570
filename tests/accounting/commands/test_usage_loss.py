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
    """$min_check_poll 120, $max_check_poll 240, a 20-minute scheduler_iteration: ann's job
    uses one CPU for 30 minutes from 100 s after a cycle; bob's runs 5 minutes between two
    cycles."""
    cluster = site()
    Cluster.objects.filter(pk=cluster.pk).update(
        mom_min_check_poll=120, mom_max_check_poll=240, scheduler_iteration=timedelta(minutes=20)
    )
    job(cluster, "1", "ann", T0 + 100, T0 + 1900, 1)
    job(cluster, "2", "bob", T0 + 2500, T0 + 2800, 2)
    return Cluster.objects.get(pk=cluster.pk)


def test_figure_2_s_job_loses_about_13_minutes(figure_2: Cluster, run: Run) -> None:
    # ann's polls: +0, 120, 246, 378, 516, 660, 810, 966, 1128 (increment 6); the cycle at
    # T0+1200 reads the one at T0+1066 (966 s used); the cycle at its end finds it over.
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
        "unseen": False, "last_cycle": at(T0 + 1200).isoformat(),
        "last_poll": at(T0 + 1066).isoformat(),
    }  # fmt: skip
    assert (jobs[1]["job_id"], jobs[1]["unseen"], jobs[1]["last_cycle"]) == ("2", True, None)


def test_the_text_says_the_settings_and_the_totals(figure_2: Cluster, run: Run) -> None:
    lines = run("usage_loss", "--cluster", "site").out.splitlines()
    assert lines[0] == (
        "cluster site: 2 jobs ended; $min_check_poll 120 s, $max_check_poll 240 s,"
        " scheduler_iteration 1200 s; used 2400, recorded 966, lost 1434 (59.8 %); 1 jobs unseen"
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
    # A 10-minute iteration: the cycle at T0+1800 reads ann's poll at T0+1750 (1650 s used),
    # and bob's at T0+2400... bob starts at T0+2500 and ends before T0+3000: still unseen.
    assert found["scheduler_iteration", 600].recorded == 1650.0
    assert found["scheduler_iteration", 600].more == pytest.approx(1650 / 966 - 1)
    # Polling every 120 s: the cycle at T0+1200 reads the poll at T0+1180 (1080 s).
    assert found["$max_check_poll", 120].recorded == 1080.0
    assert found["$min_check_poll", 10].recorded > 966.0
    assert found["scheduler_iteration", 2400].recorded == 0.0  # no cycle during either job


def test_only_a_pbs_cluster_has_recorded_usage(run: Run) -> None:
    Cluster.objects.create(name="s", scheduler="slurm")
    ran = run("usage_loss", "--cluster", "s")
    assert (ran.status, ran.err) == (1, "cluster s is a Slurm cluster, not PBS\n")
