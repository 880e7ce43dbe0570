"""How a node's standing recovers if it stops running: its leaves decay, the rest stays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from trees.engine.pbs import FAIRSHARE_MIN_USAGE, PbsTree, compute, f32

ON_TARGET = 0.5  # fairshare_factor 2^-1: usage exactly at the target share
MAX_DECAYS = 400


@dataclass(frozen=True)
class Recovery:
    factors: list[float]  # the node's fairshare_factor now, then after each decay
    reaches: int | None  # decays until the factor is at least 0.5 (0: already); None: never
    held_by: int | None  # when it never gets there: the ancestor still over its target


def pbs_recovery(
    pbs: PbsTree, node: int, decay_factor: float, *, max_decays: int = MAX_DECAYS
) -> Recovery:
    """The node's fairshare_factor after each decay (pbsfs -d: usage × float factor, floor 1)
    of the leaves under it, with the rest of the tree's usage as it is now.

    The rest is held because, were everyone idle, every usage would decay alike and the ratios
    that set the factor would barely move. Each decay's change reaches the ancestors as a
    re-read of the usage pbsfs -d writes would (leaves back at 1 are not written, so add 0).
    """
    tree = pbs.tree
    leaves = [n for n in tree.preorder(node) if tree.is_leaf(n)]
    path = pbs.gpath(node)
    above = {
        leaf: path[:-1] if leaf == node else path + _between(pbs, node, leaf) for leaf in leaves
    }
    factor = f32(decay_factor)
    factors = [float(compute(pbs).fairshare_factors[node])]
    while factors[-1] < ON_TARGET and len(factors) <= max_decays:
        moved = False
        for leaf in leaves:
            old = tree.usage[leaf]
            new = max(FAIRSHARE_MIN_USAGE, old * factor)
            if new == old:
                continue
            moved = True
            tree.usage[leaf] = new
            change = _counted(new) - _counted(old)
            for ancestor in above[leaf]:
                tree.usage[ancestor] += change
        if not moved:
            break
        factors.append(float(compute(pbs).fairshare_factors[node]))
    if factors[-1] >= ON_TARGET:
        return Recovery(factors, len(factors) - 1, None)
    final = compute(pbs).fairshare_factors
    held = next((n for n in path[1:-1] if final[n] < ON_TARGET), None)
    return Recovery(factors, None, held)


def _counted(usage: float) -> float:
    """What a leaf adds to its ancestors when the usage file is read: nothing at 1."""
    return 0.0 if usage == FAIRSHARE_MIN_USAGE else usage


def _between(pbs: PbsTree, node: int, leaf: int) -> list[int]:
    """The groups strictly between `node` and its descendant `leaf`."""
    path = pbs.gpath(leaf)
    return path[path.index(node) + 1 : -1]


def decay_dates(
    *, now: datetime, last_decay: datetime | None, interval: timedelta, decays: int
) -> list[datetime]:
    """Now, then the time of each of the next `decays` decays: every whole `interval` after the
    last one (decays due but not yet run happen at the next cycle's whole intervals). Dates end
    with the calendar (year 9999): the list stops there."""
    first = (last_decay or now) + interval
    if first <= now:
        first += interval * ((now - first) // interval + 1)
    room = (datetime.max.replace(tzinfo=UTC) - first) // interval + 1
    return [now, *(first + interval * step for step in range(min(decays, room)))]
