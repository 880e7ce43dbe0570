"""What a job run costs in usage: the cluster's usage formula over its resources; a new
formula (a sched_config's fairshare_usage_res) reprices every stored run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from accounting.models import (
    Job,
)
from accounting.parsers.records import USAGE_RESOURCES, JobRecord, JobState
from trees.bulk import rows_update
from trees.engine.formula import FormulaValueError, parse_formula
from trees.engine.slurm_pass import run_usage
from trees.formats.sched_config import MAX_DECAY_TIME, FairshareConfig
from trees.models import Cluster, Scheduler
from trees.services.clusters import cluster_get_or_create
from trees.services.pbs_store import StoreSummary, pbs_tree_held

# What a usage formula may price a stored run on (job_resources reads them).
RESOURCE_FIELDS = (
    "source_line", "job_id", "ncpus", "ngpus", "nodes", "memory", "walltime", "cput",
    "vmem", "mpiprocs", "cpupercent", "billing",
)  # fmt: skip


def jobs_usage_recompute(*, cluster: Cluster) -> int:
    """Price every stored run again with the cluster's current `fairshare_usage_res` (Slurm:
    billable TRES × elapsed, which does not change)."""
    formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
    slurm = cluster.scheduler == Scheduler.SLURM
    changed = []
    with transaction.atomic():
        # Running and queued jobs have used nothing yet that a record says.
        jobs = Job.objects.filter(cluster=cluster).exclude(
            state__in=[JobState.RUNNING, JobState.QUEUED]
        )
        for job in jobs.values("pk", "usage", *RESOURCE_FIELDS).iterator(chunk_size=5000):
            try:
                resources = job_resources(job)
                usage = run_usage(resources) if slurm else max(formula.evaluate(resources), 0.0)
            except FormulaValueError:
                usage = 0.0  # the line was taken under a formula that could price it
            if usage != job["usage"]:
                changed.append((job["pk"], usage))
        rows_update(Job, ["usage"], changed)
    return len(changed)


def job_resources(job: Mapping[str, Any]) -> dict[str, float]:
    """What the usage formula sees of a stored run (its RESOURCE_FIELDS), as it saw the
    record at ingestion."""
    extra = {
        name: float(value)
        for name in ("vmem", "mpiprocs", "cpupercent", "billing")
        if (value := job[name]) is not None
    }
    record = JobRecord(
        line=job["source_line"],
        job_id=job["job_id"],
        ncpus=job["ncpus"],
        ngpus=job["ngpus"],
        nodes=job["nodes"],
        memory=job["memory"],
        walltime=job["walltime"],
        cput=job["cput"],
        extra=extra,
    )
    return record.usage_resources()


def sched_config_import(*, cluster_name: str, config: FairshareConfig) -> StoreSummary:
    """Take the fairshare and job-order keys of a sched_config (PBS's defaults for keys it
    leaves unset); a new fairshare_usage_res reprices every stored job run."""
    if config.refused:
        raise ValidationError(config.refused)
    if not 0 < config.decay_time <= MAX_DECAY_TIME:  # timedelta overflows long before 1e24 s
        raise ValidationError(
            f"decay_time {config.decay_time} s is not within 1 s and {MAX_DECAY_TIME} s"
        )
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        formula_changed = cluster.fairshare_usage_res != config.fairshare_usage_res
        cluster.fairshare_usage_res = config.fairshare_usage_res
        cluster.fairshare_entity = config.fairshare_entity
        cluster.decay_interval = timedelta(seconds=config.decay_time)
        cluster.decay_factor = config.decay_factor
        cluster.unknown_shares = config.unknown_shares
        cluster.fair_share = config.fair_share
        cluster.by_queue = config.by_queue
        cluster.strict_ordering = config.strict_ordering
        cluster.backfill = config.backfill
        cluster.backfill_depth = config.backfill_depth
        cluster.preemptive_sched = config.preemptive_sched
        cluster.enforce_no_shares = config.fairshare_enforce_no_shares
        cluster.job_sort_key = [list(pair) for pair in config.job_sort_key]
        cluster.full_clean(exclude=["nodes"])
        cluster.save()
        with pbs_tree_held(cluster) as held:
            summary = held.store(reason="sched_config import")  # entity kinds, unknown's shares
        if formula_changed:
            jobs_usage_recompute(cluster=cluster)
    return replace(summary, cluster_created=created)
