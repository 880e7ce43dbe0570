"""Standard Workload Format 2.2 traces (Parallel Workloads Archive) as job runs.

Follows the archive's definition (cs.huji.ac.il/labs/parallel/workload/swf.html) and FORMATS.md
§4: header lines start with `;`, then every job is a line of 18 whitespace-separated numbers,
-1 where a value is unknown. Times count from the header's UnixStartTime.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from accounting.parsers.records import JobRecord, JobState, Parsed, RejectedLine

__all__ = ["FIELDS", "MAX_NCPUS", "SwfHeader", "SwfReader"]

# More processors than any machine has had: the line is corrupt, not a job.
MAX_NCPUS = 10_000_000

FIELDS = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)
(
    JOB_NUMBER,
    SUBMIT_TIME,
    WAIT_TIME,
    RUN_TIME,
    ALLOCATED_PROCESSORS,
    AVERAGE_CPU_TIME,
    USED_MEMORY,
    REQUESTED_PROCESSORS,
    REQUESTED_TIME,
    REQUESTED_MEMORY,
    STATUS,
    USER_ID,
    GROUP_ID,
    EXECUTABLE_NUMBER,
    QUEUE_NUMBER,
    PARTITION_NUMBER,
    PRECEDING_JOB_NUMBER,
    THINK_TIME,
) = range(len(FIELDS))

UNKNOWN = -1.0
# Status of the lines a checkpointed or swapped job writes, one per partial run (swf.html).
PARTIAL_STATUSES = frozenset({2, 3, 4})
TEXT_LIMIT = 1000
SHOWN_LIMIT = 40

# `; Key: value` or `;Key: value`. A key follows at most one space, so indented continuation
# lines (`;\tsee: http://...`) stay continuations, and `http://` is not a key.
_KEY_LINE = re.compile(r"; ?([A-Za-z]\w*):(?!//)(.*)", re.ASCII | re.DOTALL)
# Up to 18 digits: a longer number is no time or count, and int() refuses over 4300 digits.
_LEADING_INT = re.compile(r"\s*([+-]?\d{1,18})(?!\d)", re.ASCII)
_LEADING_COUNT = re.compile(r"\s*(\d{1,18})(?!\d)", re.ASCII)
# What SWF calls a number; float() also takes `nan`, `inf`, `1_0` and non-ASCII digits.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_BOM = "\ufeff"


@dataclass
class SwfHeader:
    """The `; Key: value` lines of a trace (swf.html, "Header Comments")."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    unix_start_time: int = 0  # 0 when absent: submit times are then epochs (Alea's wagap)
    time_zone: str = ""
    max_procs: int | None = None
    max_nodes: int | None = None
    queues: dict[str, str] = field(default_factory=dict)
    partitions: dict[str, str] = field(default_factory=dict)


