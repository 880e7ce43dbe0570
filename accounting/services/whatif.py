"""Policy what-ifs (issue 26): a cluster's workload, or a trace, replayed under the cluster's
policy and a variant of it; scenarios saved with their parameters and run by a worker."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from accounting.models import Job, Scenario, ScenarioState
from accounting.selectors import whatif_runs_get
from accounting.services.heartbeats import heartbeat
from accounting.whatif import TraceJobs, stored_sim_job
from trees.engine.formula import FormulaError
from trees.engine.pbs import ROOT_ALIAS, TREEROOT
from trees.engine.schedule_metrics import calibration_sentence
from trees.engine.simulate import Backfill, SimJob
from trees.engine.times import epoch_seconds
from trees.engine.whatif import (
    ORDERS,
    Order,
    PbsPolicy,
    Policy,
    SlurmPolicy,
    WhatIf,
    run_whatif,
)
from trees.formats.whatif import SettingError, apply_settings, parse_backfill, whatif_document
from trees.models import Cluster, Scheduler
from trees.selectors.whatif import whatif_policy_get

# A worker writes a scenario's progress at most this often (seconds).
PROGRESS_EVERY = 1.0


class WhatIfError(ValueError):
    """A what-if that cannot run; the message says what is wrong and what to give instead."""


@dataclass(frozen=True)
class WhatIfParameters:
    """What a what-if replays: the window of submits, the pool, the order, the discipline (None:
    the cluster's own) and the variant's settings (none: no variant)."""

    order: Order | None = None  # None: the policy's with a cluster, submit order without
    backfill: Backfill | None = None
    since: datetime | None = None
    until: datetime | None = None
    cores: int | None = None
    settings: tuple[str, ...] = ()
    gpus: int | None = None  # None: the cluster's, if it counts them
    nodes: int | None = None

    def document(self) -> dict[str, Any]:
        """As Scenario.parameters keeps them (JSON)."""
        return {
            "order": self.order,
            "backfill": self.backfill,
            "from": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
            "cores": self.cores,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "settings": list(self.settings),
        }

    @classmethod
    def of_document(cls, document: Mapping[str, Any]) -> WhatIfParameters:
        order = document.get("order")
        backfill = document.get("backfill")
        since, until = document.get("from"), document.get("until")
        return cls(
            order=order if order in ORDERS else None,
            backfill=None if backfill is None else parse_backfill(str(backfill)),
            since=None if since is None else datetime.fromisoformat(since),
            until=None if until is None else datetime.fromisoformat(until),
            cores=document.get("cores"),
            settings=tuple(document.get("settings", ())),
            gpus=document.get("gpus"),
            nodes=document.get("nodes"),
        )


@dataclass(frozen=True)
class WhatIfOutcome:
    whatif: WhatIf
    document: dict[str, Any]
    sentence: str  # the calibration, for the pages
    rejected: list[str] = field(default_factory=list)


def whatif_run(
    *,
    cluster: Cluster | None,
    parameters: WhatIfParameters,
    trace: TraceJobs | None = None,
    with_jobs: bool = False,
    progress: Callable[[float], None] | None = None,
) -> WhatIfOutcome:
    """Replay the cluster's stored jobs (or `trace`'s) under its policy and, when settings are
    given, under the variant they make. Reads only: nothing is stored."""
    policy = whatif_policy_get(cluster=cluster) if cluster is not None else None
    order = parameters.order or ("policy" if policy is not None else "fifo")
    if order == "policy" and policy is None:
        raise WhatIfError("--order policy needs --cluster: a trace alone has no policy")
    capacity = _capacity(cluster, parameters, trace)
    if isinstance(policy, SlurmPolicy) and not policy.cluster_cpus:
        policy = replace(policy, cluster_cpus=capacity)  # the job size factor's whole
    try:
        variant = apply_settings(policy, parameters.settings)
    except SettingError as error:
        raise WhatIfError(str(error)) from None
    jobs = _jobs(cluster, parameters, trace)
    if isinstance(policy, PbsPolicy):
        jobs = _in_tree_projects(jobs, policy)
    if not jobs:
        raise WhatIfError(_no_jobs(cluster, parameters, trace))
    try:
        whatif = run_whatif(
            jobs, capacity=capacity, gpus=_pool(cluster, parameters, "gpus"),
            nodes=_pool(cluster, parameters, "nodes"), policy=policy, order=order,
            backfill=parameters.backfill,
            variant=variant.policy, variant_backfill=variant.backfill,
            has_variant=bool(parameters.settings), progress=progress,
        )  # fmt: skip
    except FormulaError as error:
        raise WhatIfError(f"the cluster's job_sort_formula cannot be read: {error}") from None
    document = whatif_document(
        whatif,
        since=None if parameters.since is None else epoch_seconds(parameters.since),
        until=None if parameters.until is None else epoch_seconds(parameters.until),
        settings=parameters.settings,
        with_jobs=with_jobs,
    )
    sentence = calibration_sentence(whatif.calibration)
    document["calibration"]["sentence"] = sentence
    return WhatIfOutcome(whatif, document, sentence)


def _jobs(
    cluster: Cluster | None, parameters: WhatIfParameters, trace: TraceJobs | None
) -> list[SimJob]:
    since = None if parameters.since is None else epoch_seconds(parameters.since)
    until = None if parameters.until is None else epoch_seconds(parameters.until)
    if trace is not None:
        return [
            job
            for job in trace.jobs
            if (since is None or job.submit >= since) and (until is None or job.submit < until)
        ]
    assert cluster is not None  # a what-if has a cluster or a trace
    runs = whatif_runs_get(cluster=cluster, since=parameters.since, until=parameters.until)
    pbs = cluster.scheduler == Scheduler.PBS
    return [stored_sim_job(run, pbs=pbs) for run in runs]


def _in_tree_projects(jobs: list[SimJob], policy: PbsPolicy) -> list[SimJob]:
    """PBS jobs' projects as the tree has them: an entity's parent group, where the
    resource_group defines it (the job's own project otherwise)."""
    parent = {group.name: group.parent for group in policy.groups}
    top = (ROOT_ALIAS, TREEROOT)
    moved = []
    for job in jobs:
        above = parent.get(job.entity)
        if above is not None and above not in top and above != job.group:
            job = replace(job, group=above)
        moved.append(job)
    return moved


def _capacity(
    cluster: Cluster | None, parameters: WhatIfParameters, trace: TraceJobs | None
) -> int:
    for cores in (
        parameters.cores,
        None if cluster is None else cluster.cores,
        None if trace is None else trace.max_procs,
    ):
        if cores is not None:
            if cores < 1:
                raise WhatIfError(f"cores {cores}: a pool needs at least 1 core")
            return cores
    where = "" if cluster is None else f" or set cluster {cluster.name}'s cores"
    raise WhatIfError(
        f"how many cores the jobs ran on is not known: give --cores N{where}"
        + (", or a trace whose header gives MaxProcs" if trace is not None else "")
    )


def _pool(cluster: Cluster | None, parameters: WhatIfParameters, pool: str) -> int | None:
    """The GPUs or nodes given, else the cluster's (`gpus`, `compute_nodes`); None: not
    counted (a trace has neither)."""
    given: int | None = getattr(parameters, pool)
    if given is None and cluster is not None:
        given = cluster.gpus if pool == "gpus" else cluster.compute_nodes
    if given is not None and given < 1:
        raise WhatIfError(f"{pool} {given}: a pool needs at least 1")
    return given


def _no_jobs(cluster: Cluster | None, parameters: WhatIfParameters, trace: TraceJobs | None) -> str:
    window = ""
    if parameters.since is not None or parameters.until is not None:
        since = "the start" if parameters.since is None else parameters.since.isoformat()
        until = "the end" if parameters.until is None else parameters.until.isoformat()
        window = f" submitted from {since} to {until}"
    if trace is not None:
        return f"the trace holds no job{window}"
    assert cluster is not None
    stored = Job.objects.filter(cluster=cluster, start__isnull=False, end__isnull=False)
    return f"cluster {cluster.name} has no ended job run{window} ({stored.count()} stored in all)"


def scenario_create(
    *,
    cluster: Cluster,
    parameters: WhatIfParameters,
    user: User | None = None,
    title: str = "",
) -> Scenario:
    """A scenario to run, its parameters checked first (the settings against the cluster's
    policy, the window, the cores); a worker runs it (scenario_run)."""
    if parameters.since and parameters.until and parameters.since >= parameters.until:
        raise WhatIfError("the window's start must be before its end")
    policy: Policy = whatif_policy_get(cluster=cluster)
    try:
        apply_settings(policy, parameters.settings)
    except SettingError as error:
        raise WhatIfError(str(error)) from None
    _capacity(cluster, parameters, None)
    scenario = Scenario.objects.create(
        cluster=cluster,
        title=title,
        created_by=user if user is not None and user.is_authenticated else None,
        parameters=parameters.document(),
        heartbeat_at=timezone.now(),  # queued: the sweep's clock for a message lost
    )
    return scenario


def scenario_run(*, scenario_id: int) -> Scenario:
    """Run a saved scenario, its progress and heartbeat written as it goes; its result or why
    it failed. Only a queued one is taken: one another worker runs, done or failed is left as
    it is (a message delivered twice, or sent again by the stalled-work sweep, runs once)."""
    now = timezone.now()
    mine = Scenario.objects.filter(pk=scenario_id, state=ScenarioState.RUNNING)
    claimed = Scenario.objects.filter(pk=scenario_id, state=ScenarioState.QUEUED).update(
        state=ScenarioState.RUNNING, progress=0.0, started_at=now, heartbeat_at=now, message=""
    )
    scenario = Scenario.objects.select_related("cluster").get(pk=scenario_id)
    if not claimed:
        return scenario
    last = [time.monotonic()]

    def heard(fraction: float) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            mine.update(progress=min(fraction, 1.0), heartbeat_at=timezone.now())

    try:
        with heartbeat(mine):
            outcome = whatif_run(
                cluster=scenario.cluster,
                parameters=WhatIfParameters.of_document(scenario.parameters),
                progress=heard,
            )
    except WhatIfError as error:
        return _scenario_end(scenario, state=ScenarioState.FAILED, message=str(error))
    except (OperationalError, InterfaceError):
        # The task's retry takes it again; with the database away, the sweep does.
        with suppress(DatabaseError):
            mine.update(state=ScenarioState.QUEUED)
        raise
    except Exception as error:
        # Said on the page rather than left running for ever; the worker's log has the rest.
        _scenario_end(
            scenario,
            state=ScenarioState.FAILED,
            message=f"the replay stopped on an internal error ({type(error).__name__})",
        )
        raise
    return _scenario_end(scenario, state=ScenarioState.DONE, result=outcome.document)


@transaction.atomic
def _scenario_end(
    scenario: Scenario,
    *,
    state: ScenarioState,
    message: str = "",
    result: dict[str, Any] | None = None,
) -> Scenario:
    scenario.refresh_from_db(fields=["started_at"])
    scenario.state = state
    scenario.message = message
    scenario.result = result
    scenario.progress = 1.0 if state == ScenarioState.DONE else scenario.progress
    scenario.finished_at = timezone.now()
    scenario.save(update_fields=["state", "message", "result", "progress", "finished_at"])
    return scenario
