import random
import struct
from pathlib import Path

import pytest

from tests.conftest import Run, examples_or_skip
from trees.engine.pbs import UsageRecord
from trees.formats.usage_file import write_usage_file
from trees.models import Cluster, Node, NodeOrigin

pytestmark = pytest.mark.django_db

LAST_DECAY = 1767225600  # 2026-01-01T00:00:00Z


@pytest.fixture
def forum(run: Run) -> str:
    folder = examples_or_skip() / "forum_example"
    run("import_resource_group", str(folder / "resource_group"), "--cluster", "forum")
    return "forum"


def test_a_usage_file_round_trips_byte_for_byte(run: Run, forum: str, tmp_path: Path) -> None:
    # Scheduler order with an unknown entity: its records come first (unknown is the last root
    # child, so its subtree is written first), then the sibling chains.
    records = [
        UsageRecord("stranger", 7.5),
        UsageRecord("Scott", 1000.0),
        UsageRecord("Suzy", 0.0),
        UsageRecord("Cathy", 100.0),
        UsageRecord("Bob", 100.25),
    ]
    original = tmp_path / "usage"
    original.write_bytes(write_usage_file(records, last_decay=LAST_DECAY))
    ran = run("import_pbs_usage", str(original), "--cluster", forum)
    assert ran.status == 0, ran.err
    assert "imported 5 records" in ran.out
    assert "1 entities under unknown" in ran.out
    copy = tmp_path / "copy"
    assert run("export_pbs_usage", "--cluster", forum, "-o", str(copy)).status == 0
    assert copy.read_bytes() == original.read_bytes()
    stranger = Node.objects.get(cluster__name=forum, name="stranger")
    assert stranger.parent is not None
    assert (stranger.origin, stranger.parent.name, stranger.shares) == (
        NodeOrigin.USAGE,
        "unknown",
        1,
    )
    last_decay = Cluster.objects.get(name=forum).last_decay
    assert last_decay is not None
    assert last_decay.timestamp() == LAST_DECAY
    # 1 + 7.5 = 8.5 prints as 8: glibc rounds the exact half to even.
    listing = run("pbsfs", "--cluster", forum).out
    assert (
        "unknown   : Grp: 0      cgrp: 1    Shares: 0      Usage: 8      Perc:  0.000%" in listing
    )


def test_bad_records_are_reported_and_the_rest_kept(run: Run, forum: str, tmp_path: Path) -> None:
    data = write_usage_file(
        [UsageRecord("Bob", 5.0), UsageRecord("Cathy", -1.0), UsageRecord("group1", 3.0)],
        last_decay=0,
    )
    path = tmp_path / "usage"
    path.write_bytes(data + b"\0" * 10)
    ran = run("import_pbs_usage", str(path), "--cluster", forum)
    assert ran.status == 0
    assert ran.err.splitlines() == [
        f"{path}: record 2 (byte 96): usage: usage -1.0 is negative",
        f"{path}: record 4 (byte 224): record: last 10 bytes are not a whole 64-byte record "
        "(truncated file)",
        f"{path}: record 3 (byte 160): name: 'group1' is a group; "
        "only entities (leaves) carry usage",
    ]
    usage = dict(Node.objects.filter(cluster__name=forum).values_list("name", "usage_record"))
    assert (usage["Bob"], usage["Cathy"], usage["group1"]) == (5.0, None, None)


def test_a_file_from_another_architecture_imports_nothing(
    run: Run, forum: str, tmp_path: Path
) -> None:
    path = tmp_path / "usage"
    path.write_bytes(b"PBS_MAG!\0" + b"\0" * 7 + struct.pack(">d", 2.0) + struct.pack(">q", 0))
    ran = run("import_pbs_usage", str(path), "--cluster", forum)
    assert ran.status == 1
    assert "another architecture" in ran.err
    assert Cluster.objects.get(name=forum).has_usage_database is False


def test_an_import_to_a_new_cluster_that_fails_leaves_no_cluster(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "usage"
    path.write_bytes(write_usage_file([UsageRecord("x", -5.0)], last_decay=0))
    assert run("import_pbs_usage", str(path), "--cluster", "ghost").status == 1
    assert not Cluster.objects.filter(name="ghost").exists()


def test_export_warns_about_names_pbs_would_cut(run: Run, forum: str, tmp_path: Path) -> None:
    long_name = "u" * 50
    path = tmp_path / "usage"
    path.write_bytes(write_usage_file([UsageRecord("u" * 49, 3.0)], last_decay=0))
    run("import_pbs_usage", str(path), "--cluster", forum)
    Node.objects.filter(cluster__name=forum, name="u" * 49).update(name=long_name)
    ran = run("export_pbs_usage", "--cluster", forum, "-o", str(tmp_path / "out"))
    assert ran.err.startswith(f"warning: {long_name!r} is too long for a v2 usage file")


def test_a_v1_file_round_trips(run: Run, forum: str, tmp_path: Path) -> None:
    records = [UsageRecord("Scott", 1000.0), UsageRecord("Bob", 100.0), UsageRecord("olduser", 3.0)]
    original = tmp_path / "usage.v1"
    original.write_bytes(write_usage_file(records, last_decay=0, version=1))
    ran = run("import_pbs_usage", str(original), "--cluster", forum)
    assert "usage file v1: imported 3 records" in ran.out
    copy = tmp_path / "copy"
    run("export_pbs_usage", "--cluster", forum, "-o", str(copy), "--file-version", "1")
    assert copy.read_bytes() == original.read_bytes()
    assert len(original.read_bytes()) == 3 * 24


def test_random_bytes_are_no_usage_file(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "usage"
    path.write_bytes(random.Random(5).randbytes(24 * 1000))
    ran = run("import_pbs_usage", str(path), "--cluster", "typo")
    assert ran.status == 1
    assert ran.err.startswith(f"{path}: nothing imported: ")
    assert "records are not usage records: not a PBS usage file (read as version 1)" in ran.err
    assert ran.err.count("\n") == 1  # one reason, not a line per record
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_usage_file_of_no_record_makes_no_cluster(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "usage"
    path.write_bytes(write_usage_file([], last_decay=LAST_DECAY))  # the header alone
    ran = run("import_pbs_usage", str(path), "--cluster", "typo")
    assert (ran.status, ran.err) == (
        1,
        f"{path}: nothing imported: the file holds no usage record to import:"
        " cluster typo is not created\n",
    )
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_usage_file_of_no_record_still_resets_an_existing_cluster(
    run: Run, forum: str, tmp_path: Path
) -> None:
    path = tmp_path / "usage"
    path.write_bytes(write_usage_file([UsageRecord("Scott", 1000.0)], last_decay=LAST_DECAY))
    assert run("import_pbs_usage", str(path), "--cluster", forum).status == 0
    path.write_bytes(write_usage_file([], last_decay=LAST_DECAY))
    assert run("import_pbs_usage", str(path), "--cluster", forum).status == 0
    assert Node.objects.get(cluster__name=forum, name="Scott").usage == 1.0
