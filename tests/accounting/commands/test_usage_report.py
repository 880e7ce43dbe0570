"""usage_report: per-group counts, core-hours and usage of the runs that ended in a window."""

import csv
import io
import json
from pathlib import Path

import pytest

from tests.accounting.services.test_ingest import DAY1, DAY2
from tests.conftest import Run, write_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path: Path, run: Run) -> None:
    day1, day2 = write_file(tmp_path, "20260301", DAY1), write_file(tmp_path, "20260302", DAY2)
    assert run("ingest_pbs_accounting", day1, day2, "--cluster", "site").status == 0


def report(run: Run, *args: str) -> list[dict[str, object]]:
    ran = run("usage_report", "--cluster", "site", *args)
    assert ran.status == 0, ran.err
    rows: list[dict[str, object]] = json.loads(ran.out)
    return rows


@pytest.mark.usefixtures("site")
def test_by_entity_over_all_time(run: Run) -> None:
    assert report(run) == [
        {"key": "bob", "jobs": 1, "core_hours": 192.0, "usage": 691200.0},
        {"key": "ann", "jobs": 1, "core_hours": 4.0, "usage": 14400.0},
        {"key": "cy", "jobs": 2, "core_hours": 3.0, "usage": 10800.0},
    ]


@pytest.mark.usefixtures("site")
def test_a_window_counts_the_runs_that_ended_in_it(run: Run) -> None:
    # bob's job ended on 2 March; cy's requeued run ended at 11:30 UTC on 1 March.
    assert report(run, "--since", "2026-03-01", "--until", "2026-03-02", "--by", "queue") == [
        {"key": "work", "jobs": 3, "core_hours": 7.0, "usage": 25200.0},
    ]
    assert report(run, "--since", "2026-03-01T11:30:00+00:00", "--by", "project") == [
        {"key": "p2", "jobs": 3, "core_hours": 195.0, "usage": 702000.0},
    ]


@pytest.mark.usefixtures("site")
def test_csv(run: Run) -> None:
    ran = run("usage_report", "--cluster", "site", "--by", "group", "--format", "csv")
    rows = list(csv.reader(io.StringIO(ran.out)))
    assert rows == [
        ["key", "jobs", "core_hours", "usage"],
        ["phys", "3", "195.0", "702000.0"],
        ["chem", "1", "4.0", "14400.0"],
    ]


def test_bad_windows_and_clusters(run: Run, site: None) -> None:
    assert run("usage_report", "--cluster", "nope").status == 1
    bad = run("usage_report", "--cluster", "site", "--since", "yesterday")
    assert (bad.status, bad.err.strip()) == (
        1,
        "--since yesterday: not an ISO 8601 date or time (e.g. 2026-01-31T08:00)",
    )
    window = ("--since", "2026-03-02", "--until", "2026-03-01")
    backwards = run("usage_report", "--cluster", "site", *window)
    assert backwards.status == 1


def test_csv_keys_that_start_like_formulas_are_text(run: Run, tmp_path: Path) -> None:
    day1 = DAY1.replace("group=chem", "group=@SUM(1+1)").replace("group=phys", "group=-2+3")
    day2 = DAY2.replace("group=phys", "group=-2+3")
    paths = write_file(tmp_path, "20260301", day1), write_file(tmp_path, "20260302", day2)
    assert run("ingest_pbs_accounting", *paths, "--cluster", "site").status == 0
    ran = run("usage_report", "--cluster", "site", "--by", "group", "--format", "csv")
    assert list(csv.reader(io.StringIO(ran.out))) == [
        ["key", "jobs", "core_hours", "usage"],
        ["'-2+3", "3", "195.0", "702000.0"],
        ["'@SUM(1+1)", "1", "4.0", "14400.0"],
    ]
