"""accounting.synthetic_site: the demo's site, made up from a seed, as a PBS site's files."""

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from accounting.parsers.pbs import read_pbs_accounting
from accounting.parsers.records import JobRecord, JobState
from accounting.synthetic_files import (
    accounting_logs,
    resource_group_text,
    sched_config_text,
    site_files_write,
)
from accounting.synthetic_site import (
    GPU,
    HPC,
    STAFF_ACCOUNT,
    STAFF_USER,
    GeneratedJob,
    Stage,
    Workload,
    jobs_generate,
    member_of_two_projects,
    site_generate,
)
from trees.formats.resource_group import parse_resource_group
from trees.formats.sched_config import parse_sched_config

SEED = 3
END = datetime(2026, 3, 4, 15, tzinfo=UTC)  # a Wednesday afternoon
AT = int(END.timestamp())
SITE = site_generate(seed=SEED)


@pytest.fixture(scope="module")
def year() -> dict[str, list[GeneratedJob]]:
    """A year of each cluster's jobs (a second or so to make)."""
    return {spec.name: jobs_generate(SITE, spec, end=END, seed=SEED) for spec in (HPC, GPU)}


def test_the_site_has_five_organizations_thirty_projects_and_300_users() -> None:
    assert [(org.name, org.shares) for org in SITE.organizations] == [
        ("physics", 30),
        ("chemistry", 25),
        ("lifesci", 20),
        ("engineering", 15),
        ("earthsci", 10),
    ]
    assert len(SITE.projects) == 30
    assert len({project.name for project in SITE.projects}) == 30
    assert len({user.name for user in SITE.users}) == 300
    assert sum(len(user.projects) == 2 for user in SITE.users) == 33
    assert sum(user.activity == 0 for user in SITE.users) == 40  # accounts that run nothing
    members = Counter(name for user in SITE.users for name in user.projects)
    assert min(members.values()) == 2
    assert max(members.values()) == 53
    assert len({project.shares for project in SITE.projects}) > 4  # projects' shares vary


def test_the_same_seed_makes_the_same_site_and_jobs() -> None:
    assert site_generate(seed=SEED) == SITE
    assert site_generate(seed=SEED + 1) != SITE
    first = jobs_generate(SITE, GPU, end=END, seed=SEED, days=7)
    assert jobs_generate(SITE, GPU, end=END, seed=SEED, days=7) == first
    assert jobs_generate(SITE, GPU, end=END, seed=SEED + 1, days=7) != first


def test_a_year_has_the_clusters_jobs_some_still_running_or_queued(
    year: dict[str, list[GeneratedJob]],
) -> None:
    states = {name: Counter(job.state(AT) for job in jobs) for name, jobs in year.items()}
    assert states["hpc"] == {Stage.ENDED: 44_959, Stage.RUNNING: 15, Stage.QUEUED: 26}
    assert states["gpu"] == {Stage.ENDED: 14_976, Stage.RUNNING: 14, Stage.QUEUED: 10}
    hpc = year["hpc"]
    assert (hpc[0].job_id, hpc[-1].job_id) == (1_200_000, 1_244_999)
    assert all(AT - 365 * 86_400 <= job.qtime < AT for job in hpc)
    assert [job.qtime for job in hpc] == sorted(job.qtime for job in hpc)


def test_a_shorter_span_is_the_years_last_days_at_its_rate() -> None:
    jobs = jobs_generate(SITE, HPC, end=END, seed=SEED, days=14)
    assert len(jobs) == round(45_000 * 14 / 365) == 1726
    assert min(job.qtime for job in jobs) >= AT - 14 * 86_400


def test_more_jobs_start_on_weekdays_and_in_working_hours(
    year: dict[str, list[GeneratedJob]],
) -> None:
    for jobs in year.values():
        starts = [datetime.fromtimestamp(job.start, tz=UTC) for job in jobs]
        days = Counter(moment.weekday() for moment in starts)
        weekday, weekend = sum(days[d] for d in range(5)) / 5, (days[5] + days[6]) / 2
        assert weekday > 2 * weekend
        hours = Counter(moment.hour for moment in starts)
        working, night = (
            sum(hours[h] for h in range(9, 17)) / 8,
            sum(hours[h] for h in range(6)) / 6,
        )
        assert working > 3 * night


def test_a_few_users_and_projects_run_much_of_the_work(
    year: dict[str, list[GeneratedJob]],
) -> None:
    core_seconds = Counter[str]()
    by_project = Counter[str]()
    for job in year["hpc"]:
        core_seconds[job.user] += job.ncpus * job.walltime
        by_project[job.account] += job.ncpus * job.walltime
    total = sum(core_seconds.values())
    heaviest, most = core_seconds.most_common(1)[0]
    assert (heaviest, round(most / total, 3)) == ("pmoreau", 0.183)
    assert by_project.most_common(1)[0][0] == "lattice-qcd"
    assert sum(value for _, value in by_project.most_common(3)) > total / 3
    assert len(core_seconds) == 215  # 214 of the 300 users, and the staff account


