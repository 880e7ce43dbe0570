"""PBS Professional / OpenPBS / Torque accounting logs (`server_priv/accounting/YYYYMMDD`).

Each line is `MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE`. `read_pbs_accounting` streams one item per
non-blank line: a JobRecord for E lines, R lines with usage and S lines that never end in the
input; a Recognised for every other well-formed line; a RejectedLine, naming the field, for
the rest. See FORMATS.md section 1 for the format and its quirks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import fields
from datetime import datetime
from functools import lru_cache
from itertools import repeat
from typing import TypeVar

from accounting.parsers.records import JobRecord, JobState, Parsed, Recognised, RejectedLine
from accounting.parsers.units import parse_duration, parse_size

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
    "split_attributes",
]

# Record types of OpenPBS acct.h (Torque writes a subset: Q S R C T E D A).
KNOWN_TYPES = frozenset("QSsEecuDARCTazrMLUYBFKkPp")
# Records after which the job's last S is history: it ended, was requeued, deleted or aborted.
_SUPERSEDES_START = frozenset("ERDA")
MAX_NCPUS = 10_000_000  # above any machine built or planned; a bigger count is corruption
MAX_SECONDS = 10**15  # epochs and durations: fits int64 and is exact as a float
MAX_BYTES = 2**60  # one EiB used by a single job
MAX_TEXT = 1000  # characters of a rejected line kept in RejectedLine.text
_QUOTES = ('"', "'")
_STATES = {"E": JobState.ENDED, "R": JobState.REQUEUED, "S": JobState.RUNNING}
_STATE_KINDS = {state: kind for kind, state in _STATES.items()}
_T = TypeVar("_T")
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
_SIZE_UNITS = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
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


class _Bad(Exception):
    """A field of a job record that cannot be taken; becomes a RejectedLine."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


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
    if bracket and not (index == "]" or (index.endswith("]") and _is_natural(index[:-1]))):
        raise ValueError(f"not a job id: {text!r}")
    if not _is_natural(number):
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
        yield Recognised(number, kind)
    for ident, (number, text, message) in started.items():
        yield _job_run(number, text, "S", ident, message)


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
    """The item for an E, R or S line: its JobRecord, or why it cannot be taken."""
    try:
        job_id, server = parse_job_id(ident)
    except ValueError as error:
        return _rejected(line, "id", str(error), text)
    if kind == "E" and job_id.endswith("[]"):
        return Recognised(line, "E")  # an array parent: its subjobs carry the usage
    try:
        attributes = _attribute_map(message)
        return _job_record(line, kind, job_id, server, attributes)
    except QuoteError as error:
        reason = f"unmatched {error.quote} opened at column {error.column} of the message"
        return _rejected(line, error.key, reason, text)
    except _Bad as bad:
        return _rejected(line, bad.field, bad.reason, text)
    except ValueError as error:
        return _rejected(line, "line", str(error), text)


def _job_record(
    line: int, kind: str, job_id: str, server: str, attributes: Mapping[str, str]
) -> JobRecord:
    """A JobRecord from the attributes of an E, R or S message; raises _Bad."""
    get = attributes.get
    start = _epoch(attributes, "start")
    if not start:  # start=0 is how PBS says the job never started
        raise _Bad("start", f"{kind} record without start time")
    ncpus, ngpus, nodes = _ncpus(attributes), _ngpus(attributes), _nodes(attributes)
    if ncpus > MAX_NCPUS or ngpus > MAX_NCPUS or nodes > MAX_NCPUS:
        raise _beyond_any_machine(ncpus, ngpus, nodes)
    run = _count(attributes, "run_count")
    extra: dict[str, float] = {}
    if kind == "S":
        end = walltime = cput = memory = exit_status = None
    else:
        end, walltime, cput, memory, exit_status = _usage(kind, start, attributes, extra)
    if "mpiprocs" not in extra:
        mpiprocs = _count(attributes, "Resource_List.mpiprocs")
        if mpiprocs is not None:
            extra["mpiprocs"] = mpiprocs
    # By position, in _JOB_RECORD_FIELDS order: keywords take three times as long.
    return JobRecord(
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
        _duration(attributes, "Resource_List.walltime"),
        walltime,
        cput,
        _epoch(attributes, "ctime"),
        _epoch(attributes, "qtime"),
        _epoch(attributes, "etime") or None,  # etime=0: not eligible yet
        start,
        end,
        exit_status,
        extra,
    )


