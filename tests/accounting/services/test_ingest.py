"""Ingestion: runs stored once, charged to their entity, each file one transaction."""

# ruff: noqa: E501  (accounting records are long lines)

import gzip
from pathlib import Path

import pytest

from accounting.models import IngestRejection, IngestRun, IngestSource, Job
from accounting.parsers.records import JobState
from accounting.services.ingest import IngestOptions, IngestResult, ingest
from accounting.services.job_store import JobStore
from accounting.services.pricing import jobs_usage_recompute, sched_config_import
from tests.conftest import Run, write_file
from trees.formats.sched_config import FairshareConfig
from trees.models import Cluster, Node, NodeOrigin

pytestmark = pytest.mark.django_db

# My own day of a small PBS Pro site: one job runs past midnight, one is requeued once.
DAY1 = """\
03/01/2026 08:00:00;Q;101.pbs01;user=ann group=chem account="CHEM01" project=p1 jobname=a queue=work ctime=1772352000 qtime=1772352000 etime=1772352000 Resource_List.ncpus=4
03/01/2026 08:00:05;S;101.pbs01;user=ann group=chem account="CHEM01" project=p1 jobname=a queue=work ctime=1772352000 qtime=1772352000 etime=1772352000 start=1772352005 exec_host=n1/0*4 Resource_List.ncpus=4 Resource_List.walltime=02:00:00
03/01/2026 09:00:05;E;101.pbs01;user=ann group=chem account="CHEM01" project=p1 jobname=a queue=work ctime=1772352000 qtime=1772352000 etime=1772352000 start=1772352005 exec_host=n1/0*4 Resource_List.ncpus=4 Resource_List.walltime=02:00:00 session=1 end=1772355605 Exit_status=0 resources_used.cput=03:00:00 resources_used.mem=1024kb resources_used.ncpus=4 resources_used.walltime=01:00:00 run_count=1
03/01/2026 10:00:00;S;102.pbs01;user=bob group=phys account="PHYS01" project=p2 jobname=b queue=long ctime=1772355600 qtime=1772355600 etime=1772355600 start=1772359200 exec_host=n2/0*8 Resource_List.ncpus=8 Resource_List.walltime=48:00:00
03/01/2026 11:00:00;S;103.pbs01;user=cy group=phys account="PHYS01" project=p2 jobname=c queue=work ctime=1772362800 qtime=1772362800 etime=1772362800 start=1772362800 exec_host=n3/0*2 Resource_List.ncpus=2
03/01/2026 11:30:00;R;103.pbs01;user=cy group=phys account="PHYS01" project=p2 jobname=c queue=work ctime=1772362800 qtime=1772362800 etime=1772362800 start=1772362800 exec_host=n3/0*2 Resource_List.ncpus=2 session=3 end=1772364600 Exit_status=-11 resources_used.cput=00:50:00 resources_used.ncpus=2 resources_used.walltime=00:30:00 run_count=1
03/01/2026 12:00:00;S;103.pbs01;user=cy group=phys account="PHYS01" project=p2 jobname=c queue=work ctime=1772362800 qtime=1772362800 etime=1772362800 start=1772366400 exec_host=n4/0*2 Resource_List.ncpus=2
03/01/2026 13:00:00;E;103.pbs01;user=cy group=phys account="PHYS01" project=p2 jobname=c queue=work ctime=1772362800 qtime=1772362800 etime=1772362800 start=1772366400 exec_host=n4/0*2 Resource_List.ncpus=2 session=4 end=1772370000 Exit_status=0 resources_used.cput=01:40:00 resources_used.ncpus=2 resources_used.walltime=01:00:00 run_count=2
03/01/2026 23:00:00;L;license;floating license hour:0 day:0 month:0 max:0
"""
DAY2 = """\
03/02/2026 10:00:00;E;102.pbs01;user=bob group=phys account="PHYS01" project=p2 jobname=b queue=long ctime=1772355600 qtime=1772355600 etime=1772355600 start=1772359200 exec_host=n2/0*8 Resource_List.ncpus=8 Resource_List.walltime=48:00:00 session=2 end=1772445600 Exit_status=0 resources_used.cput=100:00:00 resources_used.ncpus=8 resources_used.walltime=24:00:00 run_count=1
03/02/2026 10:00:01;D;104.pbs01;requestor=ann@login1
"""
TREE = "chem 10 root 60\nphys 11 root 40\nann 20 chem 1\nbob 21 phys 1\n"


