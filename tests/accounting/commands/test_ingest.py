"""The ingest commands: --json, exit statuses, directories of day files."""

import json
from pathlib import Path

import pytest

from accounting.models import Job
from tests.accounting.services.test_ingest import DAY1, DAY2, SACCT, SWF
from tests.conftest import Run, write_file
from trees.models import Cluster

pytestmark = pytest.mark.django_db


def test_json_gives_the_counts_and_every_rejected_line(tmp_path: Path, run: Run) -> None:
    path = write_file(tmp_path, "20260301", DAY1 + "not a record\n")
    ran = run("ingest_pbs_accounting", path, "--cluster", "site", "--json")
    assert ran.status == 0
    document = json.loads(ran.out)
    assert {key: document[key] for key in ("read", "ingested", "duplicates", "rejected")} == {
        "read": 10,
        "ingested": 3,
        "duplicates": 0,
        "rejected": 1,
    }
    assert document["rejects"] == [
        {"file": path, "line": 10, "field": "line", "reason": document["rejects"][0]["reason"]}
    ]
    assert document["record_types"] == {"E": 2, "L": 1, "Q": 1, "R": 1, "S": 4}
    assert document["running"] == 1


def test_a_directory_is_read_in_day_order(tmp_path: Path, run: Run) -> None:
    folder = tmp_path / "accounting"
    folder.mkdir()
    write_file(folder, "20260302", DAY2)
    write_file(folder, "20260301", DAY1)
    write_file(folder, "README", "not a day file\n")
    ran = run("ingest_pbs_accounting", str(folder), "--cluster", "site")
    assert ran.status == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0].startswith(f"{folder}/20260301: read 9 (2 E, 1 L, 1 Q, 1 R, 4 S)")
    assert lines[1].startswith(f"{folder}/20260302: read 2 (1 D, 1 E); ingested 1, running 0")
    assert Job.objects.filter(state="running").count() == 0


def test_nothing_ingested_exits_1_and_a_rerun_exits_0(tmp_path: Path, run: Run) -> None:
    garbage = write_file(tmp_path, "20260301", "\x00\x01binary\n")
    ran = run("ingest_pbs_accounting", garbage, "--cluster", "site")
    assert ran.status == 1
    assert f"{garbage}:1: line:" in ran.err
    assert "nothing ingested" in ran.err
    good = write_file(tmp_path, "20260302", DAY2)
    assert run("ingest_pbs_accounting", good, "--cluster", "site").status == 0
    again = run("ingest_pbs_accounting", good, "--cluster", "site")
    assert again.status == 0
    assert "ingested 0, running 0, queued 0, duplicates 1, rejected 0" in again.out


def test_swf_and_sacct_commands(tmp_path: Path, run: Run) -> None:
    swf = write_file(tmp_path, "t.swf", SWF)
    ran = run("ingest_swf", swf, "--cluster", "trace", "--create-nodes", "--json")
    assert json.loads(ran.out)["created_nodes"] == ["group2", "user7", "user8"]
    dump = write_file(tmp_path, "d.log", SACCT)
    ran = run("ingest_sacct", dump, "--cluster", "alpha", "--timezone", "America/New_York")
    assert ran.status == 0, ran.err
    assert "2 entities not in the tree; their jobs are stored unlinked" in ran.out
    start = Job.objects.get(cluster__name="alpha", job_id="11").start
    assert start is not None
    assert start.isoformat() == "2026-03-01T13:00:10+00:00"
    assert run("ingest_sacct", dump, "--cluster", "b", "--timezone", "Mars/Base").status == 1


def test_a_formula_that_does_not_parse_is_refused_when_saved(tmp_path: Path, run: Run) -> None:
    config = write_file(tmp_path, "sched_config", "fairshare_usage_res: ncpus*walltme\n")
    ran = run("import_sched_config", config, "--cluster", "site")
    assert ran.status == 1
    assert "'ncpus*walltme': col 7: unknown resource 'walltme'" in ran.err


def test_a_file_of_another_kind_is_refused_whole_and_makes_no_cluster(
    tmp_path: Path, run: Run
) -> None:
    path = write_file(tmp_path, "20260301", "alice 11 grp 10\nbob 12 grp 90\n")
    ran = run("ingest_pbs_accounting", path, "--cluster", "typo")
    assert ran.status == 1
    assert ran.err.splitlines()[-2:] == [
        f"{path}:2: file: not a PBS accounting log: none of its 2 lines has a record's shape"
        " (MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE)",
        "nothing ingested: no job run in the input",
    ]
    assert "read 2 (no records)" in ran.out
    assert not Cluster.objects.filter(name="typo").exists()
