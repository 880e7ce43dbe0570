"""What-ifs on stored jobs (accounting.services.whatif): the cluster's policy as stored, its jobs
over a window, the variant, and scenarios run as a worker runs them. The site is
tests/accounting/services/test_cycles.py's: chem (60 shares) with ann, phys (40) with bob."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from accounting.models import Job, Scenario, ScenarioState
from accounting.services.whatif import (
    WhatIfError,
    WhatIfParameters,
    scenario_create,
    scenario_run,
    whatif_run,
)
from tests.accounting.services.test_cycles import T0, at, job, site
from tests.accounting.services.test_cycles_slurm import slurm_job, slurm_site
from trees.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy() -> Cluster:
    """Two cores. ann's 2-core job runs T0 to T0+100; at T0+10 bob, at T0+20 ann, queue a
    2-core job each (stored with the starts they really had: bob's at T0+100)."""
    cluster = site()
    cluster.cores = 2
    cluster.scheduler_iteration = timedelta(seconds=10)
    cluster.save()
    job(cluster, "1", "ann", T0, T0 + 100, 2, ctime=at(T0))
    job(cluster, "2", "bob", T0 + 100, T0 + 150, 2, ctime=at(T0 + 10))
    job(cluster, "3", "ann", T0 + 150, T0 + 200, 2, ctime=at(T0 + 20))
    return cluster


def starts(document: dict[str, Any], side: str) -> dict[str, str]:
    jobs = document[side]["jobs"]
    return {row["job_id"]: row["start"] for row in jobs}


def test_the_stored_jobs_replay_under_the_policy_and_the_variant(busy: Cluster) -> None:
    parameters = WhatIfParameters(settings=("shares:phys=0",))
    outcome = whatif_run(cluster=busy, parameters=parameters, with_jobs=True)
    document = outcome.document
    iso = {n: at(T0 + n).strftime("%Y-%m-%dT%H:%M:%SZ") for n in (0, 100, 150)}
    # the baseline is what really happened: bob's phys had no usage
    assert starts(document, "baseline") == {"1": iso[0], "2": iso[100], "3": iso[150]}
    assert starts(document, "variant") == {"1": iso[0], "3": iso[100], "2": iso[150]}
    assert document["calibration"]["within_1h"] == 1.0
    assert document["calibration"]["mape"] == 0.0
    assert outcome.sentence.startswith("Against what really happened, the baseline's")
    # projects are the tree's, though the jobs name none
    projects = {row["project"]: row for row in document["projects"]}
    assert projects["phys"]["baseline"]["median_wait"] == 90.0
    assert projects["phys"]["variant"]["median_wait"] == 140.0
    assert projects["phys"]["variant_target_share"] == 0.0
    assert document["trace"]["cores"] == 2


def test_the_window_takes_the_jobs_by_their_submit(busy: Cluster) -> None:
    parameters = WhatIfParameters(since=at(T0 + 5), until=at(T0 + 15), cores=4)
    document = whatif_run(cluster=busy, parameters=parameters, with_jobs=True).document
    assert list(starts(document, "baseline")) == ["2"]
    assert document["trace"]["from"] == "2026-03-01T08:00:05Z"
    assert document["trace"]["cores"] == 4
    assert document["variant"] is None


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (WhatIfParameters(settings=("shares:nobody=1",)),
         "shares:nobody=1: resource_group has no entity 'nobody'"),
        (WhatIfParameters(since=at(T0 + 1000)),
         "cluster site has no ended job run submitted from 2026-03-01T08:16:40+00:00 to the end"
         " (3 stored in all)"),
        (WhatIfParameters(cores=0), "cores 0: a pool needs at least 1 core"),
    ],
)  # fmt: skip
def test_what_cannot_run_says_why(
    busy: Cluster, parameters: WhatIfParameters, message: str
) -> None:
    with pytest.raises(WhatIfError) as refused:
        whatif_run(cluster=busy, parameters=parameters)
    assert str(refused.value) == message


def test_without_cores_the_cluster_s_setting_is_asked_for(busy: Cluster) -> None:
    busy.cores = None
    busy.save()
    with pytest.raises(WhatIfError) as refused:
        whatif_run(cluster=busy, parameters=WhatIfParameters())
    assert str(refused.value) == (
        "how many cores the jobs ran on is not known: give --cores N or set cluster site's cores"
    )


def test_a_broken_job_sort_formula_is_said_not_raised(busy: Cluster) -> None:
    Cluster.objects.filter(pk=busy.pk).update(job_sort_formula="ncpus +")
    with pytest.raises(WhatIfError, match="the cluster's job_sort_formula cannot be read"):
        whatif_run(cluster=Cluster.objects.get(pk=busy.pk), parameters=WhatIfParameters())