def pbs_ingest(*paths: str, cluster: str = "site") -> IngestResult:
    return ingest(cluster_name=cluster, source=IngestSource.PBS_ACCOUNTING, paths=list(paths))


def tree_path(node: Node | None) -> str:
    """The node's names from the root, `TREEROOT/chem/ann`; "" for no node."""
    names = []
    while node is not None:
        names.append(node.name)
        node = node.parent
    return "/".join(reversed(names))


def jobs(cluster: str = "site") -> dict[tuple[str, int], Job]:
    return {(job.job_id, job.run): job for job in Job.objects.filter(cluster__name=cluster)}


def test_a_day_is_stored_run_by_run_with_its_usage(tmp_path: Path) -> None:
    result = pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    (day,) = result.files
    assert (day.read, day.ingested, day.running, day.duplicates, day.rejected) == (9, 3, 1, 0, 0)
    assert day.record_types == {"Q": 1, "S": 4, "E": 2, "R": 1, "L": 1}
    stored = jobs()
    assert sorted(stored) == [("101", 1), ("102", 1), ("103", 1), ("103", 2)]
    first = stored[("101", 1)]
    assert (first.state, first.ncpus, first.walltime, first.cput) == ("ended", 4, 3600, 10800.0)
    assert first.usage == 4 * 3600  # the default fairshare_usage_res, ncpus*walltime
    assert first.memory == 1024 * 1024
    assert (first.server, first.account, first.entity, first.source_line) == (
        "pbs01",
        "CHEM01",
        "ann",
        3,
    )
    assert first.end is not None
    assert first.end.timestamp() == 1772355605
    assert (stored[("103", 1)].state, stored[("103", 1)].usage) == ("requeued", 2 * 1800)
    assert (stored[("103", 2)].state, stored[("103", 2)].usage) == ("ended", 2 * 3600)
    running = stored[("102", 1)]
    assert (running.state, running.end, running.usage) == ("running", None, 0.0)


def test_unknown_entities_go_under_unknown_as_pbs_puts_them(tmp_path: Path, run: Run) -> None:
    assert run("import_resource_group", "--cluster", "site", write_file(tmp_path, "rg", TREE))
    result = pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    assert result.unknown_entities == ["cy"]
    cy = Node.objects.get(cluster__name="site", name="cy")
    assert (tree_path(cy), cy.origin, cy.usage_record) == (
        "TREEROOT/unknown/cy",
        NodeOrigin.USAGE,
        1.0,
    )
    assert {job.entity: tree_path(job.node) for job in jobs().values()} == {
        "ann": "TREEROOT/chem/ann",
        "bob": "TREEROOT/phys/bob",
        "cy": "TREEROOT/unknown/cy",
    }


def test_a_running_job_is_completed_by_its_end_in_the_next_day(tmp_path: Path) -> None:
    pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    result = pbs_ingest(write_file(tmp_path, "20260302", DAY2))
    assert (result.run.ingested, result.run.running, result.run.duplicates) == (1, 0, 0)
    bob = jobs()[("102", 1)]
    assert (bob.state, bob.walltime, bob.usage) == ("ended", 86400, 8 * 86400)
    assert Job.objects.filter(state=JobState.RUNNING).count() == 0


def test_ingesting_again_or_overlapping_adds_nothing(tmp_path: Path) -> None:
    day1, day2 = write_file(tmp_path, "20260301", DAY1), write_file(tmp_path, "20260302", DAY2)
    pbs_ingest(day1, day2)
    before = {key: (job.state, job.usage, job.pk) for key, job in jobs().items()}
    again = pbs_ingest(day2, day1)
    # day 2: E 102; day 1: E 101, R 103, E 103, and S 102 which has ended since
    assert (again.run.ingested, again.run.running, again.run.duplicates) == (0, 0, 5)
    assert {key: (job.state, job.usage, job.pk) for key, job in jobs().items()} == before
    assert again.stored_anything


