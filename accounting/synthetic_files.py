"""The generated site as the files a PBS site has: its sched_config, its resource_group and its
accounting logs (Q, S and E records, one file a day), written to a folder.

Pure (no Django) and deterministic, as the site they write."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from accounting.parsers.pbs import format_attributes
from accounting.synthetic_site import (
    HOUR,
    USER_SHARES,
    ClusterSpec,
    GeneratedJob,
    Site,
    SiteUser,
    Stage,
)


def sched_config_text(spec: ClusterSpec) -> str:
    """The fairshare part of the cluster's sched_config."""
    return (
        f"# sched_config of {spec.name}: its fairshare keys\n"
        "fair_share: true ALL\n"
        "by_queue: true ALL\n"
        f"fairshare_usage_res: {spec.fairshare_usage_res}\n"
        f"fairshare_entity: {spec.fairshare_entity}\n"
        f"fairshare_decay_time: {spec.decay_time // HOUR}:00:00\n"
        f"fairshare_decay_factor: {spec.decay_factor}\n"
        "unknown_shares: 0\n"
    )


def qmgr_text(spec: ClusterSpec) -> str:
    """The server's configuration as `qmgr -c 'print server'` prints it: the ngpus resource,
    the test queue before the production one (seed 003), eligible_time on, and the
    cluster's job_sort_formula (quoted, as qmgr prints a value with spaces or commas)."""
    lines = [
        "#",
        "# Create resources and set their properties.",
        "#",
        "#",
        "# Create and define resource ngpus",
        "#",
        "create resource ngpus",
        "set resource ngpus type = long",
        "set resource ngpus flag = hn",
        "#",
        "# Create queues and set their attributes.",
        "#",
    ]
    for queue, priority in ((spec.test_queue, 150), (spec.queue, 100)):
        lines += [
            "#",
            f"# Create and define queue {queue}",
            "#",
            f"create queue {queue}",
            f"set queue {queue} queue_type = Execution",
            f"set queue {queue} Priority = {priority}",
            f"set queue {queue} enabled = True",
            f"set queue {queue} started = True",
        ]
    lines += [
        "#",
        "# Set server attributes.",
        "#",
        "set server scheduling = True",
        f"set server default_queue = {spec.queue}",
        "set server log_events = 511",
        "set server mail_from = adm",
        "set server query_other_jobs = True",
        "set server resources_default.ncpus = 1",
        "set server scheduler_iteration = 600",
        "set server eligible_time_enable = True",
    ]
    if spec.job_sort_formula:
        lines.append(f"set server job_sort_formula = {qmgr_quoted(spec.job_sort_formula)}")
    return "\n".join(lines) + "\n"


def qmgr_quoted(value: str) -> str:
    """A string value as qmgr prints it: in double quotes when it holds a quote, a blank or a
    comma, in single quotes when it holds a double quote (qmgr.c:1758-1764)."""
    if '"' in value:
        return f"'{value}'"
    if any(mark in value for mark in "' ,"):
        return f'"{value}"'
    return value


def resource_group_text(site: Site, spec: ClusterSpec) -> str:
    """The tree, organizations then their projects (and their users, on a cluster that
    charges users), parents first; a user in two projects is one entity, under their own."""
    users_of: dict[str, list[SiteUser]] = {}
    for user in site.users:
        users_of.setdefault(user.projects[0], []).append(user)
    lines = [f"# resource_group of {spec.name}: name cgroup parent shares"]
    cgroup = 10
    charges_users = spec.fairshare_entity == "euser"
    for organization in site.organizations:
        lines.append(f"{organization.name} {cgroup} root {organization.shares}")
        cgroup += 1
        for project in site.projects:
            if project.organization != organization.name:
                continue
            shares = project.gpu_shares if spec.gpu else project.shares
            lines.append(f"{project.name} {cgroup} {organization.name} {shares}")
            cgroup += 1
            for user in users_of.get(project.name, []) if charges_users else []:
                lines.append(f"{user.name} {cgroup} {project.name} {USER_SHARES}")
                cgroup += 1
    return "\n".join(lines) + "\n"


