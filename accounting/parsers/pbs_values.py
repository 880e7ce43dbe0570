"""The values of a PBS accounting record's attributes read one by one: epoch times, counts,
durations, sizes, and the cores, GPUs and nodes a job had from Resource_List, select, nodes or
exec_host. Each reader raises BadValue naming the attribute and what is wrong with its value.
`resource_amount` reads a requested amount as the scheduler does for job_sort_formula."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TypeVar

from accounting.parsers.units import parse_duration, parse_size

MAX_NCPUS = 10_000_000  # above any machine built or planned; a bigger count is corruption


MAX_SECONDS = 10**15  # epochs and durations: fits int64 and is exact as a float


MAX_BYTES = 2**60  # one EiB used by a single job


_T = TypeVar("_T")


_SIZE_UNITS = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}


class BadValue(Exception):
    """A field of a job record that cannot be taken; becomes a RejectedLine."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def beyond_any_machine(ncpus: int, ngpus: int, nodes: int) -> BadValue:
    """The rejection of a job with more than MAX_NCPUS cores, GPUs or nodes."""
    if ncpus > MAX_NCPUS:
        field, count, what = "ncpus", ncpus, "cores"
    elif ngpus > MAX_NCPUS:
        field, count, what = "ngpus", ngpus, "GPUs"
    else:
        field, count, what = "nodes", nodes, "nodes"
    return BadValue(field, f"{count} {what} is beyond any machine (the limit is {MAX_NCPUS})")


def read_ncpus(attributes: Mapping[str, str]) -> int:
    """Cores of the run: used, else placed (exec_host), else requested."""
    ncpus = read_count(attributes, "resources_used.ncpus")
    if ncpus:
        return ncpus
    exec_host = attributes.get("exec_host")
    if exec_host:
        ncpus = _derived("exec_host", _exec_host_cpus, exec_host)
        if ncpus:
            return ncpus
    return _asked(attributes, _CORES) or read_count(attributes, "Resource_List.ncpus") or 0


def read_ngpus(attributes: Mapping[str, str]) -> int:
    """GPUs of the run: used, else requested (ngpus, Torque gpu, select, Torque nodes)."""
    for key in ("resources_used.ngpus", "Resource_List.ngpus", "Resource_List.gpu"):
        if key in attributes:
            ngpus = read_count(attributes, key)
            if ngpus:
                return ngpus
    return _asked(attributes, _GPUS)


_CORES, _GPUS = 1, 2  # places in what _select_totals and _nodes_totals count


def _asked(attributes: Mapping[str, str], place: int) -> int:
    """The cores or GPUs (`place`) a job asked for in Resource_List.select, else in Torque's
    nodes; 0 when neither says."""
    select = attributes.get("Resource_List.select")
    if select:
        count = _derived("Resource_List.select", _select_totals, select)[place]
        if count:
            return count
    key, spec = _torque_nodes(attributes)
    return _derived(key, _nodes_totals, spec)[place] if spec else 0


def read_nodes(attributes: Mapping[str, str]) -> int:
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
            if not is_natural(index):
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
        if is_natural(resources[0]):
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
        raise BadValue(key, f"{error} in {value[:100]!r}") from None


def is_natural(text: str) -> bool:
    """ASCII digits only, short enough for int() (str.isdigit also takes `²` and `٣`)."""
    return text.isdigit() and text.isascii() and len(text) <= 30


def _natural(text: str) -> int:
    """The value of a count written in ASCII digits; raises ValueError."""
    if not is_natural(text):
        raise ValueError(f"not a count: {text[:40]!r}")
    return int(text)


def _leading_natural(text: str) -> int:
    """The count a value starts with: `1` of `1:ppn=24:gpu=4`, `4` of `4#excl`."""
    end = 0
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    return _natural(text[:end])


def read_epoch(attributes: Mapping[str, str], key: str) -> int | None:
    """An epoch time in seconds, or None when absent; raises BadValue."""
    value = attributes.get(key)
    if value is None:
        return None
    if value.isdigit() and value.isascii() and len(value) <= 30:
        seconds = int(value)
        if seconds <= MAX_SECONDS:
            return seconds
        raise BadValue(key, f"{seconds} is beyond any clock")
    if value[:1] == "-":
        raise BadValue(key, f"negative time: {value[:40]!r}")
    raise BadValue(key, f"not an epoch time: {value[:40]!r}")


def read_count(attributes: Mapping[str, str], key: str) -> int | None:
    """A count (ncpus, run_count...), or None when absent; raises BadValue."""
    value = attributes.get(key)
    if value is None:
        return None
    if value.isdigit() and value.isascii() and len(value) <= 30:
        return int(value)
    if value[:1] == "-":
        raise BadValue(key, f"negative count: {value[:40]!r}")
    raise BadValue(key, f"not a count: {value[:40]!r}")


def read_signed(attributes: Mapping[str, str], key: str) -> int | None:
    """A signed integer (Exit_status: negative for PBS's JOB_EXEC codes), or None; raises
    BadValue."""
    value = attributes.get(key)
    if value is None:
        return None
    digits = value[1:] if value[:1] == "-" else value
    if not is_natural(digits):
        raise BadValue(key, f"not an integer: {value[:40]!r}")
    return int(value)


def read_duration(attributes: Mapping[str, str], key: str) -> int | None:
    """Seconds of a `[[H+:]MM:]SS` duration, or None when absent; raises BadValue."""
    value = attributes.get(key)
    if value is None:
        return None
    try:
        seconds = _seconds(value)
    except (ValueError, OverflowError):  # OverflowError: a number too big for a float
        if value[:1] == "-":
            raise BadValue(key, f"negative duration: {value[:40]!r}") from None
        raise BadValue(key, f"not a duration: {value[:40]!r}") from None
    if seconds > MAX_SECONDS:
        raise BadValue(key, f"{seconds} seconds is beyond any clock")
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


