"""The policy what-if's words (issue 26): the `KEY=VALUE` settings that make a variant of a
cluster's policy, the `--backfill` discipline, and the result as `simulate` prints it, JSON (the
contract of docs/whatif.md) or text.

Settings are read as the scheduler's own files read them: PBS's as sched_config does
(`fairshare_decay_time` in HH:MM:SS or seconds), Slurm's as `scontrol show config` prints them
(`PriorityWeightAge=1000`, `PriorityFlags=NO_FAIR_TREE`), and a share as `shares:NAME=N`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from trees.engine.formula import USAGE_RESOURCES, FormulaError, parse_formula
from trees.engine.schedule_metrics import ShareSeries, share_over_time
from trees.engine.simulate import Backfill
from trees.engine.whatif import (
    AcceleratorPolicy,
    PbsPolicy,
    Policy,
    Side,
    SlurmPolicy,
    WhatIf,
    entity_stats,
    summary_of,
)
from trees.formats.sched_config import MAX_DECAY_TIME, parse_decay_time
from trees.formats.slurm_config import multifactor_setting

__all__ = [
    "SettingError",
    "Variant",
    "apply_settings",
    "format_whatif_text",
    "parse_backfill",
    "whatif_document",
]

MAX_SHARES = 2**31 - 1  # shares are a C int in PBS and a uint32 below INFINITE in Slurm
MAX_DEPTH = 1000  # reservations: PBS's own backfill_depth is rarely above a few dozen
SERIES_PROJECTS = 10  # the projects whose share over time a result keeps: the biggest
MAX_BINS = 120
_BIN_WIDTHS = (3600, 6 * 3600, 86400, 7 * 86400, 28 * 86400, 91 * 86400, 364 * 86400)
_SWITCHES = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
_WHOLE = re.compile(r"[0-9]{1,10}", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
PBS_KEYS = (
    "shares:NAME", "fair_share", "strict_ordering", "backfill", "backfill_depth", "by_queue",
    "fairshare_decay_time", "fairshare_decay_factor", "fairshare_usage_res", "unknown_shares",
    "job_sort_formula",
)  # fmt: skip
SLURM_KEYS = ("shares:ACCOUNT[/USER]", "backfill_depth", "Priority* (as scontrol show config)")
ACCELERATOR_KEYS = ("shares:GROUP", "backfill_depth", "fairshare.relative",
                    "fairshare.relative_alpha")  # fmt: skip


class SettingError(ValueError):
    """A `KEY=VALUE` that makes no variant: the message names the setting and why."""


def parse_backfill(text: str) -> Backfill:
    """`none`, `greedy`, `easy`, or a reservation depth N >= 1; ValueError otherwise."""
    word = text.strip().lower()
    if word in ("none", "greedy", "easy"):
        return word  # type: ignore[return-value]
    if _WHOLE.fullmatch(word) and 1 <= int(word) <= MAX_DEPTH:
        return int(word)
    raise ValueError(
        f"backfill {text!r}: give none, greedy, easy or a reservation depth from 1 to {MAX_DEPTH}"
    )


@dataclass(frozen=True)
class Variant:
    """A policy changed by settings; `backfill` is the discipline they set, None if none did."""

    policy: Policy | None
    backfill: Backfill | None
    settings: tuple[str, ...]


def apply_settings(policy: Policy | None, settings: Sequence[str]) -> Variant:
    """The variant of `policy` that `settings` (KEY=VALUE, in order, a later one winning)
    make. SettingError names the first that cannot be applied."""
    backfill: Backfill | None = None
    changed = policy
    for text in settings:
        key, sep, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise SettingError(f"{text!r}: give KEY=VALUE")
        try:
            if key == "backfill_depth":
                depth = _whole(value, MAX_DEPTH)
                backfill = "none" if depth == 0 else ("easy" if depth == 1 else depth)
                if isinstance(changed, PbsPolicy):
                    changed = replace(
                        changed, strict_ordering=True, backfill=depth > 0, backfill_depth=depth
                    )
            elif changed is None:
                raise ValueError("a trace without a cluster has no policy to change")
            elif key.startswith("shares:"):
                changed = _with_shares(changed, key.removeprefix("shares:"), _whole(value))
            elif isinstance(changed, PbsPolicy):
                changed = _pbs_setting(changed, key, value)
                if key in ("strict_ordering", "backfill"):
                    backfill = None  # the discipline follows the switches again
            elif isinstance(changed, SlurmPolicy):
                changed = replace(changed, config=multifactor_setting(changed.config, key, value))
            else:
                changed = _accelerator_setting(changed, key, value)
        except ValueError as error:
            raise SettingError(f"{text}: {error}") from None
    return Variant(changed, backfill, tuple(settings))


def _whole(value: str, limit: int = MAX_SHARES) -> int:
    if not _WHOLE.fullmatch(value) or int(value) > limit:
        raise ValueError(f"{value!r} is not a whole number from 0 to {limit}")
    return int(value)


def _switch(value: str) -> bool:
    switch = _SWITCHES.get(value.lower())
    if switch is None:
        raise ValueError(f"{value!r} is neither true nor false")
    return switch


def _with_shares(policy: Policy, name: str, shares: int) -> Policy:
    if isinstance(policy, PbsPolicy):
        at = _only(name, [i for i, group in enumerate(policy.groups) if group.name == name])
        if at is None:
            raise ValueError(f"resource_group has no entity {name!r}")
        groups = list(policy.groups)
        groups[at] = replace(groups[at], shares=shares)
        return replace(policy, groups=tuple(groups))
    if isinstance(policy, SlurmPolicy):
        account, _, user = name.partition("/")
        at = _only(
            name,
            [
                index
                for index, a in enumerate(policy.associations)
                if (a.account == account and a.user == (user or None))
                or (not user and a.user == account)
            ],
        )
        if at is None:
            raise ValueError(f"no account or user {name!r} among the associations")
        associations = list(policy.associations)
        associations[at] = replace(associations[at], shares=shares)
        return replace(policy, associations=tuple(associations))
    at = _only(name, [i for i, group in enumerate(policy.groups) if group.path == name])
    if at is None:
        raise ValueError(f"no FairShare group {name!r}")
    fs_groups = list(policy.groups)
    fs_groups[at] = replace(fs_groups[at], weight=shares)
    return replace(policy, groups=tuple(fs_groups))


def _only(name: str, found: list[int]) -> int | None:
    """The one place `name` names; None for none (a Slurm user in several accounts is asked
    for by ACCOUNT/USER)."""
    if len(found) > 1:
        raise ValueError(f"user {name!r} is in several accounts: name it ACCOUNT/{name}")
    return found[0] if found else None


def _pbs_setting(policy: PbsPolicy, key: str, value: str) -> PbsPolicy:
    if key == "fair_share":
        return replace(policy, fair_share=_switch(value))
    if key == "strict_ordering":
        return replace(policy, strict_ordering=_switch(value))
    if key == "backfill":
        return replace(policy, backfill=_switch(value))
    if key == "by_queue":
        return replace(policy, by_queue=_switch(value))
    if key in ("fairshare_decay_time", "half_life"):
        seconds = parse_decay_time(value)
        if seconds is None or not 0 < seconds <= MAX_DECAY_TIME:
            raise ValueError(f"{value!r} is not a time (HH:MM:SS, MM:SS or seconds, above 0)")
        return replace(policy, decay_interval=seconds)
    if key == "fairshare_decay_factor":
        if not _NUMBER.fullmatch(value) or not 0 < float(value) < 1:
            raise ValueError(f"{value!r} is not a number between 0 and 1")
        return replace(policy, decay_factor=float(value))
    if key == "unknown_shares":
        return replace(policy, unknown_shares=_whole(value))
    if key == "fairshare_usage_res":
        _formula_checked(value, USAGE_RESOURCES)
        return replace(policy, usage_res=value)
    if key == "job_sort_formula":
        if value:
            _formula_checked(value, policy.formula_names, python=True)
        return replace(policy, job_sort_formula=value)
    raise ValueError(f"{key} is not a setting a PBS what-if changes ({', '.join(PBS_KEYS)})")


def _formula_checked(text: str, names: Sequence[str], *, python: bool = False) -> None:
    try:
        parse_formula(text, names, python=python)
    except FormulaError as error:
        raise ValueError(str(error)) from None


def _accelerator_setting(policy: AcceleratorPolicy, key: str, value: str) -> AcceleratorPolicy:
    if key == "fairshare.relative":
        if value not in ("0", "1", "2"):
            raise ValueError(f"{value!r} is not 0, 1 or 2")
        return replace(policy, relative=int(value))
    if key == "fairshare.relative_alpha":
        if not _NUMBER.fullmatch(value) or not math.isfinite(float(value)) or float(value) < 0:
            raise ValueError(f"{value!r} is not a number of 0 or more")
        return replace(policy, alpha=float(value))
    raise ValueError(
        f"{key} is not a setting an Accelerator what-if changes ({', '.join(ACCELERATOR_KEYS)})"
    )


def iso(moment: int | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC ("2002-07-28T14:03:11Z")."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def whatif_document(
    whatif: WhatIf,
    *,
    since: int | None,
    until: int | None,
    settings: Sequence[str] = (),
    with_jobs: bool = False,
) -> dict[str, Any]:
    """The result as `simulate --format json` prints it: the trace, the calibration, each
    side's summary (and jobs), each entity's and project's figures on both sides, and the
    biggest projects' delivered share over time."""
    base = whatif.baseline
    schedule = base.schedule
    calibration = whatif.calibration
    document: dict[str, Any] = {
        "trace": {
            "jobs": len(schedule.jobs),
            "left_out": sum(schedule.left_out.values()),
            "left_out_by_reason": dict(sorted(schedule.left_out.items())),
            "cores": whatif.capacity,
            "gpus": whatif.gpus,
            "nodes": whatif.nodes,
            "from": iso(since if since is not None else schedule.first_submit),
            "until": iso(until if until is not None else schedule.last_end),
        },
        "calibration": {
            "mape": calibration.mape,
            "mean_wait_ratio": dict(sorted(calibration.mean_wait_ratio.items())),
            "within_1h": calibration.within_1h,
            "window_seconds": calibration.window_seconds,
            "jobs": calibration.jobs,
        },
        "baseline": _side_document(whatif, base, (), with_jobs),
        "variant": None
        if whatif.variant is None
        else _side_document(whatif, whatif.variant, settings, with_jobs),
        "entities": _rows(whatif, "entity"),
        "projects": _rows(whatif, "group"),
        "share_over_time": _series(whatif),
    }
    return document


