"""replay: the ingested runs cycle by cycle in simulated time, with progress."""

from pathlib import Path

import pytest

from accounting.models import Cycle
from tests.accounting.services.test_ingest import DAY1, DAY2, TREE
from tests.conftest import Run, write_file
from trees.models import Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path: Path, run: Run) -> None:
    tree = write_file(tmp_path, "resource_group", TREE)
    assert run("import_resource_group", tree, "--cluster", "site").status == 0
    days = write_file(tmp_path, "20260301", DAY1), write_file(tmp_path, "20260302", DAY2)
    assert run("ingest_pbs_accounting", *days, "--cluster", "site").status == 0


@pytest.mark.usefixtures("site")
def test_the_runs_are_replayed_from_their_first_start_to_their_last_end(run: Run) -> None:
    ran = run("replay", "--cluster", "site", "--step", "1h")
    assert ran.status == 0, ran.err
    # From 08:00 (job 101 starts 08:00:05) to 10:00 the next day, when job 102 ends. History:
    # the six nodes of the tree at each cycle, and cy (under unknown) from 12:00 on.
    assert ran.out.strip() == (
        "site: replayed 27 cycles from 2026-03-01T08:00:00+00:00 to 2026-03-02T10:00:00+00:00:"
        " 4 runs accrued, 716400 usage added, 1 decays, 185 history rows kept"
    )
    assert ran.err.splitlines()[0] == "replay: 1 of 27 cycles (0 %)"
    assert ran.err.splitlines()[-1] == "replay: 27 of 27 cycles (100 %)"
    assert Cycle.objects.count() == 27
    # bob: 102 (8 cores, 24 h = 691,200) accrued until the decay at 08:00 on day 2.
    assert Node.objects.get(name="bob").usage == (1 + 8 * 22 * 3600) / 2 + 8 * 2 * 3600


@pytest.mark.usefixtures("site")
def test_bad_options_are_refused(run: Run) -> None:
    assert run("replay", "--cluster", "site", "--step", "0m").err.strip() == (
        "--step 0m: not a duration such as 30s, 10m, 1h or 1d"
    )
    backwards = run("replay", "--cluster", "site", "--from", "2026-03-02", "--until", "2026-03-01")
    assert backwards.status == 1
    assert "is before --from" in backwards.err


def test_a_slurm_cluster_is_replayed_pass_by_pass(tmp_path: Path, run: Run) -> None:
    from tests.accounting.services.test_ingest import SACCT

    dump = write_file(tmp_path, "dump.log", SACCT.splitlines()[0] + "\n")  # dan: billing=32, 1 h
    ingested = run("ingest_sacct", dump, "--cluster", "alpha", "--create-nodes")
    assert ingested.status == 0, ingested.err
    ran = run("replay", "--cluster", "alpha", "--until", "2026-03-01T09:05:00Z")
    assert ran.status == 0, ran.err
    # Passes every PriorityCalcPeriod (5 minutes) from the start's slot, 08:00; the run (08:00:10
    # to 09:00:10) is charged 3,600 s × 32 billable TRES in all, decayed pass by pass.
    assert ran.out.startswith(
        "alpha: replayed 14 cycles from 2026-03-01T08:00:00+00:00 to 2026-03-01T09:05:00+00:00:"
        " 1 runs accrued,"
    )
    dan = Node.objects.get(cluster__name="alpha", name="dan")
    assert 0.99 * 32 * 3600 < dan.usage < 32 * 3600  # a week's half-life: under 1 % decayed
