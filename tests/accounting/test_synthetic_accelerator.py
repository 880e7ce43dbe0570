"""accounting.synthetic_accelerator: the demo's Accelerator site, made up from a seed, as the
files the dashboard reads from one (no database: the engine computes its fields)."""

from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import accumulate

import pytest

from accounting.parsers.accelerator_jobs import read_accelerator_jobs
from accounting.parsers.records import JobRecord, JobState
from accounting.synthetic_accelerator import (
    END_PICTURE,
    FSGROUPS,
    MEMBER,
    PREEMPT_RULES,
    SPAN,
    AcceleratorSite,
    accelerator_site_generate,
    jobs_csv,
)
from trees.engine.accelerator import FsGroup, FsJob, fs_fields, parent_of
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules

END = datetime(2026, 3, 4, 15, tzinfo=UTC)
AT = int(END.timestamp())
USERS = [f"user{number:02d}" for number in range(20)]


def generated(seed: int = 3, end: datetime = END, member: str = "bob") -> AcceleratorSite:
    return accelerator_site_generate(seed=seed, end=end, member=member, users=USERS)


SITE = generated()


def test_the_same_seed_end_and_users_give_the_same_export() -> None:
    assert jobs_csv(generated().jobs) == jobs_csv(SITE.jobs)
    assert jobs_csv(generated(seed=4).jobs) != jobs_csv(SITE.jobs)


def test_a_later_end_shifts_every_time_and_changes_nothing_else() -> None:
    later = generated(end=END + timedelta(hours=5))
    assert len(later.jobs) == len(SITE.jobs)
    for job, moved in zip(SITE.jobs, later.jobs, strict=True):
        assert moved.submitted == job.submitted + 5 * 3600
        assert (moved.status, moved.fsgroup, moved.priority) == (
            job.status,
            job.fsgroup,
            job.priority,
        )


def test_the_export_reads_back_whole_through_the_parser() -> None:
    text = jobs_csv(SITE.jobs)
    assert (
        text.splitlines()[0] == "id,fsgroup,user,status,jobclass,priority,submitted,started,ended"
    )
    parsed = list(read_accelerator_jobs(text.splitlines(keepends=True)))
    assert all(isinstance(item, JobRecord) for item in parsed)  # nothing rejected or withdrawn
    states = Counter(item.state for item in parsed if isinstance(item, JobRecord))
    assert states == {
        JobState.ENDED: SITE.count("DONE") + SITE.count("FAILED"),
        JobState.RUNNING: SITE.count("RUNNING") + SITE.count("SUSPENDED"),
        JobState.QUEUED: SITE.count("QUEUED"),
    }


def test_a_day_of_jobs_ends_with_the_end_pictures_running_suspended_and_queued() -> None:
    statuses = Counter(job.status for job in SITE.jobs)
    assert statuses["RUNNING"] == sum(row[2] for row in END_PICTURE) == 27
    assert statuses["SUSPENDED"] == 2
    assert statuses["QUEUED"] == sum(row[4] for row in END_PICTURE) == 9
    assert statuses["DONE"] > 500
    assert 0 < statuses["FAILED"] < statuses["DONE"] / 5
    assert min(job.submitted for job in SITE.jobs) >= AT - SPAN
    ids = [job.job_id for job in SITE.jobs]
    assert ids == sorted(set(ids))
    assert [job.submitted for job in SITE.jobs] == sorted(job.submitted for job in SITE.jobs)


def test_every_jobs_times_fit_its_status() -> None:
    for job in SITE.jobs:
        if job.status == "QUEUED":
            assert (job.started, job.ended) == (None, None)
            assert job.submitted <= AT
        elif job.status in ("RUNNING", "SUSPENDED"):
            assert job.started is not None
            assert job.ended is None
            assert job.submitted <= job.started < AT
        else:
            assert job.started is not None
            assert job.ended is not None
            assert job.submitted <= job.started < job.ended < AT
        assert 1 <= job.priority <= 15


