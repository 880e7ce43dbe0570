"""site_files_import: an upload goes through its command's parser and service, with the same
rejected lines (file as uploaded, line, field, reason) and the same refusals."""

import random
from pathlib import Path
from typing import Any

import pytest

from accounting.models import IngestRejection, Job
from accounting.services.demo import DEMO_SAMPLES
from accounting.services.site_files import FilesImport, ImportReject, SiteFile, site_files_import
from tests.accounting.services.test_ingest import DAY1, DAY2
from tests.accounting.test_real_data import DATA, files_or_skip
from tests.conftest import Run, examples_or_skip, write_file
from trees.engine.pbs import UsageRecord
from trees.formats.usage_file import write_usage_file
from trees.models import Cluster, Node, Scheduler

pytestmark = pytest.mark.django_db

BAD_TREE = "g1 10 root 50\nbad line\nu1 11 g1 abc\nu2 12 g1 5\n"


def upload(
    cluster: str, kind: SiteFile, *files: tuple[str, Path], strict: bool = False
) -> FilesImport:
    return site_files_import(cluster_name=cluster, kind=kind, files=files, strict=strict)


def logs(
    read: int, ingested: int, running: int, duplicates: int, rejected: int, queued: int = 0
) -> dict[str, int]:
    """The figures of an accounting upload, in the page's order."""
    return {
        "read": read,
        "ingested": ingested,
        "running": running,
        "queued": queued,
        "duplicates": duplicates,
        "rejected": rejected,
    }


def tree(cluster: str) -> list[tuple[str, str, int | None]]:
    nodes = Node.objects.filter(cluster__name=cluster).exclude(parent=None)
    return sorted(nodes.values_list("name", "parent__name", "shares"))


def as_printed(rejects: list[ImportReject], path: str) -> list[str]:
    """The rejects as the import commands print them to stderr, the file named `path`."""
    return [f"{path}:{bad.line}: {bad.field}: {bad.reason}" for bad in rejects]


def test_a_sample_resource_group_makes_the_tree_the_command_makes(run: Run) -> None:
    sample = DEMO_SAMPLES / "whitepaper" / "resource_group"
    assert run("import_resource_group", str(sample), "--cluster", "by-command").status == 0
    done = upload("by-upload", SiteFile.RESOURCE_GROUP, ("resource_group", sample))
    assert (done.imported, done.cluster_created, done.rejects) == (True, True, [])
    # 12 entries (B1..B4, L1..L8) under TREEROOT, with `unknown` a 13th node besides the root.
    assert done.totals == {
        "entries": 12,
        "rejected": 0,
        "nodes_added": 12,
        "nodes_updated": 0,
        "nodes_removed": 0,
        "unknown_entities": 0,
    }
    assert tree("by-upload") == tree("by-command")
    assert len(tree("by-upload")) == 13


def test_rejected_tree_lines_are_the_ones_the_command_prints(run: Run, tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "rg", BAD_TREE))
    ran = run("import_resource_group", str(path), "--cluster", "by-command")
    done = upload("by-upload", SiteFile.RESOURCE_GROUP, ("my resource_group", path))
    printed = [line for line in ran.err.splitlines() if line.startswith(str(path))]
    assert as_printed(done.rejects, str(path)) == printed
    assert [(bad.file, bad.line, bad.field) for bad in done.rejects] == [
        ("my resource_group", 2, "line"),
        ("my resource_group", 3, "shares"),
    ]
    assert done.rejects[1].reason == "shares 'abc' is not a whole number"
    assert done.rejects[1].text == "u1 11 g1 abc"
    assert (done.imported, done.totals["entries"], done.totals["nodes_added"]) == (True, 2, 2)
    assert tree("by-upload") == [
        ("g1", "TREEROOT", 50),
        ("u2", "g1", 5),
        ("unknown", "TREEROOT", 0),
    ]


def test_strict_imports_nothing_when_a_line_is_rejected(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "rg", BAD_TREE))
    done = upload("strict", SiteFile.RESOURCE_GROUP, ("rg", path), strict=True)
    assert (done.imported, done.outcome) == (False, "2 lines rejected, and any stops the import")
    assert len(done.rejects) == 2
    assert not Cluster.objects.filter(name="strict").exists()


