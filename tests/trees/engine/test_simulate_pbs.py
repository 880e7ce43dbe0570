"""PBS fair_share as the replay's order (trees.engine.simulate_pbs): the under-served first,
usage accrued by the cycles' own functions, a start counted until the next cycle."""

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.cycle import Accrual, Run, cycle_slot, cycle_usage
from trees.engine.formula import (
    JOB_SORT_NAMES,
    USAGE_RESOURCES,
    Formula,
    FormulaValueError,
    parse_formula,
)
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
from trees.engine.simulate import Backfill, Schedule, SimJob, simulate, walltime_limit
from trees.engine.simulate_pbs import PbsFairShareOrder, PbsOrder

# Two users of equal shares under the root.
GROUPS = [GroupDef("ann", 10, "root", 50), GroupDef("bob", 11, "root", 50)]
CPUT = parse_formula("cput", USAGE_RESOURCES)


def fair_share(records: dict[str, float], iteration: int = 10) -> PbsFairShareOrder:
    return PbsFairShareOrder(
        GROUPS, records, formula=CPUT, iteration=iteration, decay_interval=86_400,
        decay_factor=0.5,
    )  # fmt: skip


def job(job_id: str, entity: str, submit: int, run: int, asked: int | None = None) -> SimJob:
    return SimJob(job_id, entity, submit, run, 1, asked)


def starts(schedule: Schedule) -> dict[str, int]:
    return {placed.job_id: placed.start for placed in schedule.jobs}


def test_the_under_served_users_later_job_starts_first() -> None:
    # One core. ann's 1000 of usage against bob's 1, equal shares: at 10, when X ends, bob's Z
    # (submitted at 2) goes before ann's Y (submitted at 1); in submit order Y would.
    jobs = [job("X", "ann", 0, 10), job("Y", "ann", 1, 10), job("Z", "bob", 2, 10)]
    order = fair_share({"ann": 1000.0, "bob": 1.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip
    assert starts(simulate(jobs, capacity=1, backfill="none")) == {"X": 0, "Y": 10, "Z": 20}


def test_what_a_job_ran_counts_at_the_next_cycles() -> None:
    # No usage yet. ann's X runs 0-100 on one core: the cycle at 100 has accrued its 100 cpu
    # seconds (ann 101, bob 1), so bob's Z (submitted at 5) passes ann's Y (submitted at 1).
    jobs = [job("X", "ann", 0, 100), job("Y", "ann", 1, 10), job("Z", "bob", 5, 10)]
    order = fair_share({})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 100, "Y": 110,
    }  # fmt: skip
    # The last pass, at 110 (Z's end, Y's start), saw the cycle at 110: X's 100 and Z's 10.
    assert order.records == {"ann": 1 + 100, "bob": 1 + 10}


def test_a_start_counts_its_request_until_the_next_cycle() -> None:
    # One long cycle (1000 s): no usage accrues before it. bob's B1 starts at 0 asking 100 s,
    # which counts against bob at once (temp_usage); at 10 ann's A1 then passes bob's B2,
    # though B2 was submitted first and both users' usage is still 1.
    jobs = [job("B1", "bob", 0, 10, 100), job("B2", "bob", 1, 10), job("A1", "ann", 2, 10)]
    order = fair_share({}, iteration=1000)
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "B1": 0, "A1": 10, "B2": 20,
    }  # fmt: skip


