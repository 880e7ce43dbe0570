"""The Accelerator commands: import_fsgroups, import_accelerator_jobs, import_preempt_rules,
accelerator_fs and accelerator_preemptions, on the seed's /class/vcs picture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accounting.models import Job
from tests.accounting.accelerator_site import HEADER, NOW, seed_files
from tests.conftest import Run, write_file
from trees.models import Cluster, Node, Scheduler

pytestmark = pytest.mark.django_db

FIELDS = [
    "group", "FS_TARGET", "FS_RUNNING", "FS_RUNNING_COUNT", "FS_EXCESS_RUNNING",
    "FS_EXCESS_RUNNING_LOCAL", "FS_HISTORY", "FS_EXCESS_HISTORY", "FS_RANK", "FS_RANK9",
]  # fmt: skip


@pytest.fixture
def site(tmp_path: Path, run: Run) -> Run:
    fsgroups, jobs, rules = seed_files(tmp_path)
    assert run("import_fsgroups", fsgroups, "--cluster", "vov").status == 0
    assert run("import_accelerator_jobs", jobs, "--cluster", "vov").status == 0
    assert run("import_preempt_rules", rules, "--cluster", "vov").status == 0
    return run


def test_the_imports_say_what_they_did(tmp_path: Path, run: Run) -> None:
    fsgroups, jobs, rules = seed_files(tmp_path)
    groups = run("import_fsgroups", fsgroups, "--cluster", "vov")
    assert groups.status == 0
    assert groups.out == (
        f"{fsgroups}: imported 3 FairShare groups into cluster vov (new); 0 problems; 4 groups"
        " in all (the root and the groups jobs made included): 4 added, 0 updated, 0 removed;"
        " 0 weight changes audited\n"
    )
    ran = run("import_accelerator_jobs", jobs, "--cluster", "vov")
    assert ran.status == 0
    assert f"{jobs}: read 17 (1 QUEUED, 16 RUNNING); ingested 0, running 16, queued 1" in ran.out
    assert "created 3 nodes: /class/hsim.u2, /class/vcs.u1, /class/vcs.u5" in ran.out
    again = run("import_accelerator_jobs", jobs, "--cluster", "vov")
    assert "duplicates 17" in again.out
    assert Job.objects.filter(cluster__name="vov").count() == 17
    loaded = run("import_preempt_rules", rules, "--cluster", "vov")
    assert (
        loaded.out
        == f"{rules}: imported 2 preemption rules into cluster vov (it had 0); 0 problems\n"
    )


def test_accelerator_fs_json_is_every_groups_fields(site: Run) -> None:
    ran = site("accelerator_fs", "--cluster", "vov", "--now", NOW.isoformat(), "--format", "json")
    assert ran.status == 0
    documents = json.loads(ran.out)
    assert [list(document) for document in documents] == [FIELDS] * 7
    by_group = {document["group"]: document for document in documents}
    assert list(by_group) == [
        "/", "/class", "/class/hsim", "/class/hsim.u2", "/class/vcs", "/class/vcs.u1",
        "/class/vcs.u5",
    ]  # fmt: skip
    assert [by_group["/class/vcs.u1"][name] for name in FIELDS[1:]] == [
        2500, 1875, 3, -625, 2500, 1875, -625, -1, 9_999_999,
    ]  # fmt: skip
    assert [by_group["/class/vcs.u5"][name] for name in FIELDS[1:]] == [
        2500, 625, 1, -1875, -2500, 625, -1875, 0, 0,
    ]  # fmt: skip


def test_accelerator_fs_text_is_a_table(site: Run) -> None:
    ran = site("accelerator_fs", "--cluster", "vov", "--now", NOW.isoformat())
    lines = ran.out.splitlines()
    assert lines[0] == (
        f"cluster vov at {NOW.isoformat()}: 7 groups, 17 jobs; fairshare.relative 2,"
        " relative_alpha 10"
    )
    assert lines[1].split() == ["GROUP", *FIELDS[1:], "WINDOW"]
    assert lines[8].split() == [
        "/class/vcs.u5", "2500", "625", "1", "-1875", "-2500", "625", "-1875", "0", "0", "7200s",
    ]  # fmt: skip


def test_accelerator_preemptions_json(site: Run) -> None:
    ran = site(
        "accelerator_preemptions", "--cluster", "vov", "--now", NOW.isoformat(), "--format", "json"
    )
    found = json.loads(ran.out)
    assert [(p["rule"], p["queued_job"], p["fires"], p["victims"]) for p in found] == [
        ("RuleThatDoesNotFire", "q7", False, []),
        ("RuleThatFires", "q7", True, ["13", "14", "15"]),
    ]
    text = site("accelerator_preemptions", "--cluster", "vov", "--now", NOW.isoformat()).out
    assert "RuleThatFires for q7: fires; may preempt 13, 14, 15\n" in text


def test_the_commands_refuse_a_cluster_of_another_scheduler(run: Run) -> None:
    Cluster.objects.create(name="hpc", scheduler=Scheduler.PBS)
    for command in ("accelerator_fs", "accelerator_preemptions"):
        ran = run(command, "--cluster", "hpc")
        assert (ran.status, ran.err) == (
            1, "cluster hpc is a PBS Professional / OpenPBS cluster, not Altair Accelerator\n",
        )  # fmt: skip
    assert run("accelerator_fs", "--cluster", "nowhere").err == "cluster 'nowhere' does not exist\n"


def test_a_bad_configuration_names_its_lines_and_keeps_the_good_groups(
    tmp_path: Path, run: Run
) -> None:
    text = "FSGROUP class {\n FSGROUP a -w 200000 {}\n FSGROUP b -x 1 {}\n FSGROUP c {}\n}\n"
    path = write_file(tmp_path, "bad.tcl", text)
    ran = run("import_fsgroups", path, "--cluster", "vov")
    assert ran.status == 0
    errors = ran.err.splitlines()
    assert errors[0].startswith(f"{path}:2: ")
    assert "200000" in errors[0]
    assert errors[1].startswith(f"{path}:3: ")
    assert "-x" in errors[1]
    assert set(Node.objects.filter(cluster__name="vov").values_list("name", flat=True)) == {
        "/", "/class", "/class/c",
    }  # fmt: skip
    strict = run("import_fsgroups", path, "--cluster", "vov2", "--strict")
    assert strict.status == 1
    assert strict.err.splitlines()[-1] == f"{path}: nothing imported (2 lines rejected)"
    unbalanced = write_file(tmp_path, "open.tcl", "FSGROUP class {\n FSGROUP a {}\n")
    broken = run("import_fsgroups", unbalanced, "--cluster", "vov3")
    assert broken.status == 1
    assert broken.err.startswith(f"{unbalanced}:1: ")
    assert not Cluster.objects.filter(name="vov3").exists()


def test_bad_job_lines_are_named_and_the_good_ones_kept(tmp_path: Path, run: Run) -> None:
    export = "\n".join(
        [
            HEADER,
            "1,/class/vcs.u1,u1,RUNNING,vcs,5,100,200,",
            "2,/class/vcs.u1,u1,IDLE,vcs,5,100,,",
            "3,class,u1,QUEUED,vcs,5,100,,",
            "4,/class/vcs.u1,u1,DONE,vcs,5,300,200,400",
        ]
    )
    path = write_file(tmp_path, "jobs.csv", export + "\n")
    ran = run("import_accelerator_jobs", path, "--cluster", "vov", "--json")
    document = json.loads(ran.out)
    assert (document["read"], document["running"], document["rejected"]) == (4, 1, 3)
    assert [(bad["line"], bad["field"]) for bad in document["rejects"]] == [
        (3, "status"), (4, "fsgroup"), (5, "started"),
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["import_fsgroups", "import_preempt_rules"])
def test_a_file_with_a_line_no_scheduler_writes_is_refused_unread(
    command: str, tmp_path: Path, run: Run
) -> None:
    # A 60 MB single line took 47-51 s to be rejected as Tcl words.
    path = write_file(tmp_path, "config.tcl", b"FSGROUP a\n" + b"x" * (5 << 20) + b"\n")
    ran = run(command, path, "--cluster", "vov")
    assert ran.status == 1
    assert ran.err == (
        f"{path}:2: line: longer than 4,194,304 bytes: no record is; not read, nor the rest of"
        " the file; nothing imported\n"
    )
    assert not Cluster.objects.filter(name="vov").exists()
