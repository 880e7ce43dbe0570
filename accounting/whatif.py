"""The what-if's jobs (issue 26): an SWF trace's, or a cluster's stored jobs, as the replay
takes them (trees.engine.simulate.SimJob), each with when it really started."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from accounting.entities import swf_named
from accounting.parsers.records import JobRecord, RejectedLine
from accounting.parsers.swf import SwfReader
from trees.engine.simulate import SimJob


@dataclass
class TraceJobs:
    """A trace's jobs, its MaxProcs (None when the header has none), and the lines refused."""

    jobs: list[SimJob] = field(default_factory=list)
    max_procs: int | None = None
    rejected: list[RejectedLine] = field(default_factory=list)


def swf_trace_jobs(lines: Iterable[bytes | str]) -> TraceJobs:
    """The jobs of an SWF trace, users named user<N> and projects group<N> as ingest_swf names
    them; the job id is the SWF job number (a partial run's is NUMBER.RUN). A job that did not
    run has run time 0, and the replay leaves it out and counts it."""
    reader = SwfReader(lines)
    trace = TraceJobs()
    for item in reader:
        if isinstance(item, RejectedLine):
            trace.rejected.append(item)
        elif isinstance(item, JobRecord) and item.ctime is not None:
            submit, record = item.ctime, swf_named(item)
            trace.jobs.append(
                SimJob(
                    record.job_id if record.run <= 1 else f"{record.job_id}.{record.run}",
                    record.user or "user-1",
                    submit,
                    record.walltime or 0,
                    record.ncpus,
                    record.requested_walltime,
                    record.start,
                    record.queue,
                    record.account,
                )
            )
    trace.max_procs = reader.header.max_procs
    return trace


@dataclass(frozen=True)
class StoredRun:
    """What the what-if reads of a stored job run."""

    job_id: str
    run: int
    entity: str
    user: str
    account: str
    project: str
    group: str
    queue: str
    ncpus: int
    ngpus: int
    nodes: int
    requested_walltime: int | None
    walltime: int | None
    submit: int
    start: int
    end: int


def stored_sim_job(row: StoredRun, *, pbs: bool) -> SimJob:
    """A stored run as the replay takes it: PBS's entity and project; Slurm's user and account
    (its association), Accelerator's user and FairShare group."""
    run_time = row.walltime if row.walltime is not None else row.end - row.start
    job_id = row.job_id if row.run <= 1 else f"{row.job_id}.{row.run}"
    if pbs:
        entity, group = row.entity, row.project or row.account or row.group
    else:
        entity, group = row.user, row.account
    return SimJob(
        job_id, entity, row.submit, run_time, row.ncpus, row.requested_walltime, row.start,
        row.queue, group, row.ngpus, row.nodes,
    )  # fmt: skip
