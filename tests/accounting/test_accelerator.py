"""accounting.accelerator: an Accelerator cluster's fields at any moment, and its preemption
rules on the queued and running jobs (the seed's two rules on its /class/vcs picture)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from accounting.accelerator import accelerator_fields_get, preemptions_get
from accounting.models import IngestSource
from accounting.services.accelerator import fsgroups_import
from accounting.services.ingest import ingest
from tests.accounting.accelerator_site import AT, FSGROUPS, NOW, RULES, jobs_export
from tests.conftest import write_file
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules
from trees.models import Cluster, Node
from trees.services.accelerator import preempt_rules_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path: Path) -> Cluster:
    groups = parse_fsgroups(FSGROUPS).groups
    fsgroups_import(cluster_name="vov", groups=groups, source="fsgroups.tcl", now=NOW)
    path = write_file(tmp_path, "jobs.csv", jobs_export())
    ingest(cluster_name="vov", source=IngestSource.ACCELERATOR, paths=[path])
    rules = parse_preempt_rules(RULES).rules
    preempt_rules_import(cluster_name="vov", rules=rules, source="rules.tcl")
    return Cluster.objects.get(name="vov")


def test_the_fields_at_a_moment_are_worked_out_and_not_saved(site: Cluster) -> None:
    before = Node.objects.get(cluster=site, name="/class/vcs.u1").fs_running
    found = accelerator_fields_get(cluster=site, now=NOW - timedelta(seconds=550))
    # 550 s before NOW no job had started: every group with a job waits, none runs.
    u1 = found.of("/class/vcs.u1")
    assert u1 is not None
    assert (u1.running, u1.target, u1.rank) == (0, 2500, 1)  # 13 to 15 were submitted first
    assert found.of("/class/hsim.u2").rank == 0  # type: ignore[union-attr]
    assert found.of("/class/vcs.u5").rank == 2  # type: ignore[union-attr]
    assert len(found.jobs) == 16  # q7 was not submitted yet
    assert Node.objects.get(cluster=site, name="/class/vcs.u1").fs_running == before


def test_the_rule_on_global_excess_does_not_fire_and_the_local_one_does(site: Cluster) -> None:
    first, second = preemptions_get(cluster=site, now=NOW)
    assert (first.rule, first.queued_job, first.fires, first.victims) == (
        "RuleThatDoesNotFire", "q7", False, (),
    )  # fmt: skip
    assert first.why == (
        "RuleThatDoesNotFire: job q7 (/class/vcs.u5) matches -preempting, but no running job"
        " with JOBCLASS == vcs has FS_EXCESS_RUNNING > 0 (/class/vcs.u1's 3 jobs have -625,"
        " /class/vcs.u5's 1 job has -1875)."
    )
    assert (second.rule, second.fires, second.victims) == (
        "RuleThatFires",
        True,
        ("13", "14", "15"),
    )
    assert second.why == (
        "RuleThatFires: job q7 (/class/vcs.u5) may preempt 3 running jobs of /class/vcs.u1"
        " (JOBCLASS vcs == vcs, FS_EXCESS_RUNNING_LOCAL 2500 > 0, FS_RANK9 9999999 > 0)."
    )


def test_a_suspended_job_is_no_victim(site: Cluster, tmp_path: Path) -> None:
    suspended = jobs_export().replace(
        f"13,/class/vcs.u1,u1,RUNNING,vcs,5,{AT - 600},{AT - 500},",
        f"13,/class/vcs.u1,u1,SUSPENDED,vcs,5,{AT - 600},{AT - 500},",
    )
    path = write_file(tmp_path, "later.csv", suspended)
    ingest(cluster_name="vov", source=IngestSource.ACCELERATOR, paths=[path])
    fires = preemptions_get(cluster=site, now=NOW)[1]
    # u1 runs 2 of vcs's 3 running jobs: locally +1667, still over its half.
    assert (fires.fires, fires.victims) == (True, ("14", "15"))


def test_no_rules_no_preemptions(site: Cluster) -> None:
    preempt_rules_import(cluster_name="vov", rules=[], source="empty.tcl")
    assert preemptions_get(cluster=site, now=NOW) == []
