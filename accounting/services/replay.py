"""A cluster's cycles replayed in simulated time over its stored job runs, from no usage."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounting.models import (
    Cycle,
    Job,
    NodeHistory,
)
from accounting.parsers.records import USAGE_RESOURCES
from accounting.selectors import cycle_period
from accounting.services.cycles import (
    RUN_FIELDS,
    CycleRefused,
    association_finder,
    cycle_policy_check,
    decay_policy,
    pbs_ledger,
    slurm_ledger,
    slurm_policy,
    stored_run,
)
from accounting.services.history import (
    HISTORY_COLUMNS,
    HISTORY_WINDOWS,
    history_partitions_make,
)
from accounting.usage_loss import pbs_recording_get
from trees.bulk import collector_paused, rows_insert, rows_update
from trees.engine.cycle import Accrual, Run, cycle_slot, cycle_usage, kept_instants
from trees.engine.formula import parse_formula
from trees.engine.pbs import TREEROOT, UNKNOWN, PbsTree, UsageRecord, compute
from trees.engine.recording import PbsRecording
from trees.engine.slurm_pass import slurm_pass
from trees.engine.times import epoch_seconds, epoch_time
from trees.formats.pbsfs import UsageDatabase
from trees.models import Cluster, Node, Scheduler, UsageRecording
from trees.selectors.nodes import SlurmValues
from trees.selectors.pbs import pbs_state_get
from trees.selectors.slurm import slurm_node_ids_get, slurm_state_get
from trees.services.pbs_store import pbs_tree_held
from trees.services.slurm import slurm_rows, slurm_tree_held


@dataclass(frozen=True)
class ReplayResult:
    first: datetime
    last: datetime
    cycles: int
    decays: int
    runs: int  # job runs accrued
    usage_added: float
    history_rows: int


ReplayProgress = Callable[[int, int], object]  # (cycles done, cycles in all)


MAX_REPLAY_CYCLES = 5_000_000  # 95 years of 10-minute cycles


@collector_paused()  # as cycle_run: a replay makes and drops millions of small objects
def replay(
    *,
    cluster: Cluster,
    start: datetime | None = None,
    until: datetime | None = None,
    step: timedelta | None = None,
    progress: ReplayProgress | None = None,
) -> ReplayResult:
    """The cluster's cycles every `step` (default: its cycle period; with usage_recording
    `pbs`, PBS's own cycles: pbs_recording_get) from `start` to `until` in simulated time,
    from no usage: the usage, metrics, history (as the roll-up leaves it at
    `until`) and cycle ledger a deployment running since `start` would have stored. The cycles
    are those of cycle_run, on runs kept in memory; only the kept history is computed.
    Replaces the cluster's cycles.
    """
    seconds = int((cycle_period(cluster) if step is None else step).total_seconds())
    if seconds < 1:
        raise CycleRefused(f"the replay step must be at least 1 s, not {step}")
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
            raise CycleRefused(
                f"cluster {cluster.name}: replay rebuilds PBS and Slurm usage; an"
                " Accelerator cluster keeps none (its fields come from the jobs at each cycle:"
                " run_cycle)"
            )
        cycle_policy_check(cluster)
        jobs = Job.objects.filter(cluster=cluster, start__isnull=False)
        runs = [stored_run(job) for job in jobs.values(*RUN_FIELDS)]
        runs.sort(key=lambda run: (run.start, run.key))
        first, last = _replay_span(cluster, runs, start, until, seconds)
        recording = None
        if cluster.scheduler == Scheduler.PBS and cluster.usage_recording == UsageRecording.PBS:
            recording = pbs_recording_get(cluster=cluster, first=first, last=last)
        instants: Sequence[int] = range(first, last + 1, seconds)
        if recording is not None and step is None:  # PBS's own cycles: it adds and decays there
            instants = sorted({cycle.at for cycle in recording.cycles if first <= cycle.at <= last})
        if len(instants) > MAX_REPLAY_CYCLES:
            raise CycleRefused(
                f"{len(instants):,} cycles of {timedelta(seconds=seconds)} is more than a replay"
                f" does ({MAX_REPLAY_CYCLES:,}): give a longer --step or a shorter span"
            )
        NodeHistory.objects.filter(node__cluster=cluster).delete()
        Cycle.objects.filter(cluster=cluster).delete()
        kept = kept_instants(instants, last, *HISTORY_WINDOWS)
        simulation: _Simulation = (
            _SlurmSimulation(cluster, runs, kept)
            if cluster.scheduler == Scheduler.SLURM
            else _PbsSimulation(cluster, runs, kept, recording)
        )
        for done, moment in enumerate(instants, 1):
            simulation.cycle(moment)
            if progress is not None:
                progress(done, len(instants))
        return simulation.store(cluster)


def _replay_span(
    cluster: Cluster, runs: list[Run], start: datetime | None, until: datetime | None, step: int
) -> tuple[int, int]:
    """The first and last cycle times: by default from the first start to the first slot after
    every run ended (or now, with runs still running), on the step's grid."""
    if (start is None or until is None) and not runs:
        raise CycleRefused(f"cluster {cluster.name} has no job runs to replay: ingest some first")
    first = epoch_seconds(start) if start is not None else cycle_slot(runs[0].start, step)
    if until is not None:
        last = epoch_seconds(until)
    elif any(run.end is None for run in runs):
        last = epoch_seconds(timezone.now())
    else:
        last = max(run.end or run.start for run in runs)
    last = first + -(-(last - first) // step) * step  # the first slot at or after it
    if last < first:
        raise CycleRefused(f"--until {until} is before --from {start}")
    return first, last


class _Simulation:
    """Cycles in memory, on runs that start with nothing accrued: the history kept and the
    ledger; a scheduler's simulation adds its usage and what a cycle does to it."""

    def __init__(self, runs: list[Run], kept: set[int]) -> None:
        for run in runs:
            run.accrued = 0.0
            run.closed = False
        self.runs = runs
        self.pending = 0  # runs[pending:] have not started yet
        self.active: list[Run] = []
        self.kept = kept
        self.history: dict[Hashable, list[tuple[Any, ...]]] = {}  # by node key
        self.cycles: list[Cycle] = []
        self.decays = 0
        self.added = 0.0

    def cycle(self, moment: int) -> None:
        clock = time.perf_counter()
        while self.pending < len(self.runs) and self.runs[self.pending].start < moment:
            run = self.runs[self.pending]
            if run.end is None or run.accrued != run.usage:
                self.active.append(run)
            self.pending += 1
        cycle = self.usage_cycle(moment)
        self.active = [
            run
            for run in self.active
            if run.end is None or (run.accrued != run.usage and not run.closed)
        ]
        if moment in self.kept:
            at = epoch_time(moment)
            for key, values in self.numbers():
                self.history.setdefault(key, []).append((at, *values))
        cycle.at, cycle.history_kept = epoch_time(moment), moment in self.kept
        cycle.duration = time.perf_counter() - clock
        self.cycles.append(cycle)
        self.decays += cycle.decays_applied
        self.added += cycle.usage_added

    def usage_cycle(self, moment: int) -> Cycle:
        """What the cycle at `moment` does to the usage, as its ledger row."""
        raise NotImplementedError

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        """Each node's key and its history values (HISTORY_COLUMNS after node and time)."""
        raise NotImplementedError

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        """Store the usage and metrics the last cycle left; the node id of each key."""
        raise NotImplementedError

    def store(self, cluster: Cluster) -> ReplayResult:
        ids = self.store_usage(cluster)
        adapt = connection.ops.adapt_datetimefield_value
        # In key order, node by node: each month's partition then takes its rows in the order
        # of its primary key, which fills its pages (in the nodes' order, its index took each
        # node's few rows in the middle of its pages, splitting them: twice the size).
        rows = sorted(
            (ids[key], adapt(at), *values)
            for key, points in self.history.items()
            for at, *values in points
        )
        if self.cycles:
            history_partitions_make(first=self.cycles[0].at, last=self.cycles[-1].at)
        rows_insert(NodeHistory, HISTORY_COLUMNS, rows)
        started = timezone.now()
        for cycle in self.cycles:
            cycle.cluster = cluster
            cycle.started_at = started
        Cycle.objects.bulk_create(self.cycles, batch_size=5000)
        Job.objects.filter(cluster=cluster, accrual_closed=True).update(accrual_closed=False)
        rows_update(
            Job,
            ["accrued", "accrual_closed"],
            [(run.key, run.accrued, run.closed) for run in self.runs if run.accrued or run.closed],
        )
        return ReplayResult(
            first=self.cycles[0].at,
            last=self.cycles[-1].at,
            cycles=len(self.cycles),
            decays=self.decays,
            runs=sum(1 for run in self.runs if run.accrued),
            usage_added=self.added,
            history_rows=len(rows),
        )


class _PbsSimulation(_Simulation):
    """PBS cycles: cycle_run's accrual and decays on a usage database in memory."""

    def __init__(
        self, cluster: Cluster, runs: list[Run], kept: set[int], recording: PbsRecording | None
    ) -> None:
        super().__init__(runs, kept)
        self.formula = parse_formula(cluster.fairshare_usage_res, USAGE_RESOURCES)
        self.recording = recording
        self.policy = decay_policy(cluster)
        self.state = pbs_state_get(cluster=cluster)  # the tree the replay stores its usage into
        self.groups = self.state.groups
        self.defined = {group.name for group in self.groups}
        self.records: dict[str, float] = {}
        self.last_decay = 0

    def usage_cycle(self, moment: int) -> Cycle:
        accrual = Accrual(self.formula, self.recording)
        self.records, self.last_decay, decays = cycle_usage(
            accrual,
            self.active,
            self.records,
            now=moment,
            last_decay=self.last_decay,
            groups=self.groups,
            **self.policy,
        )
        if decays:
            self._forget_removed()
        return pbs_ledger(accrual, decays)

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        pbs = PbsTree.build(
            self.groups,
            [UsageRecord(name, usage) for name, usage in self.records.items()],
            unknown_shares=self.policy["unknown_shares"],
        )
        metrics = compute(pbs)
        for index in pbs.preorder():
            yield (
                pbs.name(index),
                (
                    float(metrics.usage[index]),
                    float(metrics.fairshare_perc[index]),
                    float(metrics.fairshare_tree_usage[index]),
                    metrics.fairshare_factor(index),
                    None,
                    None,
                ),
            )

    def _forget_removed(self) -> None:
        """An entity the tree only knew from its usage leaves with it, and its history too."""
        for name in [name for name in self.history if name not in self.defined]:
            if name not in self.records and name not in (TREEROOT, UNKNOWN):
                del self.history[name]

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        # In the order pbs_sched writes its usage file: the tree's, an entity new to it (under
        # unknown) before those made earlier (fairshare.cpp add_child, rec_write_usage).
        written = PbsTree.build(
            self.groups,
            [UsageRecord(name, usage) for name, usage in self.records.items()],
            unknown_shares=self.policy["unknown_shares"],
        ).records()
        database = UsageDatabase(exists=True, last_decay=self.last_decay, records=tuple(written))
        with pbs_tree_held(cluster) as held:
            held.store(database=database, reason="replay")
        return dict(Node.objects.filter(cluster=cluster).values_list("name", "id"))


class _SlurmSimulation(_Simulation):
    """Slurm passes (slurm_pass) on the cluster's associations, their usage from zero."""

    def __init__(self, cluster: Cluster, runs: list[Run], kept: set[int]) -> None:
        super().__init__(runs, kept)
        self.cluster = cluster
        self.state = slurm_state_get(cluster=cluster)
        self.tree = self.state.tree
        self.tree.tree.usage = [0.0] * len(self.tree)
        self.association = association_finder(self.tree)
        self.last_ran: int | None = None

    def usage_cycle(self, moment: int) -> Cycle:
        last_at = None if self.last_ran is None else epoch_time(self.last_ran)
        done = slurm_pass(
            self.tree,
            self.active,
            now=moment,
            last_ran=self.last_ran,
            association=self.association,
            **slurm_policy(self.cluster, epoch_time(moment), last_at),
        )
        self.last_ran = moment
        return slurm_ledger(done)

    def numbers(self) -> Iterator[tuple[Hashable, tuple[Any, ...]]]:
        state = self.state
        for row in slurm_rows(
            self.cluster,
            self.tree,
            grp_tres_mins=state.grp_tres_mins,
            tres_run_mins=state.tres_run_mins,
        ):
            slurm = row.slurm or SlurmValues()
            yield (
                row.key,
                (
                    row.state.usage,
                    row.state.fairshare_perc,
                    row.state.fairshare_tree_usage,
                    row.state.fairshare_factor,
                    slurm.level_fs,
                    slurm.fairshare_rank,
                ),
            )

    def store_usage(self, cluster: Cluster) -> Mapping[Any, int]:
        with slurm_tree_held(cluster) as held:
            held.store(tree=self.tree, reason="replay")
        return slurm_node_ids_get(cluster=cluster)