def read_size(attributes: Mapping[str, str], key: str) -> int | None:
    """Bytes of a PBS size (`29097252kb`, `12.27M`), or None when absent; raises BadValue."""
    value = attributes.get(key)
    if value is None:
        return None
    scale = _SIZE_UNITS.get(value[-2:])
    number = value[:-2]
    if scale and number.isdigit() and number.isascii() and len(number) <= 30:
        size = int(number) * scale  # what PBS writes, `29097252kb`, without parse_size's regex
    elif value[:1] == "-":
        raise BadValue(key, f"negative size: {value[:40]!r}")
    else:
        try:
            size = parse_size(value)
        except (ValueError, OverflowError):  # OverflowError: a number too big for a float
            raise BadValue(key, f"not a size: {value[:40]!r}") from None
    if size > MAX_BYTES:
        raise BadValue(key, f"{size} bytes is beyond any machine")
    return size


# res_to_num's constants (OpenPBS src/scheduler/constant.h, src/include/pbs_share.h).
_KILO = 1024  # bytes or words in a kilobyte or kiloword
_TO_KILO = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}  # MEGATOKILO, GIGATOKILO...
_WORD = 8  # SIZEOF_WORD
_LONG_MAX = 2**63 - 1
_C_DIGITS = frozenset("0123456789")


@lru_cache(maxsize=4096)  # a site's requests repeat: walltimes, memory sizes, counts
def resource_amount(text: str) -> float | None:
    """A requested resource's amount as OpenPBS's scheduler reads it (misc.cpp `res_to_num`).

    Sizes in kilobytes (`2gb` is 2097152; `b` and `w` round up to whole kB first, so `2w` is
    8), `HH:MM:SS` and `MM:SS` in seconds, plain numbers as they are. None where the scheduler
    has no number: booleans (`True`/`False`, which are never consumable), strings, and what
    `is_num` refuses, such as `1pb` (res_to_num knows no peta: such a job is marked
    "Bad requested resource data" and never runs) or `1.5gb`. Quirks kept as PBS has them:
    `W` is not words (only a lowercase `w` multiplies by 8) and an empty text is 0.
    """
    if text.casefold() in ("true", "false"):  # strcasecmp with ATR_TRUE, ATR_FALSE
        return None
    if not _is_num(text):
        return None
    length = len(text)
    count, end = _strtod(text, 0)
    unit = text[end] if end < length else ""
    multiplier = 1
    if unit == ":":  # a time: MM:SS, or HH:MM:SS with nothing after the seconds
        minutes, second_end = _strtod(text, end + 1)
        if second_end < length and text[second_end] == ":":
            seconds, end = _strtol(text, second_end + 1)
            if end != length:
                return None
            count = count * 3600 + minutes * 60 + seconds
            unit = ""
        else:
            count = count * 60 + minutes  # `end` stays on the first ':', as res_to_num's does
    elif unit.lower() in _TO_KILO:
        multiplier = _TO_KILO[unit.lower()]
    elif unit in ("b", "B"):
        count = math.ceil(count / _KILO)
    elif unit == "w":
        count = math.ceil(count / _KILO)
        multiplier = _WORD
    if unit and end + 1 < length and text[end + 1] == "w":  # `kw`, `mw`... are words
        multiplier *= _WORD
    amount = float(count * multiplier)
    return amount if math.isfinite(amount) else None


def _is_num(text: str) -> bool:
    """misc.cpp `is_num`: digits and at most two ':', maybe a sign, a size unit or a fraction."""
    body = text[1:] if text[:1] in ("+", "-") else text
    length = len(body)
    index = colons = 0
    while index < length and (body[index] in _C_DIGITS or body[index] == ":"):
        colons += body[index] == ":"
        index += 1
    if index == length:
        return colons <= 2
    if index >= length - 2:
        letter = body[index].lower()
        if letter in _TO_KILO:
            after = body[index + 1 : index + 2].lower()
            if after in ("b", "w", ""):
                return True
        elif index == length - 1 and letter in ("b", "w"):
            return True
    if body[index] == ".":
        return all(character in _C_DIGITS for character in body[index + 1 :])
    return False


def _strtod(text: str, start: int) -> tuple[float, int]:
    """C strtod on the characters is_num lets through: the number and where it ends (`start`
    when there is none)."""
    index = start + 1 if text[start : start + 1] in ("+", "-") else start
    digits = index
    while index < len(text) and text[index] in _C_DIGITS:
        index += 1
    whole = index > digits
    if index < len(text) and text[index] == ".":
        fraction_end = index + 1
        while fraction_end < len(text) and text[fraction_end] in _C_DIGITS:
            fraction_end += 1
        if whole or fraction_end > index + 1:
            return float(text[start:fraction_end]), fraction_end
    if not whole:
        return 0.0, start
    return float(text[start:index]), index


def _strtol(text: str, start: int) -> tuple[int, int]:
    """C strtol, base 10: the number (clamped to a long) and where it ends."""
    index = start + 1 if text[start : start + 1] in ("+", "-") else start
    digits = index
    while index < len(text) and text[index] in _C_DIGITS:
        index += 1
    if index == digits:
        return 0, start
    value = int(text[start:index])
    return max(-_LONG_MAX - 1, min(_LONG_MAX, value)), index
