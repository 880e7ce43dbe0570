"""The OpenPBS scheduler's log (`sched_logs/YYYYMMDD`): its cycles and what each said of the
jobs it sorted.

A line is `MM/DD/YYYY HH:MM:SS;EVENT;pbs_sched;OBJECT;NAME;MESSAGE` (pbs_log.c log_record:
local time of the scheduler's host, the event type in hex). A cycle runs from `Starting
Scheduling Cycle` to `Leaving Scheduling Cycle` (fifo.cpp scheduling_cycle). Within it, with
`log_events` holding DEBUG2 (0x0100), each job's `Formula Evaluation = V` (fifo.cpp:463-464,
V printed with float_digits), `Job's formula value V is under threshold T`, a formula's
`Formula evaluation for job had an error.  Zero value will be used: ...`; with 0x0080, each
job the scheduler considers in its order, `Considering job to run`; `Job has zero shares for
fairshare` for a job it leaves out for its entity's 0 shares; `Decaying Fairshare Tree` at a
decay and `Usage Sync` when it writes the usage database.

The reader streams, keeps every cycle whole, and rejects a line that is not a log line (with
its number and why); lines of other daemons, and a cycle the file cuts, are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from accounting.parsers.records import RejectedLine

__all__ = ["SchedCycle", "SchedLog", "read_sched_log"]

_LINE = re.compile(
    r"(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d);([0-9A-Fa-f]{4});([^;]*);([^;]*);([^;]*);(.*)"
)
START = "Starting Scheduling Cycle"
END = "Leaving Scheduling Cycle"
FORMULA = "Formula Evaluation = "
CONSIDERING = "Considering job to run"
ZERO_SHARES = "Job has zero shares for fairshare"
UNDER_THRESHOLD = "Job's formula value "
FORMULA_ERROR = "Formula evaluation for job had an error.  Zero value will be used: "
DECAY = "Decaying Fairshare Tree"
USAGE_SYNC = "Usage Sync"


@dataclass
class SchedCycle:
    """One scheduling cycle: its start and end (epoch seconds), and per job (id as logged,
    `123.server`) its formula value as printed, the order of the jobs considered, the jobs
    left out and why."""

    line: int
    start: int
    end: int = 0
    formula: dict[str, str] = field(default_factory=dict)
    considered: list[str] = field(default_factory=list)
    zero_shares: list[str] = field(default_factory=list)
    under_threshold: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    decays: int = 0
    usage_synced: bool = False


@dataclass
class SchedLog:
    cycles: list[SchedCycle] = field(default_factory=list)
    rejected: list[RejectedLine] = field(default_factory=list)
    lines: int = 0


def _epoch(match: re.Match[str], zone: tzinfo) -> int:
    month, day, year, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    return int(datetime(year, month, day, hour, minute, second, tzinfo=zone).timestamp())


def read_sched_log(lines: Iterable[str | bytes], *, zone: tzinfo = UTC) -> SchedLog:
    """The whole cycles of the scheduler's log; `zone` is the scheduler host's time zone."""
    result = SchedLog()
    cycle: SchedCycle | None = None
    number = 0
    for number, raw in enumerate(_texts(lines), start=1):
        text = raw.rstrip("\r\n")
        if not text.strip():
            continue
        match = _LINE.fullmatch(text)
        if match is None:
            result.rejected.append(
                RejectedLine(number, "line", "not a PBS log line (MM/DD/YYYY HH:MM:SS;...)", text)
            )
            continue
        if match.group(8) != "pbs_sched":
            continue
        name, message = match.group(10), match.group(11)
        if message == START:
            cycle = SchedCycle(line=number, start=_epoch(match, zone))
            continue
        if cycle is None:
            continue
        if message == END:
            cycle.end = _epoch(match, zone)
            result.cycles.append(cycle)
            cycle = None
        elif message.startswith(FORMULA):
            cycle.formula[name] = message[len(FORMULA) :]
        elif message == CONSIDERING:
            cycle.considered.append(name)
        elif message == ZERO_SHARES:
            cycle.zero_shares.append(name)
        elif message.startswith(UNDER_THRESHOLD) and " is under threshold " in message:
            cycle.under_threshold.append(name)
        elif message.startswith(FORMULA_ERROR):
            cycle.errors[name] = message[len(FORMULA_ERROR) :]
        elif message == DECAY:
            cycle.decays += 1
        elif message == USAGE_SYNC:
            cycle.usage_synced = True
    result.lines = number
    return result


def _texts(lines: Iterable[str | bytes]) -> Iterator[str]:
    for line in lines:
        yield line.decode(errors="replace") if isinstance(line, bytes) else line
