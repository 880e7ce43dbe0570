"""What slurmctld's decay thread does to raw usage every PriorityCalcPeriod (a "pass").

Follows slurm-fairtree-behaviour.md, raw usage: each pass decays every association's usage by
pow(decay_factor, run_delta) and charges each running job run_delta × pow(decay_factor,
run_delta) × billable TRES, to its association and every ancestor; a job that ends between
passes has its tail charged at its end when AccountingStorageEnforce has `limits`, else never.
Times are epoch seconds. A run's `accrued` counts the billable TRES-seconds the passes have
charged for it (undecayed), so that a run the cycles learn of late is charged from where they
left it, as slurmctld charges a job after a gap in its passes: the missed span in one piece.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from trees.engine.cycle import Run
from trees.engine.slurm import SlurmTree, charge, decay_over, decay_usage, new_usage

__all__ = ["SlurmPass", "billable_tres", "charged_until", "run_usage", "slurm_pass"]


def billable_tres(billing: float | None, ncpus: int) -> float:
    """calc_job_billable_tres: the job's billing TRES, else its allocated CPUs."""
    return float(ncpus) if billing is None else billing


def run_usage(resources: Mapping[str, float]) -> float:
    """A run's usage in all, undecayed: billable TRES × elapsed seconds, what the passes charge
    it before decay (a Slurm cluster has no fairshare_usage_res)."""
    billing = resources.get("billing")
    return billable_tres(billing, int(resources.get("ncpus", 0))) * resources.get("walltime", 0)


def charged_until(run: Run) -> int:
    """The time up to which the passes have charged the run: its start plus the seconds
    its `accrued` billable TRES-seconds stand for."""
    if run.billable <= 0:
        return run.start
    return run.start + round(run.accrued / run.billable)


@dataclass
class SlurmPass:
    """What one pass did: the runs whose ledger moved and the usage charged."""

    changed: dict[int, Run] = field(default_factory=dict)
    added: float = 0.0
    decayed: bool = False
    reset: bool = False


def slurm_pass(
    tree: SlurmTree,
    runs: Sequence[Run],
    *,
    now: int,
    last_ran: int | None,
    factor: float,
    reset: bool,
    charge_job_end: bool,
    association: Callable[[str], int | None],
) -> SlurmPass:
    """One pass of _decay_thread at `now` after the pass at `last_ran`: the tails of runs that
    ended since, the usage reset if due, the decay, then the running runs' new usage.

    `association` names the tree node a run's entity (`account:user`) is charged to; a run
    whose association does not exist is left as it is, for a pass after it appears. The very
    first pass (`last_ran` None) only starts the clock, as slurmctld's does: the runs are
    deemed charged up to it.
    """
    done = SlurmPass()
    if last_ran is None:
        # What ran before is in the usage the associations already hold (sshare's RawUsage).
        for run in runs:
            if run.start < now and run.billable > 0:
                run.accrued = run.usage if _ended(run, now) else run.billable * (now - run.start)
                done.changed[run.key] = run
        return done
    for run in sorted((r for r in runs if _ended(r, now)), key=_end):
        if run.accrued == run.usage:
            continue
        node = association(run.entity)
        if node is None:
            continue
        assert run.end is not None
        begin = charged_until(run)
        # Without `limits` the part after the last pass before the end is never charged.
        stop = run.end if charge_job_end else max(begin, min(run.end, last_ran))
        if stop > begin and run.billable > 0:
            usage = new_usage(stop - begin, factor, run.billable)
            if stop < last_ran:
                usage *= decay_over(factor, last_ran - stop)  # the passes it missed
            charge(tree, node, usage)
            done.added += usage
        run.accrued = run.usage  # settled: nothing more is charged for it
        done.changed[run.key] = run
    if reset:
        tree.tree.usage = [0.0] * len(tree)
        done.reset = True
    done.decayed = decay_usage(tree, factor, now - last_ran)
    for run in runs:
        if run.start >= now or _ended(run, now) or run.billable <= 0:
            continue
        node = association(run.entity)
        if node is None:
            continue
        begin = charged_until(run)
        if now <= begin:
            continue
        usage = new_usage(now - begin, factor, run.billable)
        charge(tree, node, usage)
        done.added += usage
        run.accrued += run.billable * (now - begin)
        done.changed[run.key] = run
    return done


def _ended(run: Run, now: int) -> bool:
    return run.end is not None and run.end <= now


def _end(run: Run) -> tuple[int, int]:
    return (run.end or 0, run.key)
