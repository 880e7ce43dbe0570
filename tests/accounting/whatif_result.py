"""A what-if's result as `simulate --format json` writes it, small and made by hand, so that the
pages' and the API's tests know each number they must show."""

from __future__ import annotations

from typing import Any

from accounting.models import Scenario, ScenarioState
from trees.models import Cluster


def _project(
    name: str,
    target: float | None,
    variant_target: float | None,
    base: tuple[int, float, float, float],
    variant: tuple[float, float, float],
) -> dict[str, Any]:
    """A project's row: (jobs, median wait, p90 wait, delivered share) of the baseline and
    (median wait, p90 wait, delivered share) of the variant; waits in seconds."""
    jobs, median, p90, delivered = base
    return {
        "project": name,
        "target_share": target,
        "baseline": {"jobs": jobs, "mean_wait": p90 / 2, "median_wait": median, "p90_wait": p90,
                     "bounded_slowdown": 2.0, "delivered_share": delivered},
        "variant": {"jobs": jobs, "mean_wait": variant[1] / 2, "median_wait": variant[0],
                    "p90_wait": variant[1], "bounded_slowdown": 1.5, "delivered_share": variant[2]},
        "variant_target_share": variant_target,
    }  # fmt: skip


SENTENCE = (
    "Against what really happened, the baseline's 2.0-day moving-average wait is off by 41.5 %"
    " on average (MAPE); 80.0 % of jobs start within an hour of their real start."
)
RESULT: dict[str, Any] = {
    "trace": {"jobs": 1200, "left_out": 3, "left_out_by_reason": {"capacity": 2, "run_time": 1},
              "cores": 512, "gpus": 16, "nodes": None, "from": "2026-11-01T00:00:00Z",
              "until": "2026-11-03T00:00:00Z"},
    "calibration": {"mape": 41.5, "mean_wait_ratio": {"physics": 1.2}, "within_1h": 0.8,
                    "window_seconds": 172800, "jobs": 1200, "sentence": SENTENCE},
    "baseline": {"order": "policy", "backfill": "easy", "settings": [], "summary": {
        "jobs": 1200, "mean_wait": 4500.0, "median_wait": 30.0, "p90_wait": 12000.0,
        "bounded_slowdown": 2.9, "utilization": 0.5279, "jain_index": 0.4747}},
    "variant": {"order": "policy", "backfill": "easy", "settings": ["shares:physics=40"],
                "summary": {"jobs": 1200, "mean_wait": 3600.0, "median_wait": 30.0,
                            "p90_wait": 15600.0, "bounded_slowdown": 2.5, "utilization": 0.5279,
                            "jain_index": 0.61}},
    "entities": [],
    "projects": [
        _project("chemistry", 0.25, 0.2, (300, 60.0, 600.0, 0.2), (120.0, 600.0, 0.18)),
        _project("lifesci", 0.2, 0.15, (200, 0.0, 3600.0, 0.3), (0.0, 10800.0, 0.27)),
        _project("physics", 0.3, 0.4, (700, 600.0, 7200.0, 0.455), (60.0, 1800.0, 0.5)),
    ],
    "share_over_time": {
        "bin_seconds": 86400,
        "bin_starts": ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"],
        "projects": [
            {"project": "physics", "target_share": 0.3, "variant_target_share": 0.4,
             "baseline": [0.4, 0.5], "variant": [0.45, 0.55]},
            {"project": "lifesci", "target_share": 0.2, "variant_target_share": 0.15,
             "baseline": [0.3, None], "variant": [0.25, 0.3]},
        ],
    },
}  # fmt: skip


def scenario_made(
    cluster: Cluster,
    state: str = ScenarioState.DONE,
    *,
    result: dict[str, Any] | None = None,
    title: str = "physics at 40",
    **fields: Any,
) -> Scenario:
    """A saved what-if of the cluster in that state (done: with `result`, RESULT by default)."""
    done = state == ScenarioState.DONE
    return Scenario.objects.create(
        cluster=cluster,
        title=title,
        parameters={"order": "policy", "backfill": None, "from": "2026-11-01T00:00:00+00:00",
                    "until": "2026-11-03T00:00:00+00:00", "cores": 512,
                    "settings": ["shares:physics=40"]},
        state=state,
        result=(result or RESULT) if done else None,
        progress=1.0 if done else fields.pop("progress", 0.0),
        **fields,
    )  # fmt: skip
