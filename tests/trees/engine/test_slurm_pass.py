"""Slurm's decay thread passes (trees.engine.slurm_pass), checked against hand arithmetic and
the real-cluster decay case of slurm-fairtree-behaviour.md (raw usage)."""

import math
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.cycle import Run
from trees.engine.slurm import AssociationDef, SlurmTree, decay_factor
from trees.engine.slurm_pass import (
    SlurmPass,
    billable_tres,
    charged_until,
    run_usage,
    slurm_pass,
)

HALF_LIFE_2MIN = decay_factor(timedelta(seconds=120))  # the real-cluster decay case
NO_DECAY = decay_factor(timedelta(0))
T = 1_000_000


def tree() -> SlurmTree:
    return SlurmTree.build(
        [
            AssociationDef(account="chem", shares=1),
            AssociationDef(account="chem", parent="chem", user="ann", shares=1),
            AssociationDef(account="phys", shares=1),
            AssociationDef(account="phys", parent="phys", user="bob", shares=1),
        ]
    )


def run(key: int, entity: str, start: int, end: int | None, cpus: int) -> Run:
    usage = 0.0 if end is None else float(cpus * (end - start))
    return Run(key, entity, start, end, usage, 0.0, ncpus=cpus, billable=float(cpus))


def passes(
    slurm: SlurmTree,
    runs: list[Run],
    times: list[int],
    factor: float,
    *,
    charge_job_end: bool = True,
    last_ran: int | None = None,
    reset: bool = False,
) -> SlurmPass:
    """Passes at `times` after one at `last_ran`; what the last of them did."""
    done = SlurmPass()
    for now in times:
        done = slurm_pass(
            slurm,
            runs,
            now=now,
            last_ran=last_ran,
            factor=factor,
            reset=reset,
            charge_job_end=charge_job_end,
            association=lambda entity: slurm.find(*entity.split(":")),
        )
        last_ran = now
    return done


def usage(slurm: SlurmTree, account: str, user: str | None = None) -> float:
    node = slurm.find(account, user)
    assert node is not None
    return slurm.tree.usage[node]


def test_the_real_cluster_decay_case() -> None:
    # A 4-CPU job running 53 s before a pass is charged 53·pow(df, 53)·4 = 155.9638…, then
    # ×pow(df, 60) and +60·pow(df, 60)·4 at the next pass: 279.728…
    slurm = tree()
    job = run(1, "chem:ann", T, None, 4)
    passes(slurm, [job], [T + 53, T + 113], HALF_LIFE_2MIN, last_ran=T - 7)
    first = 53 * math.pow(HALF_LIFE_2MIN, 53) * 4
    expected = first * math.pow(HALF_LIFE_2MIN, 60) + 60 * math.pow(HALF_LIFE_2MIN, 60) * 4
    assert f"{first:.4f}" == "155.9638"
    assert usage(slurm, "chem", "ann") == expected
    assert f"{expected:.3f}" == "279.728"
    # The account and the root hold their own copy of the same increments.
    assert usage(slurm, "chem") == expected
    assert slurm.tree.usage[0] == expected
    assert usage(slurm, "phys", "bob") == 0.0
    assert job.accrued == 4 * 113  # TRES-seconds charged, undecayed
    assert charged_until(job) == T + 113


def test_the_first_pass_only_starts_the_clock() -> None:
    # What ran before it is in the usage the associations hold: the runs are charged up to it.
    slurm = tree()
    job = run(1, "chem:ann", T - 600, None, 4)
    ended = run(2, "phys:bob", T - 900, T - 300, 1)
    later = run(3, "phys:bob", T + 60, None, 1)
    done = passes(slurm, [job, ended, later], [T], HALF_LIFE_2MIN)
    assert (sorted(done.changed), done.added, done.decayed) == ([1, 2], 0.0, False)
    assert slurm.tree.usage == [0.0] * len(slurm)
    assert (job.accrued, ended.accrued, later.accrued) == (4 * 600, 600, 0)
    assert charged_until(job) == T


