"""How each quantity reads wherever the dashboard shows it (pages, the icicle, trends and their
CSV): a target share as a percent with PBS's precision, usage with its unit.

Pure Python, as the engine: the template filters and the scripts say the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from trees.engine.edit import StandingChange
from trees.engine.pbs import percent


def percent_text(fraction: float | None, *, slurm: bool = False) -> str:
    """A share as a percent, as pbsfs -g prints a target ("%f" of tree_percentage × 100, the
    multiply in float32): the white paper's L5, 0.1 of the machine, reads 10.000001. Slurm's
    shares are doubles, multiplied as doubles. "" for no value."""
    if fraction is None:
        return ""
    return f"{fraction * 100 if slurm else percent(fraction):f}"


@dataclass(frozen=True)
class UsageUnit:
    """What a stored usage number counts, and the larger unit people read it in."""

    name: str  # of the stored number: "core-seconds"
    human: str = ""  # "core-hours"; "" when there is no other form
    per_human: float = 1.0  # stored units in one human unit


class _Cluster(Protocol):
    @property
    def scheduler(self) -> str: ...
    @property
    def fairshare_usage_res(self) -> str: ...


# PBS's usage formulas the dashboard can name (spaces aside), by the resource they count;
# walltime and cput are seconds in a formula.
_PBS_UNITS = {
    "ncpus*walltime": UsageUnit("core-seconds", "core-hours", 3600),
    "walltime*ncpus": UsageUnit("core-seconds", "core-hours", 3600),
    "ngpus*walltime": UsageUnit("GPU-seconds", "GPU-hours", 3600),
    "walltime*ngpus": UsageUnit("GPU-seconds", "GPU-hours", 3600),
    "cput": UsageUnit("CPU-seconds", "CPU-hours", 3600),
    "walltime": UsageUnit("walltime seconds", "walltime hours", 3600),
}
# Slurm's raw usage: billable TRES times seconds, decayed; sshare's TRES columns are minutes.
SLURM_UNIT = UsageUnit("TRES-seconds", "TRES-minutes", 60)


def usage_unit(formula: str, *, slurm: bool = False) -> UsageUnit:
    """The unit of a cluster's usage: Slurm's billing TRES-seconds, or what PBS's
    fairshare_usage_res counts; a formula it cannot name is "usage units of `<formula>`"."""
    if slurm:
        return SLURM_UNIT
    known = _PBS_UNITS.get(re.sub(r"\s+", "", formula))
    return known or UsageUnit(f"usage units of `{formula}`")


def cluster_usage_unit(cluster: _Cluster) -> UsageUnit:
    """The unit of a cluster's usage (anything with its scheduler and usage formula)."""
    return usage_unit(cluster.fairshare_usage_res, slurm=cluster.scheduler == "slurm")


def usage_text(value: float | None, unit: UsageUnit, *, digits: int = 0) -> str:
    """`1,234,567 core-seconds (342.9 core-hours)`: the usage as pbsfs prints it (`digits`
    more for a threshold), and in the larger unit beside it; "" for no value."""
    if value is None:
        return ""
    text = f"{value:,.{digits}f} {unit.name}"
    if unit.human and value:
        text += f" ({larger_unit_number(value / unit.per_human)} {unit.human})"
    return text


def larger_unit_number(value: float | None) -> str:
    """Usage in its larger unit (core-hours, GPU-hours, TRES-minutes): to a tenth, `26,058.5`,
    or to two significant digits where a tenth would read 0.0, `0.028`."""
    if value is None:
        return ""
    return f"{value:,.1f}" if round(value, 1) else f"{value:.2g}"


def usage_number(value: float | None) -> str:
    """A usage (or usage/perc) as pbsfs prints it ("%.0f", half to even on the binary value),
    with thousands separators; its unit is in the column's head: `1,234,567`."""
    return "" if value is None else f"{value:,.0f}"


def fixed(value: float | None, digits: int = 6) -> str:
    """A factor, tree usage or Level FS as pbsfs and sshare print them ("%f": rounded half to
    even on the binary value, where Django's floatformat rounds the shortest decimal half up)."""
    return "" if value is None else f"{value:.{digits}f}"


def mean_percent(fraction: float) -> str:
    """A share averaged over a period, as the trends chart's hover shows it: `64.7`. An average
    of stored float32 targets is not PBS's group_percentage to the sixth place, so it does not
    pretend to be."""
    return f"{fraction * 100:.1f}"


def part_percent(fraction: float, digits: int = 1) -> str:
    """A part of a whole that the dashboard computes itself (of the usage, of what PBS
    recorded) as a percent to `digits` places: `4.3 %`."""
    return f"{fraction * 100:,.{digits}f} %"


def points_text(fraction: float) -> str:
    """The difference of two shares in percentage points, signed: 0.0022 reads `+0.22
    points`; to two significant digits where two places would read 0.00, `-0.0041 points`."""
    points = fraction * 100
    return f"{points:+.2f} points" if round(points, 2) or not points else f"{points:+.2g} points"


_SPAN_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def span_text(span: timedelta | None) -> str:
    """A decay interval or half-life as people say it: `7 days`, `1 day 12 hours`, `90
    seconds` (Python's `7 days, 0:00:00` reads like a clock)."""
    if span is None:
        return ""
    left = int(span.total_seconds())
    if left <= 0:
        return "0 seconds"
    parts = []
    for name, seconds in _SPAN_UNITS:
        count, left = divmod(left, seconds)
        if count:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
    return " ".join(parts)


def wait_text(span: timedelta) -> str:
    """How long a job has waited, to the minute in its two largest units: `2 days 3 hours`,
    `3 hours 20 minutes`, `under a minute`."""
    minutes = int(span.total_seconds()) // 60
    if minutes <= 0:
        return "under a minute"
    return " ".join(span_text(timedelta(minutes=minutes)).split(" ")[:4])


def standing_row(change: StandingChange) -> dict[str, str | bool]:
    """A preview line of an edit's changes: targets as pbsfs -g prints them, and factors."""

    def perc(value: float | None) -> str:
        return "" if value is None else f"{percent_text(value)} %"

    def factor(value: float | None) -> str:
        return "" if value is None else f"{value:.6f}"

    before, after = change.factor_before, change.factor_after
    if before is None:
        trend = "new"
    elif after is None:
        trend = "removed"
    else:
        trend = "better" if after > before else "worse" if after < before else "same"
    return {
        "name": change.name,
        "was": change.old_name if change.old_name != change.name else "",
        "parent": change.parent,
        "leaf": change.leaf,
        "perc_before": perc(change.perc_before),
        "perc_after": perc(change.perc_after),
        "factor_before": factor(before),
        "factor_after": factor(after),
        "trend": trend,
    }


def fs_percent_text(scaled: int | None) -> str:
    """An Altair Accelerator FS_* share (an integer ×10,000, as Accelerator stores it) as a
    percent: 2500 reads `25.00 %`; "" for no value."""
    return "" if scaled is None else f"{scaled / 100:,.2f} %"


def fs_points_text(scaled: int | None) -> str:
    """An FS_EXCESS_* field, a difference of two shares, in percentage points of the machine,
    signed: -625 reads `-6.25 points`, 2500 `+25.00 points`; "" for no value."""
    if scaled is None:
        return ""
    return f"{scaled / 100:+,.2f} points" if scaled else "0.00 points"