def test_a_file_mixing_stored_and_new_runs_stores_only_the_new(tmp_path: Path) -> None:
    pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    new = DAY1.splitlines()[2].replace("101.pbs01", "105.pbs01")
    mixed = write_file(tmp_path, "again", DAY1 + new + "\n")
    result = pbs_ingest(mixed)
    # E 101, R 103, E 103 and the running S 102 were stored; E 105 is new
    assert (result.run.ingested, result.run.duplicates, result.run.running) == (1, 4, 0)
    assert sorted(jobs()) == [("101", 1), ("102", 1), ("103", 1), ("103", 2), ("105", 1)]


def test_big_inputs_read_by_helper_processes_store_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    day1, day2 = write_file(tmp_path, "20260301", DAY1), write_file(tmp_path, "20260302", DAY2)
    pbs_ingest(day1, day2, cluster="here")
    monkeypatch.setattr("accounting.job_rows.HELPER_FROM_BYTES", 0)
    there = pbs_ingest(day1, day2, cluster="there")
    assert there.run.files == IngestRun.objects.get(cluster__name="here").files
    fields = ("job_id", "run", "state", "entity", "ncpus", "usage", "end", "source_line")
    assert [[getattr(job, name) for name in fields] for job in jobs("there").values()] == [
        [getattr(job, name) for name in fields] for job in jobs("here").values()
    ]


def test_tabs_and_backslashes_in_names_are_stored_as_they_are(tmp_path: Path) -> None:
    text = DAY1.replace("jobname=a ", "jobname=a\tb\\c ")
    pbs_ingest(write_file(tmp_path, "20260301", text))
    assert jobs()[("101", 1)].jobname == "a\tb\\c"


def test_a_file_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    day1, day2 = write_file(tmp_path, "20260301", DAY1), write_file(tmp_path, "20260302", DAY2)
    original = JobStore.add

    def dies_on_day2(self, records):
        if self.summary.path == day2 and records:
            raise OSError("disk full")
        original(self, records)

    monkeypatch.setattr(JobStore, "add", dies_on_day2)
    with pytest.raises(OSError, match="disk full"):
        pbs_ingest(day1, day2)
    run = IngestRun.objects.get()
    assert (run.finished_at, [f["path"] for f in run.files]) == (None, [day1])
    assert Job.objects.count() == 4  # day 1 whole, nothing of day 2
    monkeypatch.setattr(JobStore, "add", original)
    resumed = pbs_ingest(day1, day2)
    assert (resumed.run.ingested, resumed.run.duplicates) == (1, 4)


def test_bad_lines_are_reported_and_the_good_ones_around_them_kept(tmp_path: Path) -> None:
    lines = DAY1.splitlines()
    broken = lines[2].replace("end=1772355605 ", "")  # an E record without its end
    absurd = lines[7].replace("resources_used.ncpus=2", "resources_used.ncpus=1000000000000")
    reruns = lines[2].replace("run_count=1", "run_count=99999999999")  # beyond the column
    text = "\n".join([lines[0], broken, "garbage", lines[5], absurd, reruns, lines[8]]) + "\n"
    result = pbs_ingest(write_file(tmp_path, "20260301", text))
    (day,) = result.files
    assert [(bad.line, bad.field) for bad in day.rejects] == [
        (2, "end"),
        (3, "line"),
        (5, "ncpus"),
        (6, "run"),
    ]
    assert day.rejects[-1].reason == "99999999999 is out of range (0 to 2147483647)"
    assert (day.read, day.ingested, day.rejected) == (7, 1, 4)
    saved = IngestRejection.objects.order_by("line")
    assert [(r.line, r.file) for r in saved] == [(n, day.path) for n in (2, 3, 5, 6)]
    assert saved[1].text == "garbage"


def test_an_swf_given_as_a_pbs_log_is_refused_after_its_first_lines(tmp_path: Path) -> None:
    swf = "".join(f"{n} 0 1 60 4 -1 -1 4 100 -1 1 3 1 -1 1 1 -1 -1\n" for n in range(1, 500))
    result = pbs_ingest(write_file(tmp_path, "20260301", swf))
    (day,) = result.files
    assert (day.rejected, day.read) == (101, 100)
    assert day.rejects[-1].reason.startswith("not a PBS accounting log: its first 100 lines")
    assert not result.stored_anything


def test_empty_and_missing_files_are_reported(tmp_path: Path) -> None:
    empty = write_file(tmp_path, "20260301", "")
    result = pbs_ingest(empty, str(tmp_path / "absent"))
    assert [bad.reason for f in result.files for bad in f.rejects] == [
        "empty: no records in the file",
        "cannot read: No such file or directory",
    ]


