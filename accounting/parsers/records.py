"""What every accounting parser yields: one run of a job, and the lines it could not take.

Times are epoch seconds (UTC), durations seconds, memory bytes; `None` where the source does
not say. The parsers are streaming generators of `JobRecord | RejectedLine | Recognised`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from trees.engine.formula import USAGE_RESOURCES
from trees.formats.rejected import RejectedLine

__all__ = [
    "USAGE_RESOURCES",
    "JobRecord",
    "JobState",
    "Parsed",
    "Recognised",
    "RejectedLine",
]


class JobState(StrEnum):
    ENDED = "ended"  # the run is over and its usage is final (PBS E, SWF, sacct ended states)
    REQUEUED = "requeued"  # the run was cut short and the job requeued (PBS R with usage)
    RUNNING = "running"  # started, not yet ended in this source (PBS S without E, sacct RUNNING)
    QUEUED = "queued"  # waiting to start: PBS Q with no S, E, R, D or A of it in this source


@dataclass(slots=True)
class JobRecord:
    """One run of a job: who it is charged to, what it asked for and what it used."""

    line: int
    job_id: str  # the scheduler's id without the server: "4529746[4]", "4103947_100", "17"
    run: int = 1  # 1 for the first run (PBS run_count; sources without reruns say 1)
    state: JobState = JobState.ENDED
    server: str = ""  # PBS server suffix or Slurm cluster name, when the id or record has one
    user: str = ""
    group: str = ""
    account: str = ""
    project: str = ""
    queue: str = ""  # PBS queue, Slurm partition, SWF queue
    partition: str = ""  # SWF partition (Slurm's partition is its queue)
    jobname: str = ""
    ncpus: int = 0
    ngpus: int = 0
    nodes: int = 0
    memory: int | None = None  # bytes used (requested where the source only knows that)
    requested_walltime: int | None = None
    walltime: int | None = None  # seconds used
    cput: float | None = None  # CPU seconds used
    ctime: int | None = None  # created / submitted
    qtime: int | None = None
    etime: int | None = None  # eligible
    start: int | None = None
    end: int | None = None
    exit_status: int | None = None
    # Used resources beyond the fields above (PBS resources_used.*, Slurm billing), by the
    # names of USAGE_RESOURCES; the formula reads the fields first, then these.
    extra: dict[str, float] = field(default_factory=dict)
    # The record type as the source writes it (the sacct state word); "" when the state says it.
    kind: str = ""

    def usage_resources(self) -> dict[str, float]:
        """The values a `fairshare_usage_res` formula sees for this run."""
        resources: dict[str, float] = dict(self.extra)
        resources["ncpus"] = self.ncpus
        resources["ngpus"] = self.ngpus
        resources["nodect"] = self.nodes
        resources["walltime"] = self.walltime or 0
        resources["cput"] = self.cput or 0.0
        resources["mem"] = self.memory or 0
        return resources


@dataclass(frozen=True, slots=True)
class Recognised:
    """A well-formed line that records no job run (PBS Q, S, D, a, L...; sacct PENDING)."""

    line: int
    kind: str  # the record type as the source writes it: "Q", "L", "PENDING", ...
    # A job that will not start from the queue any more (PBS D, A; an array's E): a queued row
    # stored for it from an earlier file goes.
    withdrawn: str = ""


Parsed = JobRecord | RejectedLine | Recognised