def _side_document(
    whatif: WhatIf, side: Side, settings: Sequence[str], with_jobs: bool
) -> dict[str, Any]:
    summary = summary_of(side, whatif.capacity)
    document: dict[str, Any] = {
        "order": whatif.order,
        "backfill": side.backfill,
        "settings": list(settings),
        "summary": {
            "jobs": summary.jobs,
            "mean_wait": summary.mean_wait,
            "median_wait": summary.median_wait,
            "p90_wait": summary.p90_wait,
            "bounded_slowdown": summary.bounded_slowdown,
            "utilization": summary.utilization,
            "jain_index": summary.jain_index,
        },
    }
    if with_jobs:
        document["jobs"] = [
            {
                "job_id": job.job_id,
                "entity": job.entity,
                "submit": iso(job.submit),
                "start": iso(job.start),
                "end": iso(job.end),
                "wait": job.start - job.submit,
            }
            for job in side.schedule.jobs
        ]
    return document


def _rows(whatif: WhatIf, by: str) -> list[dict[str, Any]]:
    key = "entity" if by == "entity" else "project"
    sides = [whatif.baseline] + ([whatif.variant] if whatif.variant is not None else [])
    stats = [entity_stats(side, by="entity" if by == "entity" else "group") for side in sides]
    targets = [side.targets.entity if by == "entity" else side.targets.group for side in sides]
    names = sorted(set().union(*stats))
    rows = []
    for name in names:
        row: dict[str, Any] = {key: name, "target_share": targets[0].get(name)}
        row["baseline"] = stats[0].get(name)
        if whatif.variant is not None:
            row["variant"] = stats[1].get(name)
            row["variant_target_share"] = targets[1].get(name)
        else:
            row["variant"] = None
        rows.append(row)
    return rows