def test_the_usage_formula_prices_each_run_and_a_new_formula_reprices(tmp_path: Path) -> None:
    pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    sched_config_import(cluster_name="site", config=FairshareConfig(fairshare_usage_res="cput"))
    assert {key: job.usage for key, job in jobs().items()} == {
        ("101", 1): 10800.0,
        ("102", 1): 0.0,  # running: priced by the cycles
        ("103", 1): 3000.0,
        ("103", 2): 6000.0,
    }
    assert jobs_usage_recompute(cluster=Cluster.objects.get(name="site")) == 0


def test_a_run_the_formula_cannot_price_is_rejected(tmp_path: Path) -> None:
    Cluster.objects.create(name="site", fairshare_usage_res="cput/(walltime-3600)")
    result = pbs_ingest(write_file(tmp_path, "20260301", DAY1))
    (day,) = result.files
    assert [(bad.line, bad.field) for bad in day.rejects] == [
        (3, "fairshare_usage_res"),
        (6, "fairshare_usage_res"),
        (8, "fairshare_usage_res"),
    ]
    assert "division by zero" in day.rejects[0].reason
    assert day.rejects[1].reason == "cput/(walltime-3600) gives -1.6666666666666667 < 0"


SWF = """\
; UnixStartTime: 1000000000
; Queue: 1 batch
1 0 10 3600 4 1800 -1 4 7200 -1 1 7 2 -1 1 -1 -1 -1
2 100 0 60 1 -1 -1 1 600 -1 1 8 2 -1 2 -1 -1 -1
3 50 0 120 2 -1 -1 2 600 -1 0 7 2 -1 1 -1 -1 -1
"""


def test_swf_creates_the_missing_users_under_their_group(tmp_path: Path) -> None:
    path = write_file(tmp_path, "trace.swf", SWF)
    result = ingest(
        cluster_name="trace",
        source=IngestSource.SWF,
        paths=[path],
        options=IngestOptions(create_nodes=True, shares=5),
    )
    assert result.created_nodes == ["group2", "user7", "user8"]
    nodes = {n.name: n for n in Node.objects.filter(cluster__name="trace")}
    assert (tree_path(nodes["user7"]), nodes["user7"].shares) == ("TREEROOT/group2/user7", 5)
    first = jobs("trace")[("1", 1)]
    assert (first.user, first.group, first.queue, first.account) == (
        "user7",
        "group2",
        "batch",
        "group2",
    )
    assert first.start is not None
    assert first.start.timestamp() == 1000000010
    assert (first.cput, first.usage) == (4 * 1800.0, 4 * 3600)
    assert jobs("trace")[("2", 1)].queue == "queue2"


