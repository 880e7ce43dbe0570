"""Slurm `sacct --parsable2` dumps in the 26 fields XDMoD asks for, read as job runs.

Follows FORMATS.md §5 (xdmod-slurm-helper's command: `--allocations --duplicates`, no header)
and Slurm's src/sacct/print.c for how each field is printed. Times are the cluster's local
time without a zone; `read_sacct` takes that zone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo

from accounting.parsers.records import (
    JobRecord,
    JobState,
    Parsed,
    Recognised,
    RejectedLine,
    Unreadable,
    decoded_line,
)
from accounting.parsers.units import parse_duration, parse_size

__all__ = ["MAX_ARRAY_TASKS", "MAX_NCPUS", "SACCT_FIELDS", "read_sacct"]

SACCT_FIELDS: tuple[str, ...] = (
    "jobid",
    "jobidraw",
    "cluster",
    "partition",
    "qos",
    "account",
    "group",
    "gid",
    "user",
    "uid",
    "submit",
    "eligible",
    "start",
    "end",
    "elapsed",
    "exitcode",
    "state",
    "nnodes",
    "ncpus",
    "reqcpus",
    "reqmem",
    "reqtres",
    "alloctres",
    "timelimit",
    "nodelist",
    "jobname",
)

# More CPUs (or nodes, or GPUs) than any machine has had: the line is corrupt, not a job.
MAX_NCPUS = 10_000_000
# A started row naming more array tasks than this is corrupt; expanding it would flood memory.
MAX_ARRAY_TASKS = 100_000
TEXT_LIMIT = 1000

ENDED_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "PREEMPTED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "DEADLINE",
    }
)
RUNNING_STATES = frozenset(
    {"RUNNING", "SUSPENDED", "COMPLETING", "STOPPED", "RESIZING", "SIGNALING", "STAGE_OUT"}
)
WAITING_STATES = frozenset({"PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT", "REVOKED"})
REQUEUED = "REQUEUED"
KNOWN_STATES = ENDED_STATES | RUNNING_STATES | WAITING_STATES | {REQUEUED}

_UNSET_TIMES = frozenset({"", "Unknown", "None"})
_NO_TIME_LIMIT = frozenset({"", "UNLIMITED", "Partition_Limit"})
_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", re.ASCII)
_COUNT = re.compile(r"\d+", re.ASCII)
_NEGATIVE = re.compile(r"-\d+(?:\.\d*)?", re.ASCII)
_DECIMAL = re.compile(r"\d+(?:\.\d+)?", re.ASCII)
_EXIT_CODE = re.compile(r"(\d{1,9}):(\d{1,9})", re.ASCII)
# Slurm's convert_num_unit sizes (`31000M`, `62.50G`, bare MB); pre-21.08 ReqMem ends in n or c.
_SIZE = re.compile(r"\d+(?:\.\d+)?[KMGTP]?", re.ASCII | re.IGNORECASE)
_REQMEM = re.compile(r"(\d+(?:\.\d+)?[KMGTP]?)([nc]?)", re.ASCII | re.IGNORECASE)
# A pending array's tasks, `4103947_[1-3,5%2]`; sacct may cut the id short (no `]`).
_ARRAY_ID = re.compile(r"(\d+)_\[([^\[\]]*)(\]?)", re.ASCII)
_TASKS = re.compile(r"(\d{1,9})(?:-(\d{1,9})(?::(\d{1,9}))?)?", re.ASCII)
_THROTTLE = re.compile(r"%\d*\Z", re.ASCII)
_TRUNCATION = "..."
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class _TaskRange:
    """The tasks a pending-array id names: (first, last, step) items; incomplete if cut."""

    base: str
    items: tuple[tuple[int, int, int], ...]
    complete: bool

    def count(self) -> int:
        return sum((last - first) // step + 1 for first, last, step in self.items)

    def job_ids(self) -> list[str]:
        """Each task's id, `4103947_<i>`, in the written order, once each."""
        seen: dict[int, None] = {}
        for first, last, step in self.items:
            seen.update(dict.fromkeys(range(first, last + 1, step)))
        return [f"{self.base}_{index}" for index in seen]