def test_a_tree_of_only_bad_lines_imports_nothing(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "rg", "bad line\nu1 11 g1 abc\n"))
    done = upload("empty", SiteFile.RESOURCE_GROUP, ("rg", path))
    assert (done.imported, done.outcome, done.totals) == (
        False,
        "2 lines rejected",
        {"entries": 0, "rejected": 2},
    )
    assert [(bad.line, bad.field) for bad in done.rejects] == [(1, "line"), (2, "parent")]
    assert not Cluster.objects.filter(name="empty").exists()


def test_a_text_file_of_another_kind_is_no_resource_group(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "notes", "buy milk\n\nrenew the certificate\n"))
    done = upload("empty", SiteFile.RESOURCE_GROUP, ("notes", path))
    assert (done.imported, done.outcome, done.totals) == (
        False,
        "none of its 2 lines is `name cgroup parent shares`: not a resource_group",
        {"entries": 0, "rejected": 2},
    )
    assert [(bad.line, bad.field) for bad in done.rejects] == [(1, "line"), (3, "line")]
    assert not Cluster.objects.filter(name="empty").exists()


def test_a_slurm_cluster_refuses_pbs_files(tmp_path: Path) -> None:
    Cluster.objects.create(name="slurmy", scheduler=Scheduler.SLURM)
    path = Path(write_file(tmp_path, "rg", "g1 10 root 50\n"))
    done = upload("slurmy", SiteFile.RESOURCE_GROUP, ("rg", path))
    assert (done.imported, done.outcome) == (
        False,
        "cluster slurmy is a Slurm cluster, not PBS Professional / OpenPBS",
    )
    logs = Path(write_file(tmp_path, "20260301", DAY1))
    refused = upload("slurmy", SiteFile.PBS_ACCOUNTING, ("20260301", logs))
    assert (refused.imported, refused.outcome) == (
        False,
        "cluster slurmy is a Slurm cluster, not PBS Professional / OpenPBS",
    )
    assert not Job.objects.exists()


def test_a_sched_config_sets_the_policy_and_names_refused_keys(run: Run, tmp_path: Path) -> None:
    text = "fairshare_usage_res: ncpus*walltime\nfairshare_decay_factor: 2\nunknown_shares: 10\n"
    path = Path(write_file(tmp_path, "sc", text))
    ran = run("import_sched_config", str(path), "--cluster", "by-command")
    done = upload("site", SiteFile.SCHED_CONFIG, ("sched_config", path))
    assert as_printed(done.rejects, str(path)) == ran.err.splitlines()
    assert [(bad.file, bad.line, bad.field) for bad in done.rejects] == [
        ("sched_config", 2, "fairshare_decay_factor")
    ]
    assert (done.imported, done.cluster_created, done.totals) == (
        True,
        True,
        {"keys": 2, "rejected": 1},
    )
    cluster = Cluster.objects.get(name="site")
    assert (cluster.fairshare_usage_res, cluster.decay_factor, cluster.unknown_shares) == (
        "ncpus*walltime",
        0.5,  # PBS's default: the 2 was refused
        10,
    )


def test_the_sample_sched_config(tmp_path: Path) -> None:
    sample = DEMO_SAMPLES / "whitepaper" / "sched_config"
    done = upload("wp", SiteFile.SCHED_CONFIG, ("sched_config", sample))
    assert (done.totals, done.rejects) == ({"keys": 5, "rejected": 0}, [])
    assert done.outcome == (
        "fairshare_usage_res cput, fairshare_entity euser, decay_time 86400 s,"
        " decay_factor 0.5, unknown_shares 10"
    )


@pytest.fixture
def forum(run: Run) -> str:
    folder = examples_or_skip() / "forum_example"
    ran = run("import_resource_group", str(folder / "resource_group"), "--cluster", "forum")
    assert ran.status == 0, ran.err
    return "forum"


