"""PBS Professional / OpenPBS / Torque accounting logs (`server_priv/accounting/YYYYMMDD`).

Each line is `MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE`. `read_pbs_accounting` streams one item per
non-blank line: a JobRecord for E lines, R lines with usage, S lines that never end in the
input and Q lines whose job still waits at its end (with the JobRequest it asks); a Recognised
for every other well-formed line; a RejectedLine, naming the field, for the rest. See
FORMATS.md section 1 for the format and its quirks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields
from datetime import datetime
from itertools import repeat

from accounting.parsers.pbs_values import (
    MAX_BYTES,
    MAX_NCPUS,
    MAX_SECONDS,
    BadValue,
    beyond_any_machine,
    is_natural,
    read_count,
    read_duration,
    read_epoch,
    read_ncpus,
    read_ngpus,
    read_nodes,
    read_signed,
    read_size,
    resource_amount,
)
from accounting.parsers.records import (
    JobRecord,
    JobRequest,
    JobState,
    Parsed,
    Recognised,
    RejectedLine,
)

__all__ = [
    "KNOWN_TYPES",
    "MAX_BYTES",
    "MAX_NCPUS",
    "MAX_SECONDS",
    "QuoteError",
    "format_attributes",
    "parse_job_id",
    "quote_value",
    "read_pbs_accounting",
    "read_pbs_log",
    "record_type",
    "requested_amounts",
    "split_attributes",
]

# Record types of OpenPBS acct.h (Torque writes a subset: Q S R C T E D A).
KNOWN_TYPES = frozenset("QSsEecuDARCTazrMLUYBFKkPp")
# Records after which the job's last S is history: it ended, was requeued, deleted or aborted.
_SUPERSEDES_START = frozenset("ERDA")
MAX_TEXT = 1000  # characters of a rejected line kept in RejectedLine.text
MAX_HOST = 255  # characters of a MoM's host name kept (the job table's column)
_QUOTES = ('"', "'")
_STATES = {
    "E": JobState.ENDED,
    "R": JobState.REQUEUED,
    "S": JobState.RUNNING,
    "Q": JobState.QUEUED,
}
# Records after which a job will not start from the queue: deleted, aborted, started or over.
_SUPERSEDES_QUEUE = frozenset("SERDA")
_STATE_KINDS = {state: kind for kind, state in _STATES.items()}
# The first fields of JobRecord, in the order _job_record passes them (the rest keep defaults).
_JOB_RECORD_FIELDS = (
    *("line", "job_id", "run", "state", "server", "user", "group", "account", "project"),
    *("queue", "partition", "jobname", "ncpus", "ngpus", "nodes", "memory"),
    *("requested_walltime", "walltime", "cput", "ctime", "qtime", "etime", "start", "end"),
    *("exit_status", "extra"),
)
if (
    tuple(field.name for field in fields(JobRecord))[: len(_JOB_RECORD_FIELDS)]
    != _JOB_RECORD_FIELDS
):
    raise ImportError("records.JobRecord's fields changed: update pbs._job_record to match")
# Arguments for map(str.split, tokens, _EQUALS, _ONCE): the fastest way to split on the first =.
_EQUALS = repeat("=")
_ONCE = repeat(1)
# A record's shape, to tell a log with bad records from a file of another kind: a date and a
# time, a one-character type between ';'s, an id and a message.
_RECORD_SHAPE = "MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE"
_SHAPE = re.compile(rb"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[^;];[^;]*;")
# What accounting.c prints after the date: ` HH:MM:SS` of struct tm (which has leap seconds).
_TIME_OF_DAY = re.compile(r" (?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)", re.ASCII).fullmatch


class QuoteError(ValueError):
    """A value that opens a quote and never closes it (OpenPBS accounting.c cpy_quote_value)."""

    def __init__(self, key: str, quote: str, column: int) -> None:
        super().__init__(f"{key}: the {quote} opened at column {column} is never closed")
        self.key = key
        self.quote = quote
        self.column = column  # 0-based offset in the message of the opening quote


def quote_value(value: str) -> str:
    """A value as OpenPBS accounting.c cpy_quote_value writes it."""
    if " " not in value:
        return value
    if '"' in value:
        return f"'{value}'"
    return f'"{value}"'


def format_attributes(pairs: Iterable[tuple[str, str]]) -> str:
    """`key=value` tokens as OpenPBS accounting.c writes a message, without its trailing space."""
    return " ".join(f"{key}={quote_value(value)}" for key, value in pairs)


def split_attributes(message: str) -> list[tuple[str, str]]:
    """The `key=value` pairs of a message as OpenPBS accounting.c cpy_quote_value wrote them."""
    tokens = message.split(" ")
    if '"' not in message and "'" not in message:
        pairs = []
        for token in tokens:
            if token:
                key, equals, value = token.partition("=")
                if not equals:
                    raise ValueError(f"no '=' in {token!r}")
                pairs.append((key, value))
        return pairs
    return _split_quoted(tokens)


def _split_quoted(tokens: list[str]) -> list[tuple[str, str]]:
    """split_attributes for a message with quotes: a quoted value may span several tokens.

    cpy_quote_value has no escapes, so a value opening with a quote runs to the first same quote
    that ends a space-separated piece; a quote followed by anything else is part of the value
    (`'it's "x"'` is `it's "x"`). Raises ValueError for a token without `=`, QuoteError.
    """
    pairs: list[tuple[str, str]] = []
    count = len(tokens)
    index = 0
    offset = 0  # of tokens[index] in the message
    while index < count:
        token = tokens[index]
        index += 1
        if not token:
            offset += 1
            continue
        key, equals, value = token.partition("=")
        if not equals:
            raise ValueError(f"no '=' in {token!r}")
        quote = value[:1]
        if quote in _QUOTES and (len(value) < 2 or value[-1] != quote):
            # The closing quote is the first one that ends a space-separated piece.
            pieces = [value]
            while index < count and not tokens[index].endswith(quote):
                pieces.append(tokens[index])
                index += 1
            if index == count:
                raise QuoteError(key, quote, offset + len(key) + 1)
            pieces.append(tokens[index])
            index += 1
            value = " ".join(pieces)
            token = f"{key}={value}"
        if quote in _QUOTES:
            value = value[1:-1]
        pairs.append((key, value))
        offset += len(token) + 1
    return pairs


def _attribute_map(message: str) -> dict[str, str]:
    """split_attributes as a dict (the last of duplicate keys wins), fast on PBS's usual lines."""
    tokens = message.split(" ")
    if not tokens[-1]:
        del tokens[-1]  # most Q, S and E messages end with a space
    try:
        attributes = dict(map(str.split, tokens, _EQUALS, _ONCE))
    except ValueError:  # a run of spaces, a token without '=', an empty message
        return dict(split_attributes(message))
    if not _unquote(attributes, message):
        return dict(split_attributes(message))  # a quoted value with spaces in it
    return attributes


