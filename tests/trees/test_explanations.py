"""trees.explanations: where a node stands against its target, what pulls it down and when it
recovers, in words, from hand-checked numbers."""

from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest

from trees.explanations import (
    job_place_sentence,
    pulled_down_by,
    recovery_brief,
    standing_columns_explained,
    target_standing,
    tree_columns_explained,
    usage_loss_gain_sentence,
    usage_loss_sentence,
    usage_loss_unseen_sentence,
    usage_loss_whatif_sentence,
)
from trees.quantities import usage_unit
from trees.selectors.standing import RecoveryProjection

INF = float("inf")


class Level(NamedTuple):
    name: str
    fairshare_perc: float = 0.5
    fairshare_factor: float = 0.5
    level_fs: float | None = None
    usage: float = 0.0
    usage_perc: float = 0.0


@pytest.mark.parametrize(
    ("factor", "tone"),
    [(0.5, "on"), (0.5000004, "on"), (0.62, "under"), (0.199592, "over"), (0.4999, "over")],
)
def test_pbs_reads_the_factor_against_one_half(factor: float, tone: str) -> None:
    assert target_standing(Level("a", 0.1, factor), slurm=False).tone == tone


@pytest.mark.parametrize(
    ("level_fs", "tone", "words"),
    [
        (INF, "under", "under target: no usage yet"),
        (1.5, "under", "under target: its jobs are favoured"),
        (1.0, "on", "on target"),
        (0.25, "over", "over target: its jobs wait behind those under target"),
        (None, "none", "not ranked by Fair Tree"),
    ],
)
def test_slurm_reads_level_fs_against_one(level_fs: float | None, tone: str, words: str) -> None:
    standing = target_standing(Level("u", 0.1, 0.9, level_fs), slurm=True)
    assert (standing.tone, standing.words) == (tone, words)


def test_no_target_share_is_said_so_whatever_the_factor() -> None:
    assert target_standing(Level("a", 0.0, 0.0), slurm=False).tone == "none"
    assert target_standing(Level("u", 0.0, 1.0, 2.0), slurm=True).tone == "none"


def test_pbs_names_the_level_furthest_over_target() -> None:
    # The demo's hpc: the root's usage 131,307,364; physics uses 51.5 % for a 30 % target.
    root = Level("TREEROOT", 1.0, 1.0, usage=131_307_364.5, usage_perc=131_307_364.5)
    physics = Level("physics", 0.3, 0.304, usage=67_626_518.5, usage_perc=225_421_719.4)
    cond = Level("cond-matter", 0.0526, 0.1996, usage=5_096_896.25, usage_perc=96_841_021.2)
    over = target_standing(cond, slurm=False)
    assert pulled_down_by([root, physics, cond], slurm=False, standing=over) == (
        "physics, over target"
    )


def test_pbs_with_no_level_over_names_the_blend_of_the_top_group() -> None:
    # hpc's genomics: lifesci uses 17.0 % for 20 %, genomics 6.5 % for 7.4 %, yet PBS blends
    # lifesci's 17 % into genomics' tree usage (0.104 > 0.074): factor 0.379, over target.
    root = Level("TREEROOT", 1.0, 1.0, usage=131_307_364.5, usage_perc=131_307_364.5)
    lifesci = Level("lifesci", 0.2, 0.554, usage=22_346_236.0, usage_perc=111_731_178.3)
    genomics = Level("genomics", 0.0744, 0.3787, usage=8_560_397.25, usage_perc=115_030_338.5)
    over = target_standing(genomics, slurm=False)
    said = pulled_down_by([root, lifesci, genomics], slurm=False, standing=over)
    assert said == (
        "lifesci's usage, which PBS blends into the tree usage below it"
        " (no level is over its own target)"
    )
    under = target_standing(lifesci, slurm=False)
    assert pulled_down_by([root, lifesci], slurm=False, standing=under) == (
        "no level of its path is over target"
    )


def test_slurm_names_the_lowest_level_fs_under_one() -> None:
    root = Level("root", 1.0, 1.0, None)
    chem = Level("chem", 0.5, 0.5, 0.8)
    phys = Level("phys", 0.5, 0.5, 0.4)
    user = Level("ann", 0.1, 0.2, 0.6)
    standing = target_standing(user, slurm=True)
    assert pulled_down_by([root, chem, phys, user], slurm=True, standing=standing) == (
        "phys, over target"
    )


def projection(
    factors: list[float], reaches: int | None, held_by: str | None = None
) -> RecoveryProjection:
    start = datetime(2026, 11, 25, 4, 0, tzinfo=UTC)
    at = [start + timedelta(days=7 * step) for step in range(len(factors))]
    return RecoveryProjection(at, factors, reaches, held_by)


