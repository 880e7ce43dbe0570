"""import_qmgr, import_qstat and job_priorities, from the files to the order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accounting.models import Job
from tests.conftest import Run, write_file
from trees.models import Cluster, Queue, SettingChange

pytestmark = pytest.mark.django_db

SEED_003 = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
TREE = "physics 10 root 50\nbio 11 root 50\ncond 20 physics 50\ngrav 21 physics 50\n"
QMGR = f"""#
# Create resources and set their properties.
#
create resource ngpus
set resource ngpus type = long
set resource ngpus flag = hn
#
# Create queues and set their attributes.
#
create queue test
set queue test queue_type = Execution
set queue test Priority = 150
set queue test enabled = True
set queue test started = True
create queue cpu
set queue cpu queue_type = Execution
set queue cpu Priority = 100
set queue cpu enabled = True
set queue cpu started = True
#
# Set server attributes.
#
set server scheduling = True
set server default_queue = cpu
set server keep_completed = 300
set server job_sort_formula = {SEED_003}
set server scheduler_iteration = 300
set server eligible_time_enable = True
"""
# Two jobs of bio and cond as qstat -f -F json shows them at 2026-11-26T12:00:00Z.
QSTAT: dict[str, Any] = {
    "timestamp": 1795694400,
    "pbs_version": "2023.1.1",
    "pbs_server": "srv",
    "Jobs": {
        f"{number}.srv": {
            "Job_Name": "run",
            "Job_Owner": f"{user}@login1",
            "job_state": state,
            "queue": "cpu",
            "Account_Name": account,
            "ctime": "Thu Nov 26 10:00:00 2026",
            "qtime": "Thu Nov 26 10:00:00 2026",
            "etime": "Thu Nov 26 10:00:00 2026",
            "Priority": 0,
            "Resource_List": {"ncpus": ncpus, "mem": "2gb", "walltime": "02:00:00"},
            "eligible_time": "02:00:00",
            "accrue_type": 2,
            "euser": user,
            "egroup": "staff",
        }
        for number, user, account, ncpus, state in (
            (7, "bea", "bio", 128, "Q"),
            (8, "dkaya", "cond", 6656, "Q"),
            (9, "dkaya", "cond", 1, "H"),
        )
    },
}


@pytest.fixture
def site(run: Run, tmp_path: Path) -> str:
    ran = run("import_resource_group", write_file(tmp_path, "rg", TREE), "--cluster", "q")
    assert ran.status == 0, ran.err
    config = write_file(tmp_path, "sc", "fairshare_entity: Account_Name\nfair_share: true\n")
    assert run("import_sched_config", config, "--cluster", "q").status == 0
    return "q"


def test_import_qmgr_takes_the_formula_the_queues_and_audits_them(
    run: Run, site: str, tmp_path: Path
) -> None:
    ran = run("import_qmgr", write_file(tmp_path, "print", QMGR), "--cluster", site)
    assert ran.status == 0, ran.err
    assert "server keep_completed: not an attribute PBS defines; kept" in ran.err
    cluster = Cluster.objects.get(name=site)
    assert cluster.job_sort_formula == SEED_003
    assert cluster.eligible_time_enable is True
    assert cluster.scheduler_iteration.total_seconds() == 300
    assert cluster.server_attributes["keep_completed"] == "300"
    assert cluster.custom_resources == {"ngpus": "long"}
    assert list(Queue.objects.filter(cluster=cluster).values_list("name", "priority")) == [
        ("test", 150),
        ("cpu", 100),
    ]
    audited = set(SettingChange.objects.filter(cluster=cluster).values_list("setting", flat=True))
    assert {"job_sort_formula", "eligible_time_enable", "queue test", "queue cpu"} <= audited
    assert "; 2 queues;" in ran.out
    again = run("import_qmgr", write_file(tmp_path, "print", QMGR), "--cluster", site)
    assert " 0 changes audited;" in again.out


def test_a_formula_pbs_would_refuse_is_named_with_its_column_and_not_taken(
    run: Run, site: str, tmp_path: Path
) -> None:
    run("import_qmgr", write_file(tmp_path, "print", QMGR), "--cluster", site)
    bad = QMGR.replace(SEED_003, '"ncpus * walltme"')
    ran = run("import_qmgr", write_file(tmp_path, "print", bad), "--cluster", site)
    assert ran.status == 0
    assert "job_sort_formula 'ncpus * walltme': col 9: " in ran.err
    assert Cluster.objects.get(name=site).job_sort_formula == SEED_003


def test_import_qstat_is_a_snapshot_taken_exactly_once(run: Run, site: str, tmp_path: Path) -> None:
    run("import_qmgr", write_file(tmp_path, "print", QMGR), "--cluster", site)
    path = write_file(tmp_path, "qstat.json", json.dumps(QSTAT, indent=4))
    first = run("import_qstat", path, "--cluster", site, "--timezone", "UTC", "--json")
    assert first.status == 0, first.err
    assert json.loads(first.out)["queued"] == 3
    again = run("import_qstat", path, "--cluster", site, "--timezone", "UTC", "--json")
    assert (json.loads(again.out)["queued"], json.loads(again.out)["duplicates"]) == (0, 3)
    assert Job.objects.filter(cluster__name=site, state="queued").count() == 3
    later = dict(QSTAT, timestamp=QSTAT["timestamp"] + 60, Jobs={"7.srv": QSTAT["Jobs"]["7.srv"]})
    gone = run(
        "import_qstat", write_file(tmp_path, "later.json", json.dumps(later)), "--cluster",
        site, "--timezone", "UTC",
    )  # fmt: skip
    assert "left the queue 2" in gone.out
    assert list(Job.objects.filter(cluster__name=site, state="queued").values_list("job_id")) == [
        ("7",)
    ]


def test_job_priorities_orders_the_snapshot_as_seed_003_scores_it(
    run: Run, site: str, tmp_path: Path
) -> None:
    run("import_qmgr", write_file(tmp_path, "print", QMGR), "--cluster", site)
    path = write_file(tmp_path, "qstat.json", json.dumps(QSTAT))
    assert run("import_qstat", path, "--cluster", site, "--timezone", "UTC").status == 0
    # No usage yet: both entities' fairshare_tree_usage are equal, the cores decide.
    ran = run(
        "job_priorities", "--cluster", site, "--now", "2026-11-26T13:00:00Z", "--format", "json"
    )
    assert ran.status == 0, ran.err
    jobs = json.loads(ran.out)
    assert [(job["job_id"], job["position"]) for job in jobs] == [("8", 1), ("7", 2), ("9", None)]
    # eligible 2 h at the snapshot plus the hour since: 3 h = 0.125 day
    cond, bio = jobs[0], jobs[1]
    assert cond["terms"]["10*(ncpus/6656)"] == 10.0
    assert cond["terms"]["eligible_time/86400"] == 0.125
    assert bio["terms"]["10*(ncpus/6656)"] == pytest.approx(0.1923077)
    assert cond["priority"] - bio["priority"] == pytest.approx(10 - 0.1923077, abs=1e-4)
    assert set(cond) == {"job_id", "entity", "queue", "priority", "position", "terms"}
    text = run("job_priorities", "--cluster", site, "--now", "2026-11-26T13:00:00Z")
    lines = text.out.splitlines()
    assert lines[0].startswith("cluster q at 2026-11-26T13:00:00+00:00: 2 jobs waiting (1 held)")
    assert lines[1].split() == ["POS", "QPOS", "JOB", "ENTITY", "QUEUE", "PRIORITY",
                                "10*(ncpus/6656)", "1000*(1-fairshare_tree_usage)",
                                "eligible_time/86400"]  # fmt: skip
    assert lines[-1].split() == ["held", "9", "cond", "cpu"]


def test_a_job_of_an_entity_not_in_the_tree_waits_under_unknown(
    run: Run, site: str, tmp_path: Path
) -> None:
    stranger = dict(QSTAT["Jobs"]["7.srv"], Account_Name="nobody")
    snapshot = dict(QSTAT, Jobs={"10.srv": stranger})
    path = write_file(tmp_path, "qstat.json", json.dumps(snapshot))
    ran = run("import_qstat", path, "--cluster", site, "--timezone", "UTC")
    assert "charged under `unknown`, as PBS does: nobody" in ran.out
    job = Job.objects.get(cluster__name=site, job_id="10")
    assert job.node is not None
    assert job.node.parent is not None
    assert job.node.parent.name == "unknown"
    listed = run("job_priorities", "--cluster", site, "--format", "json")
    assert [(job["job_id"], job["entity"]) for job in json.loads(listed.out)] == [("10", "nobody")]