def _unquote(attributes: dict[str, str], message: str) -> bool:
    """Unquote the values of `attributes`, read one token each; False if a quote spans tokens."""
    for quote in _QUOTES:
        position = message.find(quote)
        while position >= 0:  # PBS Pro's account="X": once a line
            start = message.rfind(" ", 0, position) + 1
            end = message.find(" ", position)
            if end < 0:
                end = len(message)
            key, _, value = message[start:end].partition("=")
            if value[:1] in _QUOTES:
                if len(value) < 2 or value[-1] != value[0]:
                    return False
                if attributes[key] == value:  # not overridden by a later duplicate key
                    attributes[key] = value[1:-1]
            position = message.find(quote, end)
    return True


def parse_job_id(text: str) -> tuple[str, str]:
    """Job id and server of an OpenPBS or Torque id `<seq>[<index>].<server>`; a bare `6` too."""
    sequence, dot, server = text.partition(".")
    if sequence.isdigit() and sequence.isascii() and len(sequence) <= 30 and (server or not dot):
        return sequence, server
    if dot and not server:
        raise ValueError(f"not a job id: {text!r} (empty server)")
    number, bracket, index = sequence.partition("[")
    if bracket and not (index == "]" or (index.endswith("]") and is_natural(index[:-1]))):
        raise ValueError(f"not a job id: {text!r}")
    if not is_natural(number):
        raise ValueError(f"not a job id: {text!r}")
    return sequence, server


