"""Slurm cycles (accounting.services.cycle_run on a Slurm cluster): slurmctld's passes on the
stored associations, their history, and a replay that equals them."""

import math
from datetime import timedelta
from typing import Any

import pytest

from accounting.models import Cycle, Job, NodeHistory
from accounting.selectors import clusters_due, history_events_get, node_history_get
from accounting.services.cycles import CycleRefused, cycle_run
from accounting.services.history import history_roll_up
from accounting.services.replay import replay
from tests.accounting.services.test_cycles import DAY, MIDNIGHT, T0, at, job
from trees.engine.slurm import AssociationDef, decay_factor
from trees.models import Cluster, Node
from trees.selectors.slurm import sshare_get
from trees.services.slurm import slurm_tree_import

pytestmark = pytest.mark.django_db

HALF_LIFE = timedelta(hours=2)


def slurm_site(name: str = "slurm", half_life: timedelta = HALF_LIFE, **policy: Any) -> Cluster:
    slurm_tree_import(
        cluster_name=name,
        associations=[
            AssociationDef(account="chem", shares=2),
            AssociationDef(account="chem", parent="chem", user="ann", shares=1),
            AssociationDef(account="chem", parent="chem", user="cat", shares=1),
            AssociationDef(account="phys", shares=1),
            AssociationDef(account="phys", parent="phys", user="bob", shares=1),
        ],
        source="test",
    )
    cluster = Cluster.objects.get(name=name)
    cluster.priority_decay_half_life = half_life
    cluster.priority_calc_period = timedelta(minutes=5)
    for field, value in policy.items():
        setattr(cluster, field, value)
    cluster.save()
    return cluster


def slurm_job(
    cluster: Cluster, job_id: str, entity: str, start: int, end: int | None, cpus: int
) -> Job:
    """A run by hand, as sacct gives it: billing TRES = cpus, usage cpus × elapsed."""
    account, user = entity.split(":")
    return job(
        cluster, job_id, entity, start, end, cpus, user=user, account=account, billing=float(cpus)
    )


def raw_usage(cluster: Cluster) -> dict[str, float]:
    return {
        (f"{node.parent.name}:{node.name}" if node.kind == "user" and node.parent else node.name): (
            node.usage
        )
        for node in Node.objects.filter(cluster=cluster).select_related("parent")
    }


def test_passes_without_decay_charge_exact_cpu_seconds() -> None:
    cluster = slurm_site(half_life=timedelta(0))
    slurm_job(cluster, "1", "chem:ann", T0 + 10, T0 + 3610, 4)
    slurm_job(cluster, "2", "phys:bob", T0 + 100, None, 2)  # still running
    for moment in range(T0, T0 + 3900 + 1, 300):
        cycle_run(cluster=cluster, now=at(moment))
    usage = raw_usage(cluster)
    assert usage["chem:ann"] == 4 * 3600
    assert usage["phys:bob"] == 2 * 3800
    assert usage["chem"] == 4 * 3600
    assert usage["root"] == 4 * 3600 + 2 * 3800
    assert {j.job_id: j.accrued for j in Job.objects.all()} == {"1": 4 * 3600, "2": 2 * 3800}
    cycles = Cycle.objects.filter(cluster=cluster).order_by("at")
    assert [c.jobs_accrued for c in cycles][:3] == [0, 2, 2]  # the first pass starts the clock
    assert sum(c.usage_added for c in cycles) == 4 * 3600 + 2 * 3800
    assert not any(c.decays_applied for c in cycles)  # half-life 0: no decay


def test_a_pass_decays_every_association_then_charges_running_jobs() -> None:
    cluster = slurm_site()
    slurm_job(cluster, "1", "chem:ann", T0 - 100, None, 4)
    cycle_run(cluster=cluster, now=at(T0))
    cycle_run(cluster=cluster, now=at(T0 + 300))
    factor = decay_factor(HALF_LIFE)
    first = 300 * math.pow(factor, 300) * 4
    assert raw_usage(cluster)["chem:ann"] == first
    cycle = cycle_run(cluster=cluster, now=at(T0 + 600))
    assert cycle is not None
    assert (cycle.jobs_accrued, cycle.decays_applied) == (1, 1)
    assert raw_usage(cluster)["chem:ann"] == first * math.pow(factor, 300) + first
    # sshare shows what slurmctld would: RawUsage as an integer, the Fair Tree columns.
    listing = sshare_get(cluster=cluster, long=True, parsable="|")
    assert f"chem|ann|1|0.500000|{int(first * math.pow(factor, 300) + first)}|" in listing


def test_history_holds_the_fair_tree_numbers_of_each_pass() -> None:
    cluster = slurm_site()
    slurm_job(cluster, "1", "chem:ann", T0 - 100, T0 + 500, 4)
    slurm_job(cluster, "2", "phys:bob", T0 + 50, None, 1)
    for moment in (T0, T0 + 300, T0 + 600):
        cycle_run(cluster=cluster, now=at(moment))
    for node in Node.objects.filter(cluster=cluster):
        last = node_history_get(node=node)[-1]
        assert (last.at, last.usage, last.fairshare_factor) == (
            at(T0 + 600),
            node.usage,
            node.fairshare_factor,
        )
        assert (last.level_fs, last.fairshare_rank) == (node.level_fs, node.fairshare_rank)
    ann = Node.objects.get(cluster=cluster, name="ann")
    assert ann.fairshare_rank is not None
    # Slurm's rank (FairShare = rank / users): tied at first, then ann, the heaviest, last.
    assert [p.fairshare_rank for p in node_history_get(node=ann)] == [3, 1, 1]