class SwfReader:
    """The job runs of an SWF trace, one item per data line; the header fills as it is read.

    Follows swf.html: submit = UnixStartTime + field 2; start = submit + wait, or submit when
    the wait is unknown (-1); a run time of -1 is a job that did not run (no start, end or
    walltime). Partial-execution lines (status 2, 3, 4) are runs 1, 2, ... of their job.
    """

    def __init__(self, lines: Iterable[bytes | str]) -> None:
        self._lines = lines
        self.header = SwfHeader()
        self._last_key: str | None = None
        # Runs seen so far of each job number that wrote partial-execution lines.
        self._partial_runs: dict[int, int] = {}

    def __iter__(self) -> Iterator[Parsed]:
        for number, raw in enumerate(self._lines, start=1):
            utf8 = True
            if isinstance(raw, str):
                text = raw
            else:
                try:
                    text = raw.decode()
                except UnicodeDecodeError:
                    text, utf8 = raw.decode(errors="backslashreplace"), False
            if number == 1:
                text = text.removeprefix(_BOM)
            if text.startswith(";"):
                self._read_header_line(text)
            elif not utf8:
                yield _rejected(number, "line", "not UTF-8 text", text)
            else:
                item = self._read_job_line(number, text)
                if item is not None:
                    yield item

    def _read_header_line(self, text: str) -> None:
        """A `; Key: value` line, or a continuation of the previous key's value."""
        match = _KEY_LINE.match(text)
        if match is not None:
            key, value = match.group(1), match.group(2).strip()
            self.header.fields.setdefault(key, []).append(value)
            self._last_key = key
            _apply(self.header, key, value)
            return
        more = text[1:].strip()
        if not more or self._last_key is None:
            return
        values = self.header.fields[self._last_key]
        values[-1] = f"{values[-1]} {more}" if values[-1] else more
        _apply(self.header, self._last_key, values[-1])

    def _read_job_line(self, line: int, text: str) -> Parsed | None:
        """A data line as a run, or why not; None for a blank line."""
        fields = text.split()
        if not fields:
            return None
        if len(fields) < len(FIELDS):
            return _rejected(line, "line", f"{len(fields)} fields; SWF has {len(FIELDS)}", text)
        # Extra columns (Alea's wagap writes 21) never shift the 18.
        fields = fields[: len(FIELDS)]
        try:
            numbers, average_cpu_time = _values(fields, plain=text.isascii() and "_" not in text)
            _check(numbers, fields)
        except _Fault as fault:
            return _rejected(line, FIELDS[fault.index], fault.reason, text)
        return self._job(line, numbers, average_cpu_time)

    def _job(self, line: int, numbers: list[int], average_cpu_time: float) -> JobRecord:
        """The run a valid line records (swf.html field definitions).

        Start is submit + wait, or the submit time when the wait is unknown (-1); a run time
        of -1 is a job that did not run: no start, end or walltime.
        """
        (
            job_number,
            submit_time,
            wait_time,
            run_time,
            allocated_processors,
            _,
            used_memory,
            requested_processors,
            requested_time,
            _,
            status,
            user_id,
            group_id,
            _,
            queue_number,
            partition_number,
            _,
            _,
        ) = numbers
        ctime = self.header.unix_start_time + submit_time
        start: int | None = None
        end: int | None = None
        walltime: int | None = None
        if run_time != -1:
            start = ctime if wait_time == -1 else ctime + wait_time
            walltime = run_time
            end = start + run_time
        ncpus = allocated_processors if allocated_processors != -1 else max(requested_processors, 0)
        # Positional, in JobRecord's field order: keywords would cost a fifth of the line's time.
        return JobRecord(
            line,
            str(job_number),  # job_id
            1 if status not in PARTIAL_STATUSES else self._partial_run(job_number),  # run
            JobState.ENDED,
            "",  # server
            "" if user_id == -1 else str(user_id),  # user
            "" if group_id == -1 else str(group_id),  # group
            "",  # account
            "",  # project
            _named(queue_number, self.header.queues),  # queue
            _named(partition_number, self.header.partitions),  # partition
            "",  # jobname
            ncpus,
            0,  # ngpus
            0,  # nodes
            None if used_memory == -1 else used_memory * 1024 * ncpus,  # memory
            None if requested_time == -1 else requested_time,  # requested_walltime
            walltime,
            None if average_cpu_time == UNKNOWN else average_cpu_time * ncpus,  # cput
            ctime,
            ctime,  # qtime
            None,  # etime
            start,
            end,
            None if status == -1 else status,  # exit_status
        )

    def _partial_run(self, job_number: int) -> int:
        """The rank of a partial-execution line among those of its job number (swf.html)."""
        run = self._partial_runs.get(job_number, 0) + 1
        self._partial_runs[job_number] = run
        return run