def record_type(item: Parsed) -> str:
    """The acct.h record type (E, R, S, Q...) a parsed item stands for; "" for a RejectedLine."""
    if isinstance(item, Recognised):
        return item.kind
    if isinstance(item, JobRecord):
        return _STATE_KINDS[item.state]
    return ""


def read_pbs_accounting(lines: Iterable[bytes | str]) -> Iterator[Parsed]:
    """One item per non-blank line of an OpenPBS or Torque accounting log (write_account_record)."""
    # An S waits for the record that ends its run: an E, R, D or A of the same id makes it a
    # Recognised (the E holds all the S says), so it is never tokenised; the S lines left at the
    # end are the jobs still running. Memory grows with the jobs running at once, not the file.
    started: dict[str, tuple[int, str, str]] = {}  # id -> line number, line, message
    # A Q waits the same way for its job's S, E, R, D or A; the Q lines left at the end are
    # the jobs still queued.
    queued: dict[str, tuple[int, str, str]] = {}
    last_day = ""
    for number, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            try:
                text = raw.decode()
            except UnicodeDecodeError:
                yield _binary(number, raw.decode(errors="backslashreplace"))
                continue
        else:
            text = raw
            if not text.isascii() and not _is_utf8(text):
                yield _binary(number, text.encode(errors="backslashreplace").decode())
                continue
        text = text.rstrip("\r\n")
        if not text or text.isspace():
            continue
        if "\x00" in text:
            yield _binary(number, text)
            continue
        parts = text.split(";", 3)
        if len(parts) != 4:
            reason = "not an accounting record: fewer than 3 ';'"
            yield _rejected(number, "line", reason, text)
            continue
        stamp, kind, ident, message = parts
        day = stamp[:10]
        if _TIME_OF_DAY(stamp, 10) is None or (day != last_day and not _is_date(day)):
            reason = f"not a MM/DD/YYYY HH:MM:SS time: {stamp[:40]!r}"
            yield _rejected(number, "time", reason, text)
            continue
        last_day = day
        if kind not in KNOWN_TYPES:
            yield _rejected(number, "type", f"unknown record type {kind[:40]!r}", text)
            continue
        if kind == "Q":
            earlier = queued.pop(ident, None)
            if earlier is not None:
                yield Recognised(earlier[0], "Q")
            queued[ident] = (number, text, message)
            continue
        if kind in _SUPERSEDES_QUEUE:
            waiting = queued.pop(ident, None)
            if waiting is not None:
                yield Recognised(waiting[0], "Q")
        if kind == "S":
            earlier = started.pop(ident, None)
            if earlier is not None:
                yield Recognised(earlier[0], "S")
            started[ident] = (number, text, message)
            continue
        if kind in _SUPERSEDES_START:
            earlier = started.pop(ident, None)
            if earlier is not None:
                yield Recognised(earlier[0], "S")
            if kind == "E" or (kind == "R" and "resources_used." in message):
                yield _job_run(number, text, kind, ident, message)
                continue
            if kind in "DA":
                yield Recognised(number, kind, _job_id_or_blank(ident))
                continue
        yield Recognised(number, kind)
    for ident, (number, text, message) in queued.items():
        yield _job_run(number, text, "Q", ident, message)
    for ident, (number, text, message) in started.items():
        yield _job_run(number, text, "S", ident, message)


def _job_id_or_blank(ident: str) -> str:
    """The job id of a record's id field, or "" when it is not one."""
    try:
        return parse_job_id(ident)[0]
    except ValueError:
        return ""


