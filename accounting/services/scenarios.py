"""A what-if started from its page or the API: saved with its parameters, then run by a worker
of the cluster's queue once the saving transaction has committed."""

from __future__ import annotations

import logging

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from accounting.models import Scenario, ScenarioState
from accounting.services.whatif import WhatIfParameters, scenario_create
from fairshare_site.celery import app
from trees.models import Cluster
from trees.selectors.clusters import cluster_queue_get

logger = logging.getLogger(__name__)

# What a what-if takes from a page or a program.
MAX_SETTINGS = 200  # settings
MAX_SETTING = 2000  # characters of one
MAX_CORES = 2**31 - 1  # as the cluster's cores field holds them


def scenario_start(
    *, cluster: Cluster, parameters: WhatIfParameters, user: User | None, title: str = ""
) -> Scenario:
    """Save the scenario (its parameters checked: WhatIfError says what is wrong) and queue
    its run to the cluster's queue, as the cycles go. Read it again for its state once the
    caller's transaction has committed: a broker that refused the task has failed it."""
    with transaction.atomic():
        scenario = scenario_create(cluster=cluster, parameters=parameters, user=user, title=title)
        scenario_id, queue = scenario.pk, cluster_queue_get(cluster=cluster)
        # A worker must find the row: the task is sent once it is committed.
        transaction.on_commit(lambda: scenario_queue(scenario_id=scenario_id, queue=queue))
    return scenario


def scenario_queue(*, scenario_id: int, queue: str | None) -> None:
    """Send the scenario's run to a worker of `queue`; fail it, saying so, when the broker
    does not take it."""
    # By name: accounting.tasks calls the sweep, which calls this.
    run_scenario = app.tasks["accounting.tasks.run_scenario"]
    try:
        run_scenario.apply_async(args=[scenario_id], queue=queue)
    except Exception as exc:  # the broker refused: said on the scenario's page
        logger.exception("what-if scenario %s could not be queued", scenario_id)
        Scenario.objects.filter(pk=scenario_id, state=ScenarioState.QUEUED).update(
            state=ScenarioState.FAILED,
            message=f"the what-if could not be queued ({type(exc).__name__}): start it again",
            finished_at=timezone.now(),
        )