def test_jobs_have_realistic_sizes_and_lengths(year: dict[str, list[GeneratedJob]]) -> None:
    hpc, gpu = year["hpc"], year["gpu"]
    walltimes = sorted(job.walltime for job in hpc)
    assert 1800 < walltimes[len(walltimes) // 2] < 3 * 3600  # a median of an hour or so
    assert max(walltimes) <= 48 * 3600 + 90  # the longest queue limit, and a kill's delay
    assert Counter(job.exit_status for job in hpc) == {0: 40_568, -29: 2629, 1: 1803}
    assert {job.ncpus for job in hpc} == {4, 8, 16, 32, 64, 128, 256, 512, 1024}
    assert all(len(job.hosts) == -(-job.ncpus // 128) for job in hpc)
    assert {job.ngpus for job in gpu} == {1, 2, 4, 8}
    assert all(job.ncpus == 16 * job.ngpus for job in gpu if job.user != STAFF_USER)
    staff = [job for job in hpc if job.user == STAFF_USER]
    assert len(staff) == 169
    assert {job.account for job in staff} == {STAFF_ACCOUNT}


def test_the_member_of_two_projects_ran_jobs_for_both(
    year: dict[str, list[GeneratedJob]],
) -> None:
    member = member_of_two_projects(SITE, year["hpc"], AT)
    assert (member.name, member.projects) == ("hmueller", ("gravwaves", "ocean-models"))
    charged = {job.account for job in year["hpc"] if job.user == member.name}
    assert charged == {"gravwaves", "ocean-models"}


def test_the_span_ends_on_the_hour() -> None:
    with pytest.raises(ValueError, match="ends on the hour"):
        jobs_generate(SITE, HPC, end=END + timedelta(minutes=5), seed=SEED)


def test_sched_config_holds_each_clusters_policy() -> None:
    hpc = parse_sched_config(sched_config_text(HPC).encode())
    assert (hpc.fairshare_usage_res, hpc.fairshare_entity) == ("ncpus*walltime", "Account_Name")
    assert (hpc.decay_time, hpc.decay_factor, hpc.problems) == (168 * 3600, 0.5, [])
    gpu = parse_sched_config(sched_config_text(GPU).encode())
    assert (gpu.fairshare_usage_res, gpu.fairshare_entity) == ("ngpus*walltime", "euser")
    assert (gpu.decay_time, gpu.decay_factor, gpu.problems) == (24 * 3600, 0.5, [])


def test_the_cpu_clusters_leaves_are_projects_the_gpu_clusters_users() -> None:
    hpc = parse_resource_group(resource_group_text(SITE, HPC).encode())
    assert hpc.rejected == []
    parents = {group.name: group.parent for group in hpc.groups}
    assert len(parents) == 35
    assert parents["physics"] == "root"
    assert parents["lattice-qcd"] == "physics"
    gpu = parse_resource_group(resource_group_text(SITE, GPU).encode())
    assert gpu.rejected == []
    parents = {group.name: group.parent for group in gpu.groups}
    assert len(parents) == 335  # a user in two projects is one entity, under their own
    assert parents["hmueller"] == "gravwaves"
    shares = {group.name: group.shares for group in gpu.groups}
    gpu_projects = [p.name for p in SITE.projects if p.workload == Workload.GPU]
    assert min(shares[name] for name in gpu_projects) > max(
        shares[p.name] for p in SITE.projects if p.workload != Workload.GPU
    )


def test_the_logs_read_back_as_the_jobs() -> None:
    jobs = jobs_generate(SITE, HPC, end=END, seed=SEED, days=3)
    lines = list(accounting_logs(HPC, jobs, AT))
    kinds = Counter(line.split(";")[1] for line in lines)
    states = Counter(job.state(AT) for job in jobs)
    assert kinds == {
        "Q": len(jobs),
        "S": states[Stage.RUNNING] + states[Stage.ENDED],
        "E": states[Stage.ENDED],
    }
    records = [item for item in read_pbs_accounting(lines) if isinstance(item, JobRecord)]
    by_id = {job.job_id: job for job in jobs}
    assert len(records) == len(jobs)  # each job once: ended, running or still queued
    for record in records:
        job = by_id[int(record.job_id)]
        if record.state == JobState.QUEUED:
            assert job.state(AT) == Stage.QUEUED
            assert (record.user, record.account, record.ncpus, record.start) == (
                job.user, job.account, job.ncpus, None,
            )  # fmt: skip
            continue
        assert (record.user, record.account, record.ncpus, record.start) == (
            job.user,
            job.account,
            job.ncpus,
            job.start,
        )
        if record.state == JobState.ENDED:
            assert (record.end, record.walltime, record.exit_status) == (
                job.end,
                job.walltime,
                job.exit_status,
            )
        else:
            assert job.state(AT) == Stage.RUNNING
    assert lines[0].startswith("03/01/2026 15:")  # the span's first hour
    assert lines[0].split(";")[1] == "Q"


def test_the_files_are_a_log_a_day(tmp_path: Path) -> None:
    jobs = jobs_generate(SITE, GPU, end=END, seed=SEED, days=3)
    files = site_files_write(tmp_path, SITE, GPU, jobs, AT)
    assert [path.name for path in files.accounting] == [
        "20260301",
        "20260302",
        "20260303",
        "20260304",
    ]
    written = sum(len(path.read_text().splitlines()) for path in files.accounting)
    assert written == files.records == len(list(accounting_logs(GPU, jobs, AT)))
    assert files.resource_group.read_text() == resource_group_text(SITE, GPU)
    assert files.sched_config.read_text() == sched_config_text(GPU)
