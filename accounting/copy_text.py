"""Job runs as lines of PostgreSQL's COPY text format, the fastest way into the job table.

A line is the columns of JOB_COLUMNS separated by tabs, `\\N` for NULL, times as UTC text and
text with backslash, tab, newline and carriage return escaped (PostgreSQL's "COPY", text
format). Pure: no Django; the service hands over the run, its usage and where it goes.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import lru_cache

from accounting.parsers.records import JobRecord, JobState

__all__ = [
    "JOB_COLUMNS",
    "SOURCE_MAX",
    "TEXT_MAX",
    "CopyLines",
    "copy_text",
    "copy_time",
    "node_text",
    "with_node",
]

# node_id last: it is known only when the batch is stored.
JOB_COLUMNS = (
    "cluster_id", "job_id", "run", "state", "server", "entity", "user", "group", "account",
    "project", "queue", "partition", "jobname", "ncpus", "ngpus", "nodes", "memory", "vmem",
    "mpiprocs", "cpupercent", "billing", "requested_walltime", "walltime", "cput", "ctime",
    "qtime", "etime", "start", "end", "exit_status", "usage", "mom", "source_file",
    "source_line", "ingest_id", "node_id",
)  # fmt: skip
TEXT_MAX = 255  # characters of the job table's name columns
SOURCE_MAX = 1024  # characters of its source_file
_NULL = "\\N"
_STATES = {state: state.value for state in JobState}  # faster than .value
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
# A time of day as text in two lookups: " HH:" by hour, "MM:SS+00" by second of the hour.
_HOURS = tuple(f" {hour:02d}:" for hour in range(24))
_MINUTES_SECONDS = tuple(f"{second // 60:02d}:{second % 60:02d}+00" for second in range(3600))


@lru_cache(maxsize=4096)
def _day(day: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(day * 86400))


@lru_cache(maxsize=1 << 16)  # a run's ctime, qtime and etime are often one time
def copy_time(epoch: int | None) -> str:
    """An epoch (0 to year 9999) as timestamptz text: `2026-01-02 00:03:14+00`; None as NULL."""
    if epoch is None:
        return _NULL
    day, second = divmod(epoch, 86400)
    return _day(day) + _HOURS[second // 3600] + _MINUTES_SECONDS[second % 3600]


class CopyLines:
    """The COPY text lines of the runs of one file, for one cluster and ingest run."""

    def __init__(self, cluster_id: int, source_file: str, ingest_id: int) -> None:
        self.prefix = f"{cluster_id}\t"
        self.source = f"\t{copy_text(source_file[:SOURCE_MAX])}\t"
        self.ending = f"\t{ingest_id}\t"

    def line(self, record: JobRecord, usage: float, entity: str, tail: str = "") -> str:
        """One run charged to `entity` with its `fairshare_usage_res` usage, up to the node,
        then `tail`: `node_text(node)` makes it complete, else `with_node` completes it later.
        """
        names = (
            record.job_id, record.server, entity, record.user, record.group, record.account,
            record.project, record.queue, record.partition, record.jobname, record.mom,
        )  # fmt: skip
        joined = "".join(names)
        if (
            "\\" in joined
            or not joined.isprintable()
            or (len(joined) > TEXT_MAX and max(map(len, names)) > TEXT_MAX)
        ):
            record, entity = _escaped(record), _escape(entity)
        extra = record.extra
        vmem, mpiprocs = extra.get("vmem"), extra.get("mpiprocs")
        cpupercent, billing = extra.get("cpupercent"), extra.get("billing")
        memory, requested, walltime = record.memory, record.requested_walltime, record.walltime
        exit_status, cput = record.exit_status, record.cput
        return (
            f"{self.prefix}{record.job_id}\t{record.run}\t{_STATES[record.state]}\t"
            f"{record.server}\t{entity}\t{record.user}\t{record.group}\t{record.account}\t"
            f"{record.project}\t{record.queue}\t{record.partition}\t{record.jobname}\t"
            f"{record.ncpus}\t{record.ngpus}\t{record.nodes}\t"
            f"{_NULL if memory is None else memory}\t"
            f"{_NULL if vmem is None else round(vmem)}\t"
            f"{_NULL if mpiprocs is None else round(mpiprocs)}\t"
            f"{_NULL if cpupercent is None else round(cpupercent)}\t"
            f"{_NULL if billing is None else repr(billing)}\t"
            f"{_NULL if requested is None else requested}\t"
            f"{_NULL if walltime is None else walltime}\t"
            f"{_NULL if cput is None else repr(cput)}\t"
            f"{copy_time(record.ctime)}\t{copy_time(record.qtime)}\t{copy_time(record.etime)}\t"
            f"{copy_time(record.start)}\t{copy_time(record.end)}\t"
            f"{_NULL if exit_status is None else exit_status}\t{usage!r}\t{record.mom}"
            f"{self.source}{record.line}{self.ending}{tail}"
        )


def node_text(node: int | None) -> str:
    """The last column of a line, the run's node, and the line's end."""
    return f"{_NULL if node is None else node}\n"


def with_node(line: str, node: int | None) -> str:
    """A line of CopyLines.line completed with the run's node."""
    return line + node_text(node)


def copy_text(text: str) -> str:
    """A text value as COPY reads it back unchanged."""
    return text.translate(_ESCAPES)


def _escape(text: str) -> str:
    return copy_text(text[:TEXT_MAX])


def _escaped(record: JobRecord) -> JobRecord:
    """The record with its name columns cut to TEXT_MAX and escaped for COPY."""
    return replace(
        record,
        job_id=copy_text(record.job_id),
        server=_escape(record.server),
        user=_escape(record.user),
        group=_escape(record.group),
        account=_escape(record.account),
        project=_escape(record.project),
        queue=_escape(record.queue),
        partition=_escape(record.partition),
        jobname=_escape(record.jobname),
        mom=_escape(record.mom),
    )
