"""Slurm's multifactor priority as the replay's order (trees.engine.simulate_slurm): Fair Tree
against classic fairshare on one tree."""

from trees.engine.multifactor import MultifactorConfig
from trees.engine.simulate import Schedule, SimJob, simulate
from trees.engine.simulate_slurm import SlurmOrder
from trees.engine.slurm import AssociationDef


# Accounts A and B, one share each; A has used 0.6 of the machine (all of it by a1), B 0.4
# (all by b1). a2 and b2 have used nothing.
def tree() -> list[AssociationDef]:
    return [
        AssociationDef("A", shares=1, usage=600.0),
        AssociationDef("B", shares=1, usage=400.0),
        AssociationDef("A", user="a1", usage=600.0),
        AssociationDef("A", user="a2"),
        AssociationDef("B", user="b1", usage=400.0),
        AssociationDef("B", user="b2"),
    ]


def job(job_id: str, account: str, user: str, submit: int) -> SimJob:
    return SimJob(job_id, user, submit, 10, 1, 60, group=account)


def starts(schedule: Schedule) -> dict[str, int]:
    return {placed.job_id: placed.start for placed in schedule.jobs}


JOBS = [job("X", "B", "b2", 0), job("P", "A", "a2", 1), job("Q", "B", "b1", 2)]


def test_fair_tree_serves_the_lighter_account_first() -> None:
    # Fair Tree ranks accounts first: B (0.4 of the usage for half the shares) above A (0.6),
    # so every user of B above every user of A: b1's Q before a2's P, though a2 used nothing.
    config = MultifactorConfig(weight_fairshare=1000, calc_period=5)
    order = SlurmOrder(tree(), config)
    assert starts(simulate(JOBS, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Q": 10, "P": 20,
    }  # fmt: skip


def test_classic_fairshare_serves_the_idle_user_of_the_heavier_account_first() -> None:
    # Classic: a2's effective usage is half of A's (0.3) over its normalized shares 0.25, a
    # factor 2^-1.2 = 0.435; b1's is all of B's (0.4) over 0.25, 2^-1.6 = 0.330: P before Q.
    config = MultifactorConfig(
        weight_fairshare=1000, calc_period=5, flags=frozenset({"NO_FAIR_TREE"})
    )
    order = SlurmOrder(tree(), config)
    assert starts(simulate(JOBS, capacity=1, backfill="none", order=order)) == {
        "X": 0, "P": 10, "Q": 20,
    }  # fmt: skip


def test_without_weights_the_queue_goes_in_submit_order() -> None:
    order = SlurmOrder(tree(), MultifactorConfig(calc_period=5))
    assert starts(simulate(JOBS, capacity=1, backfill="none", order=order)) == {
        "X": 0, "P": 10, "Q": 20,
    }  # fmt: skip
