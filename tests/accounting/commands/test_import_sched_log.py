"""manage.py import_sched_log: a PBS scheduler's log as the cycles the recording of usage runs
on; importing again replaces, bad lines are named and the good ones kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from accounting.models import SchedulerCycle
from tests.conftest import Run
from trees.models import Cluster, Scheduler

pytestmark = pytest.mark.django_db

CAPTURE = Path(__file__).resolve().parents[2] / "captures" / "pbs" / "ncpus_walltime_decay"


@pytest.fixture
def oracle() -> Cluster:
    return Cluster.objects.create(name="oracle", scheduler=Scheduler.PBS)


def test_the_cycles_and_their_formula_values_are_stored_once(run: Run, oracle: Cluster) -> None:
    path = str(CAPTURE / "sched_log")
    ran = run("import_sched_log", path, "--cluster", "oracle", "--timezone", "UTC")
    assert ran.status == 0, ran.err
    assert ran.out == (
        f"{path}: cluster oracle: 20 cycles from 2026-12-02T03:59:32+00:00 to"
        " 2026-12-02T04:06:17+00:00 (0 imported before replaced), 0 formula values;"
        " 175 lines read, 0 rejected\n"
    )
    cycles = SchedulerCycle.objects.filter(cluster=oracle)
    assert [cycle.decays for cycle in cycles if cycle.decays] == [1, 1, 1, 1]
    again = run("import_sched_log", path, "--cluster", "oracle", "--timezone", "UTC")
    assert "(20 imported before replaced)" in again.out
    assert cycles.count() == 20


def test_a_bad_line_is_named_and_the_rest_kept(run: Run, oracle: Cluster, tmp_path: Path) -> None:
    lines = (CAPTURE / "sched_log").read_text().splitlines()
    log = tmp_path / "20261202"
    log.write_text("\n".join([*lines[:30], "garbage <b>", *lines[30:]]) + "\n")
    ran = run("import_sched_log", str(log), "--cluster", "oracle", "--timezone", "UTC")
    assert ran.status == 0
    assert ran.err == f"{log}:31: line: not a PBS log line (MM/DD/YYYY HH:MM:SS;...)\n"
    assert SchedulerCycle.objects.filter(cluster=oracle).count() == 20
    strict = run("import_sched_log", str(log), "--cluster", "oracle", "--strict")
    assert (strict.status, strict.err.splitlines()[-1]) == (
        1, f"{log}: nothing imported (1 lines rejected)",
    )  # fmt: skip


def test_a_file_without_a_cycle_imports_nothing(run: Run, oracle: Cluster, tmp_path: Path) -> None:
    log = tmp_path / "server_log"
    log.write_text("12/02/2026 03:05:09;0002;pbs_server;Svr;Log;Log opened\n")
    ran = run("import_sched_log", str(log), "--cluster", "oracle")
    assert ran.status == 1
    assert ran.err == (
        f"{log}: nothing imported: no whole scheduling cycle (Starting Scheduling Cycle ..."
        " Leaving Scheduling Cycle): not a pbs_sched log, or one that ends before its first"
        " cycle does\n"
    )


def test_what_cannot_be_imported_says_why(run: Run, oracle: Cluster, tmp_path: Path) -> None:
    Cluster.objects.create(name="s", scheduler=Scheduler.SLURM)
    path = str(CAPTURE / "sched_log")
    assert run("import_sched_log", path, "--cluster", "s").err == (
        "cluster s is a Slurm cluster, not PBS\n"
    )
    missing = run("import_sched_log", str(tmp_path / "none"), "--cluster", "oracle")
    assert (missing.status, missing.err) == (
        1, f"{tmp_path / 'none'}: cannot read: No such file or directory\n",
    )  # fmt: skip
    zone = run("import_sched_log", path, "--cluster", "oracle", "--timezone", "Mars/Olympus")
    assert zone.err == "--timezone Mars/Olympus: not a time zone (e.g. Europe/Oslo)\n"