def read_sacct(lines: Iterable[bytes | str], *, tz: tzinfo = UTC) -> Iterator[Parsed]:
    """The runs of an sacct dump (FORMATS.md §5), one or more items per non-blank line.

    `tz` is the cluster's zone, in which sacct prints times. A job id seen earlier as REQUEUED
    (`--duplicates` lists every run) counts its runs from those rows.
    """
    requeued: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        text, utf8 = decoded_line(raw)
        if number == 1:
            text = text.removeprefix(_BOM)
        if not utf8:
            yield _rejected(number, "line", "not UTF-8 text", text)
        elif text.strip() and text[:6].casefold() != "jobid|":
            yield from _read_line(number, text, tz, requeued)


def _rejected(line: int, field: str, reason: str, text: str) -> RejectedLine:
    """The line not taken, its text cut to TEXT_LIMIT characters."""
    return RejectedLine(line, field, reason, text[:TEXT_LIMIT])


def _shown(value: str) -> str:
    """A field's value quoted for a reason, cut so a runaway field cannot flood the report."""
    return repr(value) if len(value) <= 60 else repr(value[:60]) + "…"


def _read_line(
    line: int, text: str, tz: tzinfo, requeued: dict[tuple[str, str], int]
) -> Iterator[Parsed]:
    """The items of one data line: runs, a recognised non-run, or the rejection."""
    values = text.split("|")
    if len(values) == len(SACCT_FIELDS) + 1 and values[-1] == "":
        values.pop()  # `sacct -p` ends every line with a `|`
    if len(values) != len(SACCT_FIELDS):
        reason = f"{len(values)} fields; the sacct dump has {len(SACCT_FIELDS)}"
        yield _rejected(line, "line", reason, text)
        return
    try:
        parsed = _parse_row(line, dict(zip(SACCT_FIELDS, values, strict=True)), tz)
    except Unreadable as unreadable:
        yield _rejected(line, unreadable.field, unreadable.reason, text)
        return
    if isinstance(parsed, Recognised):
        yield parsed
        return
    first, job_ids = parsed
    # Each task of a range is a run of its own; copies are made before any is handed out.
    records = [first, *(replace(first, extra=dict(first.extra)) for _ in job_ids[1:])]
    for record, job_id in zip(records, job_ids, strict=True):
        key = (record.server, job_id)
        record.job_id, record.run = job_id, 1 + requeued.get(key, 0)
        if record.state == JobState.REQUEUED:
            requeued[key] = record.run
        yield record


def _parse_row(
    line: int, row: dict[str, str], tz: tzinfo
) -> Recognised | tuple[JobRecord, list[str]]:
    """A row as a run and the job ids it stands for, or as a recognised non-run."""
    tasks = _task_range(row["jobid"])
    submit, eligible = _epoch("submit", row["submit"], tz), _epoch("eligible", row["eligible"], tz)
    start, end = _epoch("start", row["start"], tz), _epoch("end", row["end"], tz)
    walltime = _duration("elapsed", row["elapsed"])
    exit_status = _exit_status(row["exitcode"])
    state = _state_word(row["state"])
    nodes, ncpus = _count("nnodes", row["nnodes"]), _count("ncpus", row["ncpus"])
    requested_cpus = _count("reqcpus", row["reqcpus"])
    ncpus = ncpus or requested_cpus  # allocated, else requested (a job that never got CPUs)
    requested_memory = _requested_memory(row["reqmem"], nodes, ncpus)
    allocated, requested = _tres("alloctres", row["alloctres"]), _tres("reqtres", row["reqtres"])
    requested_walltime = _time_limit(row["timelimit"])
    if start is not None and end is not None and end < start:
        raise Unreadable("end", f"end {row['end']} is before start {row['start']}")
    started = start is not None and state not in WAITING_STATES
    if state in WAITING_STATES or (state in ENDED_STATES and not started):
        return Recognised(line, state)
    job_ids = [row["jobid"]]
    if tasks is not None:
        if not started:
            return Recognised(line, state)
        job_ids = _expanded(tasks)
    memory = _memory(allocated, requested_memory)
    billing = _billing(allocated, requested)
    record = JobRecord(
        line=line,
        job_id=row["jobid"],
        state=_job_state(state),
        server=row["cluster"],
        user=row["user"],
        group=row["group"],
        account=row["account"],
        queue=row["partition"],
        jobname=row["jobname"],
        ncpus=ncpus,
        ngpus=_gpus(allocated, requested),
        nodes=nodes,
        memory=memory,
        requested_walltime=requested_walltime,
        walltime=walltime,
        ctime=submit,
        etime=eligible,
        start=start,
        end=None if state in RUNNING_STATES else end,
        exit_status=exit_status,
        extra={} if billing is None else {"billing": billing},
        kind=state,
    )
    return record, job_ids