def test_the_member_and_others_run_in_several_groups() -> None:
    groups: dict[str, set[str]] = {}
    for job in SITE.jobs:
        groups.setdefault(job.user, set()).add(job.group)
    assert groups["bob"] == {"/class/hsim", "/class/vcs", "/time/users"}
    assert SITE.users[MEMBER] == "bob"
    assert sum(len(found) > 1 for found in groups.values()) >= 4
    assert set(groups) - {"bob"} <= set(USERS)
    assert len(groups) == 9


def test_too_few_users_is_an_error() -> None:
    with pytest.raises(ValueError, match="8 users besides the member are needed, not 7"):
        accelerator_site_generate(seed=3, end=END, member="bob", users=[*USERS[:7], "bob"])


def test_the_configuration_and_rules_parse_without_a_problem() -> None:
    parsed = parse_fsgroups(FSGROUPS)
    assert parsed.problems == ()
    assert [(g.path, g.weight, g.window) for g in parsed.groups] == [
        ("/class", None, None),
        ("/class/hsim", 200, None),
        ("/class/vcs", 300, None),
        ("/class/spice", 100, None),
        ("/class/urgent", 500, 600),
        ("/class/sim", 0, 0),
        ("/class/sim/cronos", 100, 10800),
        ("/time", 50, None),
        ("/time/users", None, None),
    ]
    rules = parse_preempt_rules(PREEMPT_RULES)
    assert rules.problems == ()
    assert [rule.name for rule in rules.rules] == ["RuleThatDoesNotFire", "RuleThatFires"]


def end_fields() -> dict[str, tuple[int, int, int, int]]:
    """Every group's FS_TARGET, FS_RUNNING, FS_EXCESS_RUNNING and its _LOCAL at the end."""
    groups = [
        FsGroup(g.path, 100 if g.weight is None else g.weight, g.window)
        for g in parse_fsgroups(FSGROUPS).groups
    ]
    jobs = [
        FsJob(str(j.job_id), j.fsgroup, j.status.lower(), j.submitted, j.started, j.ended)
        for j in SITE.jobs
    ]
    return {
        f.group: (f.target, f.running, f.excess_running, f.excess_running_local)
        for f in fs_fields(groups, jobs, AT)
    }


def test_at_the_end_vcs_is_the_pages_picture() -> None:
    fields = end_fields()
    other = f"/class/vcs.{SITE.users['u3']}"
    # The member's leaf is under its target globally and locally; the other user's is under
    # it globally (hsim runs most of the machine) but over it locally, 3 jobs of vcs's 4.
    assert fields["/class/vcs.bob"][2] < 0
    assert fields["/class/vcs.bob"][3] == -2500
    assert fields[other][2] < 0
    assert fields[other][3] == 2500
    assert fields["/class/hsim"][1] > 5000  # over half of the running jobs
    assert fields["/class/sim"][0] == fields["/class/urgent"][0] == 0  # weight 0, inactive


def test_at_the_end_active_siblings_targets_add_up_to_their_parents() -> None:
    fields = end_fields()
    children: dict[str, list[int]] = {}
    for group, (target, *_) in fields.items():
        if group != "/":
            children.setdefault(parent_of(group), []).append(target)
    for parent, targets in children.items():
        if fields[parent][0]:
            assert abs(sum(targets) - fields[parent][0]) <= len(targets), parent
    assert fields["/"][0] == 10_000


def test_the_machine_is_busy_all_day_and_never_crowded() -> None:
    events = sorted(
        (moment, step)
        for job in SITE.jobs
        if job.started is not None and job.status != "SUSPENDED"
        for moment, step in ((job.started, 1), (job.ended or AT, -1))
    )
    running = list(accumulate(step for _, step in events))
    assert max(running) <= 40
    # Every hour of the day has jobs running.
    busy = {moment // 3600 for (moment, _), count in zip(events, running, strict=True) if count}
    assert set(range((AT - 24 * 3600) // 3600, AT // 3600)) <= busy
