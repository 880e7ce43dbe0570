"""A realistic HPC site made up from a seed, as the files a PBS site has: `sched_config`,
`resource_group` and a year of accounting logs (Q, S and E records, one file a day).

Pure (no Django) and deterministic: the same seed, end and sizes give the same bytes. The
demo writes the files to a temporary directory and loads them through the same parsers and
services as a real site's, so that it exercises the real path.

The site: organizations with weighted shares, projects with varied shares and workloads,
users in one project or two. Jobs follow the rhythms of a research site (working hours,
weekdays, holidays, a slow growth, project campaigns), a few users and projects run most of
the work, and the jobs still running or queued at the end are in the logs as S or Q records.
Times are UTC: the logs' `MM/DD/YYYY HH:MM:SS` are the server's local time, here UTC.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from itertools import accumulate

__all__ = [
    "CLUSTERS",
    "GPU",
    "HPC",
    "YEAR",
    "ClusterSpec",
    "GeneratedJob",
    "Organization",
    "Project",
    "Site",
    "SiteUser",
    "Stage",
    "Workload",
    "jobs_generate",
    "member_of_two_projects",
    "site_generate",
]

HOUR = 3600
DAY = 86_400
WEEK = 7 * DAY
YEAR = 365  # days: the span of the generated site; a shorter span is its last days
# Staff run a few test jobs under an account the fairshare tree does not know: PBS charges
# them to an entity under `unknown`, as on a real site after maintenance.
STAFF_USER = "hpcadmin"
STAFF_ACCOUNT = "staff"
STAFF_GROUP = "admin"
STAFF_SHARE = 0.004  # of a cluster's jobs


class Workload(StrEnum):
    """What a project's jobs look like: sizes, lengths, and whether they want GPUs."""

    MPI = "mpi"  # multi-node simulations, hours to two days
    SMP = "smp"  # one node or part of one
    THROUGHPUT = "throughput"  # many small, short jobs
    GPU = "gpu"  # GPU work (training, MD, cryo-EM); small CPU jobs on the CPU cluster


@dataclass(frozen=True)
class Organization:
    name: str
    shares: int


@dataclass(frozen=True)
class Project:
    name: str
    organization: str
    workload: Workload
    shares: int  # on the CPU cluster (an allocation, in thousands of core-hours)
    gpu_shares: int  # on the GPU cluster (GPU-hours, in hundreds)
    activity: float  # how much of its allocation it uses, relative (1: all of it)
    starts_week: int  # the week of the year its work begins (0: it ran all year)
    campaigns: tuple[tuple[int, int], ...]  # (first week, weeks) of busier work


@dataclass(frozen=True)
class SiteUser:
    name: str
    group: str  # the Unix group: their first project's organization
    projects: tuple[str, ...]  # the first is their own, the second one they help in
    activity: float  # their part of their projects' work, relative; 0: they run nothing


@dataclass(frozen=True)
class Site:
    organizations: tuple[Organization, ...]
    projects: tuple[Project, ...]
    users: tuple[SiteUser, ...]

    def project(self, name: str) -> Project:
        return next(project for project in self.projects if project.name == name)