def test_a_usage_file_with_bad_records_keeps_the_rest(run: Run, forum: str, tmp_path: Path) -> None:
    records = [UsageRecord("Bob", 5.0), UsageRecord("Cathy", -1.0), UsageRecord("group1", 3.0)]
    path = tmp_path / "usage"
    path.write_bytes(write_usage_file(records, last_decay=0) + b"\0" * 10)
    done = upload(forum, SiteFile.PBS_USAGE, ("usage", path))
    # The command's three lines, in its order: the parser's two, then the group it screens out.
    assert [(bad.line, bad.byte, bad.field) for bad in done.rejects] == [
        (2, 96, "usage"),
        (4, 224, "record"),
        (3, 160, "name"),
    ]
    assert done.rejects[0].reason == "usage -1.0 is negative"
    assert (done.imported, done.totals) == (
        True,
        {"records": 1, "rejected": 3, "unknown_entities": 0},
    )
    usage = dict(Node.objects.filter(cluster__name=forum).values_list("name", "usage_record"))
    assert (usage["Bob"], usage["Cathy"]) == (5.0, None)


def test_a_usage_file_with_a_bad_header_imports_nothing(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "usage", b"PBS"))
    done = upload("ghost", SiteFile.PBS_USAGE, ("usage", path))
    assert (done.imported, done.outcome) == (
        False,
        "PBS reads no usage from a file with this header",
    )
    assert [(bad.line, bad.byte, bad.field) for bad in done.rejects] == [(0, 0, "header")]
    assert not Cluster.objects.filter(name="ghost").exists()


def test_accounting_logs_in_day_order_and_again_as_duplicates(tmp_path: Path) -> None:
    day2 = Path(write_file(tmp_path, "20260302", DAY2))
    day1 = Path(write_file(tmp_path, "20260301", DAY1 + "not a record\n"))
    first = upload("site", SiteFile.PBS_ACCOUNTING, ("20260302", day2), ("20260301", day1))
    assert (first.imported, first.cluster_created) == (True, True)
    # Read in name order: 101, 103's requeued first run (R) and its second run end on the 1st,
    # 102 starts there (running) and ends on the 2nd.
    assert [(f.file, f.counts) for f in first.files] == [
        ("20260301", logs(10, 3, 1, 0, 1)),
        ("20260302", logs(2, 1, 0, 0, 0)),
    ]
    assert first.totals == logs(12, 4, 1, 0, 1)
    assert [(bad.file, bad.line, bad.field) for bad in first.rejects] == [("20260301", 10, "line")]
    assert first.rejects[0].text == "not a record"
    assert IngestRejection.objects.get().line == 10
    assert Job.objects.filter(state="running").count() == 0
    again = upload("site", SiteFile.PBS_ACCOUNTING, ("20260301", day1), ("20260302", day2))
    assert not again.cluster_created
    # Every run again (4), and 102's start, which the stored run already holds.
    assert again.totals == logs(12, 0, 0, 5, 1)
    assert Job.objects.count() == 4


def test_garbage_alone_stores_nothing(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "20260301", "\x00\x01binary\n"))
    done = upload("site", SiteFile.PBS_ACCOUNTING, ("garbage.log", path))
    refused = (
        "not a PBS accounting log: its only line has no record's shape"
        " (MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE)"
    )
    assert (done.imported, done.outcome) == (
        False,
        f"no job run in the input; garbage.log: {refused}",
    )
    assert [(bad.file, bad.line, bad.field) for bad in done.rejects] == [
        ("garbage.log", 1, "line"),
        ("garbage.log", 1, "file"),
    ]
    assert (done.totals["read"], done.cluster_created) == (1, False)
    assert not Cluster.objects.filter(name="site").exists()


def test_a_text_file_of_another_kind_is_no_accounting_log(tmp_path: Path) -> None:
    """Short files too (the first 100 lines rule does not reach them): one reason for the file,
    beside each line's; a log whose records are all bad is still a log."""
    notes = Path(write_file(tmp_path, "notes", "buy milk\n\nrenew the certificate\n"))
    bad_records = Path(write_file(tmp_path, "20260301", "03/01/2026 10:00:00;E;;x\n"))
    done = upload("typo", SiteFile.PBS_ACCOUNTING, ("notes", notes), ("20260301", bad_records))
    assert [(bad.file, bad.line, bad.field) for bad in done.rejects] == [
        ("20260301", 1, "id"),
        ("notes", 1, "line"),
        ("notes", 3, "line"),
        ("notes", 3, "file"),
    ]
    assert done.rejects[-1].reason == (
        "not a PBS accounting log: none of its 2 lines has a record's shape"
        " (MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE)"
    )
    assert done.totals == logs(3, 0, 0, 0, 4)
    assert (done.imported, done.cluster_created) == (False, False)
    assert not Cluster.objects.filter(name="typo").exists()


