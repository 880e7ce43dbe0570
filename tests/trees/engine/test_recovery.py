"""The recovery projection: a node's factor as its own leaves decay and the rest holds."""

import pytest

from trees.engine.pbs import GroupDef, PbsTree, UsageRecord, compute
from trees.engine.recovery import pbs_recovery

ROOT = "root"


def tree(groups: list[tuple[str, str, int]], usage: dict[str, float]) -> PbsTree:
    return PbsTree.build(
        [
            GroupDef(name, 100 + i, parent, shares)
            for i, (name, parent, shares) in enumerate(groups)
        ],
        [UsageRecord(name, value) for name, value in usage.items()],
    )


def test_a_leaf_reaches_its_target_after_the_decays_counted_by_hand() -> None:
    """A and B have half the shares each; B holds 1000. A: 4001, then 2000.5, then 1000.25.
    The root is 1 + A + 1000; A's tree usage is A / root: 0.7999, 0.6665, 0.49981; the factor
    2^-(2 × that): 0.330, 0.397, then 0.50013 at the second decay."""
    pbs = tree([("A", ROOT, 1), ("B", ROOT, 1)], {"A": 4001.0, "B": 1000.0})
    recovery = pbs_recovery(pbs, pbs.find("A") or 0, 0.5)
    assert recovery.reaches == 2
    assert recovery.held_by is None
    assert recovery.factors == pytest.approx(
        [2 ** -(2 * 4001 / 5002), 2 ** -(2 * 2000.5 / 3001.5), 2 ** -(2 * 1000.25 / 2001.25)],
        rel=1e-6,
    )


def test_the_projection_equals_pbsfs_decaying_the_leaves_and_reading_them_again() -> None:
    groups = [("G", ROOT, 3), ("A", "G", 1), ("C", "G", 2), ("B", ROOT, 1)]
    usage = {"A": 900.0, "C": 300.0, "B": 50.0}
    pbs = tree(groups, usage)
    recovery = pbs_recovery(pbs, pbs.find("G") or 0, 0.5, max_decays=3)
    for decays, factor in enumerate(recovery.factors):
        again = dict(usage)
        for name in ("A", "C"):
            for _ in range(decays):
                again[name] = max(1.0, again[name] * 0.5)
        fresh = tree(groups, {name: value for name, value in again.items() if value != 1})
        assert factor == pytest.approx(
            float(compute(fresh).fairshare_factors[fresh.find("G") or 0]), rel=1e-6
        )


def test_already_on_target_needs_no_decay() -> None:
    pbs = tree([("A", ROOT, 1), ("B", ROOT, 1)], {"A": 10.0, "B": 1000.0})
    recovery = pbs_recovery(pbs, pbs.find("A") or 0, 0.5)
    assert recovery.reaches == 0
    assert len(recovery.factors) == 1


def test_never_by_decay_alone_when_a_sibling_keeps_the_group_over_target() -> None:
    """B keeps G at about all the usage though G has half the shares: A's tree usage stays near
    F(G) / 2 = 0.5 against a target of 0.25, so its factor stays near 2^-2."""
    groups = [("G", ROOT, 1), ("A", "G", 1), ("B", "G", 1), ("H", ROOT, 1)]
    pbs = tree(groups, {"A": 5000.0, "B": 10000.0})
    recovery = pbs_recovery(pbs, pbs.find("A") or 0, 0.5)
    assert recovery.reaches is None
    assert recovery.held_by == pbs.find("G")
    assert recovery.factors[-1] == pytest.approx(0.25, abs=0.01)
    assert len(recovery.factors) == 14  # 5000 halves to 1 in 13 decays