def bin_width(span: int) -> int:
    """The narrowest of hour, 6 hours, day, week, 4 weeks, quarter, year that cuts `span`
    seconds into at most MAX_BINS bins."""
    for width in _BIN_WIDTHS:
        if span <= width * MAX_BINS:
            return width
    return -(-span // MAX_BINS)


def _series(whatif: WhatIf) -> dict[str, Any] | None:
    base = whatif.baseline
    if len(base.arrays) == 0:
        return None
    sides = [base] + ([whatif.variant] if whatif.variant is not None else [])
    first = min(int(side.arrays.start.min()) for side in sides if len(side.arrays))
    last = max(int(side.arrays.end.max()) for side in sides if len(side.arrays))
    width = bin_width(last - first)
    origin = first - first % width
    bins = -(-(last - origin) // width)
    delivered = share_over_time(base.arrays, targets={}, bin_seconds=width, origin=origin,
                                by="group")  # fmt: skip
    biggest = sorted(delivered.delivered, key=lambda name: -delivered.delivered[name])
    chosen = sorted(biggest[:SERIES_PROJECTS])
    series: list[ShareSeries] = [delivered]
    for side in sides[1:]:
        series.append(
            share_over_time(side.arrays, targets={}, bin_seconds=width, origin=origin, by="group")
        )
    return {
        "bin_seconds": width,
        "bin_starts": [iso(origin + width * index) for index in range(bins)],
        "projects": [
            {
                "project": name,
                "target_share": base.targets.group.get(name),
                "variant_target_share": None
                if whatif.variant is None
                else whatif.variant.targets.group.get(name),
                "baseline": _shares(series[0], name, bins),
                "variant": None if len(series) == 1 else _shares(series[1], name, bins),
            }
            for name in chosen
        ],
    }


def _shares(series: ShareSeries, name: str, bins: int) -> list[float | None]:
    """The project's share in each bin (None where nothing ran), padded to `bins`."""
    values = series.share.get(name)
    shares: list[float | None] = (
        []
        if values is None
        else [None if math.isnan(value) else float(value) for value in values.tolist()]
    )
    shares += [None] * (bins - len(shares))
    return shares[:bins]


def duration_text(seconds: float | None) -> str:
    """A wait in the unit that reads best: "45 s", "12.5 min", "3.13 h", "2.40 d"."""
    if seconds is None:
        return "-"
    if abs(seconds) < 60:
        return f"{seconds:.0f} s"
    if abs(seconds) < 3600:
        return f"{seconds / 60:.1f} min"
    if abs(seconds) < 4 * 86400:
        return f"{seconds / 3600:.2f} h"
    return f"{seconds / 86400:.2f} d"


def _percent(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f} %"


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_whatif_text(document: Mapping[str, Any], calibration_sentence: str) -> str:
    """The result as a terminal reads it: the trace, the calibration in a sentence, the two
    sides' summaries, then each project's and each entity's waits on both sides."""
    trace = document["trace"]
    left = ", ".join(f"{count} {reason}" for reason, count in trace["left_out_by_reason"].items())
    lines = [
        f"Trace: {trace['jobs']} jobs on {_pools(trace)}, {trace['from']} to"
        f" {trace['until']}; {trace['left_out']} left out" + (f" ({left})" if left else ""),
        f"Calibration: {calibration_sentence}",
        "",
    ]
    sides = [("baseline", document["baseline"])]
    if document["variant"] is not None:
        sides.append(("variant", document["variant"]))
    rows: list[tuple[str, ...]] = [("", *(name for name, _ in sides))]
    rows.append(("order", *(side["order"] for _, side in sides)))
    rows.append(("backfill", *(str(side["backfill"]) for _, side in sides)))
    if document["variant"] is not None:
        rows.append(("settings", "-", " ".join(document["variant"]["settings"]) or "-"))
    summary_rows: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
        ("jobs", lambda s: str(s["jobs"])),
        ("mean wait", lambda s: duration_text(s["mean_wait"])),
        ("median wait", lambda s: duration_text(s["median_wait"])),
        ("p90 wait", lambda s: duration_text(s["p90_wait"])),
        ("bounded slowdown", lambda s: _number(s["bounded_slowdown"])),
        ("utilization", lambda s: _percent(s["utilization"])),
        ("Jain's index", lambda s: _number(s["jain_index"], 3)),
    )
    for label, shown in summary_rows:
        rows.append((label, *(shown(side["summary"]) for _, side in sides)))
    lines += _table(rows)
    for title, key in (("Projects", "projects"), ("Entities", "entities")):
        lines += ["", title + ":"]
        header = ["name", "target", "jobs", "median wait", "p90 wait", "delivered"]
        if document["variant"] is not None:
            header += ["variant median", "variant p90", "variant delivered"]
        table: list[tuple[str, ...]] = [tuple(header)]
        for row in document[key]:
            name = row["project" if key == "projects" else "entity"] or "(none)"
            cells = [name, _percent(row["target_share"], 2), *_side_cells(row["baseline"])]
            if document["variant"] is not None:
                cells += _side_cells(row["variant"])[1:]
            table.append(tuple(cells))
        lines += _table(table)
    return "\n".join(lines) + "\n"


def _pools(trace: Mapping[str, Any]) -> str:
    """ "240 cores", or "512 cores, 16 GPUs, 4 nodes" where those pools were counted."""
    pools = [f"{trace['cores']} cores"]
    pools += [f"{trace[key]} {name}" for key, name in (("gpus", "GPUs"), ("nodes", "nodes"))
              if trace.get(key) is not None]  # fmt: skip
    return ", ".join(pools)


def _side_cells(stats: Mapping[str, Any] | None) -> list[str]:
    if stats is None:
        return ["0", "-", "-", "-"]
    return [
        str(stats["jobs"]),
        duration_text(stats["median_wait"]),
        duration_text(stats["p90_wait"]),
        _percent(stats["delivered_share"], 2),
    ]


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(
            cell.ljust(width) if column == 0 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
