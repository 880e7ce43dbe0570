"""The policy what-if (issue 26): a cluster's policy as plain data, the queue order and backfill
it gives a replay, and the baseline and variant replays of one trace set side by side.

A what-if is read as variant against baseline: both replay the same jobs on the same pool from
no usage, so what the model leaves out biases both alike. The baseline is also held against
what really happened (`calibrate`), to say how far the model can be trusted on this trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from trees.engine import pbs, slurm
from trees.engine.accelerator import ROOT as ACCELERATOR_ROOT
from trees.engine.accelerator import FsGroup
from trees.engine.formula import JOB_SORT_NAMES, USAGE_RESOURCES, parse_formula
from trees.engine.job_sort import SortPolicy
from trees.engine.multifactor import MultifactorConfig, Partition
from trees.engine.schedule_metrics import (
    Calibration,
    JobArrays,
    bounded_slowdown,
    calibrate,
    delivered_share,
    jain_index,
    job_arrays,
    share_attainment,
    utilization,
    wait_stats,
)
from trees.engine.simulate import (
    Backfill,
    FifoOrder,
    QueueOrder,
    Schedule,
    SimJob,
    simulate,
)
from trees.engine.simulate_accelerator import AcceleratorOrder
from trees.engine.simulate_pbs import PbsFairShareOrder, PbsOrder
from trees.engine.simulate_slurm import SlurmOrder

__all__ = [
    "AcceleratorPolicy",
    "Order",
    "PbsPolicy",
    "Policy",
    "SlurmPolicy",
    "Targets",
    "WhatIf",
    "default_backfill",
    "queue_order",
    "run_whatif",
    "targets_of",
]

Order = Literal["fifo", "policy"]
ORDERS: tuple[Order, ...] = ("fifo", "policy")


@dataclass(frozen=True)
class PbsPolicy:
    """What orders a PBS cluster's jobs: the resource groups, the usage formula and decay, the
    sched_config switches, job_sort_formula (text, compiled over `formula_names`) and the
    queues' priorities. Times in seconds."""

    groups: tuple[pbs.GroupDef, ...]
    usage_res: str = "cput"
    iteration: int = 600
    decay_interval: int = 86400
    decay_factor: float = 0.5
    unknown_shares: int = 0
    fair_share: bool = True
    job_sort_formula: str = ""
    formula_names: tuple[str, ...] = JOB_SORT_NAMES
    job_sort_key: tuple[tuple[str, bool], ...] = ()  # (key, descending)
    by_queue: bool = False
    queue_priorities: Mapping[str, int] = field(default_factory=dict)
    strict_ordering: bool = False
    backfill: bool = True
    backfill_depth: int = 1


@dataclass(frozen=True)
class SlurmPolicy:
    """What orders a Slurm cluster's jobs: the associations (their usage is not read: a replay
    starts from none), the multifactor settings and the partitions."""

    associations: tuple[slurm.AssociationDef, ...]
    config: MultifactorConfig = field(default_factory=MultifactorConfig)
    partitions: Mapping[str, Partition] = field(default_factory=dict)
    cluster_cpus: int = 0


@dataclass(frozen=True)
class AcceleratorPolicy:
    """What orders an Altair Accelerator cluster's jobs: its FairShare groups and
    fairshare.relative (and its alpha)."""

    groups: tuple[FsGroup, ...]
    relative: int = 2
    alpha: float = 10.0


Policy = PbsPolicy | SlurmPolicy | AcceleratorPolicy


def queue_order(policy: Policy | None, order: Order) -> QueueOrder:
    """A fresh queue order for one replay: submit order, or the policy's own (PBS fair_share,
    job_sort_formula, job_sort_key and by_queue; Slurm multifactor; Accelerator FS_RANK). A
    PBS policy with none of these is submit order, as PBS then considers jobs."""
    if order == "fifo" or policy is None:
        return FifoOrder()
    if isinstance(policy, SlurmPolicy):
        associations = [
            slurm.AssociationDef(a.account, a.parent, a.user, a.shares) for a in policy.associations
        ]
        return SlurmOrder(
            associations, policy.config, partitions=policy.partitions,
            cluster_cpus=policy.cluster_cpus,
        )  # fmt: skip
    if isinstance(policy, AcceleratorPolicy):
        return AcceleratorOrder(policy.groups, relative=policy.relative, alpha=policy.alpha)
    usage = parse_formula(policy.usage_res, USAGE_RESOURCES)
    sort_formula = (
        parse_formula(policy.job_sort_formula, policy.formula_names, python=True)
        if policy.job_sort_formula.strip()
        else None
    )
    by_queue = policy.by_queue and len(set(policy.queue_priorities.values())) > 1
    if sort_formula is not None or policy.job_sort_key or by_queue:
        sort = SortPolicy(
            sort_formula, policy.fair_share, policy.job_sort_key, by_queue,
            policy.queue_priorities, enforce_no_shares=False,
        )  # fmt: skip
        return PbsOrder(
            policy.groups, {}, sort=sort, formula=usage, iteration=policy.iteration,
            decay_interval=policy.decay_interval, decay_factor=policy.decay_factor,
            unknown_shares=policy.unknown_shares,
        )  # fmt: skip
    if policy.fair_share:
        return PbsFairShareOrder(
            policy.groups, {}, formula=usage, iteration=policy.iteration,
            decay_interval=policy.decay_interval, decay_factor=policy.decay_factor,
            unknown_shares=policy.unknown_shares,
        )  # fmt: skip
    return FifoOrder()