class _Fault(Exception):
    """A field SWF does not allow: its index in FIELDS, and why."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


def _apply(header: SwfHeader, key: str, value: str) -> None:
    """The typed header attribute a key sets; other keys stay in `fields` only."""
    if key == "UnixStartTime":
        start = _leading(_LEADING_INT, value)
        header.unix_start_time = header.unix_start_time if start is None else start
    elif key == "TimeZoneString":
        header.time_zone = value
    elif key == "MaxProcs":
        header.max_procs = _leading(_LEADING_COUNT, value)
    elif key == "MaxNodes":
        header.max_nodes = _leading(_LEADING_COUNT, value)
    elif key == "Queue":
        _add_name(header.queues, value)
    elif key == "Partition":
        _add_name(header.partitions, value)


def _leading(pattern: re.Pattern[str], value: str) -> int | None:
    """The integer a header value starts with: `338 (batch partition; 512 total)` is 338."""
    match = pattern.match(value)
    return None if match is None else int(match.group(1))


def _add_name(names: dict[str, str], value: str) -> None:
    """`1  batch` as {"1": "batch"}; a number without a name adds nothing."""
    words = value.split()
    if len(words) >= 2 and words[0].isascii() and words[0].isdigit():
        # `01` is the number data lines write as 1.
        names[words[0].lstrip("0") or "0"] = words[1]


def _values(fields: list[str], *, plain: bool) -> tuple[list[int], float]:
    """The 18 fields as integers (rounded), and the average CPU time as written (field 6)."""
    if plain:
        # Field 6 is the one the archive writes with decimals; int() takes only SWF's integers
        # from ASCII without `_`, and parses them faster than float().
        try:
            average_cpu_time = float(fields[AVERAGE_CPU_TIME])
            numbers = list(map(int, fields[:AVERAGE_CPU_TIME] + fields[AVERAGE_CPU_TIME + 1 :]))
        except ValueError:
            pass
        else:
            if average_cpu_time == UNKNOWN or 0 <= average_cpu_time < math.inf:
                numbers.insert(AVERAGE_CPU_TIME, round(average_cpu_time))
                return numbers, average_cpu_time
    floats = _floats(fields, plain=plain)
    for index, value in enumerate(floats):
        # Checked before rounding, which would turn -0.4 into 0 and -1.4 into -1.
        if value < 0 and value != UNKNOWN and index != STATUS:
            raise _Fault(index, _negative(fields[index]))
    return list(map(round, floats)), floats[AVERAGE_CPU_TIME]


def _floats(fields: list[str], *, plain: bool) -> list[float]:
    """The fields as finite floats; raises _Fault naming the first that is not a number."""
    if plain:
        try:
            floats = list(map(float, fields))
        except ValueError:
            pass
        else:
            # ASCII without `_` leaves float() only SWF's numbers, nan and inf; the sum finds those.
            if math.isfinite(sum(floats)):
                return floats
    return [_number(index, text) for index, text in enumerate(fields)]


def _number(index: int, text: str) -> float:
    """One field as a finite float, strictly as SWF writes numbers."""
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not math.isfinite(value):
        raise _Fault(index, f"not a number: {_shown(text)}")
    return value


def _check(numbers: list[int], fields: list[str]) -> None:
    """Raises _Fault for the first value SWF does not allow: a negative other than -1, or absurd."""
    if min(numbers) < -1:
        for index, number in enumerate(numbers):
            # The status field may hold raw exit codes (Sandia-Ross: -2, -4).
            if number < -1 and index != STATUS:
                raise _Fault(index, _negative(fields[index]))
    if numbers[SUBMIT_TIME] == -1:
        raise _Fault(SUBMIT_TIME, "unknown submit time: the job cannot be placed in time")
    if numbers[JOB_NUMBER] == -1:
        raise _Fault(JOB_NUMBER, "unknown job number: the run cannot be named")
    for index in (ALLOCATED_PROCESSORS, REQUESTED_PROCESSORS):
        if numbers[index] > MAX_NCPUS:
            raise _Fault(index, f"absurd: {fields[index]} processors (more than {MAX_NCPUS:,})")


def _negative(text: str) -> str:
    """Why a negative other than -1 is refused (swf.html: -1 marks a missing value)."""
    return f"negative: {_shown(text)}; only -1 (unknown) may be negative"


def _shown(text: str) -> str:
    """A field as a reason quotes it, cut so that a garbage line makes no huge reason."""
    return repr(text if len(text) <= SHOWN_LIMIT else text[:SHOWN_LIMIT] + "...")


def _named(number: int, names: dict[str, str]) -> str:
    """A queue or partition by its header name, else its number; "" when unknown."""
    if number == -1:
        return ""
    key = str(number)
    return names.get(key, key)


def _rejected(line: int, field_name: str, reason: str, text: str) -> RejectedLine:
    """The line not taken, its text without the newline and cut to TEXT_LIMIT characters."""
    return RejectedLine(line, field_name, reason, text.rstrip("\r\n")[:TEXT_LIMIT])
