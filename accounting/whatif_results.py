"""How a what-if's result reads on its page: the summary, each project's waits and the share
chart's data, from the stored document (`simulate --format json`'s). Waits are seconds and
shares fractions there; here every number gets its unit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from trees.quantities import fixed, part_percent, points_text, wait_text

CHART_PROJECTS = 6  # the biggest projects drawn (Okabe and Ito's palette has eight colours)
PROJECTS_SHOWN = 15  # project rows before "show all"


def backfill_said(backfill: str | int | None) -> str:
    """A discipline as the pages name it; None: the cluster's own."""
    if backfill is None:
        return "the cluster's own"
    if isinstance(backfill, int):
        return f"{backfill} reservations"
    return {"none": "none", "greedy": "greedy", "easy": "EASY"}.get(backfill, backfill)


def wait_said(seconds: float | None) -> str:
    """A wait as the pages say it: `3 hours 20 minutes`, `under a minute`."""
    return "no job" if seconds is None else wait_text(timedelta(seconds=seconds))


def wait_change(before: float | None, after: float | None) -> tuple[str, str]:
    """How a wait moved, in words, and its tone: longer is `over`, shorter `under`."""
    if before is None or after is None:
        return "", ""
    moved = after - before
    if moved == 0:
        return "no change", "none"
    said = wait_text(timedelta(seconds=abs(moved)))
    return (f"{said} longer", "over") if moved > 0 else (f"{said} shorter", "under")


def _slowdown(value: float | None) -> str:
    return "" if value is None else f"{value:,.2f}×"


def _share(value: float | None) -> str:
    return "" if value is None else part_percent(value)


def summary_rows(result: Mapping[str, Any]) -> list[dict[str, str]]:
    """The cluster's figures, baseline against variant, each with its change."""
    base = result["baseline"]["summary"]
    variant = (result.get("variant") or {}).get("summary")

    def row(label: str, key: str, said: Any, change: Any = None) -> dict[str, str]:
        before, after = base.get(key), None if variant is None else variant.get(key)
        moved, tone = ("", "")
        if after is not None and before is not None and change is not None:
            moved, tone = change(before, after)
        return {
            "label": label,
            "baseline": said(before),
            "variant": "" if variant is None else said(after),
            "change": moved,
            "tone": tone,
        }

    def number_change(digits: int, unit: str = "") -> Any:
        return lambda before, after: (f"{after - before:+,.{digits}f}{unit}", "none")

    return [
        row("Jobs", "jobs", lambda n: f"{n:,} jobs"),
        row("Mean wait", "mean_wait", wait_said, wait_change),
        row("Median wait", "median_wait", wait_said, wait_change),
        row("90th percentile wait", "p90_wait", wait_said, wait_change),
        row("Bounded slowdown", "bounded_slowdown", _slowdown, number_change(2, "×")),
        row(
            "Utilization",
            "utilization",
            _share,
            lambda before, after: (points_text(after - before), "none"),
        ),
        row("Jain's index", "jain_index", lambda v: "" if v is None else fixed(v, 3),
            number_change(3)),
    ]  # fmt: skip


def project_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each project's waits on both sides, the biggest change of its median or 90th
    percentile first, then the longest 90th percentile."""
    rows = []
    for project in result.get("projects", []):
        base = project.get("baseline") or {}
        variant = project.get("variant")
        after = variant or {}
        median, median_tone = wait_change(base.get("median_wait"), after.get("median_wait"))
        p90, p90_tone = wait_change(base.get("p90_wait"), after.get("p90_wait"))
        moved = [
            abs(after[key] - base[key])
            for key in ("median_wait", "p90_wait")
            if after.get(key) is not None and base.get(key) is not None
        ]
        rows.append(
            {
                "project": project["project"],
                "jobs": f"{base.get('jobs', 0):,}",
                "target": _share(project.get("target_share")),
                "variant_target": _share(project.get("variant_target_share")),
                "delivered": _share(base.get("delivered_share")),
                "variant_delivered": _share(after.get("delivered_share")),
                "median": wait_said(base.get("median_wait")),
                "variant_median": wait_said(after.get("median_wait")) if variant else "",
                "median_change": median,
                "median_tone": median_tone,
                "p90": wait_said(base.get("p90_wait")),
                "variant_p90": wait_said(after.get("p90_wait")) if variant else "",
                "p90_change": p90,
                "p90_tone": p90_tone,
                "moved": max(moved, default=0.0),
                "longest": base.get("p90_wait") or 0.0,
            }
        )
    rows.sort(key=lambda row: (-row["moved"], -row["longest"], row["project"]))
    return rows


def share_chart(result: Mapping[str, Any]) -> dict[str, Any]:
    """The share chart's data: the biggest projects' delivered share in each bin (at the bin's
    middle), baseline and variant, and their target shares, all in percent."""
    series = result.get("share_over_time") or {}
    width = int(series.get("bin_seconds") or 0)
    delivered = {
        project["project"]: (project.get("baseline") or {}).get("delivered_share") or 0.0
        for project in result.get("projects", [])
    }
    chosen = sorted(
        series.get("projects", []), key=lambda p: (-delivered.get(p["project"], 0.0), p["project"])
    )[:CHART_PROJECTS]
    return {
        "at": [_middle(start, width) for start in series.get("bin_starts", [])],
        "ends": _ends(series.get("bin_starts", []), width),
        "variant": result.get("variant") is not None,
        "projects": [
            {
                "name": project["project"],
                "target": _percent(project.get("target_share")),
                "variant_target": _percent(project.get("variant_target_share")),
                "baseline": _percents(project.get("baseline")),
                "variant": _percents(project.get("variant")),
            }
            for project in chosen
        ],
    }


def _middle(start: str, width: int) -> str:
    moment = datetime.fromisoformat(start) + timedelta(seconds=width / 2)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ends(starts: Sequence[str], width: int) -> list[str]:
    """The first bin's start and the last bin's end: where a flat target line runs."""
    if not starts:
        return []
    last = datetime.fromisoformat(starts[-1]) + timedelta(seconds=width)
    return [starts[0], last.strftime("%Y-%m-%dT%H:%M:%SZ")]


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _percents(values: Sequence[float | None] | None) -> list[float | None] | None:
    return None if values is None else [_percent(value) for value in values]