def test_without_decay_usage_is_exact_cpu_seconds_and_the_tail_is_charged_at_the_end() -> None:
    slurm = tree()
    runs = [run(1, "chem:ann", T + 10, T + 3610, 4), run(2, "phys:bob", T + 20, T + 250, 2)]
    passes(slurm, runs, list(range(T, T + 4000, 300)), NO_DECAY)
    assert usage(slurm, "chem", "ann") == 4 * 3600
    assert usage(slurm, "phys", "bob") == 2 * 230  # started and ended between two passes
    assert slurm.tree.usage[0] == 4 * 3600 + 2 * 230
    assert [r.accrued == r.usage for r in runs] == [True, True]


def test_without_limits_the_part_after_the_last_pass_is_never_charged() -> None:
    # AccountingStorageEnforce=associations: 150 s jobs were charged 94 s (ft_basic).
    slurm = tree()
    job = run(1, "chem:ann", T + 6, T + 156, 1)
    passes(slurm, [job], [T, T + 100, T + 200], NO_DECAY, charge_job_end=False)
    assert usage(slurm, "chem", "ann") == 94
    assert job.accrued == job.usage  # settled: nothing more will be charged for it


def test_a_tail_is_decayed_with_the_pass_that_follows_it() -> None:
    slurm = tree()
    job = run(1, "chem:ann", T + 50, T + 80, 2)
    passes(slurm, [job], [T, T + 100], HALF_LIFE_2MIN)
    charged = 30 * math.pow(HALF_LIFE_2MIN, 30) * 2
    assert usage(slurm, "chem", "ann") == charged * math.pow(HALF_LIFE_2MIN, 100)


def test_a_run_learnt_of_late_is_charged_its_missed_span_in_one_piece() -> None:
    slurm = tree()
    passes(slurm, [], [T, T + 300, T + 600], HALF_LIFE_2MIN)
    late = run(1, "chem:ann", T + 100, T + 400, 1)  # ingested after the passes that saw it
    passes(slurm, [late], [T + 900], HALF_LIFE_2MIN, last_ran=T + 600)
    piece = 300 * math.pow(HALF_LIFE_2MIN, 300)
    expected = piece * math.pow(HALF_LIFE_2MIN, 200) * math.pow(HALF_LIFE_2MIN, 300)
    assert usage(slurm, "chem", "ann") == pytest.approx(expected, rel=1e-15)
    assert late.accrued == late.usage


def test_a_run_of_an_association_the_tree_lacks_waits_for_it() -> None:
    slurm = tree()
    job = run(1, "bio:cat", T + 10, T + 100, 1)
    passes(slurm, [job], [T, T + 300], NO_DECAY)
    assert slurm.tree.usage == [0.0] * len(slurm)
    assert job.accrued == 0.0


def test_a_due_reset_zeroes_usage_before_the_pass_charges_running_jobs() -> None:
    slurm = tree()
    ended = run(1, "phys:bob", T + 10, T + 20, 1)
    running = run(2, "chem:ann", T + 50, None, 1)
    passes(slurm, [ended, running], [T, T + 100], NO_DECAY)
    assert (usage(slurm, "phys", "bob"), usage(slurm, "chem", "ann")) == (10, 50)
    done = passes(slurm, [ended, running], [T + 200], NO_DECAY, last_ran=T + 100, reset=True)
    assert done.reset
    assert (usage(slurm, "phys", "bob"), usage(slurm, "chem", "ann")) == (0, 100)
    assert slurm.tree.usage[0] == 100


def test_billable_tres_is_the_billing_else_the_cpus() -> None:
    assert billable_tres(None, 12) == 12.0
    assert billable_tres(32.0, 16) == 32.0
    assert run_usage({"ncpus": 16, "billing": 32.0, "walltime": 3600}) == 115_200.0
    assert run_usage({"ncpus": 4, "walltime": 60}) == 240.0


@given(
    st.lists(
        st.tuples(st.integers(0, 5000), st.integers(0, 5000), st.integers(1, 64)), max_size=20
    ),
    st.integers(1, 900),
)
def test_without_decay_every_run_is_charged_exactly_once(
    spans: list[tuple[int, int, int]], period: int
) -> None:
    slurm = tree()
    runs = [
        run(key, "chem:ann" if key % 2 else "phys:bob", T + start, T + start + length, cpus)
        for key, (start, length, cpus) in enumerate(spans)
    ]
    passes(slurm, runs, list(range(T, T + 10_000 + period, period)), NO_DECAY)
    assert slurm.tree.usage[0] == sum(r.usage for r in runs)
    assert all(r.accrued == r.usage for r in runs)