def _usage(
    kind: str, start: int, attributes: Mapping[str, str], extra: dict[str, float]
) -> tuple[int, int, int | None, int | None, int | None]:
    """End, walltime, cput, memory and exit status of an E or R record; raises _Bad.

    The other used resources go into `extra`.
    """
    end = _epoch(attributes, "end")
    if end is None:
        raise _Bad("end", f"{kind} record without end time")
    if end < start:
        raise _Bad("end", f"the job ends before it starts: end={end} < start={start}")
    walltime = _duration(attributes, "resources_used.walltime")
    vmem = _size(attributes, "resources_used.vmem")
    if vmem is not None:
        extra["vmem"] = vmem
    for name in ("cpupercent", "mpiprocs"):
        count = _count(attributes, "resources_used." + name)
        if count is not None:
            extra[name] = count
    return (
        end,
        end - start if walltime is None else walltime,
        _duration(attributes, "resources_used.cput"),
        _size(attributes, "resources_used.mem"),
        _signed(attributes, "Exit_status"),
    )


def _beyond_any_machine(ncpus: int, ngpus: int, nodes: int) -> _Bad:
    """The rejection of a job with more than MAX_NCPUS cores, GPUs or nodes."""
    if ncpus > MAX_NCPUS:
        field, count, what = "ncpus", ncpus, "cores"
    elif ngpus > MAX_NCPUS:
        field, count, what = "ngpus", ngpus, "GPUs"
    else:
        field, count, what = "nodes", nodes, "nodes"
    return _Bad(field, f"{count} {what} is beyond any machine (the limit is {MAX_NCPUS})")


def _ncpus(attributes: Mapping[str, str]) -> int:
    """Cores of the run: used, else placed (exec_host), else requested."""
    ncpus = _count(attributes, "resources_used.ncpus")
    if ncpus:
        return ncpus
    exec_host = attributes.get("exec_host")
    if exec_host:
        ncpus = _derived("exec_host", _exec_host_cpus, exec_host)
        if ncpus:
            return ncpus
    select = attributes.get("Resource_List.select")
    if select:
        ncpus = _derived("Resource_List.select", _select_totals, select)[1]
        if ncpus:
            return ncpus
    key, spec = _torque_nodes(attributes)
    if spec:
        ncpus = _derived(key, _nodes_totals, spec)[1]
        if ncpus:
            return ncpus
    return _count(attributes, "Resource_List.ncpus") or 0


def _ngpus(attributes: Mapping[str, str]) -> int:
    """GPUs of the run: used, else requested (ngpus, Torque gpu, select, Torque nodes)."""
    for key in ("resources_used.ngpus", "Resource_List.ngpus", "Resource_List.gpu"):
        if key in attributes:
            ngpus = _count(attributes, key)
            if ngpus:
                return ngpus
    select = attributes.get("Resource_List.select")
    if select:
        ngpus = _derived("Resource_List.select", _select_totals, select)[2]
        if ngpus:
            return ngpus
    key, spec = _torque_nodes(attributes)
    if spec:
        return _derived(key, _nodes_totals, spec)[2]
    return 0


