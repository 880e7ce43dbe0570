"""Slurm's multifactor priority as a replay's queue order: pending jobs by priority, then by
submit time and job id, as the main scheduler sorts its queue.

The usage is the cycles' own: at each PriorityCalcPeriod slot `slurm_pass` decays every
association's raw usage and charges the running jobs (billable TRES: their cores), and the tree
is computed again (`compute`, Fair Tree, or classic with NO_FAIR_TREE or DEPTH_OBLIVIOUS), which
gives each user association its FairShare factor; `job_factors` and `job_priority` then weigh it
with the job's age, size, partition and TRES. A job's association is its `group` (the account)
and its `entity` (the user); a job whose association the tree lacks gets a FairShare factor of 0.

Left out: PriorityUsageResetPeriod (usage is never reset) and QOS (every job has none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from trees.engine.cycle import Run, cycle_slot
from trees.engine.multifactor import (
    MultifactorConfig,
    Partition,
    PriorityJob,
    job_factors,
    job_priority,
    partition_factor_max,
)
from trees.engine.simulate import SimJob, job_id_key, walltime_limit
from trees.engine.slurm import Algorithm, AssociationDef, SlurmTree, compute, decay_factor
from trees.engine.slurm_pass import slurm_pass

__all__ = ["SlurmOrder"]


class SlurmOrder:
    """The queue by multifactor priority, usage kept as the Slurm passes keep it."""

    def __init__(
        self,
        associations: Sequence[AssociationDef],
        config: MultifactorConfig,
        *,
        partitions: Mapping[str, Partition] | None = None,
        cluster_cpus: int = 0,
        active_nodes: int = 0,
    ) -> None:
        self.tree = SlurmTree.build(associations)
        self.config = config
        self.algorithm = Algorithm.of_flags(config.flags)
        self.factor = decay_factor(timedelta(seconds=config.decay_half_life))
        self.partitions = dict(partitions or {})
        self.cluster_cpus = cluster_cpus
        self.active_nodes = active_nodes
        self.runs: dict[int, Run] = {}
        self._run_of: dict[int, int] = {}  # id(job) -> its run's key
        self._started = 0
        self.last_ran: int | None = None
        self._fairshare: list[float] = []

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._pass(now)
        priority = {id(job): self.priority(job, now) for job in queued}
        return sorted(
            queued,
            key=lambda job: (-priority[id(job)], job.submit, job_id_key(job.job_id)),
        )

    def job_started(self, job: SimJob, now: int) -> None:
        self._started += 1
        self._run_of[id(job)] = self._started
        self.runs[self._started] = Run(
            self._started, _association(job), now, None, 0.0, 0.0, ncpus=job.cores,
            billable=float(job.cores),
        )  # fmt: skip

    def job_ended(self, job: SimJob, now: int) -> None:
        run = self.runs[self._run_of.pop(id(job))]
        run.end = now
        run.usage = run.billable * (now - run.start)

    def priority(self, job: SimJob, now: int) -> int:
        """The job's multifactor priority at `now` (its wait counts from its submit)."""
        node = self.tree.find(job.group, job.entity)
        fs_factor = 0.0 if node is None else self._fairshare[node]
        limit = walltime_limit(job.run_time, job.requested_walltime)
        pending = PriorityJob(
            job_id=job_id_key(job.job_id)[1], user=job.entity, account=job.group,
            partition=job.queue, qos="", cpu_cnt=job.cores, time_limit=-(-limit // 60),
            accrue_time=job.submit, submit_time=job.submit, tres={"cpu": job.cores},
            fs_factor=fs_factor,
        )  # fmt: skip
        factors = job_factors(
            pending, self.config, self.partitions.get(job.queue), None, now=now,
            active_nodes=self.active_nodes, cluster_cpus=self.cluster_cpus,
            max_partition_factor=partition_factor_max(self.partitions.values()),
            max_qos_priority=0,
        )  # fmt: skip
        return job_priority(factors)

    def _pass(self, now: int) -> None:
        """At a new PriorityCalcPeriod slot: a decay pass, and the FairShare factors again."""
        slot = cycle_slot(now, self.config.calc_period)
        if slot == self.last_ran:
            return
        runs = list(self.runs.values())
        tree = self.tree
        slurm_pass(
            tree, runs, now=slot, last_ran=self.last_ran, factor=self.factor, reset=False,
            charge_job_end=self.config.enforce_limits,
            association=lambda entity: tree.find(*entity.split(":", 1)),
        )  # fmt: skip
        self.last_ran = slot
        # An ended run is settled by the first pass after its end.
        self.runs = {run.key: run for run in runs if run.end is None or run.end > slot}
        metrics = compute(tree, self.algorithm, dampening=self.config.fs_dampening_factor)
        self._fairshare = metrics.fairshare.tolist()


def _association(job: SimJob) -> str:
    """A run's entity as the passes name it: account:user."""
    return f"{job.group}:{job.entity}"
