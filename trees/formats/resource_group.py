"""The PBS `resource_group` file: `name cgroup parent shares`, one entry a line.

Read as parse_group() reads it (fairshare.cpp:215-300, pbsfs-behaviour.md §1.3): 255-byte
`fgets` chunks that each count as a line, comments (`#`, `*`) and blank lines counted too,
tokens split on spaces and tabs, extra tokens ignored, a parent defined before its children.
Each rejected line keeps the messages PBS prints for it and our own naming the field; the rest of
the file is still read. We also refuse what PBS takes silently and gets wrong: negative shares
and numbers a C int cannot hold.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from trees.engine.pbs import (
    INT_MAX,
    INT_MIN,
    ROOT_ALIAS,
    TREEROOT,
    UNKNOWN,
    GroupDef,
    definition_order,
    resource_group_parent,
)
from trees.formats.rejected import RejectedLine

FGETS_SIZE = 256
_C_SPACE = b" \t\n\v\f\r"
_STRTOL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
# Control bytes no text file holds (a NUL alone is PBS's: fgets and strlen cut the line there).
_BINARY = re.compile(rb"[\x01-\x08\x0e-\x1f\x7f]")
_INTEGER = re.compile(rb"\s*[+-]?[0-9]+\s*")


@dataclass
class ResourceGroup:
    entries: list[tuple[int, GroupDef]] = field(default_factory=list)  # (line number, entry)
    rejected: list[RejectedLine] = field(default_factory=list)
    refused: str = ""  # why the file as a whole is not a resource_group (nothing is read)

    @property
    def groups(self) -> list[GroupDef]:
        return [group for _, group in self.entries]

    @property
    def pbs_messages(self) -> list[str]:
        return [message for bad in self.rejected for message in bad.pbs_messages]


def _fgets_lines(stream: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """fgets(buf, 256) chunks, newline removed, cut at a NUL as strlen() would; and whether
    the chunk held control bytes (a binary file)."""
    while chunk := stream.readline(FGETS_SIZE - 1):
        binary = _BINARY.search(chunk) is not None
        chunk = chunk.split(b"\0", 1)[0]
        yield (chunk[:-1] if chunk.endswith(b"\n") else chunk), binary


def _strtol(token: str) -> int | None:
    """strtol(tok, &endp, 10) with `*endp == '\\0'`; None where PBS reports an error."""
    return int(token.strip(" \t\n\v\f\r")) if _STRTOL.fullmatch(token) else None


def _number_problem(token: str, column: str) -> str:
    if token.endswith("\r"):
        return (
            f"{column} {token[:-1]!r} ends with a carriage return: the file has CRLF (DOS) "
            "line endings, which PBS does not accept; convert it with dos2unix"
        )
    return f"{column} {token!r} is not a whole number"


def parse_resource_group(source: BinaryIO | bytes) -> ResourceGroup:
    """Every accepted entry with its line number, and every rejected line with its reasons.

    Refused whole (`refused`, no entries): a file with control bytes (binary, nothing else is
    said), one whose lines are all blank, and one of which no line has an entry's shape (bad
    values and all; each line's rejection is kept): another kind of file, which would read as
    a tree that removes every node.
    """
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    result = ResourceGroup()
    known = {TREEROOT, UNKNOWN}
    shaped = unshaped = comments = number = 0
    for number, (raw, binary) in enumerate(_fgets_lines(stream), start=1):
        if binary:
            reason = f"line {number} holds control bytes: not a resource_group, which is text"
            return ResourceGroup(refused=reason)
        stripped = raw.lstrip(_C_SPACE)
        if not stripped or stripped[:1] in (b"#", b"*"):
            comments += 1 if stripped else 0
            continue
        if _entry_shaped(raw):
            shaped += 1
        else:
            unshaped += 1
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            result.rejected.append(
                RejectedLine(number, "line", f"is not valid UTF-8 ({exc.reason})", repr(raw))
            )
            continue
        bad = _check_line(number, text, known)
        if isinstance(bad, RejectedLine):
            result.rejected.append(bad)
        else:
            known.add(bad.name)
            result.entries.append((number, bad))
    if not shaped and (unshaped or (number and not comments)):
        result.refused = _refusal(unshaped)
    return result


def _entry_shaped(raw: bytes) -> bool:
    """Whether a line has an entry's shape, bad values and all: four fields (more are
    ignored), the cgroup or the shares a whole number."""
    tokens = [token for token in re.split(rb"[ \t]+", raw) if token][:4]
    return len(tokens) == 4 and any(_INTEGER.fullmatch(tokens[i]) for i in (1, 3))


def _refusal(unshaped: int) -> str:
    """Why a text file with no entry's shape is no resource_group."""
    if not unshaped:
        return "holds only blank lines: not a resource_group"
    which = "its only line is not" if unshaped == 1 else f"none of its {unshaped} lines is"
    return f"{which} `name cgroup parent shares`: not a resource_group"


def _check_line(line: int, text: str, known: set[str]) -> GroupDef | RejectedLine:
    """parse_group()'s checks in its order, then ours."""

    generic = f"resgroup: error on line {line}."

    def reject(column: str, reason: str, *pbs: str) -> RejectedLine:
        return RejectedLine(line, column, reason, text, pbs)

    tokens = [token for token in re.split(r"[ \t]+", text) if token][:4]
    if len(tokens) < 4:
        columns = ("name", "cgroup", "parent", "shares")
        missing = ", ".join(columns[len(tokens) :])
        return reject(
            "line", f"needs 4 fields (name cgroup parent shares); {missing} missing", generic
        )
    name, cgroup_text, parent, shares_text = tokens
    if name in known:
        unique = f"entity {name} is not unique"
        why = "is reserved by PBS" if name in (TREEROOT, UNKNOWN) else "is already defined above"
        return reject("name", f"{name!r} {why}", unique, generic)
    if parent != ROOT_ALIAS and parent not in known:
        missing_parent = f"Parent ginfo of {name} doesnt exist."
        reason = (
            f"{parent!r} is not defined above this line (a parent must come before its children)"
        )
        return reject("parent", reason, missing_parent, generic)
    shares = _strtol(shares_text)
    if shares is None:
        return reject("shares", _number_problem(shares_text, "shares"), generic)
    cgroup = _strtol(cgroup_text)
    if cgroup is None:
        return reject("cgroup", _number_problem(cgroup_text, "cgroup"), generic)
    if shares < 0:
        return reject("shares", f"shares {shares} is negative; shares must be 0 or more")
    if shares > INT_MAX:
        return reject("shares", f"shares {shares} is larger than PBS can hold ({INT_MAX})")
    if not INT_MIN <= cgroup <= INT_MAX:
        return reject("cgroup", f"cgroup {cgroup} does not fit a C int")
    return GroupDef(name=name, cgroup=cgroup, parent=parent, shares=shares)


def format_resource_group(groups: Iterable[GroupDef], *, header: str = "") -> str:
    """A resource_group file PBS reads back into the same tree.

    Entries keep their relative order (PBS lists siblings newest first, so order is meaning); an
    entry whose parent comes later is held back until its parent has been written.
    """
    lines = [f"# {line}\n" if line else "#\n" for line in header.splitlines()]
    lines.append("# name\tcgroup\tparent\tshares\n")
    for group in definition_order(groups):
        parent = resource_group_parent(group.parent)
        lines.append(f"{group.name}\t{group.cgroup}\t{parent}\t{group.shares}\n")
    return "".join(lines)