def accounting_logs(spec: ClusterSpec, jobs: Sequence[GeneratedJob], at: int) -> Iterator[str]:
    """The jobs' records up to `at` in time order, as lines of PBS accounting logs."""
    records: list[tuple[int, int, str, GeneratedJob]] = []
    for job in jobs:
        records.append((job.qtime, job.job_id, "Q", job))
        state = job.state(at)
        if state != Stage.QUEUED:
            records.append((job.start, job.job_id, "S", job))
        if state == Stage.ENDED:
            records.append((job.end, job.job_id, "E", job))
    records.sort(key=lambda record: record[:2])
    for moment, _, kind, job in records:
        stamp = datetime.fromtimestamp(moment, tz=UTC).strftime("%m/%d/%Y %H:%M:%S")
        yield f"{stamp};{kind};{job.job_id}.{spec.server};{_message(spec, job, kind)} \n"


def _message(spec: ClusterSpec, job: GeneratedJob, kind: str) -> str:
    """The key=value message of a Q, S or E record, as PBS Pro writes it (NCAR's layout)."""
    per_host = min(job.ncpus, spec.host_cores)
    gpus_per_host = min(job.ngpus, spec.host_gpus)
    chunk = f"ncpus={per_host}" + (f":ngpus={gpus_per_host}" if job.ngpus else "")
    pairs = [
        ("user", job.user),
        ("group", job.group),
        ("account", f'"{job.account}"'),
        ("project", "_pbs_project_default"),
        ("jobname", job.jobname),
        ("queue", job.queue),
        ("ctime", str(job.qtime)),
        ("qtime", str(job.qtime)),
        ("etime", str(job.qtime)),
    ]
    if kind != "Q":
        pairs.append(("start", str(job.start)))
        pairs.append(("exec_host", "+".join(f"{host}/0*{per_host}" for host in job.hosts)))
    pairs += [
        ("Resource_List.ncpus", str(job.ncpus)),
        ("Resource_List.ngpus", str(job.ngpus)),
        ("Resource_List.nodect", str(len(job.hosts))),
        ("Resource_List.place", "scatter:excl" if len(job.hosts) > 1 else "free"),
        ("Resource_List.select", f"{len(job.hosts)}:{chunk}"),
        ("Resource_List.walltime", _duration(job.requested_walltime)),
    ]
    if kind == "E":
        pairs += [
            ("session", str(10_000 + job.job_id % 90_000)),
            ("end", str(job.end)),
            ("Exit_status", str(job.exit_status)),
            ("resources_used.cpupercent", str(job.cpupercent)),
            ("resources_used.cput", _duration(job.walltime * job.cpupercent // 100)),
            ("resources_used.mem", f"{job.memory_kb}kb"),
            ("resources_used.ncpus", str(job.ncpus)),
            ("resources_used.vmem", f"{job.memory_kb + (job.memory_kb >> 3)}kb"),
            ("resources_used.walltime", _duration(job.walltime)),
            ("eligible_time", _duration(job.start - job.qtime)),
            ("run_count", "1"),
        ]
    return format_attributes(pairs)


def _duration(seconds: int) -> str:
    """`H+:MM:SS`, as PBS writes durations (hours unbounded)."""
    hours, rest = divmod(seconds, HOUR)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


@dataclass(frozen=True)
class ClusterFiles:
    """Where one cluster's files were written."""

    sched_config: Path
    resource_group: Path
    qmgr: Path  # qmgr -c 'print server'

    accounting: tuple[Path, ...]  # the YYYYMMDD files, in day order
    records: int  # lines of the accounting logs


def site_files_write(
    folder: Path, site: Site, spec: ClusterSpec, jobs: Sequence[GeneratedJob], at: int
) -> ClusterFiles:
    """The cluster's sched_config, resource_group and accounting logs (a file a day), in
    `folder`/`spec.name`."""
    root = folder / spec.name
    logs = root / "accounting"
    logs.mkdir(parents=True)
    (root / "sched_config").write_text(sched_config_text(spec))
    (root / "resource_group").write_text(resource_group_text(site, spec))
    (root / "qmgr_print").write_text(qmgr_text(spec))
    days: dict[str, list[str]] = {}
    count = 0
    for line in accounting_logs(spec, jobs, at):
        days.setdefault(line[6:10] + line[0:2] + line[3:5], []).append(line)  # YYYYMMDD
        count += 1
    for day, lines in days.items():
        (logs / day).write_text("".join(lines))
    paths = tuple(logs / day for day in days)
    return ClusterFiles(
        root / "sched_config", root / "resource_group", root / "qmgr_print", paths, count
    )
