"""PBS `fair_share` as a replay's queue order: the jobs of the most deserving entity first.

The usage it orders by is the cycles' own (trees.engine.cycle): at each scheduler cycle, a slot
of `scheduler_iteration`, `cycle_usage` accrues what the running and ended jobs used up to it
with the cluster's `fairshare_usage_res` and applies the decays due; the tree is then read back
as pbsfs reads it (`PbsTree.build`, `compute`) and entities compare as `pbsfs -c` compares them
(`deserving_key`). Within a cycle, a job started adds the usage its request would make
(`fairshare_usage_res` of its cores and walltime limit) to its entity's path until the next
cycle, as the scheduler's `temp_usage` does (OpenPBS's init_scheduling_cycle). Ties, and the
jobs of one entity, go in submit order (`qrank`), then by job id.

Left out: PBS re-sorts the queue after each start within a cycle; here the order holds for the
whole pass, and the next pass (the next event) sees the start.
"""

from __future__ import annotations

from collections.abc import Sequence

from trees.engine.cycle import Accrual, Run, cycle_slot, cycle_usage
from trees.engine.formula import Formula, FormulaValueError
from trees.engine.job_sort import PbsJob, QueuedJobs, SortPolicy, Standing, job_sort
from trees.engine.pbs import (
    FAIRSHARE_MIN_USAGE,
    GroupDef,
    PbsMetrics,
    PbsTree,
    UsageRecord,
    compute,
    deserving_key,
)
from trees.engine.simulate import SimJob, walltime_limit

__all__ = ["PbsFairShareOrder", "PbsOrder"]

# The key of an entity whose name PBS cannot keep in its usage file: after every other.
_UNREADABLE = ((2, 0.0),)


class PbsFairShareOrder:
    """The queue in `pbsfs -c` order of the jobs' entities, usage kept as the cycles keep it."""

    def __init__(
        self,
        groups: Sequence[GroupDef],
        records: dict[str, float],
        *,
        formula: Formula,
        iteration: int,
        decay_interval: int,
        decay_factor: float,
        unknown_shares: int = 0,
        last_decay: int = 0,
    ) -> None:
        self.groups = list(groups)
        self.records = dict(records)
        self.accrual = Accrual(formula)
        self.formula = formula
        self.iteration = iteration
        self.decay_interval = decay_interval
        self.decay_factor = decay_factor
        self.unknown_shares = unknown_shares
        self.last_decay = last_decay
        self.runs: dict[int, Run] = {}
        self._run_of: dict[int, int] = {}  # id(job) -> its run's key
        self._started = 0
        self.slot: int | None = None
        self._pbs: PbsTree | None = None
        self._perc: list[float] = []  # each node's fairshare_perc
        self._paths: dict[str, list[int]] = {}  # each entity's gpath
        self._keys: dict[str, tuple[tuple[int, float], ...]] = {}  # until a start or a cycle
        self._temp: dict[int, float] = {}  # node -> usage added this cycle by starts

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._cycle(now, queued)
        keys = self._keys
        for job in queued:
            if job.entity not in keys:
                keys[job.entity] = self.key_of(job.entity)
        # `queued` comes in submit order, then job id (qrank), which a stable sort keeps.
        return sorted(queued, key=lambda job: keys[job.entity])

    def job_started(self, job: SimJob, now: int) -> None:
        key = self._started = self._started + 1
        self._run_of[id(job)] = key
        self.runs[key] = Run(
            key, job.entity, now, None, 0.0, 0.0, ncpus=job.cores,
            resources={"ncpus": float(job.cores)},
        )  # fmt: skip
        self._keys = {}
        asked = self._usage(job.cores, walltime_limit(job.run_time, job.requested_walltime))
        pbs = self._pbs
        node = None if pbs is None else pbs.find(job.entity)
        if pbs is not None and node is not None:
            for step in pbs.gpath(node):
                self._temp[step] = self._temp.get(step, 0.0) + asked

    def job_ended(self, job: SimJob, now: int) -> None:
        run = self.runs[self._run_of.pop(id(job))]
        run.end = now
        run.usage = self._usage(job.cores, now - run.start)

    def _usage(self, cores: int, seconds: int) -> float:
        """fairshare_usage_res of `cores` busy for `seconds`."""
        resources = {"ncpus": float(cores), "walltime": float(seconds)}
        resources["cput"] = float(cores * seconds)
        try:
            return max(self.formula.evaluate(resources), 0.0)
        except FormulaValueError:
            return 0.0

    def _cycle(self, now: int, queued: Sequence[SimJob]) -> None:
        """At a new scheduler cycle: usage accrued and decayed to its slot, the tree read back."""
        slot = cycle_slot(now, self.iteration)
        known = self._pbs is not None and all(
            self._pbs.find(job.entity) is not None for job in queued
        )
        if slot == self.slot and known:
            return
        if slot != self.slot:
            runs = list(self.runs.values())
            self.records, self.last_decay, _ = cycle_usage(
                self.accrual,
                runs,
                self.records,
                now=slot,
                last_decay=self.last_decay,
                groups=self.groups,
                decay_interval=self.decay_interval,
                decay_factor=self.decay_factor,
                unknown_shares=self.unknown_shares,
            )
            self.runs = {
                run.key: run for run in runs if run.end is None or run.end > slot
            }  # an ended run is all accrued by the first cycle after its end
            self.slot = slot
            self._temp = {}
        # An entity seen first in the queue starts at 1, as find_alloc_ginfo makes it.
        for job in queued:
            self.records.setdefault(job.entity, FAIRSHARE_MIN_USAGE)
        self.read_back()

    def read_back(self) -> None:
        """The usage records read into the tree as pbsfs reads them (read_usage). The tree is
        built again only when its entities change (a new name, or one of `unknown` gone from
        the records, as a fresh build would lose it): the percentages follow the shares alone,
        so they are computed only then."""
        self._keys = {}
        records = [UsageRecord(name, usage) for name, usage in self.records.items()]
        pbs = self._pbs
        if pbs is None or any(pbs.name(n) not in self.records for n in pbs.unknown_entities()):
            pbs = self._pbs = PbsTree.build(
                self.groups, records, unknown_shares=self.unknown_shares
            )
            self._perc = compute(pbs).fairshare_perc.tolist()
            self._paths = {}
            return
        size = len(pbs)
        pbs.tree.usage[:] = [FAIRSHARE_MIN_USAGE] * size
        pbs.read_usage(records)
        if len(pbs) != size:
            self._perc = compute(pbs).fairshare_perc.tolist()

    def key_of(self, entity: str) -> tuple[tuple[int, float], ...]:
        """The entity's deserving_key (pbsfs -c order) as the tree was read back, with what
        this cycle's starts added."""
        pbs = self._pbs
        assert pbs is not None  # read_back made it
        path = self._paths.get(entity)
        if path is None:
            node = pbs.find(entity)
            if node is None:
                return _UNREADABLE
            path = self._paths[entity] = pbs.gpath(node)
        perc, usage, temp = self._perc, pbs.tree.usage, self._temp
        return deserving_key((perc[step], usage[step] + temp.get(step, 0.0)) for step in path)


