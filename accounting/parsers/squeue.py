"""Slurm `squeue --json`: a snapshot of the jobs slurmctld holds, pending and running.

Shapes (SchedMD/slurm): 21.08 and 22.05 dump the job with openapi/v0.0.37 and v0.0.38
(src/plugins/openapi/v0.0.38/jobs.c: plain numbers, `null` where unset, job_state a string);
23.02 with data_parser/v0.0.39 (the same, but many counts and `priority` are
`{"set", "infinite", "number"}`); 23.11 to 25.05 with v0.0.40 to v0.0.42 (parsers.c JOB_INFO:
timestamps too are `{"set", "infinite", "number"}` and job_state is a list, `["PENDING"]` or
`["PENDING", "REQUEUE_HOLD"]`). The envelope is `{"jobs": [...], "meta": {...}, "errors": [...],
"warnings": [...]}`, from v0.0.40 with `last_update` (taken as the requests' `sampled`); `meta`
names the plugin (`plugin` or `plugins`) and the release (`Slurm` or `slurm`). All are read
the same way.

PENDING is a JobRecord QUEUED with its JobRequest, RUNNING (with CONFIGURING: nodes booting)
a JobRecord RUNNING; every other state is Recognised. The fairshare entity is left to the
caller, who knows the tree (account, then user).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from accounting.parsers.json_stream import Envelope, JsonSnapshot, storable
from accounting.parsers.records import (
    JobRecord,
    JobRequest,
    JobState,
    Parsed,
    Recognised,
    RejectedLine,
    Unreadable,
)
from accounting.parsers.units import parse_size

__all__ = ["HELD_REASONS", "HELD_STATE_FLAGS", "read_squeue_json"]

INFINITE = 0xFFFFFFFF  # a time limit of UNLIMITED, in minutes as Slurm keeps it
MAX_COUNT = 10_000_000  # more CPUs or nodes than any machine: corruption
# What every job has in each shape, and what a pending or running one needs besides.
_EVERY_JOB = ("job_id", "job_state", "user_name", "account", "partition")
_PENDING_NEEDS = (
    "priority",
    "submit_time",
    "accrue_time",
    "time_limit",
    "tres_req_str",
    "state_reason",
)
_RUNNING_NEEDS = ("start_time",)
# State flags of a pending job that is held (job_state_string prints the flag instead of
# PENDING before 23.11; 23.11 and later list it beside PENDING).
HELD_STATE_FLAGS = frozenset({"REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"})
_PENDING = "PENDING"
_RUNNING = frozenset({"RUNNING", "CONFIGURING"})  # CONFIGURING: allocated, nodes booting
# Reasons slurmctld gives a held job (src/common/job_state_reason.c), by prefix.
HELD_REASONS = ("Held", "JobHeld", "JobHold")
_MEGABYTE = 1 << 20


def read_squeue_json(
    lines: Iterable[bytes | str], *, skipped: Sequence[int] = ()
) -> Iterator[Parsed]:
    """The jobs of a `squeue --json` snapshot, one item each, in the file's order.

    A file that is not JSON, or JSON without a `jobs` list, is one RejectedLine saying so;
    an entry of `errors` (squeue's own failure) is one each; a job missing keys its state
    needs is one RejectedLine naming them all. The document is streamed (json_stream): memory
    holds one job. `skipped`: lines the caller left out as too long; a job with one is rejected.
    """
    snapshot = JsonSnapshot(
        lines,
        what="squeue --json",
        container="jobs",
        keep=("meta", "errors", "last_update"),
        named=("errors",),
        skipped=skipped,
    )
    envelope = snapshot.envelope()
    if isinstance(envelope, RejectedLine):
        yield envelope
        return
    if envelope.kind != "dict" or envelope.container != "list":
        yield RejectedLine(1, "file", _not_squeue(envelope), envelope.first_line)
        return
    top = envelope.members
    if top.get("errors"):
        yield from _errors(envelope, top)
    version = _version(top)
    sampled = _sampled(top)
    for entry in snapshot.entries():
        where = f"jobs[{entry.index}]"
        if entry.refused:
            yield RejectedLine(entry.line, where, entry.refused, entry.text)
            continue
        try:
            yield _job(entry.line, entry.index, entry.value, version, sampled)
        except Unreadable as bad:
            yield RejectedLine(entry.line, bad.field, bad.reason, entry.text)


def _not_squeue(envelope: Envelope) -> str:
    """Why a JSON document is not squeue --json."""
    if envelope.kind != "dict":
        return f"a JSON {envelope.kind}, not squeue --json's object"
    if envelope.container is not None:
        return f"`jobs` is a {envelope.container}, not squeue --json's list of jobs"
    keys = ", ".join(envelope.keys) or "none"
    return f"not squeue --json: no `jobs` list (its keys: {keys})"


def _errors(envelope: Envelope, top: dict[str, Any]) -> Iterator[Parsed]:
    """A RejectedLine for each error squeue itself reported."""
    errors = top.get("errors")
    if not isinstance(errors, list):
        return
    line, text = envelope.lines.get("errors", (1, envelope.first_line))
    for index, error in enumerate(errors):
        if isinstance(error, dict):
            words = [str(error.get(key) or "") for key in ("error", "description", "source")]
            said = ": ".join(word for word in words if word) or _shown(error)
        else:
            said = _shown(error)
        yield RejectedLine(line, f"errors[{index}]", f"squeue reported an error: {said}", text)


def _version(top: dict[str, Any]) -> str:
    """`Slurm 23.02.6 (data_parser/v0.0.39)`, or what of it meta says; "" without meta."""
    meta = top.get("meta")
    if not isinstance(meta, dict):
        return ""
    slurm = meta.get("Slurm") or meta.get("slurm")
    release = slurm.get("release") if isinstance(slurm, dict) else None
    plugin = meta.get("plugin") or meta.get("plugins")
    parser = None
    if isinstance(plugin, dict):
        parser = plugin.get("data_parser") or plugin.get("type")
    words = [f"Slurm {release}" if release else "", f"({parser})" if parser else ""]
    return " ".join(word for word in words if word)


def _sampled(top: dict[str, Any]) -> int | None:
    """slurmctld's `last_update` (v0.0.40 and later): when the job list was current."""
    try:
        return _epoch("", top, "last_update")
    except Unreadable:
        return None


def _job(line: int, index: int, job: object, version: str, sampled: int | None) -> Parsed:
    """The item of one element of `jobs`; raises Unreadable."""
    where = f"jobs[{index}]"
    if not isinstance(job, dict):
        raise Unreadable(where, f"not a job object: {_shown(job)}")
    missing = [key for key in _EVERY_JOB if key not in job]
    if missing:
        raise Unreadable(where, _missing(missing, version))
    states = _states(where, job["job_state"])
    pending = _PENDING in states or bool(states & HELD_STATE_FLAGS)
    running = not pending and bool(states & _RUNNING)
    kind = ",".join(sorted(states))
    if not pending and not running:
        return Recognised(line, kind)
    needs = _PENDING_NEEDS if pending else _RUNNING_NEEDS
    missing = [key for key in needs if key not in job]
    if missing:
        raise Unreadable(where, _missing(missing, version))
    tres = _tres(f"{where}.tres_req_str", job.get("tres_req_str"))
    partition = _string(where, job, "partition")
    limit = _time_limit(where, job)
    record = JobRecord(
        line=line,
        job_id=_job_id(where, job),
        run=0 if pending else 1 + (_count(where, job, "restart_cnt") or 0),
        state=JobState.QUEUED if pending else JobState.RUNNING,
        server=_string(where, job, "cluster"),
        user=_string(where, job, "user_name"),
        group=_string(where, job, "group_name"),
        account=_string(where, job, "account"),
        queue=partition,
        jobname=_string(where, job, "name"),
        ncpus=_count(where, job, "cpus") or int(tres.get("cpu", 0)),
        ngpus=_gpus(tres),
        nodes=_count(where, job, "node_count") or int(tres.get("node", 0)),
        requested_walltime=None if limit is None or limit == INFINITE else limit * 60,
        ctime=_epoch(where, job, "submit_time"),
        etime=_epoch(where, job, "eligible_time"),
        kind=kind,
    )
    if running:
        record.start = _epoch(where, job, "start_time")
        if record.start is None:
            raise Unreadable(f"{where}.start_time", "a running job without a start time")
        allocated = _tres(f"{where}.tres_alloc_str", job.get("tres_alloc_str"))
        if "mem" in allocated:
            record.memory = round(allocated["mem"] * _MEGABYTE)
        return record
    priority = _number(where, job, "priority")
    reason = _string(where, job, "state_reason")
    record.request = JobRequest(
        resources=tres,
        held=priority == 0
        or job.get("hold") is True
        or bool(states & HELD_STATE_FLAGS)
        or reason.startswith(HELD_REASONS),
        reported_priority=None if priority is None else int(priority),
        qos=_string(where, job, "qos"),
        partitions=[name for name in partition.split(",") if name],
        nice=_nice(where, job),
        min_nodes=record.nodes,
        time_limit=limit,
        accrue_time=_epoch(where, job, "accrue_time", zero=True),
        begin_time=_epoch(where, job, "eligible_time", zero=True),
        sampled=sampled,
        reason=reason,
    )
    return record


def _missing(keys: list[str], version: str) -> str:
    said = f"the file says {version}" if version else "it names no Slurm version"
    return (
        f"no {', '.join(keys)}: is this squeue --json of Slurm 21.08 or later? ({said};"
        " squeue has --json since 21.08, accrue_time and tres_req_str since then)"
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def _states(where: str, value: object) -> frozenset[str]:
    """The state words: `"PENDING"` before 23.11, `["PENDING", "REQUEUE_HOLD"]` since."""
    if isinstance(value, str) and value:
        return frozenset({value})
    if isinstance(value, list) and value and all(isinstance(word, str) for word in value):
        return frozenset(value)
    raise Unreadable(f"{where}.job_state", f"not a job state: {_shown(value)}")


def _number(where: str, job: Mapping[str, Any], key: str) -> float | None:
    """A number as any shape writes it: plain, `null` (v0.0.38's unset) or
    `{"set", "infinite", "number"}` (unset or infinite: None)."""
    value = job.get(key)
    if isinstance(value, dict) and "number" in value:
        if value.get("set") is False or value.get("infinite") is True:
            return None
        value = value["number"]
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    raise Unreadable(f"{where}.{key}", f"not a number: {_shown(job.get(key))}")


def _count(where: str, job: Mapping[str, Any], key: str) -> int | None:
    """A non-negative whole count, at most MAX_COUNT; None when unset."""
    value = _number(where, job, key)
    if value is None:
        return None
    if value != int(value) or not 0 <= value <= MAX_COUNT:
        raise Unreadable(f"{where}.{key}", f"not a count up to {MAX_COUNT:,}: {_shown(value)}")
    return int(value)


def _nice(where: str, job: Mapping[str, Any]) -> int:
    """The nice value: `null` for 0; 22.05 (openapi/v0.0.38: jobs.c writes `nice -
    NICE_OFFSET` in unsigned 32-bit arithmetic) writes a negative one as its unsigned value,
    `--nice=-200` as 4294967096; later shapes write it signed."""
    value = _number(where, job, "nice")
    if value is None:
        return 0
    if value != int(value) or not -(2**31) <= value < 2**32:
        raise Unreadable(f"{where}.nice", f"not a nice value: {_shown(value)}")
    return int(value) - 2**32 if value >= 2**31 else int(value)


def _time_limit(where: str, job: Mapping[str, Any]) -> int | None:
    """The time limit in minutes as slurmctld packs it for a job without one of its own: its
    current partition's MaxTime (job_mgr.c pack_job); INFINITE for UNLIMITED, which v0.0.38
    writes as `null` and later shapes as `infinite`; None when the file says it is not set."""
    value = job.get("time_limit")
    if value is None or (isinstance(value, dict) and value.get("infinite") is True):
        return INFINITE
    if isinstance(value, dict) and value.get("set") is False:
        return None
    limit = _number(where, job, "time_limit")
    if limit is None or limit != int(limit) or not 0 <= limit <= INFINITE:
        raise Unreadable(f"{where}.time_limit", f"not a time limit: {_shown(value)}")
    return int(limit)


def _epoch(where: str, job: Mapping[str, Any], key: str, *, zero: bool = False) -> int | None:
    """Epoch seconds; None when unset, and for 0 (Slurm's "not yet") unless `zero`."""
    value = _number(where, job, key)
    if value is None or (value == 0 and not zero):
        return None
    if value != int(value) or not 0 <= value < 2**53:
        raise Unreadable(f"{where}.{key}", f"not an epoch time: {_shown(value)}")
    return int(value)


def _string(where: str, job: Mapping[str, Any], key: str) -> str:
    value = job.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return storable(value)
    raise Unreadable(f"{where}.{key}", f"not a string: {_shown(value)}")


def _job_id(where: str, job: Mapping[str, Any]) -> str:
    """The id as squeue prints it: `17`, an array task `4103947_100`, the pending rest of an
    array `4103947_[3-6%2]`, a heterogeneous component `900+1`."""
    job_id = _count(where, job, "job_id")
    if job_id is None:
        raise Unreadable(f"{where}.job_id", "no job id")
    array = _count(where, job, "array_job_id")
    if array:
        task = _count(where, job, "array_task_id")
        if task is not None:
            return f"{array}_{task}"
        tasks = _string(where, job, "array_task_string")
        if tasks:
            return f"{array}_[{tasks}]"
    het = _count(where, job, "het_job_id")
    if het:
        return f"{het}+{_count(where, job, 'het_job_offset') or 0}"
    return str(job_id)


def _tres(field: str, value: object) -> dict[str, float]:
    """A TRES list, `cpu=8,mem=120000M,node=1,billing=80,gres/gpu=8`, by name; sizes (mem,
    and any count written with a unit) in MB, as Slurm keeps them."""
    if value is None or value == "":
        return {}
    if not isinstance(value, str):
        raise Unreadable(field, f"not a TRES list: {_shown(value)}")
    tres: dict[str, float] = {}
    for item in value.split(","):
        name, equals, amount = item.partition("=")
        if not name or not equals:
            raise Unreadable(field, f"not a TRES list: {_shown(value)}")
        tres[name] = _tres_amount(field, name, amount)
    return tres


def _tres_amount(field: str, name: str, amount: str) -> float:
    try:
        plain = amount.replace(".", "", 1)
        if name == "mem" or not (plain.isdigit() and plain.isascii()):
            return parse_size(amount, default_unit="M") / _MEGABYTE
        number = float(amount)
    except (ValueError, OverflowError):
        raise Unreadable(field, f"{name} is not an amount: {_shown(amount)}") from None
    if not math.isfinite(number):
        raise Unreadable(field, f"{name} is not an amount: {_shown(amount)}")
    return number


def _gpus(tres: Mapping[str, float]) -> int:
    """`gres/gpu`, else the sum of `gres/gpu:<type>` (a typed request lists both)."""
    if "gres/gpu" in tres:
        return int(tres["gres/gpu"])
    return int(sum(count for name, count in tres.items() if name.startswith("gres/gpu:")))
