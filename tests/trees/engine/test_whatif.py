"""The what-if's policies, orders, targets and figures (trees.engine.whatif), on hand-checked
cases and random traces."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.accelerator import FsGroup
from trees.engine.pbs import GroupDef
from trees.engine.simulate import FifoOrder, SimJob
from trees.engine.simulate_accelerator import AcceleratorOrder
from trees.engine.simulate_pbs import PbsFairShareOrder, PbsOrder
from trees.engine.simulate_slurm import SlurmOrder
from trees.engine.slurm import AssociationDef
from trees.engine.whatif import (
    AcceleratorPolicy,
    PbsPolicy,
    SlurmPolicy,
    default_backfill,
    fairness,
    queue_order,
    run_whatif,
    summary_of,
    targets_of,
)

# chem (60 shares): ann 1, cat 3; phys (40): bob.
GROUPS = (
    GroupDef("chem", 10, "root", 60),
    GroupDef("phys", 11, "root", 40),
    GroupDef("ann", 20, "chem", 1),
    GroupDef("cat", 21, "chem", 3),
    GroupDef("bob", 22, "phys", 1),
)
PBS = PbsPolicy(GROUPS, usage_res="ncpus*walltime", iteration=10)


def job(job_id: str, entity: str, submit: int, run: int, cores: int, group: str = "") -> SimJob:
    return SimJob(job_id, entity, submit, run, cores, None, None, "", group)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (PBS, "greedy"),
        (replace(PBS, strict_ordering=True), "easy"),
        (replace(PBS, strict_ordering=True, backfill_depth=3), 3),
        (replace(PBS, strict_ordering=True, backfill=False), "none"),
        (replace(PBS, strict_ordering=True, backfill_depth=0), "none"),
        (SlurmPolicy(()), "easy"),
        (AcceleratorPolicy(()), "greedy"),
        (None, "easy"),
    ],
)
def test_each_scheduler_s_own_discipline(policy: object, expected: object) -> None:
    assert default_backfill(policy) == expected  # type: ignore[arg-type]


def test_the_order_each_policy_gives() -> None:
    assert type(queue_order(PBS, "fifo")) is FifoOrder
    assert type(queue_order(None, "policy")) is FifoOrder
    assert type(queue_order(PBS, "policy")) is PbsFairShareOrder
    assert type(queue_order(replace(PBS, job_sort_formula="ncpus"), "policy")) is PbsOrder
    assert type(queue_order(replace(PBS, job_sort_key=(("ncpus", True),)), "policy")) is PbsOrder
    # by_queue matters only when the queues' priorities differ
    one_priority = replace(PBS, by_queue=True, queue_priorities={"a": 5, "b": 5})
    assert type(queue_order(one_priority, "policy")) is PbsFairShareOrder
    two = replace(PBS, by_queue=True, queue_priorities={"a": 5, "b": 9})
    assert type(queue_order(two, "policy")) is PbsOrder
    assert type(queue_order(replace(PBS, fair_share=False), "policy")) is FifoOrder
    assert type(queue_order(SlurmPolicy(()), "policy")) is SlurmOrder
    assert type(queue_order(AcceleratorPolicy(()), "policy")) is AcceleratorOrder


def test_pbs_targets_are_the_fairshare_percentages() -> None:
    jobs = [job("1", "ann", 0, 10, 1, "chem"), job("2", "bob", 0, 10, 1, "phys"),
            job("3", "dan", 0, 10, 1, "")]  # fmt: skip
    targets = targets_of(PBS, jobs)
    # ann: 60/100 * 1/4; bob: 40/100; dan is in `unknown`, which has 0 shares here
    assert targets.entity == pytest.approx({"ann": 0.15, "bob": 0.4, "dan": 0.0})
    assert targets.group == pytest.approx({"chem": 0.6, "phys": 0.4})
    # with unknown_shares 100 of 200, unknown gets half, and dan (1 share in it) all of that
    half = targets_of(replace(PBS, unknown_shares=100), jobs)
    assert half.entity == pytest.approx({"ann": 0.075, "bob": 0.2, "dan": 0.5})


def test_slurm_targets_are_the_norm_shares_summed_per_user() -> None:
    policy = SlurmPolicy(
        (
            AssociationDef("a", shares=1),
            AssociationDef("b", shares=3),
            AssociationDef("a", "a", "u", 1),
            AssociationDef("a", "a", "v", 1),
            AssociationDef("b", "b", "u", 1),
        )
    )
    jobs = [job("1", "u", 0, 10, 1, "a"), job("2", "v", 0, 10, 1, "a"),
            job("3", "u", 0, 10, 1, "b")]  # fmt: skip
    targets = targets_of(policy, jobs)
    assert targets.entity == pytest.approx({"u": 0.125 + 0.75, "v": 0.125})
    assert targets.group == pytest.approx({"a": 0.25, "b": 0.75})


def test_accelerator_targets_are_the_weights_parts_down_the_tree() -> None:
    policy = AcceleratorPolicy(
        (FsGroup("/a", 1), FsGroup("/b", 3), FsGroup("/a/x", 1), FsGroup("/a/y", 3))
    )
    jobs = [job("1", "u", 0, 10, 1, "/a/x"), job("2", "u", 0, 10, 1, "/a/y"),
            job("3", "w", 0, 10, 1, "/b")]  # fmt: skip
    targets = targets_of(policy, jobs)
    assert targets.group == pytest.approx({"/a/x": 0.0625, "/a/y": 0.1875, "/b": 0.75})
    assert targets.entity == pytest.approx({"u": 0.25, "w": 0.75})


def test_zero_shares_in_the_variant_puts_phys_behind_chem() -> None:
    # ann's 2-core job runs 0-100 s and uses the pool; at 10 s bob, then ann, queue a 2-core
    # job each. Under the policy bob's phys (no usage) goes first at 100 s; a variant giving
    # phys 0 shares puts it behind chem, whatever chem's usage (pbsfs -c compares the top
    # level first: bob's own shares would not do it).
    jobs = [job("1", "ann", 0, 100, 2, "chem"), job("2", "bob", 10, 50, 2, "phys"),
            job("3", "ann", 20, 50, 2, "chem")]  # fmt: skip
    variant = replace(PBS, groups=(GROUPS[0], GroupDef("phys", 11, "root", 0), *GROUPS[2:]))
    whatif = run_whatif(jobs, capacity=2, policy=PBS, variant=variant, has_variant=True)
    assert whatif.variant is not None
    starts = {j.job_id: j.start for j in whatif.baseline.schedule.jobs}
    assert starts == {"1": 0, "2": 100, "3": 150}
    assert {j.job_id: j.start for j in whatif.variant.schedule.jobs} == {"1": 0, "3": 100, "2": 150}
    assert whatif.baseline.backfill == whatif.variant.backfill == "greedy"
    assert whatif.variant.targets.entity == {"ann": 0.25, "bob": 0.0}


def test_the_summary_of_a_hand_checked_replay() -> None:
    # Two 1-core jobs on one core: ann's runs 0-30 s, bob's waits 30 s and runs 10 s.
    jobs = [job("1", "ann", 0, 30, 1, "chem"), job("2", "bob", 0, 10, 1, "phys")]
    whatif = run_whatif(jobs, capacity=1, policy=None)
    summary = summary_of(whatif.baseline, 1)
    assert (summary.jobs, summary.mean_wait, summary.median_wait) == (2, 15.0, 15.0)
    assert summary.p90_wait == pytest.approx(27.0)  # 0 + 0.9 * (30 - 0)
    # slowdowns: ann 1, bob (30 + 10) / 10 = 4
    assert summary.bounded_slowdown == 2.5
    assert summary.utilization == 1.0  # 40 core-seconds over 40 s
    assert summary.jain_index is None  # no policy: no targets
    assert whatif.variant is None


def test_jain_s_index_over_the_attainment_of_the_active_entities() -> None:
    # ann gets 30 of 40 core-seconds, bob 10: with targets 0.15 and 0.4 taken among the two
    # alone (0.273, 0.727) they attain 2.75 and 0.344: (3.094)^2 / (2 * (7.5625 + 0.1182))
    jobs = [job("1", "ann", 0, 30, 1, "chem"), job("2", "bob", 0, 10, 1, "phys")]
    whatif = run_whatif(jobs, capacity=2, policy=PBS)
    ann, bob = 0.75 / (0.15 / 0.55), 0.25 / (0.4 / 0.55)
    expected = (ann + bob) ** 2 / (2 * (ann**2 + bob**2))
    assert fairness(whatif.baseline) == pytest.approx(expected, rel=1e-6)


def test_progress_runs_from_0_to_1_over_both_sides() -> None:
    jobs = [job(str(n), "ann", n, 5, 1, "chem") for n in range(30)]
    heard: list[float] = []
    run_whatif(jobs, capacity=1, policy=PBS, variant=PBS, has_variant=True,
               progress=heard.append)  # fmt: skip
    assert heard == sorted(heard)
    assert heard[-1] == 1.0
    assert any(0.4 < fraction <= 0.5 for fraction in heard)  # the baseline's end: half way


@st.composite
def traces(draw: st.DrawFn) -> list[SimJob]:
    count = draw(st.integers(1, 40))
    entities = ["ann", "bob", "cat", "dan"]
    return [
        SimJob(
            str(n), draw(st.sampled_from(entities)), draw(st.integers(0, 2000)),
            draw(st.integers(0, 400)), draw(st.integers(0, 6)),
            draw(st.one_of(st.none(), st.integers(1, 800))),
        )
        for n in range(count)
    ]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(traces(), st.sampled_from(["none", "greedy", "easy", 2]))
def test_a_variant_without_changes_is_its_baseline(jobs: list[SimJob], backfill: str) -> None:
    policy = replace(PBS, job_sort_formula="ncpus + fairshare_perc" if len(jobs) % 2 else "")
    whatif = run_whatif(jobs, capacity=6, policy=policy, backfill=backfill,  # type: ignore[arg-type]
                        variant=policy, has_variant=True)  # fmt: skip
    assert whatif.variant is not None
    assert whatif.variant.schedule == whatif.baseline.schedule
    assert whatif.variant.targets == whatif.baseline.targets