def test_a_truncated_gzip_keeps_the_jobs_before_the_cut(tmp_path: Path) -> None:
    body = SWF + "".join(
        f"{n} 200 0 60 1 -1 -1 1 600 -1 1 9 2 -1 1 -1 -1 -1\n" for n in range(4, 3000)
    )
    packed = gzip.compress(body.encode())
    path = write_file(tmp_path, "cut.swf.gz", packed[: len(packed) // 2])
    result = ingest(cluster_name="trace", source=IngestSource.SWF, paths=[path])
    (trace,) = result.files
    assert trace.ingested > 100
    assert trace.rejects[-1].field == "file"
    assert "ends early" in trace.rejects[-1].reason
    assert trace.ingested + trace.rejected - 1 == trace.read


SACCT = """\
11|11|alpha|batch|normal|physics|phys|100|dan|1000|2026-03-01T08:00:00|2026-03-01T08:00:00|2026-03-01T08:00:10|2026-03-01T09:00:10|01:00:00|0:0|COMPLETED|1|16|16|4000Mc|billing=16,cpu=16,mem=64000M,node=1|billing=32,cpu=16,mem=64000M,node=1|02:00:00|n1|x
12|12|alpha|batch|normal|physics|phys|100|eve|1001|2026-03-01T08:00:00|2026-03-01T08:00:00|2026-03-01T08:00:10|Unknown|00:10:00|0:0|RUNNING|1|4|4|4000Mc|billing=4,cpu=4,node=1|billing=4,cpu=4,node=1|02:00:00|n2|y
"""


def test_sacct_jobs_of_missing_associations_are_listed_then_created(tmp_path: Path) -> None:
    path = write_file(tmp_path, "dump.log", SACCT)
    first = ingest(cluster_name="alpha", source=IngestSource.SACCT, paths=[path])
    assert first.unknown_entities == ["physics:dan", "physics:eve"]
    assert [job.node for job in jobs("alpha").values()] == [None, None]
    again = ingest(
        cluster_name="alpha",
        source=IngestSource.SACCT,
        paths=[path],
        options=IngestOptions(create_nodes=True),
    )
    assert again.run.duplicates == 2
    assert again.created_nodes == []  # duplicates are not charged again
    third = write_file(
        tmp_path, "more.log", SACCT.replace("11|11|", "13|13|").splitlines()[0] + "\n"
    )
    made = ingest(
        cluster_name="alpha",
        source=IngestSource.SACCT,
        paths=[third],
        options=IngestOptions(create_nodes=True),
    )
    assert made.created_nodes == ["physics", "physics:dan"]
    job = jobs("alpha")[("13", 1)]
    assert (job.entity, tree_path(job.node)) == ("physics:dan", "root/physics/dan")
    assert (job.usage, job.billing, job.memory) == (
        32 * 3600,
        32.0,
        64000 * 2**20,
    )  # billing TRES × elapsed


# A day 3 with two jobs queued at its end: 105 asks for 16 cores, 106 is deleted on day 4.
DAY3 = """\
03/03/2026 09:00:00;Q;105.pbs01;user=ann group=chem account="CHEM01" project=p1 jobname=big queue=work ctime=1772528400 qtime=1772528400 etime=1772528400 Resource_List.ncpus=16 Resource_List.nodect=2 Resource_List.walltime=04:00:00
03/03/2026 09:30:00;Q;106.pbs01;user=bob group=phys account="PHYS01" project=p2 jobname=w queue=long ctime=1772530200 qtime=1772530200 etime=0 Resource_List.ncpus=1
"""
DAY4 = """\
03/04/2026 08:00:00;S;105.pbs01;user=ann group=chem account="CHEM01" project=p1 jobname=big queue=work ctime=1772528400 qtime=1772528400 etime=1772528400 start=1772611200 exec_host=n1/0*16 Resource_List.ncpus=16 Resource_List.nodect=2 Resource_List.walltime=04:00:00
03/04/2026 08:30:00;D;106.pbs01;requestor=bob@login1
"""


def test_a_queued_job_waits_until_a_later_day_starts_or_deletes_it(tmp_path: Path) -> None:
    day3 = pbs_ingest(write_file(tmp_path, "20260303", DAY3))
    assert (day3.run.queued, day3.run.ingested, day3.run.running) == (2, 0, 0)
    waiting = jobs()[("105", 0)]
    assert (waiting.state, waiting.ncpus, waiting.nodes, waiting.requested_walltime) == (
        "queued", 16, 2, 4 * 3600,
    )  # fmt: skip
    # Charged as its runs will be: ann has no node yet, so PBS's unknown holds her.
    assert (waiting.start, waiting.usage, tree_path(waiting.node)) == (
        None,
        0.0,
        "TREEROOT/unknown/ann",
    )
    assert waiting.qtime is not None
    assert int(waiting.qtime.timestamp()) == 1772528400
    assert jobs()[("106", 0)].etime is None  # etime=0: not eligible yet

    again = pbs_ingest(write_file(tmp_path, "20260303", DAY3))
    assert (again.run.queued, again.run.duplicates) == (0, 2)  # exactly once

    day4 = pbs_ingest(write_file(tmp_path, "20260304", DAY4))
    assert (day4.run.running, day4.run.queued) == (1, 0)
    assert set(jobs()) == {("105", 1)}  # 105 runs; 106 was deleted while it waited
    assert jobs()[("105", 1)].state == "running"
    # Day 3 read again on its own: 105 has started, so its Q adds nothing; 106's D left no
    # trace, so it waits again until day 4 is read again (docs/usage-data.md says so).
    late = pbs_ingest(write_file(tmp_path, "20260303", DAY3))
    assert (late.run.queued, late.run.duplicates) == (1, 1)
    assert not Job.objects.filter(state=JobState.QUEUED, job_id="105").exists()
    pbs_ingest(write_file(tmp_path, "20260304", DAY4))
    assert set(jobs()) == {("105", 1)}
