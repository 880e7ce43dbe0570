"""The PBS scheduler's binary usage database, `sched_priv/usage` (pbsfs-behaviour.md §6).

x86-64 layout, little-endian, natural alignment. Version 2: a 24-byte header
(`char tag[9] = "PBS_MAG!"`, 7 zero bytes, `double version = 2`), `time_t last_decay`, then
64-byte records (`char name[50]`, 6 zero bytes, `double usage`). Version 1 has no header and
24-byte records (`char name[9]`, 7 bytes, `double usage`). Reading reports what PBS skips
silently (bad header, negative or NaN usage, invalid names, a truncated tail) and keeps the rest.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from trees.engine.pbs import (
    ROOT_ALIAS,
    TREEROOT,
    UNKNOWN,
    USAGE_NAME_MAX,
    GroupDef,
    UsageRecord,
    is_valid_pbs_name,
)

MAGIC = b"PBS_MAG!"
VERSION = 2
HEADER = struct.Struct("<9s7xd")
LAST_DECAY = struct.Struct("<q")
RECORD_V2 = struct.Struct("<50s6xd")
RECORD_V1 = struct.Struct("<16sd")  # char name[9] and its 7 padding bytes, then the double
NAME_V1 = 9
OLDEST_LAST_DECAY = 946713600  # 2000-01-01: PBS refuses a last_decay in (0, this]
# More usage than any site accrues (a million cores for 30 years is 1e15 core-seconds): such a
# record is bytes of something else read as a double, as in a file of another kind.
MAX_USAGE = 1e30
# Four million entities' records: a usage file is read whole, as PBS reads it, so a bigger
# file (of another kind) is refused before it is read.
MAX_FILE_BYTES = 256 << 20
# Rejected records past which, when they outnumber the good ones, the file is another kind's:
# reading stops there, so that a junk file's millions of rejections never sit in memory.
JUNK_AFTER = 1000


@dataclass(frozen=True)
class RejectedRecord:
    record: int  # 1-based, in file order; 0 for the header
    offset: int  # byte offset in the file
    field: str  # header, version, last_decay, name, usage or record
    reason: str

    def __str__(self) -> str:
        where = "header" if self.record == 0 else f"record {self.record}"
        return f"{where} (byte {self.offset}): {self.field}: {self.reason}"


@dataclass
class UsageFile:
    version: int = VERSION
    last_decay: int = 0
    records: list[UsageRecord] = field(default_factory=list)  # what PBS applies, in file order
    numbers: list[int] = field(default_factory=list)  # each record's 1-based place in the file
    rejected: list[RejectedRecord] = field(default_factory=list)
    header_ok: bool = True  # False: PBS reads no usage at all from this file
    refused: str = ""  # why the file is no usage file at all (then nothing is imported)


def read_usage_file(data: bytes) -> UsageFile:
    """read_usage(): a v2 file when the tag matches, otherwise v1 from the first byte."""
    result = UsageFile()
    if len(data) < HEADER.size:
        if data:
            result.header_ok = False
            result.rejected.append(
                RejectedRecord(
                    0, 0, "header", f"file is {len(data)} bytes, shorter than the header"
                )
            )
        return result
    tag, version = HEADER.unpack_from(data)
    if tag != MAGIC + b"\0":
        result.version = 1
        _read_records(data, 0, RECORD_V1, NAME_V1, result)
        return _refused_if_junk(result)
    if version != VERSION:
        result.header_ok = False
        big_endian = struct.unpack_from(">d", data, 16)[0]
        hint = " (it reads 2 big-endian: a file from another architecture)"
        reason = f"version is {version!r}, PBS reads only 2" + (hint if big_endian == 2 else "")
        result.rejected.append(RejectedRecord(0, 16, "version", reason))
        return result
    if len(data) < HEADER.size + LAST_DECAY.size:
        # PBS's fread of last_decay fails quietly and it reads no records.
        if len(data) > HEADER.size:
            reason = f"file ends {len(data) - HEADER.size} bytes into last_decay (truncated file)"
            result.rejected.append(RejectedRecord(0, HEADER.size, "last_decay", reason))
        return result
    (last_decay,) = LAST_DECAY.unpack_from(data, HEADER.size)
    if last_decay != 0 and last_decay <= OLDEST_LAST_DECAY:
        result.header_ok = False
        reason = f"{last_decay} is neither 0 nor after 2000-01-01 (Invalid usage file header)"
        result.rejected.append(RejectedRecord(0, HEADER.size, "last_decay", reason))
        return result
    result.last_decay = last_decay
    _read_records(data, HEADER.size + LAST_DECAY.size, RECORD_V2, USAGE_NAME_MAX, result)
    return _refused_if_junk(result)


def _refused_if_junk(result: UsageFile) -> UsageFile:
    """A file whose records are mostly not usage records is another kind of file (a v1 file
    has no header to tell): refused whole rather than imported in part."""
    bad = sum(1 for problem in result.rejected if problem.record > 0)
    if bad > len(result.records) and not result.refused:
        total = bad + len(result.records)
        result.refused = (
            f"{bad} of its {total} records are not usage records: not a PBS usage file"
            f" (read as version {result.version})"
        )
    return result


def _read_records(
    data: bytes, start: int, layout: struct.Struct, name_size: int, result: UsageFile
) -> None:
    """read_usage_v2() / read_usage_v1(): whole records only; each checked as PBS checks it."""
    count = (len(data) - start) // layout.size
    for index in range(count):
        offset = start + index * layout.size
        raw_name, usage = layout.unpack_from(data, offset)
        number = index + 1
        problem = _record_problem(raw_name, name_size, usage)
        if problem:
            result.rejected.append(RejectedRecord(number, offset, *problem))
            if len(result.rejected) >= JUNK_AFTER and len(result.rejected) > len(result.records):
                result.refused = (
                    f"{len(result.rejected)} of its first {number} records are not usage"
                    f" records: not a PBS usage file (read as version {result.version});"
                    " the rest is not read"
                )
                return
            continue
        result.records.append(UsageRecord(raw_name.split(b"\0", 1)[0].decode("ascii"), usage))
        result.numbers.append(number)
    tail = (len(data) - start) % layout.size
    if tail:
        offset = start + count * layout.size
        reason = f"last {tail} bytes are not a whole {layout.size}-byte record (truncated file)"
        result.rejected.append(RejectedRecord(count + 1, offset, "record", reason))


def _record_problem(raw_name: bytes, name_size: int, usage: float) -> tuple[str, str] | None:
    if math.isnan(usage):
        return "usage", "usage is NaN"
    if usage < 0:
        return "usage", f"usage {usage!r} is negative"
    if math.isinf(usage):
        return "usage", "usage is infinite"
    if usage > MAX_USAGE:
        return "usage", f"usage {usage!r} is more than {MAX_USAGE:g}: no site accrues that"
    if raw_name[:1] == b"\0":
        return "name", "name is empty"
    if b"\0" not in raw_name[: min(len(raw_name), USAGE_NAME_MAX)]:
        return "name", f"name is not NUL-terminated within {name_size} bytes"
    name = raw_name.split(b"\0", 1)[0]
    text = name.decode("latin-1")
    if not is_valid_pbs_name(text):
        bad = next(ch for ch in text if not is_valid_pbs_name(ch))
        return "name", f"name {text!r} has {bad!r}; PBS names use letters, digits and .-_ :"
    return None


def screen_records(
    usage: UsageFile, groups: Iterable[GroupDef]
) -> tuple[list[UsageRecord], list[RejectedRecord]]:
    """The records a scheduler could have written for this tree, and why the others are not.

    PBS writes each entity once and never a group; a record naming a group would overwrite the
    group's sum, and a repeated name would add to the groups twice.
    """
    group_names = {TREEROOT, UNKNOWN} | {g.parent for g in groups if g.parent != ROOT_ALIAS}
    last = {
        record.name: number for record, number in zip(usage.records, usage.numbers, strict=True)
    }
    kept: list[UsageRecord] = []
    rejected: list[RejectedRecord] = []
    for record, number in zip(usage.records, usage.numbers, strict=True):
        offset = _record_offset(usage.version, number)
        if record.name in group_names:
            reason = f"{record.name!r} is a group; only entities (leaves) carry usage"
            rejected.append(RejectedRecord(number, offset, "name", reason))
        elif last[record.name] != number:
            reason = f"{record.name!r} comes again at record {last[record.name]}; that one is kept"
            rejected.append(RejectedRecord(number, offset, "name", reason))
        else:
            kept.append(record)
    return kept, rejected


def _record_offset(version: int, number: int) -> int:
    if version == 1:
        return (number - 1) * RECORD_V1.size
    return HEADER.size + LAST_DECAY.size + (number - 1) * RECORD_V2.size


def write_usage_file(
    records: Iterable[UsageRecord], *, last_decay: int, version: int = VERSION
) -> bytes:
    """write_usage(): header, last_decay, then each record; names cut to 49 bytes as PBS does.

    Version 1, for schedulers older than the v2 header, has neither header nor last_decay and
    room for 8-byte names.
    """
    if version == 1:
        return b"".join(RECORD_V1.pack(r.name.encode()[: NAME_V1 - 1], r.usage) for r in records)
    parts = [HEADER.pack(MAGIC, float(VERSION)), LAST_DECAY.pack(last_decay)]
    for record in records:
        name = record.name.encode()[: USAGE_NAME_MAX - 1]
        parts.append(RECORD_V2.pack(name, record.usage))
    return b"".join(parts)


def truncated_names(records: Iterable[UsageRecord], *, version: int = VERSION) -> list[str]:
    """Names PBS would cut on write, so that the entity comes back under `unknown`."""
    room = (NAME_V1 if version == 1 else USAGE_NAME_MAX) - 1
    return [r.name for r in records if len(r.name.encode()) > room]