def test_an_entity_outside_the_tree_is_ordered_under_unknown() -> None:
    # zed is in no resource group: it goes under `unknown` (no shares), which sorts after
    # the users with shares, as pbsfs -c puts a perc of 0 last.
    jobs = [job("X", "ann", 0, 10), job("Q", "zed", 1, 10), job("Y", "ann", 2, 10)]
    order = fair_share({"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Y": 10, "Q": 20,
    }  # fmt: skip


NAMES = ["ann", "bob", "zed", "kim"]  # zed and kim are in no resource group: under unknown


@given(
    st.lists(
        st.dictionaries(st.sampled_from(NAMES), st.floats(1.0, 1e6, allow_nan=False), max_size=4),
        min_size=1,
        max_size=6,
    )
)
def test_the_tree_read_back_in_place_gives_what_a_fresh_read_gives(
    sequence: list[dict[str, float]],
) -> None:
    order = fair_share({})
    for records in sequence:  # one cycle's records after another, entities coming and going
        order.records = dict(records)
        order.read_back()
        fresh = PbsTree.build(GROUPS, [UsageRecord(n, u) for n, u in records.items()])
        metrics = compute(fresh)
        for name in NAMES:
            node = fresh.find(name)
            if node is None:
                continue
            expected = deserving_key(
                (float(metrics.fairshare_perc[s]), float(metrics.usage[s]))
                for s in fresh.gpath(node)
            )
            assert order.key_of(name) == expected


def pbs_order(formula: str | None, *, fair_share: bool, records: dict[str, float]) -> PbsOrder:
    sort = SortPolicy(
        None if formula is None else parse_formula(formula, JOB_SORT_NAMES, python=True),
        fair_share, (), False, {},
    )  # fmt: skip
    return PbsOrder(
        GROUPS, records, sort=sort, formula=CPUT, iteration=10, decay_interval=86_400,
        decay_factor=0.5,
    )  # fmt: skip


def wide(job_id: str, entity: str, submit: int, cores: int) -> SimJob:
    return SimJob(job_id, entity, submit, 10, cores, None)


def test_a_job_sort_formula_puts_the_widest_job_first() -> None:
    # Two cores. A (2) runs 0-10. At 10 the formula `ncpus` puts C (2 cores, submitted at 2)
    # before B (1 core, submitted at 1): C at 10, B at its end; in submit order B goes first
    # and C, which does not fit beside it, waits for B.
    jobs = [wide("A", "ann", 0, 2), wide("B", "ann", 1, 1), wide("C", "ann", 2, 2)]
    order = pbs_order("ncpus", fair_share=False, records={})
    assert starts(simulate(jobs, capacity=2, backfill="none", order=order)) == {
        "A": 0, "C": 10, "B": 20,
    }  # fmt: skip
    assert starts(simulate(jobs, capacity=2, backfill="none")) == {"A": 0, "B": 10, "C": 20}


def test_the_formula_comes_before_fair_share_and_fair_share_before_submit_order() -> None:
    # One core; X runs 0-10. Y (ann, 1 core) and Z (bob, 1 core) tie on the formula `ncpus`;
    # fair share then puts bob (usage 1) before ann (usage 1000).
    jobs = [wide("X", "ann", 0, 1), wide("Y", "ann", 1, 1), wide("Z", "bob", 2, 1)]
    order = pbs_order("ncpus", fair_share=True, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip
    # Without fair_share the tie goes to submit order.
    order = pbs_order("ncpus", fair_share=False, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Y": 10, "Z": 20,
    }  # fmt: skip


def test_a_formula_on_the_fairshare_factor_follows_the_usage() -> None:
    # fairshare_factor is 2^-(tree usage / perc): bob, with less usage, scores higher.
    jobs = [wide("X", "ann", 0, 1), wide("Y", "ann", 1, 1), wide("Z", "bob", 2, 1)]
    order = pbs_order("fairshare_factor", fair_share=False, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip


class ReferenceFairShareOrder:
    """PbsFairShareOrder as it was before it learnt to do only what changed (commit ba14960):
    every cycle hands cycle_usage the whole database, builds the decayed tree afresh, and reads
    every record back; every start forgets every key."""

    def __init__(
        self, groups: list[GroupDef], records: dict[str, float], *, formula: Formula,
        iteration: int, decay_interval: int, decay_factor: float, unknown_shares: int = 0,
    ) -> None:  # fmt: skip
        self.groups, self.records, self.accrual = groups, dict(records), Accrual(formula)
        self.formula, self.iteration = formula, iteration
        self.decay_interval, self.decay_factor = decay_interval, decay_factor
        self.unknown_shares, self.last_decay = unknown_shares, 0
        self.runs: dict[int, Run] = {}
        self._run_of: dict[int, int] = {}
        self._started = 0
        self.slot: int | None = None
        self._pbs: PbsTree | None = None
        self._perc: list[float] = []
        self._keys: dict[str, tuple[tuple[int, float], ...]] = {}
        self._temp: dict[int, float] = {}

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._cycle(now, queued)
        keys = {job.entity: self.key_of(job.entity) for job in queued}
        return sorted(queued, key=lambda job: keys[job.entity])

    def job_started(self, job: SimJob, now: int) -> None:
        key = self._started = self._started + 1
        self._run_of[id(job)] = key
        self.runs[key] = Run(
            key, job.entity, now, None, 0.0, 0.0, ncpus=job.cores,
            resources={"ncpus": float(job.cores)},
        )  # fmt: skip
        asked = self._usage(job.cores, walltime_limit(job.run_time, job.requested_walltime))
        node = None if self._pbs is None else self._pbs.find(job.entity)
        if self._pbs is not None and node is not None:
            for step in self._pbs.gpath(node):
                self._temp[step] = self._temp.get(step, 0.0) + asked

    def job_ended(self, job: SimJob, now: int) -> None:
        run = self.runs[self._run_of.pop(id(job))]
        run.end = now
        run.usage = self._usage(job.cores, now - run.start)

    def _usage(self, cores: int, seconds: int) -> float:
        resources = {"ncpus": float(cores), "walltime": float(seconds)}
        resources["cput"] = float(cores * seconds)
        try:
            return max(self.formula.evaluate(resources), 0.0)
        except FormulaValueError:
            return 0.0

    def _cycle(self, now: int, queued: Sequence[SimJob]) -> None:
        slot = cycle_slot(now, self.iteration)
        pbs = self._pbs
        known = pbs is not None and all(pbs.find(job.entity) is not None for job in queued)
        if slot == self.slot and known:
            return
        if slot != self.slot:
            runs = list(self.runs.values())
            self.records, self.last_decay, _ = cycle_usage(
                self.accrual, runs, self.records, now=slot, last_decay=self.last_decay,
                groups=self.groups, decay_interval=self.decay_interval,
                decay_factor=self.decay_factor, unknown_shares=self.unknown_shares,
            )  # fmt: skip
            self.runs = {run.key: run for run in runs if run.end is None or run.end > slot}
            self.slot = slot
            self._temp = {}
        for job in queued:
            self.records.setdefault(job.entity, FAIRSHARE_MIN_USAGE)
        self.read_back()

    def read_back(self) -> None:
        records = [UsageRecord(name, usage) for name, usage in self.records.items()]
        pbs = self._pbs
        if pbs is None or any(pbs.name(n) not in self.records for n in pbs.unknown_entities()):
            pbs = self._pbs = PbsTree.build(
                self.groups, records, unknown_shares=self.unknown_shares
            )
            self._perc = compute(pbs).fairshare_perc.tolist()
            return
        size = len(pbs)
        pbs.tree.usage[:] = [FAIRSHARE_MIN_USAGE] * size
        pbs.read_usage(records)
        if len(pbs) != size:
            self._perc = compute(pbs).fairshare_perc.tolist()

    def key_of(self, entity: str) -> tuple[tuple[int, float], ...]:
        assert self._pbs is not None
        node = self._pbs.find(entity)
        if node is None:
            return ((2, 0.0),)
        perc, usage, temp = self._perc, self._pbs.tree.usage, self._temp
        return deserving_key(
            (perc[step], usage[step] + temp.get(step, 0.0)) for step in self._pbs.gpath(node)
        )


class ReferencePbsOrder(ReferenceFairShareOrder):
    """PbsOrder on the reference's usage, as it was at commit ba14960."""

    def __init__(self, groups: list[GroupDef], records: dict[str, float], *, sort: SortPolicy,
                 **cycles: Any) -> None:  # fmt: skip
        super().__init__(groups, records, **cycles)
        self.sort = SortPolicy(
            sort.formula, sort.fair_share, sort.job_sort_key, sort.by_queue,
            sort.queue_priorities, threshold=None, enforce_no_shares=False,
        )  # fmt: skip
        self._metrics: PbsMetrics | None = None

    def read_back(self) -> None:
        super().read_back()
        assert self._pbs is not None
        self._metrics = compute(self._pbs) if self.sort.formula is not None else None

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self._cycle(now, queued)
        jobs = [
            PbsJob(
                job.job_id, job.entity, job.queue,
                {"ncpus": float(job.cores),
                 "walltime": float(walltime_limit(job.run_time, job.requested_walltime))},
                now - job.submit, self.sort.queue_priorities.get(job.queue, 0), 0, 0,
                job.submit * 1_000_000, rank, self._standing(job.entity),
            )
            for rank, job in enumerate(queued)
        ]  # fmt: skip
        columns, entities = QueuedJobs.of(jobs)
        return [queued[index] for index in job_sort(columns, entities, self.sort).order.tolist()]

    def _standing(self, entity: str) -> Standing:
        perc = tree_usage = 0.0
        node = None if self._pbs is None else self._pbs.find(entity)
        if node is not None:
            perc = self._perc[node]
            if self._metrics is not None:
                tree_usage = float(self._metrics.fairshare_tree_usage[node])
        return Standing(perc, tree_usage, self.key_of(entity))


def random_site(rng: random.Random) -> tuple[list[GroupDef], list[str]]:
    """A few organizations, projects and users of varied shares (some 0), the users' names,
    and names the tree lacks: two under `unknown`, one PBS cannot read."""
    groups: list[GroupDef] = []
    users: list[str] = []
    for org in range(rng.randint(1, 4)):
        groups.append(GroupDef(f"org{org}", len(groups) + 10, "root", rng.choice([0, 1, 5, 30])))
        for project in range(rng.randint(1, 3)):
            name = f"p{org}{project}"
            groups.append(GroupDef(name, len(groups) + 10, f"org{org}", rng.randint(0, 9)))
            for _ in range(rng.randint(1, 6)):
                users.append(f"u{len(users)}")
                groups.append(GroupDef(users[-1], len(groups) + 10, name, rng.randint(0, 20)))
    return groups, [*users, "stranger", "visitor", "bad name!"]


def random_trace(rng: random.Random, names: list[str], count: int) -> list[SimJob]:
    """Jobs of skewed users, in bursts, on up to 8 cores, some running past their request."""
    weights = [1 / (rank + 1) for rank in range(len(names))]
    jobs: list[SimJob] = []
    now = 0
    while len(jobs) < count:
        now += int(rng.expovariate(1 / 60))
        entity = rng.choices(names, weights)[0]
        for _ in range(rng.randint(1, 4)):
            run = rng.randint(1, 900)
            asked = rng.choice([None, run // 2 + 1, run, run * 3])
            jobs.append(SimJob(str(len(jobs)), entity, now, run, rng.randint(1, 8), asked))
    return jobs


def random_orders(seed: int) -> tuple[list[SimJob], dict[str, Any], dict[str, Any]]:
    """A trace and the two orders' arguments, the records (with group and unknown names)
    and cycles (iteration, decays a few times over the trace, formulas of rounded results)."""
    rng = random.Random(seed)
    groups, names = random_site(rng)
    jobs = random_trace(rng, names, rng.randint(100, 400))
    records = {
        name: rng.choice([0.5, 1.0, rng.uniform(1, 5000)])
        for name in rng.sample([*names, "org0", "visitor", "gone"], rng.randint(0, 6))
    }
    # Rounded results, and one that accrues nothing while a start counts its request.
    text = rng.choice(["cput", "ncpus*walltime/7", "walltime/3 + ncpus*0.1", "walltime - 500"])
    cycles = {
        "formula": parse_formula(text, USAGE_RESOURCES), "iteration": rng.choice([7, 60, 300]),
        "decay_interval": rng.choice([250, 900, 3000]),
        "decay_factor": rng.choice([0.5, 0.7, 0.33]), "unknown_shares": rng.choice([0, 3]),
    }  # fmt: skip
    return jobs, {"groups": groups, "records": records}, cycles


class Watched:
    """An order as the replay sees it, noting at each pass the order it gave, its records, and
    the queued entities' keys (float for float: a sum added up in another order would show)."""

    def __init__(self, order: ReferenceFairShareOrder | PbsFairShareOrder) -> None:
        self.watched = order
        self.seen: list[tuple[int, list[str], list[tuple[str, float]], list[Any]]] = []

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        ordered = self.watched.order(now, queued)
        keys = [self.watched.key_of(job.entity) for job in queued]
        records = list(self.watched.records.items())
        self.seen.append((now, [job.job_id for job in ordered], records, keys))
        return ordered

    def job_started(self, job: SimJob, now: int) -> None:
        self.watched.job_started(job, now)

    def job_ended(self, job: SimJob, now: int) -> None:
        self.watched.job_ended(job, now)


def replayed(jobs: list[SimJob], order: Watched, backfill: Backfill) -> dict[str, int]:
    return starts(simulate(jobs, capacity=16, backfill=backfill, order=order))


@given(st.integers(0, 2**32 - 1), st.sampled_from(["easy", "none", "greedy", 2]))
@settings(max_examples=60, deadline=None)
def test_the_order_is_what_reading_every_record_at_each_cycle_gives(
    seed: int, backfill: Backfill
) -> None:
    jobs, site, cycles = random_orders(seed)
    order = Watched(PbsFairShareOrder(site["groups"], site["records"], **cycles))
    reference = Watched(ReferenceFairShareOrder(site["groups"], site["records"], **cycles))
    assert replayed(jobs, order, backfill) == replayed(jobs, reference, backfill)
    assert order.seen == reference.seen


@given(st.integers(0, 2**32 - 1), st.sampled_from(["fairshare_tree_usage", "ncpus"]))
@settings(max_examples=20, deadline=None)
def test_the_whole_pbs_order_is_what_reading_every_record_at_each_cycle_gives(
    seed: int, formula: str
) -> None:
    jobs, site, cycles = random_orders(seed)
    sort = SortPolicy(parse_formula(formula, JOB_SORT_NAMES, python=True), True, (), False, {})
    order = Watched(PbsOrder(site["groups"], site["records"], sort=sort, **cycles))
    reference = Watched(ReferencePbsOrder(site["groups"], site["records"], sort=sort, **cycles))
    assert replayed(jobs, order, "easy") == replayed(jobs, reference, "easy")
    assert order.seen == reference.seen