# Organizations (shares weighted) and their projects with the shape of their work.
_ORGANIZATIONS: tuple[tuple[str, int, tuple[tuple[str, Workload], ...]], ...] = (
    (
        "physics",
        30,
        (
            ("lattice-qcd", Workload.MPI),
            ("astro-sims", Workload.MPI),
            ("plasma-fusion", Workload.MPI),
            ("cond-matter", Workload.SMP),
            ("gravwaves", Workload.THROUGHPUT),
            ("particle-pheno", Workload.THROUGHPUT),
            ("quantum-optics", Workload.SMP),
        ),
    ),
    (
        "chemistry",
        25,
        (
            ("dft-catalysis", Workload.MPI),
            ("md-proteins", Workload.GPU),
            ("quantum-chem", Workload.SMP),
            ("materials-screening", Workload.THROUGHPUT),
            ("battery-electrolytes", Workload.GPU),
            ("spectroscopy", Workload.SMP),
        ),
    ),
    (
        "lifesci",
        20,
        (
            ("genomics", Workload.THROUGHPUT),
            ("cryo-em", Workload.GPU),
            ("protein-design", Workload.GPU),
            ("neuroimaging", Workload.THROUGHPUT),
            ("epidemiology", Workload.SMP),
            ("bioinformatics", Workload.THROUGHPUT),
        ),
    ),
    (
        "engineering",
        15,
        (
            ("cfd-aero", Workload.MPI),
            ("combustion", Workload.MPI),
            ("structural-fem", Workload.SMP),
            ("ml-vision", Workload.GPU),
            ("robotics-rl", Workload.GPU),
        ),
    ),
    (
        "earthsci",
        10,
        (
            ("climate-ensembles", Workload.MPI),
            ("ocean-models", Workload.MPI),
            ("seismology", Workload.MPI),
            ("hydrology", Workload.SMP),
            ("weather-da", Workload.MPI),
            ("air-quality", Workload.THROUGHPUT),
        ),
    ),
)
_PROJECT_SHARES = (50, 100, 100, 200, 200, 250, 400, 500, 1000)
_CPU_SHARES = {Workload.GPU: (25, 50, 100)}
_GPU_SHARES = {Workload.GPU: (100, 200, 300, 400), Workload.MPI: (10, 20), Workload.SMP: (10,)}
USER_SHARES = 10  # every member of a project alike, on the GPU cluster
_FIRST_NAMES = "abcdefghijklmnoprstvwyz"
_SURNAMES = (
    "novak", "kovac", "horvat", "babic", "marin", "jukic", "silva", "santos", "mueller", "schmidt",
    "garcia", "martin", "rossi", "russo", "bianchi", "nielsen", "jensen", "hansen", "berg", "lind",
    "wang", "li", "zhang", "chen", "liu", "kim", "park", "lee", "sato", "suzuki", "tanaka", "ito",
    "singh", "kumar", "sharma", "patel", "nguyen", "tran", "smith", "jones", "brown", "taylor",
    "wilson", "evans", "walker", "young", "clark", "lewis", "moreau", "dubois", "laurent",
    "fischer", "weber", "wagner", "becker", "hoffmann", "kowalski", "nowak", "wojcik", "novotny",
    "dvorak", "ivanov", "petrov", "popescu", "ionescu", "papadopoulos", "yilmaz", "kaya", "cohen",
    "levi",
)  # fmt: skip


def site_generate(*, seed: int, users: int = 300) -> Site:
    """Five organizations, thirty projects and `users` users, with shares and activity."""
    rng = random.Random(seed)
    organizations = tuple(Organization(name, shares) for name, shares, _ in _ORGANIZATIONS)
    projects = []
    for organization, _, members in _ORGANIZATIONS:
        for name, workload in members:
            # A fifth of the projects are new this year; most have a campaign or two.
            starts = rng.randrange(8, 40) if rng.random() < 0.2 else 0
            campaigns = tuple(
                (rng.randrange(starts, 50), rng.randrange(2, 7))
                for _ in range(rng.choice((0, 1, 1, 2)))
            )
            projects.append(
                Project(
                    name=name,
                    organization=organization,
                    workload=workload,
                    shares=rng.choice(_CPU_SHARES.get(workload, _PROJECT_SHARES)),
                    gpu_shares=rng.choice(_GPU_SHARES.get(workload, (10,))),
                    activity=round(rng.lognormvariate(0, 0.5), 3),
                    starts_week=starts,
                    campaigns=campaigns,
                )
            )
    return Site(organizations, tuple(projects), _users(rng, projects, users))


