"""manage.py demo: the sample clusters, then a generated site through the imports, the
ingestion and the replay, an Accelerator cluster through its imports and a day of cycles, and
the three logins.

The small demo (the generated year's last 14 days) is built once for the module; each test's
changes roll back. Counts are exact: the site is generated from a fixed seed and end.
"""

import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO
from itertools import pairwise
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db.models import Sum
from django.test import override_settings

from accounting.management.commands.demo import LOGINS, login_passwords
from accounting.models import Cycle, IngestRun, Job, NodeHistory
from accounting.parsers.records import JobState
from tests.cast import FAST_HASHER
from trees.engine.accelerator import parent_of
from trees.models import (
    Cluster,
    Membership,
    Node,
    NodeOrigin,
    Person,
    PreemptRule,
    Role,
    SettingChange,
)
from trees.services.clusters import cluster_delete

pytestmark = pytest.mark.django_db

NOW = "2026-03-04T15:20Z"  # a Wednesday afternoon: the generated jobs end at 15:00
END = datetime(2026, 3, 4, 15, tzinfo=UTC)
FIRST = END - timedelta(days=14)  # the first replayed cycle
PASSWORD = "demo-password"
CLUSTERS = ("fairtree", "forum", "whitepaper", "hpc", "gpu", "vnc")


