"""Altair Accelerator jobs exported for the dashboard, a CSV read as job runs.

The project defines the export: a header line `id,fsgroup,user,status,jobclass,priority,
submitted,started,ended`, then one job per line, read with Python's csv module (quoted fields
allowed; a record is one line, so a quoted field holds no newline). Blank lines are skipped
and a line starting with `#` is a comment: a job id that starts with `#` must be quoted. The
header is the first line that is neither; one that differs is rejected and nothing else is read.

Fields: `id` (1 to 128 characters); `fsgroup`, the absolute FairShare group path the job is in
(`/time/users.john`); `user`; `status`, QUEUED, RUNNING, SUSPENDED, DONE or FAILED in any
ASCII case (Accelerator's other statuses, Idle, Transfer, Sleeping and Withdrawn, are not
exported: a line with one is rejected naming it); `jobclass` (may be empty); `priority`, the
job priority, an integer 0..15: Accelerator's range is 1..15, and 0 is seen in exports of jobs
without one; `submitted`, `started`, `ended`, epoch seconds, empty or 0 when not set.

A run is `ncpus=1`: Accelerator counts jobs in slots, not CPUs. A DONE or FAILED job with
neither `started` nor `ended` never ran: it is `Recognised` with `withdrawn` set to its id, as
it will not run any more. A job whose times break the rules (`ended >= started >= submitted`,
a started time exactly when its status says it ran, an ended time only when it is over) is
rejected naming the field at fault.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable, Iterator

from accounting.parsers.records import (
    JobRecord,
    JobRequest,
    JobState,
    Parsed,
    Recognised,
    RejectedLine,
    Unreadable,
    decoded_line,
)

__all__ = [
    "ACCELERATOR_JOB_FIELDS",
    "ACCELERATOR_STATUSES",
    "MAX_EPOCH",
    "MAX_ID_LENGTH",
    "MAX_PRIORITY",
    "read_accelerator_jobs",
]

ACCELERATOR_JOB_FIELDS: tuple[str, ...] = (
    "id",
    "fsgroup",
    "user",
    "status",
    "jobclass",
    "priority",
    "submitted",
    "started",
    "ended",
)
ACCELERATOR_STATUSES: tuple[str, ...] = ("QUEUED", "RUNNING", "SUSPENDED", "DONE", "FAILED")

MAX_ID_LENGTH = 128
MAX_PRIORITY = 15  # Accelerator's job priorities are 1..15; 0 is a job without one
MAX_EPOCH = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a datetime can hold
TEXT_LIMIT = 1000
SHOWN_LIMIT = 60
NAMES_LIMIT = 10  # header columns named in a reason; the rest are counted

# Accelerator statuses the export never holds (a job waiting on a resource, being sent...).
_OTHER_STATUSES = frozenset({"IDLE", "TRANSFER", "SLEEPING", "WITHDRAWN"})
_STARTED_STATUSES = frozenset({"RUNNING", "SUSPENDED"})
_ENDED_STATUSES = frozenset({"DONE", "FAILED"})
_EXPECTED = f"the header must be {','.join(ACCELERATOR_JOB_FIELDS)}"
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_BOM = "\ufeff"


def read_accelerator_jobs(lines: Iterable[str | bytes]) -> Iterator[Parsed]:
    """The runs of an Accelerator jobs export, one item per job line (see the module docstring).

    Bytes are decoded as UTF-8; a line that is not is rejected. Each line is parsed on its own,
    so one bad quote costs its line only.
    """
    header_seen = False
    for number, raw in enumerate(lines, start=1):
        text, utf8 = decoded_line(raw)
        if number == 1:
            text = text.removeprefix(_BOM)
        if not text.strip() or text.startswith("#"):
            continue
        if not header_seen:
            problem = _header_problem(text) if utf8 else f"not UTF-8 text; {_EXPECTED}"
            if problem:
                yield _rejected(number, "line", problem, text)
                return
            header_seen = True
        elif not utf8:
            yield _rejected(number, "line", "not UTF-8 text", text)
        else:
            yield _read_line(number, text)


def _cells(text: str) -> list[str]:
    """One line's fields as the csv module reads them; raises csv.Error for a broken quote."""
    return next(csv.reader([text], strict=True), [])