def _state_word(text: str) -> str:
    """The state's first word (`CANCELLED by 102216` is CANCELLED), if Slurm has it."""
    words = text.split(maxsplit=1)
    word = words[0] if words else ""
    if word not in KNOWN_STATES:
        raise Unreadable("state", f"unknown job state {_shown(word)}")
    return word


def _job_state(state: str) -> JobState:
    """The run's state: over, cut short and requeued, or still going."""
    if state == REQUEUED:
        return JobState.REQUEUED
    return JobState.RUNNING if state in RUNNING_STATES else JobState.ENDED


def _task_range(job_id: str) -> _TaskRange | None:
    """The tasks of a pending-array id (`4103947_[9-11,13]`); None for any other id.

    Follows sacct's _xlate_task_str: `a-b`, `a-b:step`, a `%N` throttle, `...` where
    SLURM_BITSTR_LEN cut the list, and an id cut short without its `]`.
    """
    if not job_id:
        raise Unreadable("jobid", "empty job id")
    # Dots inside the brackets are sacct's `...`; after the id they name a step.
    if "." in (job_id.partition("]")[2] if "[" in job_id else job_id):
        # A step row (`.batch`, `.extern`, `.0`): its usage is already the allocation's.
        raise Unreadable("jobid", f"a job step {_shown(job_id)}; dump with --allocations")
    if "[" not in job_id and "]" not in job_id:
        return None
    match = _ARRAY_ID.fullmatch(job_id)
    if match is None:
        raise Unreadable("jobid", f"not an array task range: {_shown(job_id)}")
    base, body, closed = match.groups()
    body = _THROTTLE.sub("", body)
    complete = bool(closed) and not body.endswith(_TRUNCATION)
    body = body.removesuffix(_TRUNCATION)
    words = body.split(",")
    if not complete:
        words = words[:-1]  # the last may be cut mid-number
    items = tuple(_task_item(word, job_id) for word in words)
    if complete and not items:
        raise Unreadable("jobid", f"an empty array task range: {_shown(job_id)}")
    return _TaskRange(base, items, complete)


def _task_item(word: str, job_id: str) -> tuple[int, int, int]:
    """`7`, `9-11` or `1-99:2` as (first, last, step)."""
    match = _TASKS.fullmatch(word)
    if match is not None:
        first = int(match.group(1))
        last = int(match.group(2) or first)
        step = int(match.group(3) or 1)
        if first <= last and step >= 1:
            return first, last, step
    raise Unreadable("jobid", f"not an array task range: {_shown(job_id)}")


def _expanded(tasks: _TaskRange) -> list[str]:
    """The job ids of a started row's tasks."""
    if not tasks.complete:
        raise Unreadable("jobid", "the array task range is cut short; its tasks are unknown")
    count = tasks.count()
    if count > MAX_ARRAY_TASKS:
        raise Unreadable("jobid", f"{count:,} array tasks (more than {MAX_ARRAY_TASKS:,})")
    return tasks.job_ids()


def _epoch(field: str, value: str, tz: tzinfo) -> int | None:
    """Epoch seconds of sacct's `YYYY-MM-DDTHH:MM:SS` in the cluster's zone; None if unset.

    An hour that occurs twice (DST ending) is taken at its first occurrence (fold=0).
    """
    if value in _UNSET_TIMES:
        return None
    match = _TIME.fullmatch(value)
    if match is not None:
        year, month, day, hour, minute, second = map(int, match.groups())
        try:
            moment = datetime(year, month, day, hour, minute, second, tzinfo=tz, fold=0)
            return int(moment.timestamp())
        except (ValueError, OverflowError):
            pass
    raise Unreadable(field, f"not a time: {_shown(value)}")


def _duration(field: str, value: str) -> int:
    """Seconds in `[D-]HH:MM:SS`."""
    try:
        return parse_duration(value)
    except (ValueError, OverflowError):  # a runaway number of seconds overflows round()
        raise Unreadable(field, f"not a duration: {_shown(value)}") from None


