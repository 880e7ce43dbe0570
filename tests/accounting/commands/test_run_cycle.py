"""run_cycle: one cycle per cluster, or every scheduler_iteration with --loop."""

import re
import time
from pathlib import Path

import pytest

from accounting.models import Cycle
from tests.accounting.services.test_ingest import DAY1, TREE
from tests.conftest import Run, write_file
from trees.models import Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path: Path, run: Run) -> None:
    tree = write_file(tmp_path, "resource_group", TREE)
    assert run("import_resource_group", tree, "--cluster", "site").status == 0
    day1 = write_file(tmp_path, "20260301", DAY1)
    assert run("ingest_pbs_accounting", day1, "--cluster", "site").status == 0


@pytest.mark.usefixtures("site")
def test_a_cycle_at_a_given_time(run: Run) -> None:
    ran = run("run_cycle", "--cluster", "site", "--now", "2026-03-01T12:00:00+00:00")
    assert ran.status == 0, ran.err
    # Job 101 (ann, 4 cores, 1 h), 102 (bob, 8 cores, running since 10:00), 103's first run
    # (cy, requeued at 11:30 after 30 min on 2 cores): 14,400 + 57,600 + 3,600.
    assert re.fullmatch(
        r"site: cycle at 2026-03-01T12:00:00\+00:00: 3 runs accrued, 75600 usage added,"
        r" 0 decays applied, in \d+\.\d\d s\n",
        ran.out,
    )
    assert Node.objects.get(name="bob").usage == 1 + 8 * 7200
    again = run("run_cycle", "--cluster", "site", "--now", "2026-03-01T12:00:00Z")
    assert again.out.strip() == (
        "site: the cycle at 2026-03-01T12:00:00+00:00 was done before; nothing to do"
    )
    assert Cycle.objects.count() == 1


@pytest.mark.usefixtures("site")
def test_a_time_before_the_last_cycle_is_refused(run: Run) -> None:
    assert run("run_cycle", "--now", "2026-03-01T12:00:00Z").status == 0  # every cluster due
    ran = run("run_cycle", "--cluster", "site", "--now", "2026-03-01T11:00:00Z")
    assert ran.status == 1
    assert "2026-03-01T11:00:00+00:00 is before its last cycle at 2026-03-01T12:00:00" in ran.err


def test_bad_options_are_refused(run: Run) -> None:
    loop_now = run("run_cycle", "--loop", "--now", "2026-03-01T12:00:00Z")
    assert (loop_now.status, loop_now.err.strip()) == (
        1,
        "--now and --loop cannot go together: a loop follows the clock",
    )
    assert (
        run("run_cycle", "--cluster", "nowhere").err.strip() == "cluster 'nowhere' does not exist"
    )
    bad_time = run("run_cycle", "--now", "yesterday")
    assert bad_time.status == 1
    assert "--now yesterday: not an ISO 8601 date or time" in bad_time.err
    assert run("run_cycle").out.strip() == "no PBS or Slurm cluster with a tree is due for a cycle"


def test_a_cluster_without_a_tree_is_refused(run: Run, tmp_path: Path) -> None:
    day1 = write_file(tmp_path, "20260301", DAY1)
    assert run("ingest_pbs_accounting", day1, "--cluster", "bare").status == 0
    ran = run("run_cycle", "--cluster", "bare", "--now", "2026-03-01T12:00:00Z")
    assert ran.status == 1
    assert "cluster bare has no tree: import its resource_group first" in ran.err


@pytest.mark.usefixtures("site")
def test_the_loop_runs_each_due_cycle_until_interrupted(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", sleep)  # the command's pause
    ran = run("run_cycle", "--loop")
    assert ran.status == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0] == "running cycles until interrupted (Ctrl-C)"
    assert lines[1].startswith("site: cycle at ")
    assert lines[-1] == "stopped"
    assert Cycle.objects.count() == 1
    assert 0.5 <= pauses[0] <= 600  # to the next 10-minute slot
