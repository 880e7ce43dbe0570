"""The what-if task, run eagerly on the demo's `hpc`: it replays a saved scenario once, and one
that cannot run is failed with why."""

import pytest

from accounting import tasks
from accounting.models import Job, Scenario
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