def test_a_scenario_runs_to_its_result(busy: Cluster) -> None:
    parameters = WhatIfParameters(backfill="easy", settings=("fair_share=false",))
    scenario = scenario_create(cluster=busy, parameters=parameters, title="no fair share")
    assert scenario.state == ScenarioState.QUEUED
    assert scenario.parameters == {
        "order": None, "backfill": "easy", "from": None, "until": None, "cores": None,
        "gpus": None, "nodes": None, "settings": ["fair_share=false"],
    }  # fmt: skip
    done = scenario_run(scenario_id=scenario.pk)
    assert (done.state, done.progress, done.message) == (ScenarioState.DONE, 1.0, "")
    assert done.result is not None
    assert done.result["variant"]["settings"] == ["fair_share=false"]
    assert done.result["baseline"]["backfill"] == "easy"
    assert done.result["calibration"]["sentence"].startswith("Against what really happened")
    assert done.started_at is not None
    assert done.finished_at is not None
    # a second delivery of the task leaves it as it is
    assert scenario_run(scenario_id=scenario.pk).finished_at == done.finished_at


def test_parameters_survive_their_json(busy: Cluster) -> None:
    parameters = WhatIfParameters(
        order="fifo", backfill=3, since=at(T0), until=at(T0 + 60), cores=8,
        settings=("shares:ann=2",),
    )  # fmt: skip
    assert WhatIfParameters.of_document(parameters.document()) == parameters


def test_a_scenario_that_cannot_run_fails_with_the_reason(busy: Cluster) -> None:
    scenario = scenario_create(
        cluster=busy, parameters=WhatIfParameters(since=at(T0 + 5000), until=at(T0 + 6000))
    )
    failed = scenario_run(scenario_id=scenario.pk)
    assert failed.state == ScenarioState.FAILED
    assert failed.message.startswith("cluster site has no ended job run submitted from")
    assert failed.result is None


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (WhatIfParameters(settings=("fair_share=perhaps",)),
         "fair_share=perhaps: 'perhaps' is neither true nor false"),
        (WhatIfParameters(since=at(T0 + 10), until=at(T0)),
         "the window's start must be before its end"),
    ],
)  # fmt: skip
def test_a_scenario_is_checked_before_it_is_saved(
    busy: Cluster, parameters: WhatIfParameters, message: str
) -> None:
    with pytest.raises(WhatIfError, match=message):
        scenario_create(cluster=busy, parameters=parameters)
    assert not Scenario.objects.exists()


def test_a_slurm_cluster_replays_its_associations_by_user_and_account() -> None:
    # Two cores. chem:ann's 2-core job runs T0 to T0+600; chem:cat, then phys:bob, queue a
    # 2-core job at T0+10 and T0+20. Without weights Slurm goes in submit order (cat first);
    # with a FairShare weight, Fair Tree puts phys (no usage) ahead of chem.
    cluster = slurm_site(cores=2)
    slurm_job(cluster, "1", "chem:ann", T0, T0 + 600, 2)
    slurm_job(cluster, "2", "chem:cat", T0 + 600, T0 + 700, 2)
    slurm_job(cluster, "3", "phys:bob", T0 + 700, T0 + 800, 2)
    for job_id, submit in (("2", T0 + 10), ("3", T0 + 20)):
        Job.objects.filter(cluster=cluster, job_id=job_id).update(ctime=at(submit))
    parameters = WhatIfParameters(settings=("PriorityWeightFairShare=1000",))
    document = whatif_run(cluster=cluster, parameters=parameters, with_jobs=True).document
    order = {side: list(starts(document, side)) for side in ("baseline", "variant")}  # start order
    assert order == {"baseline": ["1", "2", "3"], "variant": ["1", "3", "2"]}
    assert [row["entity"] for row in document["entities"]] == ["ann", "bob", "cat"]
    assert [row["project"] for row in document["projects"]] == ["chem", "phys"]
    targets = {row["entity"]: row["target_share"] for row in document["entities"]}
    assert targets == pytest.approx({"ann": 1 / 3, "cat": 1 / 3, "bob": 1 / 3})


def test_gpus_are_a_pool_where_the_cluster_counts_them(busy: Cluster) -> None:
    # Four cores and one GPU: bob's and ann's second jobs take 1 core each but ann's first
    # holds the GPU until T0+100, and bob's needs it too; ann's second, CPU only, starts at
    # once beside them.
    Cluster.objects.filter(pk=busy.pk).update(cores=4, gpus=1)
    Job.objects.filter(cluster=busy, job_id__in=["1", "2"]).update(ngpus=1)
    Job.objects.filter(cluster=busy, job_id__in=["2", "3"]).update(ncpus=1)
    cluster = Cluster.objects.get(pk=busy.pk)
    document = whatif_run(cluster=cluster, parameters=WhatIfParameters(), with_jobs=True).document
    waits = {row["job_id"]: row["wait"] for row in document["baseline"]["jobs"]}
    assert waits == {"1": 0, "3": 0, "2": 90}
    assert (document["trace"]["cores"], document["trace"]["gpus"]) == (4, 1)
    assert document["trace"]["nodes"] is None
    # without the GPU pool counted, bob's job starts at once too
    Cluster.objects.filter(pk=busy.pk).update(gpus=None)
    free = whatif_run(
        cluster=Cluster.objects.get(pk=busy.pk), parameters=WhatIfParameters(), with_jobs=True
    ).document
    assert {row["job_id"]: row["wait"] for row in free["baseline"]["jobs"]} == {
        "1": 0, "2": 0, "3": 0,
    }  # fmt: skip