class PbsOrder(PbsFairShareOrder):
    """The cluster's whole PBS order, as the job priorities page computes it (job_sort):
    job_sort_formula descending, then fair_share's entity order when it is on, then the
    job_sort_key lines, then submit order; with by_queue, queue by queue in Priority order.

    A job's Resource_List is its cores (ncpus) and its walltime limit (walltime); its
    eligible_time is its wait so far. job_sort_formula_threshold is not applied: a job under it
    would never run, and a replay runs every job."""

    def __init__(
        self,
        groups: Sequence[GroupDef],
        records: dict[str, float],
        *,
        sort: SortPolicy,
        formula: Formula,
        iteration: int,
        decay_interval: int,
        decay_factor: float,
        unknown_shares: int = 0,
        last_decay: int = 0,
    ) -> None:
        super().__init__(
            groups, records, formula=formula, iteration=iteration,
            decay_interval=decay_interval, decay_factor=decay_factor,
            unknown_shares=unknown_shares, last_decay=last_decay,
        )  # fmt: skip
        self.sort = SortPolicy(
            sort.formula, sort.fair_share, sort.job_sort_key, sort.by_queue,
            sort.queue_priorities, threshold=None,
        )  # fmt: skip
        self._metrics: PbsMetrics | None = None
        self._standings: dict[str, Standing] = {}

    def read_back(self) -> None:
        super().read_back()
        self._standings = {}
        pbs = self._pbs
        assert pbs is not None  # read back
        # The formula reads the entities' tree usage, recomputed at each cycle's start.
        self._metrics = compute(pbs) if self.sort.formula is not None else None

    def job_started(self, job: SimJob, now: int) -> None:
        super().job_started(job, now)
        self._standings = {}

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._cycle(now, queued)
        priorities = self.sort.queue_priorities
        jobs = [
            PbsJob(
                job.job_id, job.entity, job.queue,
                {"ncpus": float(job.cores),
                 "walltime": float(walltime_limit(job.run_time, job.requested_walltime))},
                now - job.submit, priorities.get(job.queue, 0), 0, 0, job.submit * 1_000_000,
                rank, self._standing(job.entity),
            )
            for rank, job in enumerate(queued)
        ]  # fmt: skip
        columns, entities = QueuedJobs.of(jobs)
        return [queued[index] for index in job_sort(columns, entities, self.sort).order.tolist()]

    def _standing(self, entity: str) -> Standing:
        standing = self._standings.get(entity)
        if standing is None:
            perc = tree_usage = 0.0
            pbs, metrics = self._pbs, self._metrics
            node = None if pbs is None else pbs.find(entity)
            if node is not None:
                perc = self._perc[node]
                if metrics is not None:
                    tree_usage = float(metrics.fairshare_tree_usage[node])
            standing = self._standings[entity] = Standing(perc, tree_usage, self.key_of(entity))
        return standing