def _nodes(attributes: Mapping[str, str]) -> int:
    """Nodes of the run: nodect, else hosts in exec_host, else the Torque nodes or select spec."""
    nodect = attributes.get("Resource_List.nodect")
    if nodect and nodect.isdigit() and nodect.isascii() and len(nodect) <= 30:
        return int(nodect)
    if nodect:
        # Torque has been seen writing a node spec here: `1:ppn=24:gpu=4:reqmem=...`.
        return _derived("Resource_List.nodect", _leading_natural, nodect)
    exec_host = attributes.get("exec_host")
    if exec_host:
        return len({entry.partition("/")[0] for entry in exec_host.split("+")})
    key, spec = _torque_nodes(attributes)
    if spec:
        return _derived(key, _nodes_totals, spec)[0]
    select = attributes.get("Resource_List.select")
    if select:
        return _derived("Resource_List.select", _select_totals, select)[0]
    return 0


def _torque_nodes(attributes: Mapping[str, str]) -> tuple[str, str]:
    """The Torque node spec and the key it came from (`nodes`, else `neednodes`)."""
    for key in ("Resource_List.nodes", "Resource_List.neednodes"):
        spec = attributes.get(key)
        if spec:
            return key, spec
    return "", ""


def _exec_host_cpus(exec_host: str) -> int:
    """Cores in an exec_host: PBS Pro `host/0*36`, Torque `n/11+n/10`, `n/0-27`, `n/0,2-3`."""
    total = 0
    for entry in exec_host.split("+"):
        host, slash, slots = entry.partition("/")
        if not host:
            raise ValueError(f"no host in {entry!r}")
        if not slash:
            total += 1
            continue
        index, star, ncpus = slots.partition("*")
        if star:
            if not _is_natural(index):
                raise ValueError(f"not a slot index: {index!r}")
            total += _natural(ncpus)
            continue
        for part in slots.split(","):
            first, dash, last = part.partition("-")
            low = _natural(first)
            high = _natural(last) if dash else low
            if high < low:
                raise ValueError(f"empty slot range {part!r}")
            total += high - low + 1
    return total


@lru_cache(maxsize=4096)  # a site has few distinct selects; parse each once
def _select_totals(select: str) -> tuple[int, int, int]:
    """Chunks, cores and GPUs of a PBS Pro select, `2:ncpus=12:ngpus=1+1:ncpus=4`."""
    chunks = ncpus = ngpus = 0
    for chunk in select.split("+"):
        if not chunk:
            raise ValueError(f"empty chunk in {select!r}")
        count = 1
        resources = chunk.split(":")
        if _is_natural(resources[0]):
            count = _natural(resources[0])
            del resources[0]
        cpus, gpus = 1, 0  # a chunk asks one core unless it says
        for resource in resources:
            name, _, value = resource.partition("=")
            if name == "ncpus":
                cpus = _natural(value)
            elif name == "ngpus":
                gpus = _natural(value)
        chunks += count
        ncpus += count * cpus
        ngpus += count * gpus
    return chunks, ncpus, ngpus


@lru_cache(maxsize=4096)
def _nodes_totals(spec: str) -> tuple[int, int, int]:
    """Nodes, cores and GPUs of a Torque spec: `4:ppn=8`, `host1:ppn=2+host2:ppn=2`, `2`."""
    nodes = ncpus = ngpus = 0
    for chunk in spec.split("+"):
        first, *properties = chunk.split(":")
        if not first:
            raise ValueError(f"empty node spec in {spec!r}")
        count = _natural(first) if first[0].isdigit() else 1  # else a host name
        ppn, gpus = 1, 0
        for item in properties:
            name, _, value = item.partition("=")
            if name == "ppn":
                ppn = _leading_natural(value)  # Torque allows `ppn=4#excl`
            elif name == "gpus":
                gpus = _leading_natural(value)
        nodes += count
        ncpus += count * ppn
        ngpus += count * gpus
    return nodes, ncpus, ngpus


def _derived(key: str, parse: Callable[[str], _T], value: str) -> _T:
    """parse(value), its ValueError as the rejection of `key`."""
    try:
        return parse(value)
    except ValueError as error:
        raise _Bad(key, f"{error} in {value[:100]!r}") from None


def _is_natural(text: str) -> bool:
    """ASCII digits only, short enough for int() (str.isdigit also takes `²` and `٣`)."""
    return text.isdigit() and text.isascii() and len(text) <= 30