def _users(rng: random.Random, projects: Sequence[Project], count: int) -> tuple[SiteUser, ...]:
    """Login names (initial and surname), each in a project of a heavy-tailed size, a tenth in
    a second one; a few heavy users, a sixth who run nothing."""
    names: list[str] = []
    while len(names) < count:
        name = rng.choice(_FIRST_NAMES) + rng.choice(_SURNAMES)
        if name not in names:
            names.append(name)
    # Two members at least in every project, the rest by a heavy-tailed size.
    sizes = [rng.paretovariate(1.2) for _ in projects]
    homes = [project.name for project in projects for _ in range(2)]
    homes += rng.choices([p.name for p in projects], weights=sizes, k=count - len(homes))
    rng.shuffle(homes)
    organization = {project.name: project.organization for project in projects}
    users = []
    for name, home in zip(names, homes, strict=True):
        joined: tuple[str, ...] = (home,)
        if rng.random() < 0.1:
            joined += (rng.choice([p.name for p in projects if p.name != home]),)
        activity = 0.0 if rng.random() < 0.16 else round(rng.lognormvariate(0, 1.1), 3)
        users.append(SiteUser(name, organization[home], joined, activity))
    return tuple(sorted(users, key=lambda user: user.name))


@dataclass(frozen=True)
class ClusterSpec:
    """One PBS cluster of the site: its policy, its machine and how busy it is."""

    name: str
    server: str  # the PBS server's short name, after the job ids
    fairshare_entity: str  # sched_config: the job attribute jobs are charged to
    fairshare_usage_res: str
    decay_time: int  # seconds between decays (fairshare_decay_time)
    decay_factor: float
    job_sort_formula: str  # a server attribute (qmgr), not in sched_config
    jobs_per_year: int  # submitted
    hosts: int
    host_prefix: str
    host_cores: int
    host_gpus: int
    queue: str  # production queue
    test_queue: str  # short test jobs (seed 003: test queues come first)
    first_job_id: int

    @property
    def gpu(self) -> bool:
        return self.host_gpus > 0


# Seed 003's site: 52 nodes of 128 cores (its formula's 6656), usage ncpus × walltime per
# project (PBS charges projects by Account_Name, `qsub -A`), half-life one week.
HPC = ClusterSpec(
    name="hpc",
    server="pbs-hpc",
    fairshare_entity="Account_Name",
    fairshare_usage_res="ncpus*walltime",
    decay_time=168 * HOUR,
    decay_factor=0.5,
    job_sort_formula="10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)",
    jobs_per_year=45_000,
    hosts=52,
    host_prefix="cn",
    host_cores=128,
    host_gpus=0,
    queue="cpu",
    test_queue="test",
    first_job_id=1_200_000,
)
# A GPU cluster on PBS's defaults for the decay (0.5 every 24 h) and the entity (euser),
# charging GPU-hours: 20 nodes of 4 GPUs and 64 cores.
GPU = ClusterSpec(
    name="gpu",
    server="pbs-gpu",
    fairshare_entity="euser",
    fairshare_usage_res="ngpus*walltime",
    decay_time=24 * HOUR,
    decay_factor=0.5,
    job_sort_formula="",
    jobs_per_year=15_000,
    hosts=20,
    host_prefix="gn",
    host_cores=64,
    host_gpus=4,
    queue="gpu",
    test_queue="gpu-test",
    first_job_id=300_000,
)
CLUSTERS = (HPC, GPU)


class Stage(StrEnum):
    """Where a generated job stands at the end of the span."""

    QUEUED = "queued"  # in the logs as a Q record only
    RUNNING = "running"  # Q and S
    ENDED = "ended"  # Q, S and E


@dataclass(frozen=True, slots=True)
class GeneratedJob:
    """One job of the logs; times are epoch seconds, `walltime` its whole run."""

    job_id: int
    user: str
    group: str
    account: str  # the project it is charged to (`qsub -A`)
    queue: str
    jobname: str
    ncpus: int
    ngpus: int
    hosts: tuple[str, ...]
    requested_walltime: int
    qtime: int  # submitted, and eligible at once
    start: int
    walltime: int
    exit_status: int
    memory_kb: int  # used, all hosts together
    cpupercent: int

    @property
    def end(self) -> int:
        return self.start + self.walltime

    def state(self, at: int) -> Stage:
        """Queued, running or ended at `at`."""
        if self.start >= at:
            return Stage.QUEUED
        return Stage.RUNNING if self.end > at else Stage.ENDED


