"""PBS `fair_share` as a replay's queue order: the jobs of the most deserving entity first.

The usage it orders by is the cycles' own (trees.engine.cycle): at each scheduler cycle, a slot
of `scheduler_iteration`, `cycle_usage` accrues what the running and ended jobs used up to it
with the cluster's `fairshare_usage_res` and applies the decays due; the tree is then read back
as pbsfs reads it (`PbsTree.build`, `read_usage`, `compute`) and entities compare as `pbsfs -c`
compares them (`deserving_key`). Within a cycle, a job started adds the usage its request would
make (`fairshare_usage_res` of its cores and walltime limit) to its entity's path until the next
cycle, as the scheduler's `temp_usage` does (OpenPBS's init_scheduling_cycle). Ties, and the
jobs of one entity, go in submit order (`qrank`), then by job id.

A year of a large site is 52,560 ten-minute cycles over a tree of 100,000 users, of whom a few
hundred have jobs running in any one cycle, so a cycle does only what changed, and gives what
reading every record again gives (a property test holds it to the plain way, pass by pass):

- between decays `cycle_usage` is given the records of the runs' entities alone, as it changes
  no other, and what it stores is merged back in the database's order;
- those records go into their leaves; a group's usage, which read_usage makes by adding its
  leaves' records to 1 in the database's order, is added up again in that order (so with the
  same roundings) when a key needs it;
- a decay is done on the tree kept (`PbsTree.decay`, `PbsTree.records`) when it holds the
  entities a fresh build would; the tree is then read back whole;
- the order leaves TREEROOT's level out of the keys: it is the same on every path, and
  compare_path skips the nodes two paths share. A start or a new record then changes only the
  keys under its root's child, and only those are worked out again;
- while no key changes (no start, the same cycle), a pass keeps the last pass's order and puts
  the jobs that arrived since after the jobs of their entities' rank.

Left out: PBS re-sorts the queue after each start within a cycle; here the order holds for the
whole pass, and the next pass (the next event) sees the start.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter, is_

from trees.engine.cycle import (
    Accrual,
    Run,
    cycle_slot,
    cycle_usage,
    decay_instants,
    decayed_records,
)
from trees.engine.formula import Formula, FormulaValueError
from trees.engine.job_sort import PbsJob, QueuedJobs, SortPolicy, Standing, job_sort
from trees.engine.pbs import (
    FAIRSHARE_MIN_USAGE,
    TREEROOT,
    UNKNOWN,
    GroupDef,
    PbsMetrics,
    PbsTree,
    UsageRecord,
    compute,
    deserving_key,
    is_readable_record,
)
from trees.engine.simulate import SimJob, walltime_limit

__all__ = ["PbsFairShareOrder", "PbsOrder"]

Key = tuple[tuple[int, float], ...]

# The key of an entity whose name PBS cannot keep in its usage file: after every other.
_UNREADABLE: Key = ((2, 0.0),)
_NO_TOP = -1  # where the keys that no usage changes are kept (no node, or TREEROOT itself)
_ENTITY = attrgetter("entity")


@dataclass(slots=True)
class _Pass:
    """A pass's queue, the order it was given, the rank of each job in that order (equal keys,
    equal ranks) and each entity's rank."""

    queued: list[SimJob]
    ordered: list[SimJob]
    ranks: list[int]
    rank_of: dict[str, int]

    def joined(self, queued: Sequence[SimJob]) -> list[SimJob] | None:
        """The order of `queued` when it is this pass's queue and jobs that arrived since, of
        entities it ranked (no key having changed): each goes after the jobs of its rank and
        before those of the next, as a stable sort would put it. None otherwise."""
        count = len(self.queued)
        if len(queued) < count or not all(map(is_, self.queued, queued)):
            return None
        arrived = queued[count:]
        rank_of = self.rank_of
        if not all(job.entity in rank_of for job in arrived):
            return None
        for job in arrived:
            rank = rank_of[job.entity]
            place = bisect_right(self.ranks, rank)
            self.ordered.insert(place, job)
            self.ranks.insert(place, rank)
        self.queued = list(queued)
        return self.ordered.copy()


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
        self._defined = {TREEROOT, UNKNOWN} | {group.name for group in self.groups}
        self._perc: list[float] = []  # each node's fairshare_perc
        self._paths: dict[str, list[int]] = {}  # each entity's gpath
        self._keys: dict[str, Key] = {}  # until a node of its path changes
        self._keyed: dict[int, list[str]] = {}  # child of the root -> entities keyed under it
        self._temp: dict[int, float] = {}  # node -> usage added this cycle by starts
        self._members: dict[int, list[int]] = {}  # group -> its leaves read, in record order
        self._read: set[int] = set()  # the leaves holding a record
        self._stale: set[int] = set()  # groups whose usage is to be added up again
        self._whole = True  # read every record at each cycle (a record names a group)
        self._unreadable: set[str] = set()  # queued names put in the records that PBS skips
        self._last: _Pass | None = None  # the last pass, while no key has changed since

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        last = self._last
        if last is not None and cycle_slot(now, self.iteration) == self.slot:
            ordered = last.joined(queued)
            if ordered is not None:
                return ordered
        names = list(map(_ENTITY, queued))
        entities = dict.fromkeys(names)
        self._cycle(now, entities)
        kept = self._keys.get
        keys = [kept(entity) or self._key(entity) for entity in entities]
        # Equal keys share a rank, and a stable sort on the ranks keeps `queued`'s submit
        # order (qrank), then job id, as a sort on the keys themselves would.
        rank_of_key = {key: rank for rank, key in enumerate(sorted(set(keys)))}
        rank_of = {entity: rank_of_key[key] for entity, key in zip(entities, keys, strict=True)}
        ranks = list(map(rank_of.__getitem__, names))
        places = sorted(range(len(queued)), key=ranks.__getitem__)
        ordered = list(map(queued.__getitem__, places))
        self._last = _Pass(list(queued), ordered, list(map(ranks.__getitem__, places)), rank_of)
        return ordered.copy()

    def job_started(self, job: SimJob, now: int) -> None:
        key = self._started = self._started + 1
        self._run_of[id(job)] = key
        self.runs[key] = Run(
            key, job.entity, now, None, 0.0, 0.0, ncpus=job.cores,
            resources={"ncpus": float(job.cores)},
        )  # fmt: skip
        self._last = None
        asked = self._usage(job.cores, walltime_limit(job.run_time, job.requested_walltime))
        pbs = self._pbs
        node = None if pbs is None else pbs.find(job.entity)
        if pbs is not None and node is not None:
            path = self._path(job.entity, node)
            for step in path:
                self._temp[step] = self._temp.get(step, 0.0) + asked
            self._forget(path)

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

    def _cycle(self, now: int, entities: dict[str, None]) -> None:
        """At a new scheduler cycle: usage accrued and decayed to its slot, the tree read back.
        `entities` are the queued jobs' entities, in queue order."""
        slot = cycle_slot(now, self.iteration)
        pbs = self._pbs
        if slot == self.slot and pbs is not None and pbs.index.keys() >= entities.keys():
            return
        written: dict[str, float] = {}
        whole = pbs is None or self._whole
        if slot != self.slot:
            whole = self._cycle_usage(slot, written) or whole
            self.slot = slot
            for step in self._temp:
                self._forget(self._pbs_tree().gpath(step))
            self._temp = {}
        # An entity seen first in the queue starts at 1, as find_alloc_ginfo makes it.
        records = self.records
        for entity in entities:
            if entity not in records:
                records[entity] = written[entity] = FAIRSHARE_MIN_USAGE
                if not is_readable_record(entity, FAIRSHARE_MIN_USAGE):
                    self._unreadable.add(entity)
        if whole:
            self.read_back()
        else:
            self._read_written(written)

    def _cycle_usage(self, slot: int, written: dict[str, float]) -> bool:
        """cycle_usage up to `slot`; the records it changed go in `written`. True when it gave
        the database whole (the first cycle, or a decay: every record changes)."""
        runs = list(self.runs.values())
        records = self.records
        whole = self.slot is None or not self.last_decay
        whole = whole or bool(decay_instants(self.last_decay, self.decay_interval, slot))
        given = records
        if not whole:  # no record but those of the runs' entities can change
            given = {
                entity: records[entity]
                for entity in dict.fromkeys(run.entity for run in runs)
                if entity in records
            }
        self.accrual.changed.clear()  # read by nobody here, and a year of runs would pile up
        stored, self.last_decay, _ = cycle_usage(
            self.accrual, runs, given, now=slot, last_decay=self.last_decay,
            groups=self.groups, decay_interval=self.decay_interval,
            decay_factor=self.decay_factor, unknown_shares=self.unknown_shares,
            decayed=self._decayed,
        )  # fmt: skip
        self.runs = {
            run.key: run for run in runs if run.end is None or run.end > slot
        }  # an ended run is all accrued by the first cycle after its end
        if whole:
            self.records = stored
            self._unreadable = set()
            return True
        # The records stored_records would drop: those it dropped here, and the queued names
        # PBS cannot read that were put in since the last cycle.
        for name in (given.keys() - stored.keys()) | self._unreadable:
            records.pop(name, None)
        self._unreadable = set()
        for name, usage in stored.items():  # new names come last, in the order they came
            if records.get(name) != usage:
                records[name] = written[name] = usage
        return False

    def _decayed(self, records: dict[str, float]) -> dict[str, float]:
        """decayed_records(groups, records, ...), done on the tree kept when it holds what a
        fresh build would (the same entities of `unknown`, added in the same order); the tree
        is read back whole after it."""
        pbs = self._pbs
        added = [
            n for n, u in records.items() if n not in self._defined and is_readable_record(n, u)
        ]
        if pbs is None or [pbs.name(n) for n in reversed(pbs.unknown_entities())] != added:
            return decayed_records(self.groups, records, self.decay_factor, self.unknown_shares)
        pbs.tree.usage[:] = [FAIRSHARE_MIN_USAGE] * len(pbs)
        pbs.read_usage([UsageRecord(name, usage) for name, usage in records.items()])
        pbs.decay(self.decay_factor)
        return {record.name: record.usage for record in pbs.records()}

    def read_back(self) -> None:
        """The usage records read into the tree as pbsfs reads them (read_usage). The tree is
        built again only when its entities change (a new name, or one of `unknown` gone from
        the records, as a fresh build would lose it): the percentages follow the shares alone,
        so they are computed only then."""
        self._keys, self._keyed = {}, {}
        records = [UsageRecord(name, usage) for name, usage in self.records.items()]
        pbs = self._pbs
        if pbs is None or any(pbs.name(n) not in self.records for n in pbs.unknown_entities()):
            pbs = self._pbs = PbsTree.build(
                self.groups, records, unknown_shares=self.unknown_shares
            )
            self._perc = compute(pbs).fairshare_perc.tolist()
            self._paths = {}
        else:
            size = len(pbs)
            pbs.tree.usage[:] = [FAIRSHARE_MIN_USAGE] * size
            pbs.read_usage(records)
            if len(pbs) != size:
                self._perc = compute(pbs).fairshare_perc.tolist()
        self._list_members(pbs)
        self._refreshed()

    def _list_members(self, pbs: PbsTree) -> None:
        """Each group's leaves that hold a record, in the order read_usage added them to it."""
        self._members, self._read, self._stale = {}, set(), set()
        self._whole = False
        tree = pbs.tree
        for name, usage in self.records.items():
            if not is_readable_record(name, usage):
                continue  # read_usage skipped it
            node = pbs.index[name]
            if not tree.is_leaf(node):
                self._whole = True  # it overwrote a group's sum: read as a whole from now on
                return
            self._read.add(node)
            for group in tree.path(node)[:-1]:
                self._members.setdefault(group, []).append(node)

    def _read_written(self, written: dict[str, float]) -> None:
        """The records changed since the tree was read, put into their leaves as read_usage
        would, the groups above them to be added up again; read back whole if one is new to
        the tree or names a group."""
        pbs = self._pbs_tree()
        tree = pbs.tree
        usage = tree.usage
        for name, value in written.items():
            if not is_readable_record(name, value):
                continue
            node = pbs.find(name)
            if node is None or not tree.is_leaf(node):
                self.read_back()
                return
            usage[node] = value
            path = self._path(name, node)
            groups = path[:-1]
            self._stale.update(groups)
            if node not in self._read:  # a record new since the read: it comes last
                self._read.add(node)
                for group in groups:
                    self._members.setdefault(group, []).append(node)
            self._forget(path)
        self._refreshed()

    def _refreshed(self) -> None:
        """Called once the tree holds the records (its groups' sums may be stale)."""
        self._last = None

    def _add_up(self, group: int) -> None:
        """A group's usage as read_usage makes it: 1, plus each of its leaves' records in the
        order read (float additions in the same order, so the same roundings), those of
        exactly 1 left out as read_usage leaves them."""
        usage = self._pbs_tree().tree.usage
        total = FAIRSHARE_MIN_USAGE
        for leaf in self._members.get(group, ()):
            if usage[leaf] != FAIRSHARE_MIN_USAGE:
                total += usage[leaf]
        usage[group] = total
        self._stale.discard(group)

    def _pbs_tree(self) -> PbsTree:
        pbs = self._pbs
        assert pbs is not None  # read back at the first order
        return pbs

    def _path(self, entity: str, node: int) -> list[int]:
        path = self._paths.get(entity)
        if path is None:
            path = self._paths[entity] = self._pbs_tree().gpath(node)
        return path

    def _key(self, entity: str) -> Key:
        """key_of without TREEROOT's level, kept until a node of its path changes. Every
        path starts at TREEROOT, which compare_path skips as a node both paths share: the
        order is the same, and a start changes only the keys under its root's child."""
        key = self._keys.get(entity)
        if key is None:
            node = self._pbs_tree().find(entity)
            if node is None:
                key = self._keys[entity] = _UNREADABLE
                self._keyed.setdefault(_NO_TOP, []).append(entity)
                return key
            path = self._path(entity, node)[1:]
            key = self._keys[entity] = self._deserving(path)
            self._keyed.setdefault(path[0] if path else _NO_TOP, []).append(entity)
        return key

    def _forget(self, path: Sequence[int]) -> None:
        """Drop the keys a change on `path` (a gpath) may change: those of every entity under
        the same child of the root."""
        if len(path) > 1:
            for entity in self._keyed.pop(path[1], ()):
                del self._keys[entity]

    def key_of(self, entity: str) -> Key:
        """The entity's deserving_key (pbsfs -c order) as the tree was read back, with what
        this cycle's starts added."""
        node = self._pbs_tree().find(entity)
        return _UNREADABLE if node is None else self._deserving(self._path(entity, node))

    def _deserving(self, path: Sequence[int]) -> Key:
        """deserving_key of the nodes of `path`, their groups' usage added up first."""
        stale = self._stale
        for step in path:
            if step in stale:
                self._add_up(step)
        perc, usage, temp = self._perc, self._pbs_tree().tree.usage, self._temp
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
            sort.queue_priorities, threshold=None, enforce_no_shares=False,
        )  # fmt: skip  # the replay starts every job, as without the threshold
        self._metrics: PbsMetrics | None = None
        self._standings: dict[str, Standing] = {}

    def _refreshed(self) -> None:
        super()._refreshed()
        for group in list(self._stale):  # compute() reads every node's usage
            self._add_up(group)
        self._standings = {}
        # The formula reads the entities' tree usage, recomputed at each cycle's start.
        self._metrics = compute(self._pbs_tree()) if self.sort.formula is not None else None

    def job_started(self, job: SimJob, now: int) -> None:
        super().job_started(job, now)
        self._standings = {}

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._cycle(now, dict.fromkeys(map(_ENTITY, queued)))
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
