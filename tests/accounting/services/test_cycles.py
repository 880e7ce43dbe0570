"""Cycles (accounting.services.cycle_run): job usage accrued once, decays as pbsfs -d does."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from accounting.models import Cycle, Job, NodeHistory
from accounting.parsers.records import JobState
from accounting.services import history
from accounting.services.cycles import CycleRefused, cycle_run
from accounting.services.history import RollUp, history_roll_up
from accounting.services.replay import replay
from tests.accounting.services.test_ingest import DAY1, DAY2, DAY3, TREE, pbs_ingest
from tests.conftest import write_file
from trees.engine.pbs import PbsTree, UsageRecord, compute
from trees.formats.pbsfs import UsageDatabase, run_pbsfs
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Node
from trees.selectors.pbs import pbs_state_get
from trees.services.pbs import resource_group_import

pytestmark = pytest.mark.django_db

T0 = 1_772_352_000  # 2026-03-01 08:00 UTC
DAY = 86_400
MIDNIGHT = T0 - 8 * 3600  # 2026-03-01 00:00 UTC


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def site(decay_factor: float = 0.5) -> Cluster:
    # (the database refuses a decay_factor outside (0, 1): tests/trees/test_models.py)
    groups = parse_resource_group(TREE.encode()).groups
    resource_group_import(cluster_name="site", groups=groups, pbs_messages=[], source="test")
    cluster = Cluster.objects.get(name="site")
    cluster.decay_factor = decay_factor
    cluster.save()
    return cluster


def job(
    cluster: Cluster,
    job_id: str,
    entity: str,
    start: int,
    end: int | None,
    ncpus: int,
    **fields: object,
) -> Job:
    """A run by hand: ended when `end` is given (usage ncpus*walltime), else running."""
    values: dict[str, object] = {"state": JobState.RUNNING, "usage": 0.0}
    if end is not None:
        values = {
            "state": JobState.ENDED,
            "walltime": end - start,
            "end": at(end),
            "usage": float(ncpus * (end - start)),
        }
    return Job.objects.create(
        cluster=cluster,
        job_id=job_id,
        entity=entity,
        ncpus=ncpus,
        start=at(start),
        source_file="hand",
        source_line=1,
        **{"user": entity, **values, **fields},
    )


def usages(cluster: Cluster) -> dict[str, float]:
    return {node.name: node.usage for node in Node.objects.filter(cluster=cluster)}


def test_runs_accrue_over_the_cycles_they_span_and_decay_when_due() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0, T0 + 3600, 4)  # 14,400
    job(cluster, "2", "bob", T0 + 1800, T0 + 1800 + 7200, 2)  # 14,400

    first = cycle_run(cluster=cluster, now=at(T0))
    assert first is not None
    assert (first.jobs_accrued, first.usage_added, first.decays_applied) == (0, 0.0, 0)
    cluster.refresh_from_db()
    assert cluster.last_decay == at(T0)  # PBS starts the decay clock on its first cycle

    cycle_run(cluster=cluster, now=at(T0 + 1800))
    assert usages(cluster)["ann"] == 1 + 7200  # half of job 1's hour
    cycle_run(cluster=cluster, now=at(T0 + 3600))
    assert (usages(cluster)["ann"], usages(cluster)["bob"]) == (14_401, 3601)

    # The workers were down for a day: the decay due at T0 + 24 h applies to what ran before it.
    late = cycle_run(cluster=cluster, now=at(T0 + DAY + 600))
    assert late is not None
    assert (late.decays_applied, late.usage_added) == (1, 10_800.0)
    assert (usages(cluster)["ann"], usages(cluster)["bob"]) == (7200.5, 7200.5)
    assert usages(cluster)["chem"] == 1 + 7200.5  # a group is 1 + its leaves
    cluster.refresh_from_db()
    assert cluster.last_decay == at(T0 + DAY)

    two = cycle_run(cluster=cluster, now=at(T0 + 3 * DAY + 5))
    assert two is not None
    assert two.decays_applied == 2
    assert usages(cluster)["ann"] == 1800.125
    assert {j.job_id: j.accrued for j in Job.objects.all()} == {"1": 14_400, "2": 14_400}
    assert Cycle.objects.filter(cluster=cluster).count() == 5


def test_decays_are_those_of_pbsfs_minus_d_at_the_same_instants() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0 - 7200, T0 - 3600, 3)  # 10,800, over before the first cycle
    job(cluster, "2", "bob", T0 - 600, T0 - 300, 1)  # 300
    cycle_run(cluster=cluster, now=at(T0))
    cluster.refresh_from_db()
    before = pbs_state_get(cluster=cluster)
    # A second past two days: two decays (at two days on the dot PBS decays once).
    cycle_run(cluster=cluster, now=at(T0 + 2 * DAY + 1))

    # pbsfs -d twice on the usage database the first cycle left.
    database = before.database
    for instant in (T0 + DAY, T0 + 2 * DAY):
        written = run_pbsfs(
            ["-d"], groups=before.groups, database=database, policy=before.policy, now=instant
        ).written
        assert written is not None
        database = written
    cluster.refresh_from_db()
    after = pbs_state_get(cluster=cluster).database
    assert after == UsageDatabase(True, T0 + 2 * DAY, database.records)
    assert {r.name: r.usage for r in after.records} == {"ann": 2700.25, "bob": 75.25}


def test_a_cycle_at_a_time_already_done_does_nothing() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0, T0 + 3600, 4)
    cycle_run(cluster=cluster, now=at(T0))
    assert cycle_run(cluster=cluster, now=at(T0 + 3600)) is not None
    again = cycle_run(cluster=cluster, now=at(T0 + 3600))
    assert again is None
    assert usages(cluster)["ann"] == 14_401
    assert Cycle.objects.count() == 2


def test_a_clock_going_backwards_is_refused() -> None:
    cluster = site()
    cycle_run(cluster=cluster, now=at(T0))
    with pytest.raises(CycleRefused, match="before its last cycle at 2026-03-01T08:00:00"):
        cycle_run(cluster=cluster, now=at(T0 - 1))


def test_a_cluster_without_a_tree_is_refused() -> None:
    cluster = Cluster.objects.create(name="bare")
    with pytest.raises(CycleRefused, match="has no tree: import its resource_group first"):
        cycle_run(cluster=cluster, now=at(T0))


def test_a_cycle_that_dies_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = site()
    job(cluster, "1", "ann", T0 - 3600, T0 - 60, 4)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Cycle, "save", disk_full)  # the ledger row, written last
    with pytest.raises(OSError, match="disk full"):
        cycle_run(cluster=cluster, now=at(T0))
    monkeypatch.undo()
    assert Job.objects.get().accrued == 0
    assert usages(cluster)["ann"] == 1
    assert cycle_run(cluster=cluster, now=at(T0)) is not None  # the retry does it all
    assert usages(cluster)["ann"] == 1 + 4 * 3540


def test_a_running_job_accrues_as_it_runs_and_its_end_adds_the_remainder(tmp_path: Path) -> None:
    cluster = site()
    pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    start = 1_772_359_200  # job 102: bob, 8 cores, still running at the end of day 1
    cycle_run(cluster=cluster, now=at(start + 3600))
    assert usages(cluster)["bob"] == 1 + 8 * 3600
    assert usages(cluster)["ann"] == 1 + 4 * 3600  # job 101, over before the cycle

    pbs_ingest(write_file(tmp_path, "20260302", DAY2))  # 102 ends after 24 h
    ended = Job.objects.get(job_id="102")
    assert (ended.state, ended.usage, ended.accrued) == ("ended", 8 * 86_400, 8 * 3600)
    cycle = cycle_run(cluster=cluster, now=at(start + DAY))
    assert cycle is not None
    assert cycle.decays_applied == 0
    assert cycle.usage_added == (8 * 86_400 - 8 * 3600) + (2 * 1800 + 2 * 3600)  # 102's rest, 103
    assert usages(cluster)["bob"] == 1 + 8 * 86_400  # the job's usage, once
    assert usages(cluster)["cy"] == 1 + 2 * 1800 + 2 * 3600  # both runs of 103, under unknown


def test_a_job_charged_to_an_entity_the_tree_lost_goes_to_unknown() -> None:
    cluster = site()
    job(cluster, "1", "zed", T0 - 3600, T0 - 600, 1)
    cycle_run(cluster=cluster, now=at(T0))
    zed = Node.objects.get(cluster=cluster, name="zed")
    assert zed.parent is not None
    assert zed.parent.name == "unknown"
    assert zed.usage == 1 + 3000


def test_half_life_of_a_week_is_decay_factor_one_half_per_week() -> None:
    from trees.engine.cycle import half_life_factor

    cluster = site(decay_factor=half_life_factor(168 * 3600, 168 * 3600))
    cluster.decay_interval = timedelta(hours=168)
    cluster.save()
    job(cluster, "1", "ann", T0 - 7200, T0 - 3600, 2)
    cycle_run(cluster=cluster, now=at(T0))
    cycle_run(cluster=cluster, now=at(T0 + 168 * 3600))  # a week on the dot: not yet
    assert usages(cluster)["ann"] == 1 + 7200
    cycle_run(cluster=cluster, now=at(T0 + 168 * 3600 + 600))
    assert usages(cluster)["ann"] == (1 + 7200) * 0.5


def test_history_is_what_the_engine_computes_from_the_usages_at_each_cycle() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0, T0 + 3600, 4)
    job(cluster, "2", "bob", T0 + 1800, T0 + 1800 + 7200, 2)
    job(cluster, "3", "zed", T0 + 600, T0 + 1200, 1)  # an entity the tree lacks
    instants = [T0, T0 + 1800, T0 + 3600, T0 + DAY + 600]
    for instant in instants:
        cycle_run(cluster=cluster, now=at(instant))
    cluster.refresh_from_db()
    groups = pbs_state_get(cluster=cluster).groups
    for instant in instants:
        rows = {
            row.node.name: row
            for row in NodeHistory.objects.filter(at=at(instant)).select_related("node")
        }
        # The usage database: the leaves whose usage is not 1 (PBS writes no others).
        leaves = [n for n, row in rows.items() if row.node.kind == "user" and row.usage != 1]
        records = [UsageRecord(name, rows[name].usage) for name in leaves]
        pbs = PbsTree.build(groups, records)
        metrics = compute(pbs)
        assert sorted(rows) == sorted(pbs.name(index) for index in pbs.preorder())
        for index in pbs.preorder():
            row = rows[pbs.name(index)]
            assert row.usage == metrics.usage[index]
            assert row.fairshare_perc == metrics.fairshare_perc[index]
            assert row.fairshare_tree_usage == metrics.fairshare_tree_usage[index]
            assert row.fairshare_factor == metrics.fairshare_factor(index)
            assert row.usage_perc == metrics.usage_perc(index)
    assert NodeHistory.objects.get(node__name="ann", at=at(T0 + 1800)).usage == 1 + 7200


@pytest.mark.parametrize("rows_a_step", [history.ROLL_UP_ROWS, 1])  # 1: a cycle a transaction
def test_the_roll_up_keeps_a_day_of_cycles_then_hours_then_days(
    rows_a_step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "ROLL_UP_ROWS", rows_a_step)
    cluster = site()
    # Cycles every 6 hours for ten days from 00:00 UTC.
    six_hours = 6 * 3600
    instants = [MIDNIGHT + k * six_hours for k in range(40)]  # ten days
    instants += [MIDNIGHT + 5 * DAY + 600, MIDNIGHT + 5 * DAY + 1200]  # two more in one hour
    for instant in sorted(instants):
        cycle_run(cluster=cluster, now=at(instant))
    nodes = Node.objects.filter(cluster=cluster).count()
    now = at(MIDNIGHT + 10 * DAY)

    rolled = history_roll_up(cluster=cluster, now=now)

    # Days 0 to 2 (before the last week) keep their 18:00 cycle; in the hour from day 5
    # 00:00 only the cycle of 00:20 stays; the last week's other hours hold one cycle each.
    thinned = [MIDNIGHT + k * six_hours for k in range(12) if k % 4 != 3]
    thinned += [MIDNIGHT + 5 * DAY, MIDNIGHT + 5 * DAY + 600]
    assert rolled == RollUp(cycles_thinned=len(thinned), rows_removed=len(thinned) * nodes)
    left = sorted({row.timestamp() for row in NodeHistory.objects.values_list("at", flat=True)})
    assert left == sorted(set(instants) - set(thinned))
    assert set(Cycle.objects.filter(history_kept=False).values_list("at", flat=True)) == {
        at(instant) for instant in thinned
    }
    assert history_roll_up(cluster=cluster, now=now) == RollUp(0, 0)  # again: nothing to do


def twin_sites() -> tuple[Cluster, Cluster]:
    """Two clusters with the same tree and the same hand-made runs."""
    live = site()
    groups = parse_resource_group(TREE.encode()).groups
    resource_group_import(cluster_name="replayed", groups=groups, pbs_messages=[], source="test")
    replayed = Cluster.objects.get(name="replayed")
    for cluster in (live, replayed):
        job(cluster, "1", "ann", T0 + 300, T0 + 3900, 4)
        job(cluster, "2", "bob", T0 + 1800, T0 + DAY + 1800, 2)  # across the first decay
        job(cluster, "3", "zed", T0 + 60, T0 + 61, 1)  # under unknown, decayed away
        job(cluster, "4", "ann", T0 + 2 * DAY, None, 8)  # still running
        job(cluster, "5", "bob", T0 + DAY + 7000, T0 + DAY + 7000, 3)  # no duration
    return live, replayed


def test_a_replay_stores_what_live_cycles_would_have() -> None:
    live, replayed = twin_sites()
    step, last = 1800, T0 + 2 * DAY + 12 * 3600
    for moment in range(T0, last + 1, step):
        cycle_run(cluster=live, now=at(moment))
    history_roll_up(cluster=live, now=at(last))

    result = replay(cluster=replayed, start=at(T0), until=at(last), step=timedelta(seconds=step))

    assert (result.cycles, result.decays, result.runs) == (121, 2, 4)  # 5 used nothing

    def state(cluster: Cluster) -> tuple[Any, ...]:
        nodes = {
            node.name: (node.usage_record, node.usage, node.fairshare_tree_usage,
                        node.fairshare_factor, node.parent.name if node.parent else None)
            for node in Node.objects.filter(cluster=cluster)
        }  # fmt: skip
        history = sorted(
            (row.node.name, row.at, row.usage, row.fairshare_perc, row.fairshare_tree_usage,
             row.fairshare_factor)
            for row in NodeHistory.objects.filter(node__cluster=cluster).select_related("node")
        )  # fmt: skip
        cycles = list(
            Cycle.objects.filter(cluster=cluster)
            .order_by("at")
            .values_list("at", "jobs_accrued", "usage_added", "decays_applied",
                         "decay_times", "history_kept")
        )  # fmt: skip
        accrued = sorted(Job.objects.filter(cluster=cluster).values_list("job_id", "accrued"))
        last_decay = Cluster.objects.get(pk=cluster.pk).last_decay
        return nodes, history, cycles, accrued, last_decay

    live_state, replayed_state = state(live), state(replayed)
    assert live_state == replayed_state
    nodes, history, cycles, _, last_decay = replayed_state
    assert "zed" not in nodes  # its usage decayed to 1 and it left the tree, history and all
    assert last_decay == at(T0 + 2 * DAY)
    # The last day's 49 cycles stay; the 72 before it are thinned to the last of each hour.
    assert sum(1 for cycle in cycles if not cycle[-1]) == 36
    assert len(history) == (49 + 36) * len(nodes)


def test_a_replay_of_hand_made_runs_gives_the_usages_computed_by_hand() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0, T0 + 3600, 4)  # 14,400
    job(cluster, "2", "bob", T0 + 1800, T0 + 1800 + 7200, 2)  # 14,400
    result = replay(cluster=cluster, start=at(T0), until=at(T0 + 2 * DAY + 600))
    assert (result.cycles, result.decays, result.usage_added) == (2 * 144 + 2, 2, 28_800.0)
    # 1 + 14,400, halved at T0 + 24 h and at T0 + 48 h.
    assert (usages(cluster)["ann"], usages(cluster)["bob"]) == (3600.25, 3600.25)
    assert usages(cluster)["TREEROOT"] == 1 + 2 * 3600.25
    # Two days back the history keeps the last cycle of each hour: 08:50 of the first one.
    kept = NodeHistory.objects.filter(node__name="ann", at__lt=at(T0 + 3600))
    assert [(row.at, row.usage) for row in kept] == [(at(T0 + 3000), 1 + 12_000)]


def test_a_replay_needs_runs_and_a_forward_span() -> None:
    cluster = site()
    with pytest.raises(CycleRefused, match="has no job runs to replay: ingest some first"):
        replay(cluster=cluster)
    job(cluster, "1", "ann", T0, T0 + 3600, 4)
    with pytest.raises(CycleRefused, match="is before --from"):
        replay(cluster=cluster, start=at(T0), until=at(T0 - DAY))
    with pytest.raises(CycleRefused, match="step must be at least 1 s"):
        replay(cluster=cluster, step=timedelta(0))


def test_a_queued_job_accrues_nothing(tmp_path: Path) -> None:
    cluster = site()
    pbs_ingest(write_file(tmp_path, "20260303", DAY3))  # 105 and 106, queued
    queued_at = 1_772_528_400
    cycle = cycle_run(cluster=cluster, now=at(queued_at + DAY))
    assert cycle is not None
    assert cycle.usage_added == 0
    assert set(Job.objects.values_list("state", "accrued")) == {("queued", 0.0)}