def _natural(text: str) -> int:
    """The value of a count written in ASCII digits; raises ValueError."""
    if not _is_natural(text):
        raise ValueError(f"not a count: {text[:40]!r}")
    return int(text)


def _leading_natural(text: str) -> int:
    """The count a value starts with: `1` of `1:ppn=24:gpu=4`, `4` of `4#excl`."""
    end = 0
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    return _natural(text[:end])


def _epoch(attributes: Mapping[str, str], key: str) -> int | None:
    """An epoch time in seconds, or None when absent; raises _Bad."""
    value = attributes.get(key)
    if value is None:
        return None
    if value.isdigit() and value.isascii() and len(value) <= 30:
        seconds = int(value)
        if seconds <= MAX_SECONDS:
            return seconds
        raise _Bad(key, f"{seconds} is beyond any clock")
    if value[:1] == "-":
        raise _Bad(key, f"negative time: {value[:40]!r}")
    raise _Bad(key, f"not an epoch time: {value[:40]!r}")


def _count(attributes: Mapping[str, str], key: str) -> int | None:
    """A count (ncpus, run_count...), or None when absent; raises _Bad."""
    value = attributes.get(key)
    if value is None:
        return None
    if value.isdigit() and value.isascii() and len(value) <= 30:
        return int(value)
    if value[:1] == "-":
        raise _Bad(key, f"negative count: {value[:40]!r}")
    raise _Bad(key, f"not a count: {value[:40]!r}")


def _signed(attributes: Mapping[str, str], key: str) -> int | None:
    """A signed integer (Exit_status: negative for PBS's JOB_EXEC codes), or None; raises _Bad."""
    value = attributes.get(key)
    if value is None:
        return None
    digits = value[1:] if value[:1] == "-" else value
    if not _is_natural(digits):
        raise _Bad(key, f"not an integer: {value[:40]!r}")
    return int(value)


def _duration(attributes: Mapping[str, str], key: str) -> int | None:
    """Seconds of a `[[H+:]MM:]SS` duration, or None when absent; raises _Bad."""
    value = attributes.get(key)
    if value is None:
        return None
    try:
        seconds = _seconds(value)
    except (ValueError, OverflowError):  # OverflowError: a number too big for a float
        if value[:1] == "-":
            raise _Bad(key, f"negative duration: {value[:40]!r}") from None
        raise _Bad(key, f"not a duration: {value[:40]!r}") from None
    if seconds > MAX_SECONDS:
        raise _Bad(key, f"{seconds} seconds is beyond any clock")
    return seconds


@lru_cache(maxsize=8192)  # requested walltimes repeat, and so do short used ones
def _seconds(value: str) -> int:
    """parse_duration, with what PBS writes (`H+:MM:SS`) parsed without its regex."""
    try:
        hours, minutes, seconds = value.split(":")
    except ValueError:  # not two colons
        return parse_duration(value)
    if (hours + minutes + seconds).isdigit() and value.isascii():
        return int(hours) * 3600 + int(minutes) * 60 + int(seconds)  # int("") raises, as it should
    return parse_duration(value)


def _size(attributes: Mapping[str, str], key: str) -> int | None:
    """Bytes of a PBS size (`29097252kb`, `12.27M`), or None when absent; raises _Bad."""
    value = attributes.get(key)
    if value is None:
        return None
    scale = _SIZE_UNITS.get(value[-2:])
    number = value[:-2]
    if scale and number.isdigit() and number.isascii() and len(number) <= 30:
        size = int(number) * scale  # what PBS writes, `29097252kb`, without parse_size's regex
    elif value[:1] == "-":
        raise _Bad(key, f"negative size: {value[:40]!r}")
    else:
        try:
            size = parse_size(value)
        except (ValueError, OverflowError):  # OverflowError: a number too big for a float
            raise _Bad(key, f"not a size: {value[:40]!r}") from None
    if size > MAX_BYTES:
        raise _Bad(key, f"{size} bytes is beyond any machine")
    return size


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