def _header_problem(text: str) -> str:
    """Why the header line is not the export's, naming the columns that differ; "" if it is."""
    try:
        columns = _cells(text)
    except csv.Error:
        columns = text.split(",")
    if tuple(columns) == ACCELERATOR_JOB_FIELDS:
        return ""
    expected, found = Counter(ACCELERATOR_JOB_FIELDS), Counter(columns)
    lacking, surplus = expected - found, found - expected
    missing = [name for name in ACCELERATOR_JOB_FIELDS if lacking[name]]
    unexpected = [name for name in dict.fromkeys(columns) if surplus[name]]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(missing)}")
    if unexpected:
        parts.append(f"not expected {_names(unexpected)}")
    if not parts:  # the same columns, so the same count, in another order
        pairs = zip(columns, ACCELERATOR_JOB_FIELDS, strict=True)
        moved = [name for name, want in pairs if name != want]
        parts.append(f"out of order: {', '.join(moved)}")
    return f"{_EXPECTED}; {'; '.join(parts)}"


def _names(names: list[str]) -> str:
    """Column names quoted for a reason, at most NAMES_LIMIT of them."""
    shown = ", ".join(_shown(name) for name in names[:NAMES_LIMIT])
    more = len(names) - NAMES_LIMIT
    return f"{shown} and {more} more" if more > 0 else shown


def _read_line(line: int, text: str) -> Parsed:
    """One job line as a run, a recognised job that never ran, or the rejection."""
    try:
        values = _cells(text)
    except csv.Error as error:
        return _rejected(line, "line", f"not a CSV line: {error}", text)
    if len(values) != len(ACCELERATOR_JOB_FIELDS):
        reason = f"{len(values)} fields; the header has {len(ACCELERATOR_JOB_FIELDS)}"
        return _rejected(line, "line", reason, text)
    try:
        return _parse_row(line, dict(zip(ACCELERATOR_JOB_FIELDS, values, strict=True)))
    except Unreadable as unreadable:
        return _rejected(line, unreadable.field, unreadable.reason, text)


def _parse_row(line: int, row: dict[str, str]) -> JobRecord | Recognised:
    """A row of valid fields as its run; raises Unreadable for the first fault."""
    job_id, user, fsgroup = row["id"], row["user"], row["fsgroup"]
    if not job_id:
        raise Unreadable("id", "id is empty")
    if len(job_id) > MAX_ID_LENGTH:
        raise Unreadable("id", f"id is {len(job_id):,} characters; at most {MAX_ID_LENGTH}")
    _check_fsgroup(fsgroup)
    if not user:
        raise Unreadable("user", "user is empty")
    status = _status(row["status"])
    priority = _priority(row["priority"])
    submitted = _epoch("submitted", row["submitted"])
    started = _epoch("started", row["started"])
    ended = _epoch("ended", row["ended"])
    _check_times(status, submitted, started, ended)
    if status in _ENDED_STATUSES and started is None:
        return Recognised(line, kind=status, withdrawn=job_id)
    state = JobState.ENDED
    if status == "QUEUED":
        state = JobState.QUEUED
    elif status in _STARTED_STATUSES:
        state = JobState.RUNNING  # a suspended job still holds its slot
    return JobRecord(
        line=line,
        job_id=job_id,
        run=0 if state == JobState.QUEUED else 1,  # a queued row is run 0, as qstat's
        state=state,
        user=user,
        account=fsgroup,
        queue=row["jobclass"],
        ncpus=1,
        walltime=None if ended is None or started is None else ended - started,
        ctime=submitted,
        qtime=submitted,
        start=started,
        end=ended,
        exit_status=0 if status == "DONE" else None,
        kind=status,
        # Its priority, and whether it is suspended, while it waits or runs; a snapshot
        # refreshes both on the stored row.
        request=None
        if state == JobState.ENDED
        else JobRequest(job_priority=priority, suspended=status == "SUSPENDED"),
    )