# Submissions by hour of the day (UTC is the site's time) and by day of the week (Monday
# first): people submit in working hours and on weekdays, scripts keep a little going at night.
_HOURLY = (
    *(0.25, 0.2, 0.18, 0.15, 0.15, 0.2, 0.3, 0.55, 0.95, 1.35, 1.5, 1.45),
    *(1.1, 1.3, 1.5, 1.5, 1.4, 1.15, 0.85, 0.7, 0.65, 0.6, 0.5, 0.35),
)
_WEEKLY = (1.0, 1.05, 1.05, 1.0, 0.9, 0.4, 0.35)
# (cores a job asks for, their weights, the walltimes asked for in hours) per workload.
_CPU_SHAPES: dict[Workload, tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...]]] = {
    Workload.MPI: ((128, 256, 512, 1024), (30, 35, 25, 10), (4, 12, 24, 48)),
    Workload.SMP: ((32, 64, 128), (25, 35, 40), (2, 8, 24, 48)),
    Workload.THROUGHPUT: ((4, 8, 16, 32, 64), (15, 20, 25, 25, 15), (1, 2, 4, 8)),
    Workload.GPU: ((8, 16, 32, 64), (30, 30, 25, 15), (1, 4, 12)),
}
_GPU_SIZES = ((1, 2, 4, 8), (45, 25, 24, 6))
_GPU_HOURS = (1, 4, 12, 24, 48)
# How much of their allocation each workload's projects use on each cluster (GPU projects
# run their pre- and post-processing on the CPU cluster).
_CPU_USE = {Workload.MPI: 1.0, Workload.SMP: 1.0, Workload.THROUGHPUT: 1.0, Workload.GPU: 0.3}
_GPU_USE = {Workload.MPI: 0.3, Workload.SMP: 0.3, Workload.THROUGHPUT: 0.0, Workload.GPU: 1.0}


def _mean(values: Sequence[float], weights: Sequence[int]) -> float:
    return sum(value * weight for value, weight in zip(values, weights, strict=True)) / sum(weights)


# A job's mean size (cores or GPUs × requested hours): a project of big jobs submits fewer.
_MEAN_CPU_JOB = {
    workload: _mean(sizes, weights) * sum(hours) / len(hours)
    for workload, (sizes, weights, hours) in _CPU_SHAPES.items()
}
_MEAN_GPU_JOB = _mean(*_GPU_SIZES) * sum(_GPU_HOURS) / len(_GPU_HOURS)
_JOB_NAMES = {
    Workload.MPI: ("run", "sim", "wrf", "lammps", "icon", "openfoam", "restart"),
    Workload.SMP: ("job", "calc", "orca", "gaussian", "analysis", "post"),
    Workload.THROUGHPUT: ("task", "sample", "align", "chunk", "fit", "scan"),
    Workload.GPU: ("train", "gromacs", "relion", "infer", "finetune", "alphafold"),
}


