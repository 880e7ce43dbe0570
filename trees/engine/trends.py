"""How a group's children shared its usage over time against their target shares, and which
ran far over target for a period (the managers' trends)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FAR_OVER = 1.5  # a child using half again its target share, on average, is far over it

Series = Sequence[float | None]


def shares_over_time(values: Mapping[int, Series]) -> dict[int, list[float | None]]:
    """Each child's part of its siblings' total at each moment (usage or target): its value
    over the sum of the values known then; None where it has none or the sum is 0."""
    moments = max((len(series) for series in values.values()), default=0)
    totals = [sum(series[moment] or 0.0 for series in values.values()) for moment in range(moments)]
    return {
        child: [
            None if value is None or totals[moment] <= 0 else value / totals[moment]
            for moment, value in enumerate(series)
        ]
        for child, series in values.items()
    }


@dataclass(frozen=True)
class OverTarget:
    """A child whose share of its siblings' usage ran far over its target share."""

    child: int
    usage_share: float  # the mean over the period's moments
    target_share: float

    @property
    def times(self) -> float:
        return self.usage_share / self.target_share


def far_over_target(
    usage_shares: Mapping[int, Series], target_shares: Mapping[int, Series]
) -> list[OverTarget]:
    """The children whose mean share of usage over the moments where both are known is at
    least FAR_OVER times their mean target share, the furthest first."""
    found = []
    for child, shares in usage_shares.items():
        pairs = [
            (used, target)
            for used, target in zip(shares, target_shares.get(child, []), strict=False)
            if used is not None and target is not None
        ]
        if not pairs:
            continue
        used = sum(pair[0] for pair in pairs) / len(pairs)
        target = sum(pair[1] for pair in pairs) / len(pairs)
        if target > 0 and used >= FAR_OVER * target:
            found.append(OverTarget(child, used, target))
    return sorted(found, key=lambda over: -over.times)