def _time_limit(value: str) -> int | None:
    """Seconds of the time limit; None for UNLIMITED, Partition_Limit or blank."""
    return None if value in _NO_TIME_LIMIT else _duration("timelimit", value)


def _exit_status(value: str) -> int:
    """`rc:signal` as one number: rc, or 256 + signal when a signal ended the job.

    256 + signal is how PBS writes Exit_status for a killed job, so the column means the same
    for both schedulers: below 256 an exit code, above it a signal.
    """
    match = _EXIT_CODE.fullmatch(value)
    if match is None:
        raise Unreadable("exitcode", f"not an exit code rc:signal: {_shown(value)}")
    code, signal = int(match.group(1)), int(match.group(2))
    return code if signal == 0 else 256 + signal


def _count(field: str, value: str, limit: int = MAX_NCPUS) -> int:
    """A non-negative count, at most `limit`."""
    if _NEGATIVE.fullmatch(value):
        raise Unreadable(field, f"negative: {_shown(value)}")
    if _COUNT.fullmatch(value) is None:
        raise Unreadable(field, f"not a count: {_shown(value)}")
    if len(value.lstrip("0")) > len(str(limit)) or int(value) > limit:
        raise Unreadable(field, f"absurd: {_shown(value)} (more than {limit:,})")
    return int(value)


def _size(field: str, value: str) -> int:
    """Bytes in a Slurm size (`62.50G`); a bare number is MB."""
    if _SIZE.fullmatch(value) is None:
        raise Unreadable(field, f"not a size: {_shown(value)}")
    try:
        return parse_size(value, default_unit="M")
    except (ValueError, OverflowError):
        raise Unreadable(field, f"not a size: {_shown(value)}") from None


def _requested_memory(value: str, nodes: int, ncpus: int) -> int | None:
    """Bytes of ReqMem for the whole job; None when blank.

    Before Slurm 21.08 it ends in `n` (per node) or `c` (per CPU); later it is per node.
    """
    if value == "":
        return None
    match = _REQMEM.fullmatch(value)
    if match is None:
        raise Unreadable("reqmem", f"not a memory request: {_shown(value)}")
    size = _size("reqmem", match.group(1))
    per_cpu = match.group(2).lower() == "c"
    return size * (ncpus if per_cpu else max(nodes, 1))


def _tres(field: str, value: str) -> dict[str, str]:
    """A TRES list, `billing=12,cpu=12,gres/gpu=2,mem=31000M,node=1`, by name."""
    if value == "":
        return {}
    tres: dict[str, str] = {}
    for item in value.split(","):
        name, equals, amount = item.partition("=")
        if not name or not equals:
            raise Unreadable(field, f"not a TRES list: {_shown(value)}")
        tres[name] = amount
    return tres


def _memory(allocated: dict[str, str], requested_memory: int | None) -> int | None:
    """Bytes allocated (AllocTRES mem), else requested (ReqMem)."""
    if "mem" in allocated:
        return _size("alloctres", allocated["mem"])
    return requested_memory


def _gpus(allocated: dict[str, str], requested: dict[str, str]) -> int:
    """GPUs allocated, else requested, else 0."""
    for field, tres in (("alloctres", allocated), ("reqtres", requested)):
        gpus = _gpu_count(field, tres)
        if gpus is not None:
            return gpus
    return 0


def _gpu_count(field: str, tres: dict[str, str]) -> int | None:
    """`gres/gpu`, else the sum of `gres/gpu:<type>`; None when neither is there.

    Slurm lists a typed allocation twice, `gres/gpu:a100=2,gres/gpu=2`, so the untyped count
    is already the total; `gres/gpumem` and `gres/gpuutil` are not GPUs.
    """
    if "gres/gpu" in tres:
        return _count(field, tres["gres/gpu"])
    typed = [_count(field, count) for name, count in tres.items() if name.startswith("gres/gpu:")]
    return sum(typed) if typed else None


def _billing(allocated: dict[str, str], requested: dict[str, str]) -> float | None:
    """The billing TRES allocated, else requested; None when neither has one."""
    for field, tres in (("alloctres", allocated), ("reqtres", requested)):
        if "billing" in tres:
            value = tres["billing"]
            if _DECIMAL.fullmatch(value) is None or not math.isfinite(float(value)):
                raise Unreadable(field, f"billing is not a number: {_shown(value)}")
            return float(value)
    return None
