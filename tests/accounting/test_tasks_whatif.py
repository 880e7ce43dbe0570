"""The what-if task, run eagerly on the demo's `hpc`: it replays a saved scenario once, and one
that cannot run is failed with why."""

import pytest
from django.utils import timezone

from accounting import tasks
from accounting.models import Job, Scenario, ScenarioState
from accounting.services.whatif import WhatIfParameters, scenario_create
from trees.models import Cluster

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def saved(*settings: str) -> Scenario:
    hpc = Cluster.objects.get(name="hpc")
    parameters = WhatIfParameters(cores=512, settings=settings)
    return scenario_create(cluster=hpc, parameters=parameters, title="physics up")


def test_it_replays_a_saved_scenario_and_keeps_its_result() -> None:
    scenario = saved("shares:physics=300")
    answer = tasks.run_scenario.delay(scenario.pk).get()
    assert answer == {"scenario": scenario.pk, "state": "done", "message": ""}
    scenario.refresh_from_db()
    assert (scenario.state, scenario.progress) == ("done", 1.0)
    result = scenario.result
    assert result is not None
    assert result["trace"]["cores"] == 512
    assert result["trace"]["jobs"] == result["baseline"]["summary"]["jobs"] > 1000
    assert result["variant"]["settings"] == ["shares:physics=300"]
    assert result["calibration"]["sentence"].startswith("Against what really happened")
    physics = next(row for row in result["projects"] if row["project"] == "physics")
    assert physics["target_share"] == pytest.approx(0.3)
    assert physics["variant_target_share"] == pytest.approx(300 / 370)


def test_a_scenario_delivered_twice_is_replayed_once() -> None:
    scenario = saved()
    tasks.run_scenario.delay(scenario.pk).get()
    finished = Scenario.objects.get(pk=scenario.pk).finished_at
    assert tasks.run_scenario.delay(scenario.pk).get()["state"] == "done"
    assert Scenario.objects.get(pk=scenario.pk).finished_at == finished


def test_a_scenario_that_cannot_run_is_failed_with_why() -> None:
    scenario = saved()
    Job.objects.filter(cluster__name="hpc").delete()
    answer = tasks.run_scenario.delay(scenario.pk).get()
    assert answer == {
        "scenario": scenario.pk,
        "state": "failed",
        "message": "cluster hpc has no ended job run (0 stored in all)",
    }
    assert Scenario.objects.get(pk=scenario.pk).result is None


def test_a_scenario_another_worker_has_taken_is_not_replayed_by_a_second_delivery() -> None:
    scenario = saved()
    taken = timezone.now()
    Scenario.objects.filter(pk=scenario.pk).update(
        state=ScenarioState.RUNNING, progress=0.3, heartbeat_at=taken
    )
    answer = tasks.run_scenario.delay(scenario.pk).get()
    assert answer == {"scenario": scenario.pk, "state": "running", "message": ""}
    scenario.refresh_from_db()
    assert (scenario.progress, scenario.heartbeat_at, scenario.result) == (0.3, taken, None)


def test_a_scenario_sent_again_is_replayed_and_beats_as_it_goes() -> None:
    scenario = saved()
    Scenario.objects.filter(pk=scenario.pk).update(retries=1)
    before = timezone.now()
    assert tasks.run_scenario.delay(scenario.pk).get()["state"] == "done"
    scenario.refresh_from_db()
    assert scenario.heartbeat_at is not None
    assert scenario.started_at is not None
    assert before <= scenario.started_at <= scenario.heartbeat_at
    assert scenario.retries == 1