def demo(*args: str) -> str:
    out = StringIO()
    call_command("demo", "--small", "--now", NOW, *args, stdout=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def built(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """What the demo printed; its site stays in the database for the module's tests."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHER):
        try:
            yield demo("--password", PASSWORD)
        finally:
            for name in CLUSTERS:
                cluster_delete(name=name)
            User.objects.filter(username__in=LOGINS).delete()


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any, built: str) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER


def steps(output: str) -> list[str]:
    """The lines the demo printed, each step's time taken off."""
    return [re.sub(r" \(\d+\.\d s\)$", "", line) for line in output.splitlines()]


def test_it_says_what_each_step_did_and_how_long_it_took(built: str) -> None:
    timed = [line for line in built.splitlines() if re.search(r" \(\d+\.\d s\)$", line)]
    assert len(timed) == 15  # removal, samples, 4 steps a generated cluster, logins
    assert steps(built)[:4] == [
        "clusters removed: none",
        "loaded Slurm cluster fairtree: 18 associations",
        "loaded cluster forum: 6 tree entries",
        "loaded cluster whitepaper: 12 tree entries",
    ]
    assert steps(built)[5:17] == [
        "hpc: 1,726 jobs of 14 days to 2026-03-04T15:00:00+00:00 generated,"
        " 5,130 accounting records written",
        "hpc: tree of 35 entries imported (usage ncpus*walltime per Account_Name,"
        " decay 0.5 every 168 h)",
        "hpc: 5,130 records ingested from 15 files: 1,696 runs ended, 12 still running,"
        " 0 rejected; entities under unknown: staff",
        "hpc: 2,017 cycles of 10 minutes replayed (1 decay), 11,285 history rows kept",
        "gpu: 575 jobs of 14 days to 2026-03-04T15:00:00+00:00 generated,"
        " 1,677 accounting records written",
        "gpu: tree of 335 entries imported (usage ngpus*walltime per euser, decay 0.5 every 24 h)",
        "gpu: 1,677 records ingested from 15 files: 545 runs ended, 12 still running,"
        " 0 rejected; entities under unknown: hpcadmin",
        "gpu: 2,017 cycles of 10 minutes replayed (13 decays), 100,386 history rows kept",
        "vnc: 670 Accelerator jobs of 26 hours to 2026-03-04T15:00:00+00:00 generated"
        " (27 running, 2 suspended, 9 queued, 579 done, 53 failed), exported as CSV",
        "vnc: 9 FairShare groups (vovfsgroup genconfig) and 2 preemption rules imported",
        "vnc: 670 jobs ingested (29 running or suspended, 9 queued), 0 rejected;"
        " 14 users' leaves G.user made",
        "vnc: 145 cycles of 10 minutes run, 3,480 history rows kept",
    ]
    assert re.fullmatch(r"demo built in \d+\.\d s", built.splitlines()[-1])


def test_the_generated_clusters_have_the_sites_tree_and_policy(built: str) -> None:
    assert sorted(Cluster.objects.values_list("name", flat=True)) == sorted(CLUSTERS)
    kinds = {
        name: Counter(
            Node.objects.filter(cluster__name=name, origin=NodeOrigin.DEFINED).values_list(
                "kind", flat=True
            )
        )
        for name in ("hpc", "gpu")
    }
    assert kinds["hpc"] == {"organization": 5, "project": 30}  # projects are the entities
    assert kinds["gpu"] == {"organization": 5, "project": 30, "user": 300}
    hpc, gpu = Cluster.objects.get(name="hpc"), Cluster.objects.get(name="gpu")
    assert (hpc.fairshare_entity, hpc.fairshare_usage_res) == ("Account_Name", "ncpus*walltime")
    assert (hpc.decay_interval, hpc.decay_factor) == (timedelta(hours=168), 0.5)
    assert hpc.job_sort_formula == (
        "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
    )
    assert (gpu.fairshare_entity, gpu.fairshare_usage_res) == ("euser", "ngpus*walltime")
    assert (gpu.decay_interval, gpu.decay_factor, gpu.job_sort_formula) == (
        timedelta(hours=24),
        0.5,
        "",
    )
    # the what-if's pools: 52 nodes of 128 cores; 20 of 64 cores and 4 GPUs (nodes uncounted)
    assert (hpc.cores, hpc.gpus, hpc.compute_nodes) == (6656, None, None)
    assert (gpu.cores, gpu.gpus, gpu.compute_nodes) == (1280, 80, None)
    # The staff's test jobs name an account the tree lacks: PBS keeps it under unknown.
    staff = Node.objects.filter(cluster=hpc, name="staff").values_list("parent__name", "origin")
    assert staff.get() == ("unknown", NodeOrigin.USAGE)


def test_the_jobs_are_stored_with_those_still_running_and_queued(built: str) -> None:
    states = {
        name: Counter(Job.objects.filter(cluster__name=name).values_list("state", flat=True))
        for name in ("hpc", "gpu")
    }
    assert states["hpc"] == {JobState.ENDED: 1696, JobState.RUNNING: 12, JobState.QUEUED: 18}
    assert states["gpu"]["ended"] == 545
    assert states["gpu"]["running"] == 12
    # Jobs submitted before the logs end that had not started by then wait, with no start.
    waiting = Job.objects.filter(cluster__name__in=("hpc", "gpu"), state=JobState.QUEUED)
    assert waiting.count() == states["hpc"]["queued"] + states["gpu"]["queued"]
    assert not waiting.filter(start__isnull=False).exists()
    assert not waiting.filter(qtime__isnull=True).exists()
    assert not Job.objects.filter(cluster__name="hpc", node=None).exists()
    # Each queued job from a Q record carries what it asked for, for its priority.
    requests = [json.loads(text or "{}") for text in waiting.values_list("request", flat=True)]
    assert all(request["resources"]["ncpus"] >= 1 for request in requests)
    assert all(request["resources"]["walltime"] >= 3600 for request in requests)
    assert set(IngestRun.objects.values_list("rejected", flat=True)) == {0}


def test_more_jobs_start_on_weekdays_and_in_working_hours(built: str) -> None:
    pbs = Job.objects.filter(cluster__name__in=("hpc", "gpu"))  # vnc's day has no rhythm
    starts = [start for start in pbs.values_list("start", flat=True) if start]
    days = Counter(start.weekday() for start in starts)
    # Fourteen days to a Wednesday 15:00: ten weekdays (and a bit) and four weekend days.
    assert sum(days[day] for day in range(5)) / 10 > 2 * (days[5] + days[6]) / 4
    hours = Counter(start.hour for start in starts)
    assert sum(hours[hour] for hour in range(9, 17)) / 8 > 3 * sum(hours[h] for h in range(6)) / 6


def epoch(moment: datetime | None) -> int:
    assert moment is not None
    return int(moment.timestamp())


def decayed(runs: list[tuple[int, int, float]], decays: list[int], factor: float) -> float:
    """What PBS's cycles leave of runs (start, end, usage): each accrues evenly over its run
    and the part accrued before a decay is decayed with it."""
    total = 0.0
    for start, end, usage in runs:
        edges = [start, *(moment for moment in decays if start < moment < end), end]
        for low, high in pairwise(edges):
            later = sum(1 for moment in decays if moment >= high)
            total += usage * (high - low) / (end - start) * factor**later
    return total


@pytest.mark.parametrize(("cluster", "by"), [("hpc", "account"), ("gpu", "user")])
def test_the_replayed_usage_is_what_the_ingested_jobs_imply(
    built: str, cluster: str, by: str
) -> None:
    jobs = Job.objects.filter(cluster__name=cluster)
    ended = jobs.filter(state=JobState.ENDED).aggregate(total=Sum("usage"))["total"]
    running = jobs.filter(state=JobState.RUNNING).aggregate(total=Sum("accrued"))["total"]
    cycles = Cycle.objects.filter(cluster__name=cluster)
    assert cycles.count() == 14 * 24 * 6 + 1
    assert cycles.aggregate(total=Sum("usage_added"))["total"] == pytest.approx(
        ended + running, rel=1e-12
    )
    # The entity that ran most: its usage is its jobs', decayed as they ran.
    entity = Counter(dict(jobs.values_list(by).annotate(Sum("usage")))).most_common(1)[0][0]
    node = Node.objects.get(cluster__name=cluster, name=entity)
    interval = int(node.cluster.decay_interval.total_seconds())
    first, last = int(FIRST.timestamp()), int(END.timestamp())
    # A decay applies at the first cycle more than an interval after the last one (strict):
    # one due at the last cycle itself has not happened yet.
    decays = list(range(first + interval, last, interval))
    runs = [
        (epoch(job.start), last, job.accrued)
        if job.state == JobState.RUNNING
        else (epoch(job.start), epoch(job.end), job.usage)
        for job in jobs.filter(**{by: entity}).exclude(state=JobState.QUEUED)
    ]
    # Its record begins at 1 with its first run's first cycle, and decays with the rest.
    created = min(start for start, _, _ in runs) // 600 * 600 + 600
    first_one = 0.5 ** sum(1 for moment in decays if moment >= created)
    assert node.usage == pytest.approx(first_one + decayed(runs, decays, 0.5), rel=1e-12)
    assert node.history.count() > 0


def test_the_logins_have_their_roles(built: str) -> None:
    alice, bob, carol = (User.objects.get(username=name) for name in LOGINS)
    assert (alice.is_staff, alice.is_superuser) == (True, True)
    assert (bob.is_staff, carol.is_staff) == (False, False)
    assert all(user.check_password(PASSWORD) for user in (alice, bob, carol))
    runs_as = Person.objects.get(user=bob).scheduler_user
    projects = sorted(
        Membership.objects.filter(
            user=bob, role=Role.MEMBER, node__cluster__name="hpc"
        ).values_list("node__name", flat=True)
    )
    assert (runs_as, projects) == ("dkaya", ["cond-matter", "genomics"])
    assert Membership.objects.filter(user=bob).count() == 4  # on hpc and gpu
    for project in projects:  # he ran jobs for both, and has a leaf on the GPU cluster
        assert Job.objects.filter(cluster__name="hpc", user=runs_as, account=project).exists()
    leaf = Node.objects.filter(cluster__name="gpu", name=runs_as).values_list("parent__name")
    assert leaf.get() == ("cond-matter",)
    managed = Membership.objects.filter(user=carol).values_list("node__name", "node__kind", "role")
    assert list(managed) == [("physics", "organization", "manager")] * 2
    assert "  bob   demo-password  member of cond-matter and genomics; runs jobs as dkaya" in (
        built.splitlines()
    )


def counts() -> dict[str, object]:
    return {
        "clusters": Cluster.objects.count(),
        "nodes": Node.objects.count(),
        "usage": sorted(Node.objects.values_list("cluster__name", "name", "usage")),
        "jobs": Job.objects.count(),
        "accrued": Job.objects.aggregate(total=Sum("accrued"))["total"],
        "cycles": Cycle.objects.count(),
        "history": NodeHistory.objects.count(),
        "ingestions": IngestRun.objects.count(),
        "users": User.objects.count(),
        "persons": list(Person.objects.values_list("user__username", "scheduler_user")),
        "memberships": sorted(
            Membership.objects.values_list("user__username", "node__cluster__name", "node__name")
        ),
    }


def test_running_it_again_duplicates_nothing(built: str, monkeypatch: Any) -> None:
    before = counts()
    monkeypatch.delenv("DEMO_PASSWORD", raising=False)
    again = demo()
    assert counts() == before
    assert steps(again)[0] == "clusters removed: fairtree, forum, whitepaper, hpc, gpu, vnc"
    # Without --password nor $DEMO_PASSWORD, each login gets a new random one, printed.
    printed = {line.split()[0]: line.split()[1] for line in again.splitlines()[-5:-2]}
    assert sorted(printed) == sorted(LOGINS)
    assert len(set(printed.values())) == 3
    for name, password in printed.items():
        assert User.objects.get(username=name).check_password(password)


def test_the_password_is_the_options_else_the_environments_else_random() -> None:
    assert login_passwords("given", {"DEMO_PASSWORD": "env"}) == dict.fromkeys(LOGINS, "given")
    assert login_passwords(None, {"DEMO_PASSWORD": "env"}) == dict.fromkeys(LOGINS, "env")
    drawn = login_passwords(None, {})
    assert sorted(drawn) == sorted(LOGINS)
    assert len(set(drawn.values())) == 3
    assert all(len(password) >= 12 for password in drawn.values())


def test_hpc_has_seed_003s_formula_and_queues_from_its_qmgr_print(built: str) -> None:
    cluster = Cluster.objects.get(name="hpc")
    assert cluster.job_sort_formula == (
        "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
    )
    assert (cluster.eligible_time_enable, cluster.fair_share, cluster.by_queue) == (True,) * 3
    assert list(cluster.queues.values_list("name", "priority")) == [("test", 150), ("cpu", 100)]
    assert SettingChange.objects.filter(cluster=cluster, setting="job_sort_formula").exists()


def test_vnc_has_its_groups_jobs_rules_and_a_day_of_history(built: str) -> None:
    vnc = Cluster.objects.get(name="vnc")
    assert vnc.scheduler == "accelerator"
    origins = Counter(Node.objects.filter(cluster=vnc).values_list("origin", flat=True))
    # The root, the configuration's 9 groups, and a leaf G.user for each user of each group.
    assert origins == {NodeOrigin.SCHEDULER: 1, NodeOrigin.DEFINED: 9, NodeOrigin.USAGE: 14}
    sim = Node.objects.get(cluster=vnc, name="/class/sim")
    assert (sim.shares, sim.fs_window, sim.fs_window_effective) == (0, 0, 0)
    cronos = Node.objects.get(cluster=vnc, name="/class/sim/cronos")
    assert (cronos.fs_window, cronos.fs_window_effective) == (10800, 0)  # off below sim's 0
    assert Node.objects.get(cluster=vnc, name="/class/urgent").fs_window == 600
    states = Counter(Job.objects.filter(cluster=vnc).values_list("state", flat=True))
    assert states == {JobState.ENDED: 632, JobState.RUNNING: 29, JobState.QUEUED: 9}
    assert list(PreemptRule.objects.filter(cluster=vnc).values_list("name", flat=True)) == [
        "RuleThatDoesNotFire",
        "RuleThatFires",
    ]
    # A cycle every 10 minutes of the day, the last at the end, each keeping every group.
    cycles = Cycle.objects.filter(cluster=vnc)
    assert cycles.count() == 24 * 6 + 1
    assert (cycles.earliest("at").at, cycles.latest("at").at) == (END - timedelta(days=1), END)
    assert NodeHistory.objects.filter(node__cluster=vnc).count() == 145 * 24
    vcs = NodeHistory.objects.filter(node__cluster=vnc, node__name="/class/vcs")
    assert len(set(vcs.values_list("fs_running_count", flat=True))) > 3  # it changes
    # The last cycle stored the fields as they are at the end.
    leaf = Node.objects.get(cluster=vnc, name="/class/vcs.dkaya")
    assert (leaf.fs_excess_running_local, leaf.fs_rank) == (-2500, 1)


def accelerator_fs(*args: str) -> str:
    out = StringIO()
    call_command("accelerator_fs", "--cluster", "vnc", "--now", END.isoformat(), *args, stdout=out)
    return out.getvalue()


def test_accelerator_fs_gives_plausible_fields_for_vnc(built: str) -> None:
    groups = {row["group"]: row for row in json.loads(accelerator_fs("--format", "json"))}
    assert len(groups) == 24
    assert groups["/"]["FS_TARGET"] == groups["/"]["FS_RUNNING"] == 10_000
    assert groups["/"]["FS_RUNNING_COUNT"] == 27  # the suspended jobs do not run
    # Active siblings' targets add up to their parent's, within a unit of rounding each.
    active = {
        name
        for name in Node.objects.filter(cluster__name="vnc", fs_active=True).values_list(
            "name", flat=True
        )
    }
    children: dict[str, list[int]] = {}
    for name, row in groups.items():
        if name != "/":
            children.setdefault(parent_of(name), []).append(row["FS_TARGET"])
            if name not in active:
                assert row["FS_TARGET"] == 0, name
    for parent, targets in children.items():
        if parent in active:
            assert abs(sum(targets) - groups[parent]["FS_TARGET"]) <= len(targets), parent
    for row in groups.values():
        assert row["FS_EXCESS_RUNNING"] == pytest.approx(
            row["FS_RUNNING"] - row["FS_TARGET"], abs=1
        )
        assert 0 <= row["FS_HISTORY"] <= 10_000
        assert row["FS_RANK9"] == (9_999_999 if row["FS_RANK"] == -1 else row["FS_RANK"])
    # Ranks 0.. for the leaves with queued jobs; cronos, with FairShare off, after the others.
    ranks = sorted((row["FS_RANK"], name) for name, row in groups.items() if row["FS_RANK"] >= 0)
    assert [rank for rank, _ in ranks] == list(range(len(ranks))) == [0, 1, 2, 3, 4]
    assert ranks[-1][1].startswith("/class/sim/cronos.")
    text = accelerator_fs()
    assert text.startswith("cluster vnc at 2026-03-04T15:00:00+00:00: 24 groups,")
    assert re.search(r"^/class/sim/cronos .* off$", text, re.MULTILINE)


def test_bob_runs_jobs_on_vnc_and_the_local_rule_would_preempt_for_him(built: str) -> None:
    runs_as = Person.objects.get(user__username="bob").scheduler_user
    leaves = Node.objects.filter(cluster__name="vnc", name__endswith=f".{runs_as}")
    assert sorted(leaves.values_list("name", "kind")) == [
        (f"/class/hsim.{runs_as}", "user"),
        (f"/class/vcs.{runs_as}", "user"),
        (f"/time/users.{runs_as}", "user"),
    ]
    out = StringIO()
    call_command(
        "accelerator_preemptions", "--cluster", "vnc", "--now", END.isoformat(),
        "--format", "json", stdout=out,
    )  # fmt: skip
    found = json.loads(out.getvalue())
    fired = [p for p in found if p["fires"]]
    assert [p["rule"] for p in fired] == ["RuleThatFires"]
    assert f"(/class/vcs.{runs_as}) may preempt 3 running jobs of /class/vcs." in fired[0]["why"]
    assert len(fired[0]["victims"]) == 3