def default_backfill(policy: Policy | None) -> Backfill:
    """The discipline a cluster runs: PBS's from its sched_config (strict_ordering with backfill
    reserves for backfill_depth jobs, without backfill starts in order only; without
    strict_ordering every job that fits starts); Slurm's backfill scheduler and a bare trace
    are EASY; Accelerator dispatches every job that fits."""
    if isinstance(policy, PbsPolicy):
        if not policy.strict_ordering:
            return "greedy"
        if policy.backfill and policy.backfill_depth > 0:
            return "easy" if policy.backfill_depth == 1 else policy.backfill_depth
        return "none"
    if isinstance(policy, AcceleratorPolicy):
        return "greedy"
    return "easy"


@dataclass(frozen=True)
class Targets:
    """Each entity's and each project's target share of the machine under a policy (fractions
    summing to at most 1); empty without a policy."""

    entity: dict[str, float] = field(default_factory=dict)
    group: dict[str, float] = field(default_factory=dict)


def targets_of(policy: Policy | None, jobs: Sequence[SimJob]) -> Targets:
    """The target shares of the jobs' entities and projects (`group`): PBS fairshare_perc (an
    entity resource_group lacks is in `unknown`, as the scheduler puts it), Slurm's classic
    NormShares, the product of the shares' parts down the path (Fair Tree's are each level's
    alone; a user's summed over its accounts), Accelerator the product of the weights' parts."""
    if policy is None:
        return Targets()
    entities = sorted({job.entity for job in jobs})
    groups = sorted({job.group for job in jobs})
    if isinstance(policy, PbsPolicy):
        records = [pbs.UsageRecord(name, pbs.FAIRSHARE_MIN_USAGE) for name in entities]
        tree = pbs.PbsTree.build(policy.groups, records, unknown_shares=policy.unknown_shares)
        perc = pbs.compute(tree).fairshare_perc.tolist()
        return Targets(_found(entities, tree.find, perc), _found(groups, tree.find, perc))
    if isinstance(policy, SlurmPolicy):
        stree = slurm.SlurmTree.build(policy.associations)
        norm = slurm.compute(stree, slurm.Algorithm.CLASSIC).norm_shares.tolist()
        entity: dict[str, float] = {}
        for job in {(job.group, job.entity) for job in jobs}:
            node = stree.find(*job)
            if node is not None:
                entity[job[1]] = entity.get(job[1], 0.0) + float(norm[node])
        group = _found(groups, stree.find, norm)
        return Targets(entity, group)
    parts = _accelerator_parts(policy.groups)
    by_group = {name: parts.get(name, 0.0) for name in groups}
    entity = {}
    for job_group, user in {(job.group, job.entity) for job in jobs}:
        entity[user] = entity.get(user, 0.0) + by_group[job_group]
    return Targets(entity, by_group)


def _found(
    names: Sequence[str], find: Callable[[str], int | None], values: Sequence[float]
) -> dict[str, float]:
    found = {}
    for name in names:
        node = find(name)
        if node is not None:
            found[name] = float(values[node])
    return found


def _accelerator_parts(groups: Sequence[FsGroup]) -> dict[str, float]:
    """Each group's part of the root: its weight over its siblings', times its parent's part."""
    parent_of = {g.path: g.path.rsplit("/", 1)[0] or ACCELERATOR_ROOT for g in groups}
    siblings: dict[str, int] = {}
    for g in groups:
        siblings[parent_of[g.path]] = siblings.get(parent_of[g.path], 0) + g.weight
    parts: dict[str, float] = {ACCELERATOR_ROOT: 1.0, "": 1.0}
    for g in sorted(groups, key=lambda g: g.path.count("/")):  # parents first
        total = siblings[parent_of[g.path]]
        above = parts.get(parent_of[g.path], 0.0)
        parts[g.path] = above * g.weight / total if total > 0 else 0.0
    return parts


