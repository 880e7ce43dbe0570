"""A cluster's policy as the what-if replays it (trees.engine.whatif): what orders its jobs,
read from what is stored."""

from __future__ import annotations

from dataclasses import replace

from trees.engine.slurm import Algorithm
from trees.engine.whatif import AcceleratorPolicy, PbsPolicy, Policy, SlurmPolicy
from trees.models import Cluster, Queue, Scheduler
from trees.selectors.accelerator import accelerator_groups_of
from trees.selectors.nodes import stored_nodes_get
from trees.selectors.pbs import pbs_state_get
from trees.selectors.priority_config import multifactor_config_get, partitions_get
from trees.selectors.slurm import slurm_associations_of
from trees.services.priority_config import formula_names


def whatif_policy_get(*, cluster: Cluster) -> Policy:
    """The cluster's policy as its cycles and job priorities use it."""
    if cluster.scheduler == Scheduler.SLURM:
        config = multifactor_config_get(cluster)
        flags = set(config.flags)
        if cluster.fairshare_algorithm == Algorithm.CLASSIC.value:
            flags.add("NO_FAIR_TREE")
        elif cluster.fairshare_algorithm == Algorithm.DEPTH_OBLIVIOUS.value:
            flags.add("DEPTH_OBLIVIOUS")
        config = replace(
            config,
            flags=frozenset(flags),
            decay_half_life=int(cluster.priority_decay_half_life.total_seconds()),
            calc_period=int(cluster.priority_calc_period.total_seconds()),
            fs_dampening_factor=cluster.fairshare_dampening_factor,
            enforce_limits=cluster.charge_job_end,
        )
        partitions = partitions_get(cluster)
        associations = slurm_associations_of(stored_nodes_get(cluster=cluster))
        return SlurmPolicy(
            associations=tuple(associations),
            config=config,
            partitions=partitions,
            cluster_cpus=cluster.cores or sum(p.total_cpus for p in partitions.values()),
        )
    if cluster.scheduler == Scheduler.ACCELERATOR:
        groups = accelerator_groups_of(stored_nodes_get(cluster=cluster))
        return AcceleratorPolicy(
            groups=tuple(group.fs_group for group in groups),
            relative=cluster.fairshare_relative,
            alpha=cluster.fairshare_relative_alpha,
        )
    queues = dict(Queue.objects.filter(cluster=cluster).values_list("name", "priority"))
    return PbsPolicy(
        groups=tuple(pbs_state_get(cluster=cluster).groups),
        usage_res=cluster.fairshare_usage_res,
        iteration=max(1, int(cluster.scheduler_iteration.total_seconds())),
        decay_interval=int(cluster.decay_interval.total_seconds()),
        decay_factor=cluster.decay_factor,
        unknown_shares=cluster.unknown_shares,
        fair_share=cluster.fair_share,
        job_sort_formula=cluster.job_sort_formula,
        formula_names=formula_names(cluster.custom_resources),
        job_sort_key=tuple((name, order.upper() == "HIGH") for name, order in cluster.job_sort_key),
        by_queue=cluster.by_queue,
        queue_priorities=queues,
        strict_ordering=cluster.strict_ordering,
        backfill=cluster.backfill,
        backfill_depth=cluster.backfill_depth,
    )