def test_real_accounting_logs_uploaded_twice() -> None:
    files_or_skip("pbs_accounting", "*/*")
    path = DATA / "pbs_accounting" / "ncar-laramie" / "20180212"
    first = upload("laramie", SiteFile.PBS_ACCOUNTING, ("20180212", path))
    # SOURCES.md's figures: 43 Q, 34 S, 33 E, 19 L, 3 D; every E a run, one S still running.
    # The 7 jobs queued with no S, E, D or A in the file are Q records of their queue alone
    # (OpenPBS's own): no entity to wait as, so not kept.
    assert first.totals == logs(132, 33, 1, 0, 0)
    again = upload("laramie", SiteFile.PBS_ACCOUNTING, ("20180212", path))
    assert again.totals == logs(132, 0, 0, 34, 0)
    assert Job.objects.count() == 34


JUNK = random.Random(17).randbytes(200_000)  # what an admin might pick by mistake


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        (SiteFile.SCHED_CONFIG, "holds control bytes: not a sched_config, which is text"),
        (SiteFile.RESOURCE_GROUP, "holds control bytes: not a resource_group, which is text"),
        (SiteFile.PBS_USAGE, "records are not usage records: not a PBS usage file"),
    ],
)
def test_random_bytes_are_refused_whole_and_make_no_cluster(
    tmp_path: Path, kind: SiteFile, reason: str
) -> None:
    path = Path(write_file(tmp_path, "junk", JUNK))
    done = upload("typo", kind, ("junk", path))
    assert not done.imported
    assert reason in done.outcome
    assert done.rejects == []  # one reason for the file, not one per line
    assert not Cluster.objects.filter(name="typo").exists()


def test_random_bytes_as_accounting_logs_store_nothing_and_make_no_cluster(
    tmp_path: Path,
) -> None:
    path = Path(write_file(tmp_path, "20260301", JUNK))
    done = upload("typo", SiteFile.PBS_ACCOUNTING, ("20260301", path))
    assert not done.imported
    assert done.outcome.startswith("no job run in the input; 20260301: not a PBS accounting")
    assert done.rejects[-1].reason.startswith("not a PBS accounting log: its first 100 lines")
    assert len(done.rejects) == 101
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_text_file_of_another_kind_is_no_sched_config(tmp_path: Path) -> None:
    path = Path(write_file(tmp_path, "notes", "buy milk\nrenew the certificate\n"))
    done = upload("typo", SiteFile.SCHED_CONFIG, ("notes", path))
    assert not done.imported
    assert "none of its 2 lines is `name: value`: not a sched_config" in done.outcome
    assert not Cluster.objects.filter(name="typo").exists()


def test_usage_records_with_absurd_usage_or_no_name_are_rejected(tmp_path: Path) -> None:
    data = write_usage_file(
        [
            UsageRecord("alice", 5000.0),
            UsageRecord("bob", 7.6e236),
            UsageRecord("", 12.0),
            UsageRecord("carol", 1e30),
        ],
        last_decay=0,
    )
    done = upload("site", SiteFile.PBS_USAGE, ("usage", Path(write_file(tmp_path, "usage", data))))
    assert done.imported
    assert [(bad.line, bad.field, bad.reason) for bad in done.rejects] == [
        (2, "usage", "usage 7.6e+236 is more than 1e+30: no site accrues that"),
        (3, "name", "name is empty"),
    ]
    assert done.totals["records"] == 2


def test_a_usage_file_too_big_to_be_one_is_refused_unread(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr("accounting.services.site_files.USAGE_FILE_MAX_BYTES", 100)
    data = write_usage_file([UsageRecord(f"u{n}", 5.0) for n in range(5)], last_decay=0)
    done = upload("site", SiteFile.PBS_USAGE, ("usage", Path(write_file(tmp_path, "usage", data))))
    assert (done.imported, done.outcome) == (
        False,
        "352 bytes is more than a usage file of 4 million entities",
    )