def test_without_limits_a_jobs_last_part_is_never_charged() -> None:
    cluster = slurm_site(half_life=timedelta(0), charge_job_end=False)
    slurm_job(cluster, "1", "chem:ann", T0 + 6, T0 + 156, 1)
    for moment in (T0, T0 + 100, T0 + 300):
        cycle_run(cluster=cluster, now=at(moment))
    assert raw_usage(cluster)["chem:ann"] == 94  # the real cluster's 150 s job, charged 94 s
    assert Job.objects.get().accrued == 150  # settled


def test_a_run_ingested_after_its_passes_is_charged_at_the_next_one() -> None:
    cluster = slurm_site(half_life=timedelta(0))
    for moment in (T0, T0 + 300, T0 + 600):
        cycle_run(cluster=cluster, now=at(moment))
    slurm_job(cluster, "1", "chem:ann", T0 + 100, T0 + 400, 2)  # a late sacct dump
    cycle = cycle_run(cluster=cluster, now=at(T0 + 900))
    assert cycle is not None
    assert cycle.usage_added == 600
    assert raw_usage(cluster)["chem:ann"] == 600


def test_a_daily_reset_zeroes_usage_at_midnight_and_marks_the_charts() -> None:
    cluster = slurm_site(half_life=timedelta(0), priority_usage_reset_period="DAILY")
    slurm_job(cluster, "1", "chem:ann", MIDNIGHT + DAY - 600, MIDNIGHT + DAY + 600, 1)
    for moment in range(MIDNIGHT + DAY - 600, MIDNIGHT + DAY + 601, 300):
        cycle_run(cluster=cluster, now=at(moment))
    # The pass at midnight resets, then charges the five minutes before it; two passes more.
    assert raw_usage(cluster)["chem:ann"] == 900
    reset = Cycle.objects.get(cluster=cluster, usage_reset=True)
    assert reset.at == at(MIDNIGHT + DAY)
    events = history_events_get(cluster=cluster)
    assert [(e.at, e.kind) for e in events if e.kind == "decay"] == [(at(MIDNIGHT + DAY), "decay")]
    assert "PriorityUsageResetPeriod=DAILY" in events[-1].text


def test_slurm_clusters_are_due_every_priority_calc_period() -> None:
    cluster = slurm_site()
    assert clusters_due(at(T0 + 299)) == [(cluster, at(T0))]
    cycle_run(cluster=cluster, now=at(T0))
    assert clusters_due(at(T0 + 299)) == []
    assert clusters_due(at(T0 + 300)) == [(cluster, at(T0 + 300))]


def test_a_slurm_cluster_without_associations_is_refused() -> None:
    cluster = Cluster.objects.create(name="empty", scheduler="slurm")
    with pytest.raises(CycleRefused, match="no tree: import its associations first"):
        cycle_run(cluster=cluster, now=at(T0))


def test_a_slurm_replay_stores_what_live_passes_would_have() -> None:
    live, replayed = slurm_site("live"), slurm_site("replayed")
    for cluster in (live, replayed):
        slurm_job(cluster, "1", "chem:ann", T0 + 10, T0 + 3610, 4)
        slurm_job(cluster, "2", "phys:bob", T0 + 100, T0 + DAY + 20, 2)
        slurm_job(cluster, "3", "chem:cat", T0 + DAY, None, 8)  # still running
        slurm_job(cluster, "4", "bio:dan", T0 + 60, T0 + 70, 1)  # no such association
    last = T0 + 2 * DAY
    step = 900
    for moment in range(T0, last + 1, step):
        cycle_run(cluster=live, now=at(moment))
    history_roll_up(cluster=live, now=at(last))

    result = replay(cluster=replayed, start=at(T0), until=at(last), step=timedelta(seconds=step))
    assert (result.cycles, result.runs) == (2 * 96 + 1, 3)

    def state(cluster: Cluster) -> tuple[Any, ...]:
        nodes = {
            (node.parent.name if node.parent else "", node.name): (
                node.usage, node.fairshare_factor, node.level_fs, node.fairshare_rank,
                node.effectv_usage,
            )
            for node in Node.objects.filter(cluster=cluster).select_related("parent")
        }  # fmt: skip
        history = sorted(
            (row.node.name, row.at, row.usage, row.fairshare_perc, row.fairshare_factor,
             row.level_fs, row.fairshare_rank)
            for row in NodeHistory.objects.filter(node__cluster=cluster).select_related("node")
        )  # fmt: skip
        cycles = list(
            Cycle.objects.filter(cluster=cluster)
            .order_by("at")
            .values_list("at", "jobs_accrued", "usage_added", "decays_applied", "usage_reset",
                         "history_kept")
        )  # fmt: skip
        accrued = sorted(Job.objects.filter(cluster=cluster).values_list("job_id", "accrued"))
        return nodes, history, cycles, accrued

    assert state(live) == state(replayed)
    assert raw_usage(replayed)["chem:cat"] > 0