@dataclass(frozen=True)
class Side:
    """One replay of the what-if: its schedule, the policy and discipline it ran under and the
    targets that policy sets."""

    schedule: Schedule
    backfill: Backfill
    targets: Targets
    arrays: JobArrays


@dataclass(frozen=True)
class WhatIf:
    """The baseline replay, the variant's (None when there is no variant), and the baseline
    held against what really happened."""

    capacity: int
    order: Order
    baseline: Side
    variant: Side | None
    calibration: Calibration
    gpus: int | None = None  # the other pools, where they were counted
    nodes: int | None = None


Progress = Callable[[float], None]


def run_whatif(
    jobs: Sequence[SimJob],
    *,
    capacity: int,
    gpus: int | None = None,
    nodes: int | None = None,
    policy: Policy | None,
    order: Order = "policy",
    backfill: Backfill | None = None,
    variant: Policy | None = None,
    variant_backfill: Backfill | None = None,
    has_variant: bool = False,
    progress: Progress | None = None,
) -> WhatIf:
    """Replay `jobs` on `capacity` cores (and `gpus` GPUs, `nodes` nodes where given) under
    `policy` (the baseline) and, with `has_variant`, under `variant` (a changed copy of it;
    `variant_backfill` its discipline when it changes it). `progress` hears the fraction
    done, from 0 to 1."""
    sides = 2 if has_variant else 1
    base_backfill = default_backfill(policy) if backfill is None else backfill

    def replay(chosen: Policy | None, discipline: Backfill, part: int) -> Side:
        def heard(started: int, total: int) -> None:
            if progress is not None and total:
                progress((part + started / total) / sides)

        schedule = simulate(
            jobs, capacity=capacity, gpus=gpus, nodes=nodes, order=queue_order(chosen, order),
            backfill=discipline,
            progress=heard if progress is not None else None,
        )  # fmt: skip
        return Side(schedule, discipline, targets_of(chosen, jobs), job_arrays(schedule.jobs))

    baseline = replay(policy, base_backfill, 0)
    changed = None
    if has_variant:
        discipline = variant_backfill
        if discipline is None:
            discipline = base_backfill if backfill is not None else default_backfill(variant)
        changed = replay(variant, discipline, 1)
    return WhatIf(capacity, order, baseline, changed, calibrate(baseline.arrays), gpus, nodes)


@dataclass(frozen=True)
class Summary:
    """A side's figures over every job it started: waits in seconds, bounded slowdown, the
    utilization of the pool and Jain's index over the entities' share attainment."""

    jobs: int
    mean_wait: float | None
    median_wait: float | None
    p90_wait: float | None
    bounded_slowdown: float | None
    utilization: float | None
    jain_index: float | None


def summary_of(side: Side, capacity: int) -> Summary:
    arrays = side.arrays
    if len(arrays) == 0:
        return Summary(0, None, None, None, None, None, None)
    wait = arrays.start - arrays.submit
    slowdown = bounded_slowdown(wait, arrays.end - arrays.start)
    return Summary(
        jobs=len(arrays),
        mean_wait=float(wait.mean()),
        median_wait=float(np.percentile(wait, 50)),
        p90_wait=float(np.percentile(wait, 90)),
        bounded_slowdown=float(slowdown.mean()),
        utilization=utilization(arrays, capacity=capacity),
        jain_index=fairness(side),
    )


def fairness(side: Side) -> float | None:
    """Jain's index over the share attainment of the entities that ran jobs and have a target,
    the targets taken among those entities alone (a share nobody asks for goes to the others)."""
    delivered = delivered_share(side.arrays)
    active = {name: side.targets.entity.get(name, 0.0) for name in delivered}
    whole = sum(active.values())
    if whole <= 0:
        return None
    attained = share_attainment(delivered, {name: t / whole for name, t in active.items()})
    return jain_index(attained.values())


def entity_stats(
    side: Side, *, by: Literal["entity", "group"] = "entity"
) -> dict[str, dict[str, float | int | None]]:
    """Each entity's (or project's) jobs, waits, bounded slowdown and delivered share."""
    stats = wait_stats(side.arrays, by=by)
    delivered = delivered_share(side.arrays, by=by)
    return {
        name: {
            "jobs": value.jobs,
            "mean_wait": value.mean_wait,
            "median_wait": value.median_wait,
            "p90_wait": value.p90_wait,
            "bounded_slowdown": value.bounded_slowdown,
            "delivered_share": delivered.get(name, 0.0),
        }
        for name, value in stats.items()
    }