def _check_fsgroup(fsgroup: str) -> None:
    """An absolute FairShare group path: `/class/vcs.u1`, never `/` alone or `a//b`."""
    if not fsgroup:
        raise Unreadable("fsgroup", "fsgroup is empty")
    if not fsgroup.startswith("/"):
        raise Unreadable("fsgroup", f"fsgroup {_shown(fsgroup)} does not start with /")
    if "" in fsgroup[1:].split("/"):
        raise Unreadable("fsgroup", f"fsgroup {_shown(fsgroup)} has an empty part")


def _status(value: str) -> str:
    """The status word in capitals, if it is one of the five the export holds."""
    if not value:
        raise Unreadable("status", "status is empty")
    word = value.upper() if value.isascii() else value  # no `ı` read as I
    if word in ACCELERATOR_STATUSES:
        return word
    five = ", ".join(ACCELERATOR_STATUSES)
    if word in _OTHER_STATUSES:
        raise Unreadable("status", f"Accelerator status {_shown(value)} is not one of {five}")
    raise Unreadable("status", f"unknown status {_shown(value)}; one of {five}")


def _priority(value: str) -> int:
    """Accelerator's job priority, 1..15, or 0 for a job without one."""
    if not value:
        raise Unreadable("priority", "priority is empty")
    if _INTEGER.fullmatch(value) is None:
        raise Unreadable("priority", f"priority {_shown(value)} is not an integer")
    # A runaway number of digits is out of range without int(), which refuses over 4,300.
    digits = value.lstrip("+-").lstrip("0")
    number = int(value) if len(digits) <= 2 else MAX_PRIORITY + 1
    if not 0 <= number <= MAX_PRIORITY:
        raise Unreadable("priority", f"priority {_shown(value)} is not in 0..{MAX_PRIORITY}")
    return number


def _epoch(field: str, value: str) -> int | None:
    """Epoch seconds; None when empty or 0 (not set)."""
    if value == "":
        return None
    if _DIGITS.fullmatch(value) is None:
        if _INTEGER.fullmatch(value) is not None and value.startswith("-"):
            raise Unreadable(field, f"{field} {_shown(value)} is negative")
        raise Unreadable(field, f"{field} {_shown(value)} is not epoch seconds")
    if len(value.lstrip("0")) > len(str(MAX_EPOCH)) or int(value) > MAX_EPOCH:
        raise Unreadable(field, f"{field} {_shown(value)} is after 9999-12-31")
    return int(value) or None


def _check_times(
    status: str, submitted: int | None, started: int | None, ended: int | None
) -> None:
    """The times a status allows, in order: ended >= started >= submitted where set."""
    if status == "QUEUED" and started is not None:
        raise Unreadable("started", "a QUEUED job has a started time")
    if status in _STARTED_STATUSES and started is None:
        raise Unreadable("started", f"a {status} job has no started time")
    if status not in _ENDED_STATUSES and ended is not None:
        raise Unreadable("ended", f"a {status} job has an ended time")
    if status in _ENDED_STATUSES:
        if started is not None and ended is None:
            raise Unreadable("ended", f"a {status} job that started has no ended time")
        if started is None and ended is not None:
            raise Unreadable("started", f"a {status} job that ended has no started time")
    if started is not None and submitted is not None and started < submitted:
        raise Unreadable("started", f"started {started} is before submitted {submitted}")
    if ended is not None and started is not None and ended < started:
        raise Unreadable("ended", f"ended {ended} is before started {started}")


def _rejected(line: int, field: str, reason: str, text: str) -> RejectedLine:
    """The line not taken, its text cut to TEXT_LIMIT characters."""
    return RejectedLine(line, field, reason, text[:TEXT_LIMIT])


def _shown(value: str) -> str:
    """A value quoted for a reason, cut so that a runaway field cannot flood the report."""
    return repr(value) if len(value) <= SHOWN_LIMIT else repr(value[:SHOWN_LIMIT]) + "…"
