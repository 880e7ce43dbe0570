"""manage.py simulate: a trace or a cluster's jobs replayed, baseline and variant, JSON or text."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.accounting.services.test_whatif import busy  # noqa: F401 (a fixture)
from tests.conftest import Run, write_file
from trees.models import Cluster

pytestmark = pytest.mark.django_db

# Two processors. Job 1 (user 3, group 1) runs 0-100 s on 2; job 2 (user 5) is submitted at 10,
# asks for 1 processor and 50 s and really waited 90 s; job 3 (user 3) at 20 asks for 2 and
# really waited 130 s; job 4 did not run (-1).
SWF = """\
; UnixStartTime: 1000000000
; MaxProcs: 2
1 0 0 100 2 -1 -1 2 200 -1 1 3 1 -1 1 -1 -1 -1
2 10 90 50 1 -1 -1 1 60 -1 1 5 2 -1 1 -1 -1 -1
3 20 130 50 2 -1 -1 2 60 -1 1 3 1 -1 1 -1 -1 -1
4 30 -1 -1 1 -1 -1 1 60 -1 0 5 2 -1 1 -1 -1 -1
"""


@pytest.fixture
def trace(tmp_path: Path) -> str:
    return write_file(tmp_path, "small.swf", SWF)


def test_a_trace_replays_first_come_first_served_with_easy(trace: str, run: Run) -> None:
    ran = run("simulate", "--swf", trace, "--format", "json", "--jobs")
    assert (ran.status, ran.err) == (0, "")
    document = json.loads(ran.out)
    assert document["trace"] == {
        "jobs": 3, "left_out": 1, "left_out_by_reason": {"run_time": 1}, "cores": 2,
        "gpus": None, "nodes": None,
        "from": "2001-09-09T01:46:40Z", "until": "2001-09-09T01:50:00Z",
    }  # fmt: skip
    baseline = document["baseline"]
    assert (baseline["order"], baseline["backfill"]) == ("fifo", "easy")
    # job 2 (1 core, 60 s) cannot backfill: job 1 holds both cores until 100 s
    assert [(j["job_id"], j["entity"], j["wait"]) for j in baseline["jobs"]] == [
        ("1", "user3", 0), ("2", "user5", 90), ("3", "user3", 130),
    ]  # fmt: skip
    assert baseline["jobs"][1] == {
        "job_id": "2", "entity": "user5", "submit": "2001-09-09T01:46:50Z",
        "start": "2001-09-09T01:48:20Z", "end": "2001-09-09T01:49:10Z", "wait": 90,
    }  # fmt: skip
    assert document["calibration"]["within_1h"] == 1.0
    assert document["calibration"]["mean_wait_ratio"] == {"user3": 1.0, "user5": 1.0}
    assert document["variant"] is None
    assert [row["project"] for row in document["projects"]] == ["group1", "group2"]


def test_a_gzipped_trace_and_a_variant_discipline(tmp_path: Path, run: Run) -> None:
    path = write_file(tmp_path, "small.swf.gz", gzip.compress(SWF.encode()))
    ran = run("simulate", "--swf", path, "--cores", "3", "--backfill", "none",
              "--set", "backfill_depth=1", "--format", "json", "--jobs")  # fmt: skip
    assert ran.status == 0, ran.err
    document = json.loads(ran.out)
    assert document["trace"]["cores"] == 3
    assert document["baseline"]["backfill"] == "none"
    assert document["variant"]["backfill"] == "easy"
    # on 3 cores job 2 starts at once beside job 1; job 3 waits for 2 cores
    waits = {j["job_id"]: j["wait"] for j in document["variant"]["jobs"]}
    assert waits == {"1": 0, "2": 0, "3": 80}


def test_the_text_shows_both_sides_with_units(busy: Cluster, run: Run) -> None:  # noqa: F811
    ran = run("simulate", "--cluster", "site", "--set", "shares:phys=0")
    assert ran.status == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0] == (
        "Trace: 3 jobs on 2 cores, 2026-03-01T08:00:00Z to 2026-03-01T08:03:20Z; 0 left out"
    )
    assert lines[3].split() == ["baseline", "variant"]
    assert lines[4].split() == ["order", "policy", "policy"]
    assert lines[5].split() == ["backfill", "greedy", "greedy"]
    assert lines[6].split() == ["settings", "-", "shares:phys=0"]
    # the waits trade places: (0 + 90 + 130) / 3 against (0 + 140 + 80) / 3
    assert lines[8].split() == ["mean", "wait", "1.2", "min", "1.2", "min"]
    assert lines[10].split() == ["p90", "wait", "2.0", "min", "2.1", "min"]  # 122 s, 128 s
    assert "utilization" in ran.out
    assert "%" in ran.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --cluster NAME (its stored jobs), --swf PATH, or both"),
        (("--cluster", "nowhere"), "cluster 'nowhere' does not exist"),
        (("--swf", "/nonexistent.swf"), "/nonexistent.swf: cannot read: No such file or directory"),
        (("--swf", "TRACE", "--cores", "0"), "--cores 0: give 1 or more"),
        (("--swf", "TRACE", "--backfill", "lots"),
         "--backfill 'lots': give none, greedy, easy or a reservation depth from 1 to 1000"),
        (("--swf", "TRACE", "--from", "2002-01-02", "--until", "2002-01-01"),
         "--from 2002-01-02 is not before --until 2002-01-01"),
        (("--swf", "TRACE", "--from", "yesterday"),
         "--from yesterday: not an ISO 8601 date or time (e.g. 2026-01-31T08:00)"),
        (("--swf", "TRACE", "--order", "policy"),
         "--order policy needs --cluster: a trace alone has no policy"),
        (("--swf", "TRACE", "--set", "shares:user3=5"),
         "shares:user3=5: a trace without a cluster has no policy to change"),
        (("--swf", "TRACE", "--from", "2030-01-01"),
         "the trace holds no job submitted from 2030-01-01T00:00:00+00:00 to the end"),
    ],
)  # fmt: skip
def test_bad_input_says_what_is_wrong(
    args: tuple[str, ...], message: str, trace: str, run: Run
) -> None:
    ran = run("simulate", *(trace if arg == "TRACE" else arg for arg in args))
    assert (ran.status, ran.out) == (1, "")
    assert ran.err.splitlines()[-1] == message


def test_a_file_that_is_no_trace_is_refused_by_line(tmp_path: Path, run: Run) -> None:
    path = write_file(tmp_path, "notes.txt", "hello world\n1 2 3\n")
    ran = run("simulate", "--swf", path)
    assert ran.status == 1
    errors = ran.err.splitlines()
    assert errors[0].startswith(f"{path}:1: ")
    assert errors[-1] == f"{path}: no job read: not an SWF trace (2 lines rejected)"


def test_a_bad_line_is_named_and_the_rest_replayed(tmp_path: Path, run: Run) -> None:
    path = write_file(tmp_path, "bad.swf", SWF + "5 40 x 10 1 -1 -1 1 60 -1 1 5 2 -1 1 -1 -1 -1\n")
    ran = run("simulate", "--swf", path, "--format", "json")
    assert ran.status == 0
    assert ran.err.startswith(f"{path}:7: ")
    assert json.loads(ran.out)["trace"]["jobs"] == 3
