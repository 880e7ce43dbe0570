"""Scheduling cycles: job usage accrued, the decays due applied, every metric stored, as
the scheduler's own cycle does it (PBS) or slurmctld's pass (Slurm).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounting.models import (
    Cycle,
    Job,
)
from accounting.parsers.records import USAGE_RESOURCES, JobState
from accounting.selectors import last_cycle_at
from accounting.services.accelerator import accelerator_fields_store
from accounting.services.history import history_partitions_make, history_write
from accounting.services.pricing import RESOURCE_FIELDS, job_resources
from accounting.services.priorities import priority_history_write
from accounting.usage_loss import pbs_recording_get
from trees.bulk import collector_paused, rows_update
from trees.engine.cycle import Accrual, Run, cycle_usage
from trees.engine.formula import parse_formula
from trees.engine.pbs import UsageRecord
from trees.engine.recording import PbsRecording
from trees.engine.slurm import (
    ROOT_ACCOUNT,
    SlurmTree,
    UsageResetPeriod,
    next_usage_reset,
)
from trees.engine.slurm import decay_factor as slurm_decay_factor
from trees.engine.slurm_pass import SlurmPass, billable_tres, slurm_pass
from trees.engine.times import epoch_seconds, epoch_time
from trees.formats.pbsfs import UsageDatabase
from trees.models import Cluster, Node, NodeOrigin, Scheduler, UsageRecording
from trees.services.pbs_store import pbs_tree_held
from trees.services.slurm import slurm_tree_held


class CycleRefused(ValueError):
    """A cycle that cannot run as asked (the message says why and what to do)."""


# Paused around the call, so that what the cycle made is freed before the collector restarts.
@collector_paused()
def cycle_run(*, cluster: Cluster, now: datetime) -> Cycle | None:
    """One scheduling cycle up to `now`: accrue job usage, apply the decays due, store metrics;
    None when the cycle at `now` was done before.

    One transaction holding the cluster's row: two workers on the same cluster run one after
    the other, and the second, finding `now` done, does nothing; a cycle that dies leaves
    nothing and the next one catches up.
    """
    started, clock = timezone.now(), time.perf_counter()
    # Before the cycle's transaction, so that no lock is held meanwhile (once a month at most).
    history_partitions_make(first=now, last=now)
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        last_at = last_cycle_at(cluster)
        if last_at is not None and now <= last_at:
            if now == last_at:
                return None
            raise CycleRefused(
                f"cluster {cluster.name}: {now.isoformat()} is before its last cycle at"
                f" {last_at.isoformat()}; a cycle cannot go back in time"
            )
        cycle_policy_check(cluster)
        if cluster.scheduler == Scheduler.SLURM:
            cycle, changed = _slurm_cycle(cluster, now, last_at)
        elif cluster.scheduler == Scheduler.ACCELERATOR:
            # Accelerator keeps no usage: its fields come from the jobs at each cycle.
            accelerator_fields_store(cluster=cluster, now=now, reason="cycle")
            cycle, changed = Cycle(), ()
        else:
            cycle, changed = _pbs_cycle(cluster, now)
        _accruals_save(changed)
        history_write(cluster, now)
        priority_history_write(cluster, now)
        cycle.cluster, cycle.at, cycle.started_at = cluster, now, started
        cycle.duration = time.perf_counter() - clock
        cycle.save(force_insert=True)
        return cycle


def _pbs_cycle(cluster: Cluster, now: datetime) -> tuple[Cycle, Iterable[Run]]:
    """The PBS scheduler's cycle at `now` on the stored usage database, stored with its
    metrics: its ledger row (unsaved) and the runs whose accrual moved."""
    runs = _accruing(cluster, now)
    formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
    accrual = Accrual(formula, _recording(cluster, runs, now))
    with pbs_tree_held(cluster) as held:
        state = held.state
        records, last_decay, decays = cycle_usage(
            accrual,
            runs,
            {record.name: record.usage for record in state.database.records},
            now=epoch_seconds(now),
            last_decay=state.database.last_decay,
            groups=state.groups,
            **decay_policy(cluster),
        )
        usage = tuple(UsageRecord(name, usage) for name, usage in records.items())
        held.store(
            database=UsageDatabase(exists=True, last_decay=last_decay, records=usage),
            reason="cycle",
        )
    return pbs_ledger(accrual, decays), accrual.changed.values()


def _recording(cluster: Cluster, runs: Sequence[Run], now: datetime) -> PbsRecording | None:
    """With usage_recording `pbs`, how PBS would have recorded these runs by `now`, from the
    earliest moment a run is accrued to (an ended run's end, else now)."""
    if cluster.usage_recording != UsageRecording.PBS or not runs:
        return None
    at = epoch_seconds(now)
    earliest = min(run.start for run in runs)
    return pbs_recording_get(cluster=cluster, first=earliest, last=at)


def pbs_ledger(accrual: Accrual, decays: Sequence[int]) -> Cycle:
    """The ledger row of a PBS cycle (live or replayed), without its cluster and times."""
    return Cycle(
        jobs_accrued=len(accrual.changed),
        usage_added=accrual.added,
        decays_applied=len(decays),
        decay_times=[epoch_time(instant).isoformat() for instant in decays],
    )


def decay_policy(cluster: Cluster) -> dict[str, Any]:
    """cycle_usage's arguments of the cluster's decay policy."""
    return {
        "decay_interval": int(cluster.decay_interval.total_seconds()),
        "decay_factor": cluster.decay_factor,
        "unknown_shares": cluster.unknown_shares,
    }


def cycle_policy_check(cluster: Cluster) -> None:
    if cluster.scheduler == Scheduler.ACCELERATOR:
        if not Node.objects.filter(cluster=cluster).exists():
            raise CycleRefused(
                f"cluster {cluster.name} has no FairShare groups: import its configuration"
                " (manage.py import_fsgroups FILE --cluster NAME) or its jobs"
                " (manage.py import_accelerator_jobs FILE --cluster NAME) first"
            )
        return
    slurm = cluster.scheduler == Scheduler.SLURM
    if not slurm and cluster.decay_interval.total_seconds() < 1:
        raise CycleRefused(f"cluster {cluster.name}: decay_interval must be at least 1 s")
    if not Node.objects.filter(cluster=cluster, origin=NodeOrigin.DEFINED).exists():
        how = (
            "its associations first (manage.py import_sshare FILE --cluster NAME)"
            if slurm
            else "its resource_group first (manage.py import_resource_group FILE --cluster NAME)"
        )
        raise CycleRefused(f"cluster {cluster.name} has no tree: import {how}")


RUNS_READ = 5000  # jobs read, and their accruals written, at a time

# A stored run as stored_run reads it: rows, not model instances (a cycle reads every running job).
RUN_FIELDS = (
    "pk", "state", "entity", "start", "end", "usage", "accrued", "accrual_closed", "mom",
    *RESOURCE_FIELDS,
)  # fmt: skip


def _accruing(cluster: Cluster, now: datetime) -> list[Run]:
    """The runs started before `now` that the cycles have not fully accrued, in start order."""
    jobs = (
        Job.objects.filter(cluster=cluster, start__lt=now)
        .filter(Q(state=JobState.RUNNING) | (~Q(accrued=F("usage")) & Q(accrual_closed=False)))
        .order_by("start", "pk")
    )
    # Read a chunk at a time, without the queryset's cache: after a push of 1.5 million ended
    # jobs the cached rows (a dict each) beside the runs made a cycle peak at 2.5 GB.
    return [stored_run(job) for job in jobs.values(*RUN_FIELDS).iterator(chunk_size=RUNS_READ)]


def stored_run(job: Mapping[str, Any]) -> Run:
    running = job["state"] == JobState.RUNNING
    start = epoch_seconds(job["start"])
    end = job["end"]
    return Run(
        key=job["pk"],
        entity=job["entity"],
        start=start,
        end=None if running else (epoch_seconds(end) if end is not None else start),
        usage=job["usage"],
        accrued=job["accrued"],
        ncpus=job["ncpus"],
        resources=job_resources(job) if running else None,
        billable=billable_tres(job["billing"], job["ncpus"]),
        closed=job["accrual_closed"],
        walltime=None if running else job["walltime"],
        mom=job["mom"],
    )


def _accruals_save(runs: Iterable[Run]) -> None:
    changed = list(runs)
    for start in range(0, len(changed), RUNS_READ):
        rows = [(run.key, run.accrued, run.closed) for run in changed[start : start + RUNS_READ]]
        rows_update(Job, ["accrued", "accrual_closed"], rows)


def _slurm_cycle(
    cluster: Cluster, now: datetime, last_at: datetime | None
) -> tuple[Cycle, Iterable[Run]]:
    """slurmctld's pass at `now` on the stored associations, stored with its metrics: its
    ledger row (unsaved) and the runs whose ledger moved."""
    with slurm_tree_held(cluster) as held:
        tree = held.state.tree
        done = slurm_pass(
            tree,
            _accruing(cluster, now),
            now=epoch_seconds(now),
            last_ran=None if last_at is None else epoch_seconds(last_at),
            association=association_finder(tree),
            **slurm_policy(cluster, now, last_at),
        )
        held.store(reason="cycle")  # the raw usage the pass left in the tree
    return slurm_ledger(done), done.changed.values()


def slurm_ledger(done: SlurmPass) -> Cycle:
    """The ledger row of a Slurm pass (live or replayed), without its cluster and times."""
    return Cycle(
        jobs_accrued=len(done.changed),
        usage_added=done.added,
        decays_applied=int(done.decayed),
        usage_reset=done.reset,
    )


def slurm_policy(cluster: Cluster, now: datetime, last_at: datetime | None) -> dict[str, Any]:
    """slurm_pass's arguments of the cluster's usage policy for the pass at `now`."""
    period = UsageResetPeriod(cluster.priority_usage_reset_period)
    reset_at = None if last_at is None else next_usage_reset(timezone.localtime(last_at), period)
    return {
        "factor": slurm_decay_factor(cluster.priority_decay_half_life),
        "reset": reset_at is not None and reset_at <= now,
        "charge_job_end": cluster.charge_job_end,
    }


def association_finder(tree: SlurmTree) -> Callable[[str], int | None]:
    """The association a run's `account:user` entity is charged to, None if there is none."""

    def association(entity: str) -> int | None:
        account, _, user = entity.partition(":")
        return tree.find(account or ROOT_ACCOUNT, user)

    return association
