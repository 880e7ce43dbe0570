"""accounting.services.accelerator, with the ingestion and cycles of an Accelerator cluster:
the seed's /class/vcs picture (tests/accounting/accelerator_site.py) stored and kept."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from accounting.models import IngestSource, Job, NodeHistory
from accounting.selectors import accelerator_jobs_get
from accounting.services.accelerator import accelerator_jobs_imported, fsgroups_import
from accounting.services.cycles import CycleRefused, cycle_run
from accounting.services.ingest import ingest
from tests.accounting.accelerator_site import AT, FSGROUPS, NOW, jobs_export
from tests.conftest import write_file
from trees.formats.fsgroups import parse_fsgroups
from trees.models import Cluster, Node, NodeKind, NodeOrigin, Scheduler

pytestmark = pytest.mark.django_db


def imported(folder: Path, export: str, name: str = "jobs.csv") -> None:
    ingest(
        cluster_name="vov",
        source=IngestSource.ACCELERATOR,
        paths=[write_file(folder, name, export)],
    )


def fields(name: str) -> tuple[int | None, ...]:
    node = Node.objects.get(cluster__name="vov", name=name)
    return (node.fs_target, node.fs_running, node.fs_running_count, node.fs_excess_running,
            node.fs_excess_running_local, node.fs_rank)  # fmt: skip


@pytest.fixture
def site(tmp_path: Path) -> Cluster:
    """The seed's configuration and jobs, imported at NOW (the fields are stored with the
    jobs, at the time of the import)."""
    fsgroups_import(
        cluster_name="vov", groups=parse_fsgroups(FSGROUPS).groups, source="fsgroups.tcl", now=NOW
    )
    imported(tmp_path, jobs_export())
    cluster = Cluster.objects.get(name="vov")
    cycle_run(cluster=cluster, now=NOW)  # the fields at NOW, whenever the test runs
    return cluster


def test_the_seeds_picture_is_stored_as_the_page_describes_it(site: Cluster) -> None:
    assert site.scheduler == Scheduler.ACCELERATOR
    assert fields("/class/vcs.u1") == (2500, 1875, 3, -625, 2500, -1)
    assert fields("/class/vcs.u5") == (2500, 625, 1, -1875, -2500, 0)
    assert fields("/class/hsim") == (5000, 7500, 12, 2500, 2500, -1)
    assert fields("/") == (10_000, 10_000, 16, 0, 0, -1)
    # The users' leaves came with their jobs, linked to them.
    leaf = Node.objects.get(cluster=site, name="/class/vcs.u5")
    assert leaf.origin == NodeOrigin.USAGE
    assert set(
        Job.objects.filter(cluster=site, entity="/class/vcs.u5").values_list("node", flat=True)
    ) == {leaf.pk}


def test_the_cycle_keeps_the_fields_in_history(site: Cluster) -> None:
    cycle_run(cluster=site, now=NOW + timedelta(minutes=10))
    rows = NodeHistory.objects.filter(node__name="/class/vcs.u1").order_by("at")
    assert [(r.fs_target, r.fs_running, r.fs_running_count, r.fs_rank) for r in rows] == [
        (2500, 1875, 3, -1),
        (2500, 1875, 3, -1),
    ]
    # 3 of 16 jobs for 500 s, then 1100 s: the history is their share of what ran.
    assert [r.fs_history for r in rows] == [1875, 1875]
    assert rows[0].usage == 3.0  # its running jobs


def test_reimporting_a_snapshot_changes_nothing_and_a_newer_one_updates_the_jobs(
    site: Cluster, tmp_path: Path
) -> None:
    before = list(
        Job.objects.filter(cluster=site).order_by("pk").values_list("pk", "state", "request")
    )
    imported(tmp_path, jobs_export())
    assert (
        list(Job.objects.filter(cluster=site).order_by("pk").values_list("pk", "state", "request"))
        == before
    )
    # Later: u1's job 13 is suspended, q7 started, u5's first job ended, a new job waits.
    newer = (
        jobs_export(f"q8,/class/vcs.u1,u1,QUEUED,vcs,9,{AT + 50},,")
        .replace(
            f"13,/class/vcs.u1,u1,RUNNING,vcs,5,{AT - 600},{AT - 500},",
            f"13,/class/vcs.u1,u1,SUSPENDED,vcs,5,{AT - 600},{AT - 500},",
        )
        .replace(
            f"q7,/class/vcs.u5,u5,QUEUED,vcs,5,{AT - 60},,",
            f"q7,/class/vcs.u5,u5,RUNNING,vcs,5,{AT - 60},{AT + 30},",
        )
        .replace(
            f"16,/class/vcs.u5,u5,RUNNING,vcs,5,{AT - 600},{AT - 500},",
            f"16,/class/vcs.u5,u5,DONE,vcs,5,{AT - 600},{AT - 500},{AT + 20}",
        )
    )
    imported(tmp_path, newer, "later.csv")
    states = dict(Job.objects.filter(cluster=site).values_list("job_id", "state"))
    assert (states["13"], states["q7"], states["16"], states["q8"]) == (
        "running", "running", "ended", "queued",
    )  # fmt: skip
    request = json.loads(Job.objects.get(cluster=site, job_id="13").request or "{}")
    assert (request["suspended"], request["job_priority"]) == (True, 5)
    cycle_run(cluster=site, now=NOW + timedelta(minutes=10))
    # u1: 2 running (13 suspended) of 15; u5: q7 running; q8 queued makes u1 ranked.
    assert fields("/class/vcs.u1")[2] == 2
    assert fields("/class/vcs.u5")[2] == 1
    assert fields("/class/vcs.u1")[5] == 0
    assert fields("/class/vcs.u5")[5] == -1


def test_a_queued_job_the_next_snapshot_does_not_list_left_the_queue(
    site: Cluster, tmp_path: Path
) -> None:
    without_q7 = "\n".join(line for line in jobs_export().splitlines() if not line.startswith("q7"))
    imported(tmp_path, without_q7 + "\n", "later.csv")
    assert not Job.objects.filter(cluster=site, job_id="q7").exists()


def test_jobs_are_read_as_they_stood_at_the_moment_asked(site: Cluster, tmp_path: Path) -> None:
    imported(
        tmp_path,
        jobs_export(f"d1,/class/vcs.u1,u1,DONE,vcs,3,{AT - 5000},{AT - 4000},{AT - 1000}"),
        "more.csv",
    )

    def status(at_seconds: int) -> dict[str, str]:
        found = accelerator_jobs_get(cluster=site, now=NOW + timedelta(seconds=at_seconds))
        return {
            job.job.job_id: job.job.status for job in found if job.job.job_id in ("1", "q7", "d1")
        }

    assert status(0) == {"1": "running", "q7": "queued", "d1": "done"}
    # 2,000 s before NOW, d1 ran; job 1 was not submitted yet, nor q7.
    assert status(-2000) == {"d1": "running"}
    # 4,500 s before, d1 was queued; an hour later it is out of every window.
    assert status(-4500) == {"d1": "queued"}
    assert status(3600 + 6200) == {"1": "running", "q7": "queued"}
    u1 = next(job for job in accelerator_jobs_get(cluster=site, now=NOW) if job.job.job_id == "13")
    assert (u1.user, u1.jobclass, u1.job.priority, u1.job.submitted) == ("u1", "vcs", 5, AT - 600)


def test_a_new_configuration_keeps_the_groups_jobs_made_and_relinks_them(
    site: Cluster,
) -> None:
    fsgroups_import(
        cluster_name="vov",
        groups=parse_fsgroups("FSGROUP class {\n FSGROUP vcs -w 300 {}\n}\n").groups,
        source="new.tcl",
        now=NOW,
    )
    hsim = Node.objects.get(cluster=site, name="/class/hsim")
    assert (hsim.origin, hsim.shares) == (NodeOrigin.USAGE, 100)  # made again for u2's jobs
    assert fields("/class/vcs")[0] == 7500
    assert not Job.objects.filter(cluster=site, node__isnull=True).exists()


def test_the_groups_jobs_are_in_are_made_once_and_their_jobs_linked(
    site: Cluster, tmp_path: Path
) -> None:
    imported(tmp_path, jobs_export(f"n1,/new/deep.u9,u9,QUEUED,x,1,{AT - 10},,"), "more.csv")
    found = {node.name: node for node in Node.objects.filter(cluster=site, name__startswith="/new")}
    assert {name: (node.kind, node.origin) for name, node in found.items()} == {
        "/new": (NodeKind.ORGANIZATION, NodeOrigin.USAGE),
        "/new/deep": (NodeKind.PROJECT, NodeOrigin.USAGE),
        "/new/deep.u9": (NodeKind.USER, NodeOrigin.USAGE),
    }
    assert Job.objects.get(cluster=site, job_id="n1").node_id == found["/new/deep.u9"].pk
    again = accelerator_jobs_imported(cluster=site, groups=["/new/deep.u9", "/class"], now=NOW)
    assert again == []


def test_a_configuration_goes_to_an_accelerator_cluster_only() -> None:
    Cluster.objects.create(name="hpc", scheduler=Scheduler.PBS)
    with pytest.raises(ValidationError, match="not Altair Accelerator"):
        fsgroups_import(cluster_name="hpc", groups=[], source="f.tcl", now=NOW)


def test_a_cycle_needs_groups() -> None:
    cluster = Cluster.objects.create(name="empty", scheduler=Scheduler.ACCELERATOR)
    with pytest.raises(CycleRefused, match="has no FairShare groups: import its configuration"):
        cycle_run(cluster=cluster, now=NOW)