def read_pbs_log(lines: Iterable[bytes | str]) -> Iterator[Parsed]:
    """read_pbs_accounting for a whole file: when none of its lines has a record's shape, it is
    another kind of file, and one more RejectedLine (field `file`, on its last line) says so."""
    watch = _ShapeWatch()
    yield from read_pbs_accounting(watch.lines(lines))
    if watch.unshaped and not watch.shaped:
        count = watch.unshaped
        which = "its only line has no" if count == 1 else f"none of its {count} lines has a"
        reason = f"not a PBS accounting log: {which} record's shape ({_RECORD_SHAPE})"
        yield RejectedLine(line=watch.last, field="file", reason=reason, text="")


class _ShapeWatch:
    """Passes lines on, counting the non-blank ones until one has a record's shape."""

    def __init__(self) -> None:
        self.shaped = False
        self.unshaped = 0
        self.last = 0  # the number of the last non-blank line counted

    def lines(self, lines: Iterable[bytes | str]) -> Iterator[bytes | str]:
        remaining = iter(lines)
        for number, line in enumerate(remaining, 1):
            raw = line if isinstance(line, bytes) else line.encode(errors="replace")
            if _SHAPE.match(raw):
                self.shaped = True
                yield line
                yield from remaining  # the rest unwatched, at full speed
                return
            if not _is_blank(raw):
                self.unshaped, self.last = self.unshaped + 1, number
            yield line


def _is_blank(raw: bytes) -> bool:
    """Whether read_pbs_accounting skips the line (gives it no item)."""
    try:
        text = raw.decode().rstrip("\r\n")
    except UnicodeDecodeError:
        return False
    return not text or text.isspace()


def _job_run(line: int, text: str, kind: str, ident: str, message: str) -> Parsed:
    """The item for an E, R, S or Q line: its JobRecord, or why it cannot be taken."""
    try:
        job_id, server = parse_job_id(ident)
    except ValueError as error:
        return _rejected(line, "id", str(error), text)
    if kind == "E" and job_id.endswith("[]"):
        return Recognised(line, "E", job_id)  # an array parent: its subjobs carry the usage
    try:
        attributes = _attribute_map(message)
        if kind == "Q" and attributes.keys() <= {"queue"}:
            # OpenPBS's own Q record says only queue=: a job waits, its owner is not told
            # (qstat -f -F json gives the queue with its owners).
            return Recognised(line, "Q")
        return _job_record(line, kind, job_id, server, attributes)
    except QuoteError as error:
        reason = f"unmatched {error.quote} opened at column {error.column} of the message"
        return _rejected(line, error.key, reason, text)
    except BadValue as bad:
        return _rejected(line, bad.field, bad.reason, text)
    except ValueError as error:
        return _rejected(line, "line", str(error), text)


