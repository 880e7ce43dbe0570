"""The fairshare and job-order keys of PBS `sched_config` (parse.cpp parse_config and scan).

A line is `name: value [prime_option]`; the value is one word or a quoted string, `#` and `*`
start comments. Only the keys that shape the fairshare tree or the job order are read; the rest
are counted as ignored. Unset keys take PBS's defaults; of a key given twice, the last line that
applies wins, as in parse_config.

The policy switches and job_sort_key take a prime option (parse.cpp: all, prime, non_prime or
none, in lower case or capitals; `none` puts the line in neither period). The dashboard keeps
one period, non-prime time: PBS's shipped holidays file makes nights, weekends and holidays
non-prime (110.5 of a week's 168 hours). Without a holidays file PBS is in prime time all day
(prime.cpp is_prime_time); the dashboard does not follow that. A line for prime time only, or
for none, is read (a bad value is still a problem) but not applied: `unapplied`. The other keys
take no option; a word after their value is ignored, as PBS ignores it.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import BinaryIO

DEFAULT_USAGE_RES = "cput"
DEFAULT_ENTITY = "euser"
DEFAULT_DECAY_TIME = 86400
DEFAULT_DECAY_FACTOR = 0.5
DEFAULT_UNKNOWN_SHARES = 0
# PBS's server attribute backfill_depth (qmgr; parse.cpp has no such sched_config key): read
# here too, so that one file can carry the whole policy.
DEFAULT_BACKFILL_DEPTH = 1
MAX_INT = 2**31 - 1  # what the database's integer columns hold
# The longest decay time taken: ten years. Real sites decay within hours to weeks; past this the
# dates of coming decays (the recovery projection's 400 decays) leave the calendar.
MAX_DECAY_TIME = 10 * 366 * 86400
FAIRSHARE_ENTITIES = ("euser", "egroup", "Account_Name", "queue", "egroup:euser")
_KEYS = frozenset(
    {
        "fairshare_usage_res",
        "fairshare_entity",
        "fairshare_decay_time",
        "half_life",  # the obsolete name of fairshare_decay_time
        "fairshare_decay_factor",
        "unknown_shares",
        "fair_share",
        "by_queue",
        "strict_ordering",
        "backfill",
        "backfill_depth",
        "job_sort_key",
        "preemptive_sched",
        "fairshare_enforce_no_shares",
    }
)
_SWITCH_KEYS = (
    "fair_share", "by_queue", "strict_ordering", "backfill", "preemptive_sched",
    "fairshare_enforce_no_shares",
)  # fmt: skip
# parse.cpp takes a prime option on these (fairshare_enforce_no_shares has none).
_PRIME_OPTION_KEYS = frozenset(
    {"fair_share", "by_queue", "strict_ordering", "backfill", "preemptive_sched", "job_sort_key"}
)
# parse.cpp's prime options, matched exactly (so `Prime` is refused), by the period they name.
PRIME_OPTIONS = {
    "all": "all",
    "ALL": "all",
    "prime": "prime",
    "PRIME": "prime",
    "non_prime": "non_prime",
    "NON_PRIME": "non_prime",
    "none": "none",
    "NONE": "none",
}
APPLIED_PERIODS = frozenset({"all", "non_prime"})  # the dashboard is in non-prime time
# The policies' switches as parse.cpp reads them (true/false, any case) and job_sort_key's
# orders (parse.cpp:426-434).
_SWITCHES = {"true": True, "false": False}
SORT_ORDERS = {
    "HIGH": "HIGH",
    "high": "HIGH",
    "High": "HIGH",
    "LOW": "LOW",
    "low": "LOW",
    "Low": "LOW",
}
_C_SPACE = " \t\n\v\f\r"
# Control bytes no text file holds (a NUL alone is PBS's: fgets and strlen cut the line there).
_BINARY = re.compile(rb"[\x01-\x08\x0e-\x1f\x7f]")
# A line that is a setting: a key (every PBS key is a word) and its colon.
_SETTING = re.compile(r"[A-Za-z_]\w*[ \t]*:", re.ASCII)
_TIME = re.compile(r"(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)|(\d+(?:\.\d*)?)", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


@dataclass(frozen=True)
class ConfigProblem:
    line: int
    key: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.key}: {self.reason}"


@dataclass(frozen=True)
class UnappliedLine:
    """A good line whose prime option puts it outside the period the dashboard keeps."""

    line: int
    key: str
    period: str  # "prime" or "none"

    def __str__(self) -> str:
        if self.period == "none":
            return f"{self.key} line {self.line} not applied: its option none puts it in no period"
        return f"{self.key} {self.period}-only line {self.line} not applied"


@dataclass
class FairshareConfig:
    fairshare_usage_res: str = DEFAULT_USAGE_RES
    fairshare_entity: str = DEFAULT_ENTITY
    decay_time: int = DEFAULT_DECAY_TIME  # seconds
    decay_factor: float = DEFAULT_DECAY_FACTOR
    unknown_shares: int = DEFAULT_UNKNOWN_SHARES
    # The job order's policies (parse.cpp's defaults: off but backfill); job_sort_key in file
    # order.
    fair_share: bool = False
    by_queue: bool = False
    strict_ordering: bool = False
    backfill: bool = True
    backfill_depth: int = DEFAULT_BACKFILL_DEPTH
    job_sort_key: list[tuple[str, str]] = field(default_factory=list)
    # Preemption (parse.cpp: off unless set; the shipped sched_config sets it): jobs of express
    # queues go first. A job of an entity without shares never runs unless enforce_no_shares
    # is off (on by default, parse.cpp:99).
    preemptive_sched: bool = False
    fairshare_enforce_no_shares: bool = True
    found: dict[str, int] = field(default_factory=dict)  # key -> line it was read from
    problems: list[ConfigProblem] = field(default_factory=list)
    unapplied: list[UnappliedLine] = field(default_factory=list)  # lines for another period
    ignored: int = 0  # lines with keys not read here
    refused: str = ""  # why the file as a whole is not a sched_config (then nothing is read)


def _scan(text: str, delimiter: str) -> tuple[str | None, str]:
    """scan(): the next word or quoted string, and the rest of the line."""
    pos = 0
    while pos < len(text) and (text[pos] in _C_SPACE or text[pos] == delimiter):
        pos += 1
    if pos == len(text):
        return None, ""
    if text[pos] in "\"'":
        end = text.find(text[pos], pos + 1)
        end = len(text) if end < 0 else end
        return text[pos + 1 : end], text[end + 1 :]
    end = pos
    while end < len(text) and text[end] not in _C_SPACE and text[end] != delimiter:
        end += 1
    return text[pos:end], text[end + 1 :]


def parse_decay_time(value: str) -> int | None:
    """fairshare_decay_time: HH:MM:SS, MM:SS, or plain seconds; None if it is none of these."""
    match = _TIME.fullmatch(value)
    if not match:
        return None
    hours, minutes, seconds, plain = match.groups()
    if plain is not None:
        return _whole_seconds(plain)
    fraction = _whole_seconds(seconds)
    if fraction is None:
        return None
    if hours is None:
        return int(minutes) * 60 + fraction
    return int(hours) * 3600 + int(minutes) * 60 + fraction


def _whole_seconds(text: str) -> int | None:
    """The seconds of `text` (digits, maybe a fraction), None past what a double holds."""
    seconds = float(text)
    return int(seconds) if math.isfinite(seconds) else None


def parse_sched_config(source: BinaryIO | bytes) -> FairshareConfig:
    """The fairshare keys; a file that is not text, whose lines are all blank, or that holds
    more lines of other kinds than `name: value` lines, is refused whole (`refused`), as bytes
    of another kind of file would read as no keys and PBS's defaults. An empty file, or one of
    comments, is PBS's defaults."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    config = FairshareConfig()
    settings = unread = comments = number = 0
    for number, raw in enumerate(stream, start=1):
        if _BINARY.search(raw):
            return FairshareConfig(
                refused=f"line {number} holds control bytes: not a sched_config, which is text"
            )
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        body = text.lstrip(_C_SPACE)
        if not body or body[0] in "#*":
            comments += 1 if body else 0
            continue
        if _SETTING.match(body):
            settings += 1
        else:
            unread += 1
        name, rest = _scan(text, ":")
        value, rest = _scan(rest, " ")
        option, _ = _scan(rest, " ")
        if name is None or value is None:
            continue
        if name not in _KEYS:
            config.ignored += 1
        else:
            _read_line(config, number, name, value, option)
    if unread and not settings:
        which = "its only line is not" if unread == 1 else f"none of its {unread} lines is"
        return FairshareConfig(refused=f"{which} `name: value`: not a sched_config")
    if unread > settings:
        return FairshareConfig(
            refused=f"{unread} of its {unread + settings} lines are not `name: value`:"
            " not a sched_config"
        )
    if number and not settings and not comments:
        return FairshareConfig(refused="holds only blank lines: not a sched_config")
    return config


