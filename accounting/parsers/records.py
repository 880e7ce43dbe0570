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
    "JobRequest",
    "JobState",
    "Parsed",
    "Recognised",
    "RejectedLine",
    "Unreadable",
    "decoded_line",
]


class JobState(StrEnum):
    ENDED = "ended"  # the run is over and its usage is final (PBS E, SWF, sacct ended states)
    REQUEUED = "requeued"  # the run was cut short and the job requeued (PBS R with usage)
    RUNNING = "running"  # started, not yet ended in this source (PBS S without E, sacct RUNNING)
    QUEUED = "queued"  # waiting to start: PBS Q with no S, E, R, D or A of it in this source


@dataclass(slots=True)
class JobRequest:
    """What a waiting job asks for and the facts its scheduler computes its priority from.

    Stored as JSON on the queued row (`dataclasses.asdict`); every field has a default so that
    a row stored by an older version reads back. Epochs are UTC seconds.
    """

    # PBS: the numeric Resource_List amounts as the scheduler hands them to job_sort_formula
    # (sizes in kB, durations in seconds, counts as they are); Slurm: the requested TRES
    # counts by TRES name (`cpu`, `mem` in MB, `node`, `gres/gpu`, `billing`).
    resources: dict[str, float] = field(default_factory=dict)
    held: bool = False  # PBS job_state H, Slurm priority 0 or a hold reason: never considered
    job_priority: int = 0  # PBS `Priority` (qsub -p, -1024..1023)
    eligible_time: int | None = None  # PBS eligible_time accrued by `sampled`, seconds
    accrue_type: int | None = None  # PBS: 1 ineligible, 2 eligible, 3 running, 4 exit
    sampled: int | None = None  # when the snapshot that said eligible_time was taken
    reported_priority: int | None = None  # the priority the scheduler itself reported (squeue)
    qos: str = ""  # Slurm QOS
    partitions: list[str] = field(default_factory=list)  # Slurm: every partition it may use
    nice: int = 0  # Slurm --nice (the value without NICE_OFFSET)
    site_factor: int = 0  # Slurm site factor (the value without NICE_OFFSET)
    min_nodes: int = 0  # Slurm min_nodes
    time_limit: int | None = None  # Slurm time limit, minutes (INFINITE: UNLIMITED; None: unset)
    accrue_time: int | None = None  # Slurm: when its age began to accrue (0/None: not yet)
    begin_time: int | None = None  # Slurm: when it may start (0: not yet; None: not said)
    reason: str = ""  # the scheduler's own pending reason or comment, as it printed it
    suspended: bool = False  # Accelerator: a started job suspended (it keeps its slot)


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
    # A queued job's request (PBS Q records, qstat, squeue); None for runs.
    request: JobRequest | None = None
    # The host its MoM runs on (PBS: exec_host's first host, the mother superior); "" unknown.
    mom: str = ""

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


class Unreadable(Exception):
    """Raised inside a parser: the field a line cannot be taken with (a column, or a key such
    as `jobs[3].priority`) and why; the parser makes it the line's RejectedLine."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def decoded_line(raw: str | bytes) -> tuple[str, bool]:
    """A line without its newline, and whether it was UTF-8 (bad bytes are escaped)."""
    if isinstance(raw, str):
        return raw.rstrip("\r\n"), True
    try:
        return raw.decode().rstrip("\r\n"), True
    except UnicodeDecodeError:
        return raw.decode(errors="backslashreplace").rstrip("\r\n"), False
