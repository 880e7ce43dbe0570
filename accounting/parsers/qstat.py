"""OpenPBS / PBS Professional `qstat -f -F json`: a snapshot of the jobs the server holds.

Shape (OpenPBS src/cmds/qstat.c, PBS Pro 19 and later): `{"timestamp": <epoch>, "pbs_version",
"pbs_server", "Jobs": {"<seq>.<server>": {attribute: value, "Resource_List": {...}, ...}}}`.
qstat puts each value through cJSON: what parses as JSON (`64`, `0.0615`) is a number, the rest
(`"True"`, `"01:00:00"`, `"2gb"`) a string. ctime, qtime, etime, stime and mtime are printed
with ctime(3) (`"Sat Dec  3 20:25:38 2022"`) in the local time of the host that ran qstat, so
the reader takes that zone. Without any job, qstat writes no `Jobs` at all.

The document is streamed (json_stream: read whole once to know it is JSON, then a job at a
time), so memory holds one job; items name the line where their job's key is. A file that is
not JSON is one RejectedLine with the line and column the JSON parser stopped at: older qstat
wrote invalid JSON (unescaped `\\'` and `\\,` from Variable_List, OpenPBS #2049 and #2541;
numbers such as `005`, #1255).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any, TypeVar

from accounting.parsers.json_stream import Envelope, JsonSnapshot, storable
from accounting.parsers.pbs import parse_job_id
from accounting.parsers.pbs_values import (
    MAX_NCPUS,
    BadValue,
    beyond_any_machine,
    read_count,
    read_duration,
    read_ncpus,
    read_ngpus,
    read_nodes,
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
    "HELD_STATES",
    "QstatJsonReader",
    "read_qstat_json",
]

# Waiting states the scheduler does not start a job from (so its priority does not rank it):
HELD_STATES = {
    "H": "held: a hold (Hold_Types u, o, s or p) keeps the scheduler from considering it",
    "W": "waiting for its execution time (qsub -a) or a stage-in: not eligible yet",
    "T": "in transit to another queue or server: no scheduler considers it meanwhile",
    "U": "suspended because its workstation is busy: it resumes when the host is idle",
    "S": "suspended (preempted, or qsig -s suspend): it resumes, it is not started again",
}
_RUNNING_STATES = frozenset("RE")  # running, and exiting (its run is ending now)
_OTHER_STATES = frozenset("BFXM")  # array begun, finished, subjob expired, moved
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
# ctime(3): `Www Mmm dd hh:mm:ss yyyy`, the day padded with a space.
_CTIME = re.compile(
    r"[A-Z][a-z]{2} ([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})", re.ASCII
)
_T = TypeVar("_T")


class QstatJsonReader:
    """The items of one `qstat -f -F json` snapshot; iterate it once.

    `timestamp` (qstat's `time(NULL)` when it asked the server), `pbs_version` and
    `pbs_server` are set before the first item is yielded. A queued job's request carries the
    timestamp too (`JobRequest.sampled`), since its eligible_time was accrued by then.
    """

    def __init__(
        self, lines: Iterable[bytes | str], *, tz: tzinfo, skipped: Sequence[int] = ()
    ) -> None:
        self._lines = lines
        self._tz = tz
        self._skipped = skipped
        self.timestamp: int | None = None
        self.pbs_version = ""
        self.pbs_server = ""

    def __iter__(self) -> Iterator[Parsed]:
        hint = (
            "; qstat has written invalid JSON: Variable_List characters left unescaped"
            " (OpenPBS #2049, #2541), numbers such as 005 (#1255)"
        )
        snapshot = JsonSnapshot(
            self._lines,
            what="qstat -f -F json",
            container="Jobs",
            keep=("timestamp", "pbs_version", "pbs_server"),
            named=("timestamp", "Queue", "Server", "nodes"),
            hint=hint,
            skipped=self._skipped,
        )
        envelope = snapshot.envelope()
        if isinstance(envelope, RejectedLine):
            yield envelope
            return
        if envelope.kind != "dict":
            reason = f"a JSON {envelope.kind}, not qstat -f -F json's object"
            yield RejectedLine(1, "file", reason, envelope.first_line)
            return
        problem = self._read_header(envelope)
        if problem is not None:
            yield problem
        if envelope.container in (None, "NoneType"):
            return  # qstat writes no Jobs when the server has none
        if envelope.container != "dict":
            line, text = envelope.lines["Jobs"]
            yield RejectedLine(line, "Jobs", "not an object of jobs by id", text)
            return
        for entry in snapshot.entries():
            if entry.refused:
                yield RejectedLine(entry.line, f"Jobs.{entry.key}", entry.refused, entry.text)
                continue
            try:
                yield self._job(entry.line, entry.key, entry.value)
            except BadValue as bad:
                yield RejectedLine(entry.line, bad.field, bad.reason, entry.text)

    def _read_header(self, envelope: Envelope) -> RejectedLine | None:
        """Take the snapshot's timestamp, version and server; a RejectedLine if it is not one."""
        top = envelope.members
        first = (1, envelope.first_line)
        others = [key for key in ("Queue", "Server", "nodes") if key in envelope.lines]
        if envelope.container is None and others:
            line, text = envelope.lines[others[0]]
            reason = f"not qstat -f -F json: no Jobs but {others[0]}, as qstat -Q, -B or pbsnodes"
            return RejectedLine(line, "file", reason, text)
        if envelope.container is None and "timestamp" not in top:
            reason = "not qstat -f -F json: no Jobs and no timestamp"
            return RejectedLine(1, "file", reason, envelope.first_line)
        self.pbs_version = _text(top.get("pbs_version"))
        self.pbs_server = _text(top.get("pbs_server"))
        stamp = top.get("timestamp")
        if stamp is None:
            return None
        if _is_number(stamp) and 0 <= stamp < 2**53:
            self.timestamp = int(stamp)
            return None
        line, text = envelope.lines.get("timestamp", first)
        return RejectedLine(line, "timestamp", f"not an epoch time: {_shown(stamp)}", text)

    def _job(self, line: int, ident: str, attributes: object) -> Parsed:
        """The item for one entry of Jobs; raises BadValue naming `Jobs.<id>.<key>`."""
        where = f"Jobs.{ident}"
        if not isinstance(attributes, dict):
            raise BadValue(where, f"not an object of attributes: {_shown(attributes)}")
        try:
            job_id, server = parse_job_id(ident)
        except ValueError as error:
            raise BadValue(where, str(error)) from None
        owner = attributes.get("euser") or attributes.get("Job_Owner")
        missing = [key for key in ("job_state", "queue") if not attributes.get(key)]
        if not owner:
            missing.append("Job_Owner")
        if missing:
            field = f"{where}.{missing[0]}"
            raise BadValue(field, f"job {ident} has no {', '.join(missing)}")
        state = _text(attributes["job_state"])
        if state in _OTHER_STATES:
            return Recognised(line, state, job_id if state in "FX" else "")
        if state != "Q" and state not in HELD_STATES and state not in _RUNNING_STATES:
            raise BadValue(f"{where}.job_state", f"unknown job state {_shown(state)}")
        requested = attributes.get("Resource_List", {})
        if not isinstance(requested, dict):
            raise BadValue(f"{where}.Resource_List", "not an object of resources")
        flat = _flattened(requested, attributes)
        # Resource_List.ncpus and ngpus are the server's totals (select with default_chunk
        # applied); the accounting log's derivations serve only where they are absent.
        ncpus = _renamed(where, _requested_ncpus, flat)
        ngpus = _renamed(where, _requested_ngpus, flat)
        nodes = _renamed(where, read_nodes, flat)
        if ncpus > MAX_NCPUS or ngpus > MAX_NCPUS or nodes > MAX_NCPUS:
            bad = beyond_any_machine(ncpus, ngpus, nodes)
            raise BadValue(f"{where}.Resource_List.{bad.field}", bad.reason)
        running = state in _RUNNING_STATES
        record = JobRecord(
            line=line,
            job_id=job_id,
            run=(_count(where, attributes, "run_count") or 1) if running else 0,
            state=JobState.RUNNING if running else JobState.QUEUED,
            server=server or _text(attributes.get("server")),
            user=_text(owner).partition("@")[0],
            group=_text(attributes.get("egroup")),
            account=_text(attributes.get("Account_Name")),
            project=_text(attributes.get("project")),
            queue=_text(attributes["queue"]),
            jobname=_text(attributes.get("Job_Name")),
            ncpus=ncpus,
            ngpus=ngpus,
            nodes=nodes,
            requested_walltime=_renamed(where, _walltime, flat),
            ctime=self._time(where, attributes, "ctime"),
            qtime=self._time(where, attributes, "qtime"),
            etime=self._time(where, attributes, "etime"),
            kind=state,
        )
        if running:
            record.start = self._time(where, attributes, "stime")
            if record.start is None:
                raise BadValue(f"{where}.stime", f"running job {ident} has no stime")
            return record
        record.request = JobRequest(
            resources=_amounts(requested),
            held=state in HELD_STATES,
            job_priority=_priority(where, attributes.get("Priority", 0)),
            eligible_time=_duration(where, attributes, "eligible_time"),
            accrue_type=_count(where, attributes, "accrue_type"),
            sampled=self.timestamp,
            reason=_text(attributes.get("comment")),
        )
        return record

    def _time(self, where: str, attributes: Mapping[str, Any], key: str) -> int | None:
        """Epoch seconds of a ctime(3) text in the reader's zone (an hour that occurs twice is
        taken the first time); None when absent."""
        value = attributes.get(key)
        if value is None:
            return None
        if _is_number(value) and 0 <= value < 2**53:  # an epoch, should a qstat print one
            return int(value)
        match = _CTIME.fullmatch(value) if isinstance(value, str) else None
        month = _MONTHS.get(match.group(1), 0) if match else 0
        if match and month:
            day, hour, minute, second, year = map(int, match.groups()[1:])
            try:
                moment = datetime(year, month, day, hour, minute, second, tzinfo=self._tz)
                return int(moment.timestamp())
            except (ValueError, OverflowError):
                pass
        raise BadValue(f"{where}.{key}", f"not a ctime(3) time: {_shown(value)}")


def read_qstat_json(
    lines: Iterable[bytes | str], *, tz: tzinfo, skipped: Sequence[int] = ()
) -> Iterator[Parsed]:
    """The jobs of a `qstat -f -F json` snapshot; QstatJsonReader gives its timestamp too.

    Q is a JobRecord QUEUED (run 0) with its JobRequest; H, W, T, U and S are QUEUED with
    `request.held` (HELD_STATES says why each is not started from the queue); R and E are
    RUNNING from stime; B, F, X and M are Recognised. `tz` is the zone qstat printed times in.
    """
    return iter(QstatJsonReader(lines, tz=tz, skipped=skipped))


def _text(value: object) -> str:
    """A string attribute, storable as UTF-8 (a `\\udcff` escape becomes `?`); a number as
    written, since older qstat printed a numeric Job_Name or Account_Name as a number (qstat.c
    now forces those to strings)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return storable(value)
    return json.dumps(value)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _flattened(requested: Mapping[str, Any], attributes: Mapping[str, Any]) -> dict[str, str]:
    """Resource_List (and a running job's exec_host) as the accounting log's `key=value`
    attributes, so cores, GPUs and nodes are derived as they are there."""
    flat = {f"Resource_List.{name}": _text(value) for name, value in requested.items()}
    if "exec_host" in attributes:
        flat["exec_host"] = _text(attributes["exec_host"])
    return flat


def _renamed(where: str, read: Callable[[Mapping[str, str]], _T], flat: Mapping[str, str]) -> _T:
    """`read(flat)`, its BadValue naming the job's key."""
    try:
        return read(flat)
    except BadValue as bad:
        raise BadValue(f"{where}.{bad.field}", bad.reason) from None


def _requested_ncpus(flat: Mapping[str, str]) -> int:
    ncpus = read_count(flat, "Resource_List.ncpus")
    return read_ncpus(flat) if ncpus is None else ncpus


def _requested_ngpus(flat: Mapping[str, str]) -> int:
    ngpus = read_count(flat, "Resource_List.ngpus")
    return read_ngpus(flat) if ngpus is None else ngpus


def _walltime(flat: Mapping[str, str]) -> int | None:
    return read_duration(flat, "Resource_List.walltime")


def _count(where: str, attributes: Mapping[str, Any], key: str) -> int | None:
    """A count attribute (run_count, accrue_type); None when absent."""
    value = attributes.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_NCPUS:
        return value
    return _renamed(where, lambda flat: read_count(flat, key), {key: _text(value)})


def _duration(where: str, attributes: Mapping[str, Any], key: str) -> int | None:
    """Seconds of a duration attribute (`"42:53:26"`, or a number of seconds)."""
    value = attributes.get(key)
    if value is None:
        return None
    return _renamed(where, lambda flat: read_duration(flat, key), {key: _text(value)})


def _priority(where: str, value: object) -> int:
    """The job's Priority (qsub -p): an integer from -1024 to 1023."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,6}", value, re.ASCII):
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and -1024 <= value <= 1023:
        return value
    raise BadValue(f"{where}.Priority", f"not a priority from -1024 to 1023: {_shown(value)}")


def _amounts(requested: Mapping[str, Any]) -> dict[str, float]:
    """The numeric Resource_List amounts as the scheduler reads them (resource_amount)."""
    amounts: dict[str, float] = {}
    for name, value in requested.items():
        amount = None
        if _is_number(value):
            amount = float(value)
        elif isinstance(value, str):
            amount = resource_amount(value)
        if amount is not None:
            amounts[str(name)] = amount
    return amounts