def test_the_recovery_in_a_few_words() -> None:
    assert recovery_brief(projection([0.38, 0.52], 1)) == (
        "on target by 2026-12-02 04:00 UTC (1 decay) if it runs nothing more"
    )
    assert recovery_brief(projection([0.2, 0.3, 0.45, 0.51], 3)) == (
        "on target by 2026-12-16 04:00 UTC (3 decays) if it runs nothing more"
    )
    assert recovery_brief(projection([0.6], 0)) == "not needed: at or under its target"
    assert recovery_brief(projection([0.2, 0.3], None, "physics")) == (
        "never by decay alone: physics is over target"
    )
    assert recovery_brief(projection([0.2, 0.3], None)) == "never by decay alone"
    zero = RecoveryProjection([datetime(2026, 11, 25, tzinfo=UTC)], [0.0], None, None, True)
    assert recovery_brief(zero).startswith("never: its target share is 0")


def test_each_page_explains_its_own_columns_by_their_names() -> None:
    cluster_pbs = [
        name for name, _ in tree_columns_explained(slurm=False, unit="CPU-seconds", cluster=True)
    ]
    assert cluster_pbs == [
        "Shares", "Target %", "Usage (CPU-seconds)", "Share of usage %", "usage/perc",
        "Tree usage", "Factor",
    ]  # fmt: skip
    node_slurm = [
        name for name, _ in tree_columns_explained(slurm=True, unit="TRES-seconds", cluster=False)
    ]
    assert node_slurm == [
        "Shares", "Target %", "Usage (TRES-seconds)", "NormShares", "EffectvUsage", "Level FS",
        "FairShare",
    ]  # fmt: skip
    landing = [name for name, _ in standing_columns_explained(slurm=True, pbs=False, answers=True)]
    assert landing == [
        "FairShare", "Against target", "Place", "Pulled down by", "Running jobs", "Queued jobs",
    ]  # fmt: skip
    me = [name for name, _ in standing_columns_explained(slurm=False, pbs=True, answers=False)]
    assert me == ["Factor", "Against target", "Place", "7 days", "Back on target"]


CORE_SECONDS = usage_unit("ncpus*walltime")


def test_what_pbs_s_recording_loses_reads_plainly_at_its_edges() -> None:
    assert usage_loss_sentence(
        cluster="hpc", window="from A to B", actual=0.0, recorded=0.0, lost_fraction=0.0,
        jobs=0, unseen=0, unit=CORE_SECONDS,
    ) == (
        "No job of hpc ended from A to B: there is nothing to compare. Choose a longer window,"
        " or import the accounting logs of this one."
    )  # fmt: skip
    assert usage_loss_sentence(
        cluster="hpc", window="from A to B", actual=0.0, recorded=0.0, lost_fraction=0.0,
        jobs=1, unseen=0, unit=CORE_SECONDS,
    ) == (
        "The 1 job of hpc that ended from A to B used nothing that hpc's usage formula counts."
    )  # fmt: skip
    assert usage_loss_gain_sentence(lost_fraction=0.0, gainers=0, payers=0) == (
        "PBS recorded all of the usage: nobody gains from the recording, nobody pays."
    )
    assert usage_loss_gain_sentence(lost_fraction=0.04, gainers=0, payers=0) == (
        "PBS lost 4.0 % of the usage, the same part of every entity's: the standings do not move."
    )
    assert usage_loss_gain_sentence(lost_fraction=0.04, gainers=3, payers=2).endswith(
        "So the 3 entities that lost more than 4.0 % of their usage are charged less than their"
        " part of it, and their standing gains; the 2 that lost less pay for it: their share of"
        " what PBS recorded is larger than their share of the usage, so they look further over"
        " target than they are."
    )
    assert usage_loss_unseen_sentence(unseen=0, jobs=5, usage=0.0, unit=CORE_SECONDS) == (
        "No job went unseen: a cycle read a poll of every one while it ran."
    )


def test_a_what_if_says_the_setting_against_now_and_what_it_would_record() -> None:
    assert usage_loss_whatif_sentence(
        setting="scheduler_iteration", value=300, now=600, more=0.031, extra=7200.0,
        unit=CORE_SECONDS,
    ) == (
        "scheduler_iteration 5 minutes (now 10 minutes) would record 3.1 % more: 7,200"
        " core-seconds (2.0 core-hours)."
    )  # fmt: skip
    assert usage_loss_whatif_sentence(
        setting="$max_check_poll", value=60, now=120, more=-0.012, extra=-36.0,
        unit=CORE_SECONDS,
    ) == (
        "$max_check_poll 60 s (now 120 s) would record 1.2 % less: 36 core-seconds (0.01"
        " core-hours)."
    )  # fmt: skip
    assert (
        usage_loss_whatif_sentence(
            setting="$min_check_poll", value=10, now=30, more=0.0, extra=0.0, unit=CORE_SECONDS
        )
        == "$min_check_poll 10 s (now 30 s) would record the same."
    )


def test_a_job_without_a_place_says_why():
    held = job_place_sentence(position=None, waiting=3, queue_position=None, queue="cpu")
    later = job_place_sentence(
        position=None, waiting=1, queue_position=None, queue="cpu", left_out="it is late"
    )
    placed = job_place_sentence(position=2, waiting=3, queue_position=1, queue="cpu")
    assert (
        held
        == "Held: the scheduler does not consider it until it is released (3 other jobs waiting)."
    )
    assert (
        later == "Not considered: the scheduler leaves it out, as it is late (1 other job waiting)."
    )
    assert placed == "2nd of 3 waiting; 1st in queue cpu."