def _job_record(
    line: int, kind: str, job_id: str, server: str, attributes: Mapping[str, str]
) -> JobRecord:
    """A JobRecord from the attributes of an E, R, S or Q message; raises BadValue. A Q is
    the job waiting: run 0 (its first run will be 1), what it asks for (also as its request's
    resources), no start."""
    get = attributes.get
    queued = kind == "Q"
    if queued and not get("user"):
        # Charged to no one, the job would make an entity named ":" under unknown.
        raise BadValue("user", "Q record without user: the queued job has no entity to wait as")
    start = None if queued else read_epoch(attributes, "start")
    if not start and not queued:  # start=0 is how PBS says the job never started
        raise BadValue("start", f"{kind} record without start time")
    ncpus, ngpus, nodes = read_ncpus(attributes), read_ngpus(attributes), read_nodes(attributes)
    if ncpus > MAX_NCPUS or ngpus > MAX_NCPUS or nodes > MAX_NCPUS:
        raise beyond_any_machine(ncpus, ngpus, nodes)
    run = 0 if queued else read_count(attributes, "run_count")
    extra: dict[str, float] = {}
    if start is None or kind == "S":  # waiting (a Q has no start) or running: nothing used yet
        end = walltime = cput = memory = exit_status = None
    else:
        end, walltime, cput, memory, exit_status = _usage(kind, start, attributes, extra)
    if "mpiprocs" not in extra:
        mpiprocs = read_count(attributes, "Resource_List.mpiprocs")
        if mpiprocs is not None:
            extra["mpiprocs"] = mpiprocs
    # By position, in _JOB_RECORD_FIELDS order: keywords take three times as long.
    record = JobRecord(
        line,
        job_id,
        1 if run is None else run,
        _STATES[kind],
        server,
        get("user", ""),
        get("group", ""),
        get("account", ""),
        get("project", ""),
        get("queue", ""),
        "",  # partition: PBS has none
        get("jobname", ""),
        ncpus,
        ngpus,
        nodes,
        memory,
        read_duration(attributes, "Resource_List.walltime"),
        walltime,
        cput,
        read_epoch(attributes, "ctime"),
        read_epoch(attributes, "qtime"),
        read_epoch(attributes, "etime") or None,  # etime=0: not eligible yet
        start,
        end,
        exit_status,
        extra,
    )
    if queued:
        record.request = JobRequest(resources=requested_amounts(attributes))
    else:
        exec_host = get("exec_host")
        if exec_host:
            record.mom = exec_host.split("/", 1)[0].split("+", 1)[0][:MAX_HOST]
    return record


_REQUESTED = "Resource_List."


def requested_amounts(attributes: Mapping[str, str]) -> dict[str, float]:
    """The numeric `Resource_List.*` amounts by resource name, as the scheduler hands them to
    job_sort_formula (resource_amount: sizes in kB, times in seconds); strings are left out."""
    amounts: dict[str, float] = {}
    for key, value in attributes.items():
        if key.startswith(_REQUESTED):
            amount = resource_amount(value)
            if amount is not None:
                amounts[key[len(_REQUESTED) :]] = amount
    return amounts


def _usage(
    kind: str, start: int, attributes: Mapping[str, str], extra: dict[str, float]
) -> tuple[int, int, int | None, int | None, int | None]:
    """End, walltime, cput, memory and exit status of an E or R record; raises BadValue.

    The other used resources go into `extra`.
    """
    end = read_epoch(attributes, "end")
    if end is None:
        raise BadValue("end", f"{kind} record without end time")
    if end < start:
        raise BadValue("end", f"the job ends before it starts: end={end} < start={start}")
    walltime = read_duration(attributes, "resources_used.walltime")
    vmem = read_size(attributes, "resources_used.vmem")
    if vmem is not None:
        extra["vmem"] = vmem
    for name in ("cpupercent", "mpiprocs"):
        count = read_count(attributes, "resources_used." + name)
        if count is not None:
            extra[name] = count
    return (
        end,
        end - start if walltime is None else walltime,
        read_duration(attributes, "resources_used.cput"),
        read_size(attributes, "resources_used.mem"),
        read_signed(attributes, "Exit_status"),
    )


def _is_date(day: str) -> bool:
    """Whether `day` is a valid `MM/DD/YYYY` as accounting.c prints it."""
    if len(day) != 10 or day[2] != "/" or day[5] != "/":
        return False
    month, day_of_month, year = day[0:2], day[3:5], day[6:10]
    if not (month + day_of_month + year).isdigit() or not day.isascii():
        return False
    try:
        datetime(int(year), int(month), int(day_of_month))
    except ValueError:
        return False
    return True


def _is_utf8(text: str) -> bool:
    """Whether a str line can be stored as UTF-8 (lone surrogates cannot)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _binary(line: int, text: str) -> RejectedLine:
    printable = text.rstrip("\r\n").replace("\x00", "\\x00")
    return _rejected(line, "line", "binary data, not an accounting record", printable)


def _rejected(line: int, field: str, reason: str, text: str) -> RejectedLine:
    return RejectedLine(line=line, field=field, reason=reason, text=text[:MAX_TEXT])