def _read_line(
    config: FairshareConfig, number: int, name: str, value: str, option: str | None
) -> None:
    """Take one line of the _KEYS, or say why not (`problems`, `unapplied`)."""
    period = PRIME_OPTIONS.get(option or "all") if name in _PRIME_OPTION_KEYS else "all"
    applied = period in APPLIED_PERIODS
    # A line for another period is read into a scratch config: its value is checked, not kept.
    if problem := _apply(config if applied else FairshareConfig(), name, value):
        config.problems.append(ConfigProblem(number, name, problem))
    elif period is None:  # PBS logs it and applies the line to both periods; not taken here
        options = ", ".join(PRIME_OPTIONS)
        reason = f"Invalid prime keyword {option!r}: give one of {options}"
        config.problems.append(ConfigProblem(number, name, reason))
    elif applied:
        config.found[name] = number
    else:
        config.unapplied.append(UnappliedLine(number, name, period))


def _apply(config: FairshareConfig, name: str, value: str) -> str | None:
    """Set one of the _KEYS; the reason it was refused, or None."""
    if name == "fairshare_usage_res":
        config.fairshare_usage_res = value
    elif name == "fairshare_entity":
        if value not in FAIRSHARE_ENTITIES:
            allowed = ", ".join(FAIRSHARE_ENTITIES)
            return f"fairshare_entity {value} is erroneous (or deprecated); use one of {allowed}"
        config.fairshare_entity = value
    elif name in ("fairshare_decay_time", "half_life"):
        seconds = parse_decay_time(value)
        if seconds is None or seconds <= 0:
            return f"Invalid time {value}: give HH:MM:SS, MM:SS or seconds, more than 0"
        if seconds > MAX_DECAY_TIME:
            return (
                f"Invalid time {value}: {seconds} s is more than ten years"
                f" ({MAX_DECAY_TIME // 3600}:00:00), past which decays leave the calendar"
            )
        config.decay_time = seconds
    elif name == "fairshare_decay_factor":
        if not _NUMBER.fullmatch(value):
            return f"Invalid fairshare_decay_factor {value!r}: not a number"
        factor = float(value)
        if not 0 < factor < 1:
            return (
                f"fairshare_decay_factor: Invalid value: {value}.  "
                "Valid values are between 0 and 1."
            )
        config.decay_factor = factor
    elif name in _SWITCH_KEYS:
        switch = _SWITCHES.get(value.lower())
        if switch is None:
            return f"{name} {value!r} is neither true nor false"
        setattr(config, name, switch)
    elif name == "job_sort_key":
        key, _, order = value.partition(" ")
        if not key or order.strip() not in SORT_ORDERS:
            return f'job_sort_key {value!r}: give "RESOURCE HIGH" or "RESOURCE LOW"'
        # sort_priority is the old name of job_priority (parse.cpp:438-442).
        key = "job_priority" if key == "sort_priority" else key
        config.job_sort_key.append((key, SORT_ORDERS[order.strip()]))
    elif name == "unknown_shares":
        if not _whole(value):
            return f"unknown_shares {value!r} is not a whole number of shares (0 or more)"
        config.unknown_shares = int(value)
    elif name == "backfill_depth":
        if not _whole(value):
            return f"backfill_depth {value!r} is not a whole number of jobs (0 to {MAX_INT})"
        config.backfill_depth = int(value)
    return None


def _whole(value: str) -> bool:
    return re.fullmatch(r"[0-9]+", value, re.ASCII) is not None and int(value) <= MAX_INT