def jobs_generate(
    site: Site, spec: ClusterSpec, *, end: datetime, seed: int, days: int = YEAR
) -> list[GeneratedJob]:
    """The jobs submitted in the `days` before `end` (the last days of the year to `end`, at
    the year's rate), in submission order."""
    last = int(end.timestamp())
    if last % HOUR:
        raise ValueError(f"the generated span ends on the hour, not at {end.isoformat()}")
    if not 0 < days <= YEAR:
        raise ValueError(f"the generated span is 1 to {YEAR} days, not {days}")
    rng = random.Random(f"{seed}:{spec.name}")
    year = last - YEAR * DAY  # the weeks of the projects' lives count from here
    first = last - days * DAY
    hours = range(first, last, HOUR)
    count = round(spec.jobs_per_year * days / YEAR)
    submitted = sorted(
        hour + rng.randrange(HOUR)
        for hour in rng.choices(hours, cum_weights=_hour_weights(hours, year, last), k=count)
    )
    pairs = [(user, name) for user in site.users for name in user.projects]
    members = _members_weight(site)
    pair_weights = {
        week: list(
            accumulate(
                _pair_weight(site, spec, user, name, week) / members[name] for user, name in pairs
            )
        )
        for week in range((first - year) // WEEK, (last - year) // WEEK + 1)
    }
    hosts = [f"{spec.host_prefix}{number:03d}" for number in range(1, spec.hosts + 1)]
    jobs = []
    for number, qtime in enumerate(submitted):
        job_id = spec.first_job_id + number
        if rng.random() < STAFF_SHARE:
            jobs.append(_staff_job(rng, spec, job_id, qtime, hosts))
            continue
        week = (qtime - year) // WEEK
        user, account = rng.choices(pairs, cum_weights=pair_weights[week])[0]
        workload = site.project(account).workload
        jobs.append(_job(rng, spec, job_id, qtime, user, account, workload, hosts))
    return [_backlogged(job, spec, last) for job in jobs]


# The year ends busy, as a site's working day does: what the production queue got in its last
# hours, bar the smallest jobs, is still waiting at the end (so that priorities have a queue
# to order).
BACKLOG = 8 * HOUR


def _backlogged(job: GeneratedJob, spec: ClusterSpec, last: int) -> GeneratedJob:
    """The job, still waiting at `last` when it came to the production queue in the last
    BACKLOG seconds and is not among the smallest (under 64 cores, or 2 GPUs)."""
    small = job.ngpus < 2 if spec.gpu else job.ncpus < 64
    if job.qtime < last - BACKLOG or job.queue != spec.queue or small or job.start >= last:
        return job
    return replace(job, start=last + (job.qtime - (last - BACKLOG)))


def _hour_weights(hours: range, year: int, last: int) -> list[float]:
    """Cumulative weights of the hours: the day's and week's rhythms, the holidays, and the
    site's growth over the year from `year` to `last`."""
    weights = []
    for hour in hours:
        moment = datetime.fromtimestamp(hour, tz=UTC)
        season = 1.0
        if (moment.month == 12 and moment.day >= 22) or (moment.month == 1 and moment.day <= 6):
            season = 0.45  # the winter holidays
        elif moment.month == 8:
            season = 0.7  # summer
        growth = 0.85 + 0.3 * (hour - year) / (last - year)  # more users every month
        weights.append(_HOURLY[moment.hour] * _WEEKLY[moment.weekday()] * season * growth)
    return list(accumulate(weights))


def _members_weight(site: Site) -> dict[str, float]:
    """Each project's sum of its members' weights (1 where no member runs anything)."""
    weights = {project.name: 0.0 for project in site.projects}
    for user in site.users:
        for name in user.projects:
            weights[name] += _member_weight(user, name)
    return {name: weight or 1.0 for name, weight in weights.items()}


def _member_weight(user: SiteUser, project: str) -> float:
    """A user's part in a project's work: less in the project they only help in."""
    return user.activity * (1.0 if project == user.projects[0] else 0.5)


def _pair_weight(site: Site, spec: ClusterSpec, user: SiteUser, name: str, week: int) -> float:
    """How many jobs `user` submits for project `name` on the cluster in `week` of the span,
    relative, before dividing by the project's members' weight: a project uses about its
    allocation (its shares) in jobs of its usual size, a campaign four times as much."""
    project = site.project(name)
    if week < project.starts_week:
        return 0.0
    if spec.gpu:
        shares, use, size = project.gpu_shares, _GPU_USE[project.workload], _MEAN_GPU_JOB
    else:
        shares, use, size = (
            project.shares,
            _CPU_USE[project.workload],
            _MEAN_CPU_JOB[project.workload],
        )
    busy = any(start <= week < start + length for start, length in project.campaigns)
    rate = shares * project.activity * use * (4.0 if busy else 1.0) / size
    return rate * _member_weight(user, name)


def _job(
    rng: random.Random,
    spec: ClusterSpec,
    job_id: int,
    qtime: int,
    user: SiteUser,
    account: str,
    workload: Workload,
    hosts: list[str],
) -> GeneratedJob:
    """A job of `user` for `account` submitted at `qtime`: its size, wait and run."""
    if spec.gpu:
        ngpus = rng.choices(*_GPU_SIZES)[0]
        ncpus = ngpus * spec.host_cores // spec.host_gpus
        hours: tuple[float, ...] = _GPU_HOURS
    else:
        sizes, size_weights, hours = _CPU_SHAPES[workload]
        ncpus, ngpus = rng.choices(sizes, size_weights)[0], 0
    requested = int(rng.choice(hours) * HOUR)
    queue = spec.queue
    if rng.random() < 0.08:  # a short test before the real thing
        queue, requested = spec.test_queue, HOUR
    walltime, exit_status = _run_length(rng, requested)
    # Bigger jobs wait longer; test jobs hardly at all.
    wait_median = 60 if queue == spec.test_queue else 300 * math.sqrt(max(ncpus, 4 * ngpus))
    wait = min(int(rng.lognormvariate(math.log(wait_median), 1.2)), 5 * DAY)
    name = rng.choice(_JOB_NAMES[workload])
    return GeneratedJob(
        job_id=job_id,
        user=user.name,
        group=user.group,
        account=account,
        queue=queue,
        jobname=f"{name}_{rng.randrange(1, 400)}",
        ncpus=ncpus,
        ngpus=ngpus,
        hosts=_placement(rng, hosts, spec, ncpus),
        requested_walltime=requested,
        qtime=qtime,
        start=qtime + wait,
        walltime=walltime,
        exit_status=exit_status,
        memory_kb=int(ncpus * rng.uniform(0.3, 1.8) * (1 << 20)),
        cpupercent=int(ncpus * rng.uniform(55, 99)),
    )


def _run_length(rng: random.Random, requested: int) -> tuple[int, int]:
    """How long a job ran and how it ended: most well within their request, some killed at
    their walltime (PBS's JOB_EXEC_KILL_WALLTIME, -29), some failing early (exit 1)."""
    fate = rng.random()
    if fate < 0.06:
        return requested + rng.randrange(1, 90), -29
    if fate < 0.10:
        return rng.randrange(5, 600), 1
    return max(30, int(requested * rng.betavariate(1.3, 2.2))), 0


def _placement(
    rng: random.Random, hosts: list[str], spec: ClusterSpec, ncpus: int
) -> tuple[str, ...]:
    """The hosts a job ran on: whole nodes for a job of a node or more, else one node."""
    count = min(-(-ncpus // spec.host_cores), len(hosts))
    return tuple(sorted(rng.sample(hosts, count)))


def _staff_job(
    rng: random.Random, spec: ClusterSpec, job_id: int, qtime: int, hosts: list[str]
) -> GeneratedJob:
    """A staff test job (a node check after maintenance): one node, minutes."""
    ngpus = spec.host_gpus
    return GeneratedJob(
        job_id=job_id,
        user=STAFF_USER,
        group=STAFF_GROUP,
        account=STAFF_ACCOUNT,
        queue=spec.test_queue,
        jobname="nodecheck",
        ncpus=spec.host_cores,
        ngpus=ngpus,
        hosts=(rng.choice(hosts),),
        requested_walltime=HOUR,
        qtime=qtime,
        start=qtime + rng.randrange(5, 120),
        walltime=rng.randrange(60, 900),
        exit_status=0,
        memory_kb=spec.host_cores << 19,
        cpupercent=spec.host_cores * 95,
    )


def member_of_two_projects(site: Site, jobs: Sequence[GeneratedJob], at: int) -> SiteUser:
    """A user in two projects to show a member's view with: the one whose jobs ended by `at`
    are the most, among those who ran for both projects if any did (then by name)."""
    ended: dict[tuple[str, str], int] = {}
    for job in jobs:
        if job.state(at) == Stage.ENDED:
            ended[job.user, job.account] = ended.get((job.user, job.account), 0) + 1
    members = [user for user in site.users if len(user.projects) == 2]
    if not members:
        raise ValueError("no user of the site is in two projects")

    def standing(user: SiteUser) -> tuple[bool, int]:
        counts = [ended.get((user.name, project), 0) for project in user.projects]
        return all(counts), sum(counts)

    return max(members, key=standing)  # the first of equals: the users are sorted by name
