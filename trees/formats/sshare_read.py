"""sshare's output read back: aligned or parsable (-p, -P), of either algorithm, every line
that is not an association's row rejected with its number and why."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from trees.engine.slurm import ROOT_ACCOUNT, USE_PARENT, Algorithm, AssociationDef
from trees.formats.rejected import RejectedLine
from trees.formats.sshare import (
    DEFAULT_TRES,
    LONG_CLASSIC,
    LONG_FAIR_TREE,
    SHORT,
    UINT32_MAX,
    WIDTH,
    zero_tres,
)

_HEADER_WORD = re.compile(
    r"Account|User|Raw ?Shares|Norm ?Shares|Raw ?Usage|Norm ?Usage|Effectv ?Usage|Fair ?Share"
    r"|Level ?FS|GrpTRESMins|TRESRunMins|GrpCPUMins|CPURunMins|GrpTRESRaw|Partition|Cluster|ID"
)
_DASHES = re.compile(r"^( *)-+( -+)* *$")
# sshare prints RawUsage as a 64-bit count; past 2^63 the tree's JSON cannot write it.
MAX_RAW_USAGE = 2**63 - 1
_SHOWN = 40  # characters of a value quoted in a rejection


@dataclass(frozen=True)
class SshareEntry:
    """One association read from sshare text, with the cells as printed (for checking)."""

    line: int
    depth: int
    association: AssociationDef
    cells: dict[str, str]


@dataclass
class SshareFile:
    layout: str = ""  # "P", "p" or "aligned"
    columns: list[str] = field(default_factory=list)
    entries: list[SshareEntry] = field(default_factory=list)
    rejected: list[RejectedLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    algorithm: Algorithm | None = None  # what the file shows, when it shows it
    algorithm_evidence: str = ""
    has_root: bool = False

    @property
    def associations(self) -> list[AssociationDef]:
        return [entry.association for entry in self.entries]

    @property
    def listed_tres(self) -> list[str] | None:
        """The cluster's TRES as a whole TRESRunMins cell lists them; None if none does."""
        for entry in self.entries:
            text = entry.cells.get("TRESRunMins", "")
            if text and not text.endswith("+"):
                return [item.split("=", 1)[0] for item in text.split(",")]
        return None

    @property
    def tres_names(self) -> list[str]:
        return self.listed_tres or list(DEFAULT_TRES)

    @property
    def tres_run_mins(self) -> dict[tuple[str, str | None], str]:
        """Each association's TRESRunMins where a job ran; the all-zero text is left out,
        also when the aligned layout cut it at 30 characters."""
        zeros = zero_tres(self.tres_names)
        out = {}
        for entry in self.entries:
            text = entry.cells.get("TRESRunMins", "")
            if text and text != zeros and not (text.endswith("+") and zeros.startswith(text[:-1])):
                out[entry.association.key] = text
        return out

    @property
    def grp_tres_mins(self) -> dict[tuple[str, str | None], str]:
        return {
            entry.association.key: entry.cells["GrpTRESMins"]
            for entry in self.entries
            if entry.cells.get("GrpTRESMins")
        }


def _header_columns(text: str) -> list[tuple[str, int, int]]:
    """(column, start, end) of each header word; spaces inside old names removed."""
    return [
        (match.group().replace(" ", ""), match.start(), match.end())
        for match in _HEADER_WORD.finditer(text)
    ]


def _is_header(text: str) -> bool:
    names = {name for name, _, _ in _header_columns(text)}
    return "Account" in names and len(names) >= 3


def _canonical(name: str) -> str:
    return {"Fairshare": "FairShare", "LevelFs": "LevelFS"}.get(name, name)


class _Reader:
    """Builds associations row by row from the depth of each Account cell."""

    def __init__(self, result: SshareFile) -> None:
        self.result = result
        self.stack: list[tuple[int, str, int, bool]] = []  # (depth, account, line, good)
        self.top: int | None = None  # depth of the rows directly under root
        self.accounts: dict[str, int] = {}
        self.users: dict[tuple[str, str], int] = {}
        self.undecodable: dict[int, tuple[str, str]] = {}  # line: (why not UTF-8, its bytes)

    def reject(self, number: int, column: str, reason: str, text: str) -> None:
        self.result.rejected.append(RejectedLine(number, column, reason, text))

    def refuse(
        self, number: int, column: str, reason: str, text: str, depth: int, *, account: bool
    ) -> None:
        """Reject a row before reading it; an account's rows below it go with it."""
        self.reject(number, column, reason, text)
        # A row above the first row's depth heads nothing: the rows after it keep their account.
        if account and (self.top is None or depth >= self.top):
            while self.stack and self.stack[-1][0] >= depth:
                self.stack.pop()
            self.stack.append((depth, "", number, False))

    def row(self, number: int, text: str, cells: dict[str, str], depth: int) -> None:
        account = cells.get("Account", "").strip()
        user = cells.get("User", "").strip() or None
        if number in self.undecodable:
            why, raw = self.undecodable[number]
            heads = "User" in cells and user is None  # an account row: its rows go with it
            self.refuse(number, "line", f"is not UTF-8 ({why})", raw, depth, account=heads)
            return
        if not account:
            self.reject(number, "Account", "is empty", text)
            return
        if account.endswith("+") or (user or "").endswith("+"):
            self.result.notes.append(
                f"line {number}: a name was cut by sshare's column width and ends in '+';"
                " it is imported as printed"
            )
        is_root = user is None and account == ROOT_ACCOUNT and not self.stack and self.top is None
        if is_root:
            self.result.has_root = True
            self.top = depth + 1
        elif self.top is None:
            if user is not None:
                self.reject(number, "User", f"user row before any account (user {user})", text)
                return
            self.top = depth  # no root row: the first account hangs from root
        if not is_root and depth < self.top:
            # Before the stack is unwound: a stray row must not cut the rows after it off
            # from their account.
            self.reject(number, "Account", f"depth {depth} is above the first row's", text)
            return
        while self.stack and self.stack[-1][0] >= depth:
            self.stack.pop()
        parent = ROOT_ACCOUNT
        if not is_root:
            if depth > self.top:
                if not self.stack or self.stack[-1][0] != depth - 1:
                    above = self.stack[-1][0] if self.stack else self.top - 1
                    self.reject(
                        number,
                        "Account",
                        f"indentation skips a level: depth {depth} under depth {above}",
                        text,
                    )
                    if user is None:
                        self.stack.append((depth, account, number, False))
                    return
                _, parent, parent_line, good = self.stack[-1]
                if not good:
                    self.reject(
                        number, "Account", f"its account on line {parent_line} was rejected", text
                    )
                    if user is None:
                        self.stack.append((depth, account, number, False))
                    return
            if user is not None and _cut_alike(account, parent):
                account = parent  # a user row cuts its account one column sooner
            if user is not None and parent != account:
                self.reject(
                    number,
                    "Account",
                    f"user {user} names account {account} but sits under {parent}",
                    text,
                )
                return
        association = self._association(number, text, cells, account, parent, user, is_root)
        if user is None and not is_root:
            self.stack.append((depth, account, number, association is not None))
        if association is None:
            return
        self.result.entries.append(SshareEntry(number, depth, association, cells))

    def _association(
        self,
        number: int,
        text: str,
        cells: dict[str, str],
        account: str,
        parent: str,
        user: str | None,
        is_root: bool,
    ) -> AssociationDef | None:
        if user is None:
            first = self.accounts.get(account)
            if first is not None:
                self.reject(
                    number, "Account", f"account {account} is listed twice (first on line {first})",
                    text,
                )  # fmt: skip
                return None
        else:
            first = self.users.get((account, user))
            if first is not None:
                self.reject(
                    number,
                    "User",
                    f"duplicate association: user {user} in account {account}"
                    f" (first on line {first}; partitions are not supported)",
                    text,
                )
                return None
        shares = self._shares(number, text, cells.get("RawShares"), is_root)
        usage = self._usage(number, text, cells.get("RawUsage"))
        if shares is None or usage is None:
            return None
        if user is None:
            self.accounts[account] = number
        else:
            self.users[(account, user)] = number
        return AssociationDef(
            account=account,
            parent=None if is_root else parent,
            user=user,
            shares=shares,
            usage=usage,
        )

    def _shares(self, number: int, text: str, cell: str | None, is_root: bool) -> int | None:
        value = (cell or "").strip()
        if not value:
            if cell is not None and not is_root:
                self.reject(number, "RawShares", "is empty (only the root row has no shares)", text)
                return None
            return 1
        if value.lower() == "parent":
            return USE_PARENT
        if not value.isascii() or not value.isdigit():
            self.reject(
                number, "RawShares", f"{value!r} is not a number of shares or 'parent'", text
            )
            return None
        shares = int(value) if len(value.lstrip("0")) <= len(str(UINT32_MAX)) else UINT32_MAX + 1
        if shares > UINT32_MAX:
            self.reject(number, "RawShares", f"{value} does not fit Slurm's 32-bit shares", text)
            return None
        return shares

    def _usage(self, number: int, text: str, cell: str | None) -> float | None:
        value = (cell or "").strip()
        if not value:
            return 0.0
        try:
            usage = float(value)
        except ValueError:
            self.reject(number, "RawUsage", f"{value!r} is not a number", text)
            return None
        if not math.isfinite(usage) or usage < 0:
            self.reject(
                number, "RawUsage", f"{_shown(value)} is not a usage (negative or not finite)", text
            )
            return None
        if usage > MAX_RAW_USAGE:
            reason = f"{_shown(value)} is over 2^63 - 1, the most a 64-bit count of usage holds"
            self.reject(number, "RawUsage", reason, text)
            return None
        return usage


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[:_SHOWN] + "…"


def _cut_alike(printed: str, name: str) -> bool:
    """Whether `printed`, cut by sshare with a `+`, may be the start of account `name`."""
    return printed.endswith("+") and name.rstrip("+").startswith(printed[:-1])


def _parsable_columns(count: int) -> list[str] | None:
    """Columns of a headerless (`-n`) file, when its width says which default set it is."""
    return {7: SHORT, 10: LONG_CLASSIC, 11: LONG_FAIR_TREE}.get(count)


def read_sshare(data: bytes) -> SshareFile:
    """Associations, shares and raw usage from sshare output; every bad line says why."""
    result = SshareFile()
    lines: list[tuple[int, str]] = []
    reader = _Reader(result)
    for number, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.removesuffix(b"\r")
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            # Read on with the bad bytes replaced, so that its place in the tree is known.
            reader.undecodable[number] = (exc.reason, repr(raw))
            text = raw.decode(errors="replace")
        if text.strip():
            lines.append((number, text))
    if not lines:
        result.notes.append("the file has no rows")
        return result
    if any("|" in text for _, text in lines[:3]):
        _read_parsable(lines, result, reader)
    else:
        _read_aligned(lines, result, reader)
    _detect_algorithm(result)
    return result


def _read_parsable(lines: list[tuple[int, str]], result: SshareFile, reader: _Reader) -> None:
    number, first = lines[0]
    fields = first.split("|")
    has_header = "Account" in {name.strip() for name in fields}
    # -p ends every line with `|`; -P ends a line with `|` only when its last cell is blank.
    trailing = first.endswith("|") if has_header else all(t.endswith("|") for _, t in lines)
    count = max(len(text.split("|")) for _, text in lines)
    if not has_header and trailing and _parsable_columns(count) is not None:
        trailing = False  # -P rows that all end in a blank cell
    if trailing:
        fields = fields[:-1]
        count -= 1
    if has_header:
        header = [_canonical(name.replace(" ", "")) for name in fields]
        rows = lines[1:]
    else:
        guessed = _parsable_columns(count)
        if guessed is None:
            result.notes.append(
                f"line {number}: no header, and {count} columns is no default sshare column"
                " set: print it with its header (without -n) to import it"
            )
            for number, text in lines:
                reader.reject(number, "line", f"no header to name its {count} columns", text)
            return
        result.notes.append(
            f"line {number}: no header; {count} columns read as sshare's default"
            f" {'|'.join(guessed)}"
        )
        header, rows = list(guessed), lines
    unknown = [name for name in header if name not in WIDTH]
    if unknown:
        result.notes.append(f"line {number}: columns not read: {', '.join(unknown)}")
    result.layout = "p" if trailing else "P"
    result.columns = [name for name in header if name in WIDTH]
    for number, text in rows:
        values = text.split("|")
        if trailing and values and values[-1] == "":
            values = values[:-1]
        cells = dict(zip(header, values, strict=False))
        account = cells.get("Account", "")
        indent = account[: len(account) - len(account.lstrip(" \t"))]
        depth = len(indent)
        # A row cut before its User cell is not known to be an account: it heads no rows.
        is_account = "User" in cells and not cells["User"].strip()
        if len(values) > len(header):
            reason = f"{len(values)} fields where the header has {len(header)}"
            reader.refuse(number, "line", reason, text, depth, account=is_account)
            continue
        if "\t" in indent:
            reason = "indented with a TAB; sshare indents with spaces"
            reader.refuse(number, "Account", reason, text, depth, account=is_account)
            continue
        reader.row(number, text, cells, depth)


def _read_aligned(lines: list[tuple[int, str]], result: SshareFile, reader: _Reader) -> None:
    result.layout = "aligned"
    start = next((i for i, (_, text) in enumerate(lines) if _is_header(text)), None)
    if start is None:
        result.rejected.extend(
            RejectedLine(number, "line", "no sshare header (Account User ...) above it", text)
            for number, text in lines
        )
        return
    for number, text in lines[:start]:
        result.notes.append(f"line {number}: not part of the table, ignored: {text.strip()!r}")
    header_number, header_text = lines[start]
    words = _header_columns(header_text)
    result.columns = [name for name, _, _ in words if name in WIDTH]
    rows = lines[start + 1 :]
    spans: list[tuple[str, int, int]] = []
    base = 0
    dashes = _DASHES.match(rows[0][1]) if rows else None
    groups = [(m.start(), m.end()) for m in re.finditer(r"-+", rows[0][1])] if dashes else []
    if dashes:
        base = len(dashes.group(1))
        rows = rows[1:]
    if len(groups) == len(words):
        spans = [(name, s, e) for (name, _, _), (s, e) in zip(words, groups, strict=True)]
    else:
        if dashes:
            result.notes.append(
                f"line {header_number + 1}: the dash line does not mark each column;"
                " widths come from the header"
            )
        previous_end = base
        for index, (name, _, end) in enumerate(words):
            width = abs(WIDTH.get(name, 10))
            begin = max(end - width, previous_end + (1 if index else 0))
            spans.append((name, begin, end))
            previous_end = end
        if spans:
            second = spans[1][1] - 1 if len(spans) > 1 else len(header_text)
            spans[0] = (spans[0][0], base, second)
    for number, text in rows:
        cells: dict[str, str] = {}
        shift = 0
        for index, (name, begin, end) in enumerate(spans):
            begin, end = begin + shift, end + shift
            if index and name not in ("Account", "User") and end < len(text) and text[end] != " ":
                # A number wider than its column pushes the rest of the line right.
                stop = text.find(" ", end)
                stop = len(text) if stop < 0 else stop
                shift += stop - end
                end = stop
            cells[name] = text[begin:end]
        account_cell = cells.get("Account", "")
        depth = len(account_cell) - len(account_cell.lstrip(" "))
        cells = {name: value.strip() for name, value in cells.items()}
        cells["Account"] = account_cell.rstrip()
        reader.row(number, text, cells, depth)


def _detect_algorithm(result: SshareFile) -> None:
    """Which fairshare the file shows: LevelFS or blank account FairShare mean Fair Tree."""
    if "LevelFS" in result.columns:
        result.algorithm, result.algorithm_evidence = Algorithm.FAIR_TREE, "a LevelFS column"
        return
    if "NormUsage" in result.columns and "TRESRunMins" in result.columns:
        result.algorithm = Algorithm.CLASSIC
        result.algorithm_evidence = "the long layout without LevelFS"
        return
    for entry in result.entries:
        association = entry.association
        if association.is_user or "FairShare" not in entry.cells:
            continue
        if association.parent is None:
            norm = entry.cells.get("NormShares", "").strip()
            if norm in ("1.000000", "0.000000"):
                result.algorithm = Algorithm.CLASSIC if norm == "1.000000" else Algorithm.FAIR_TREE
                result.algorithm_evidence = f"the root row's NormShares {norm} (line {entry.line})"
                return
            continue
        shown = bool(entry.cells["FairShare"].strip())
        result.algorithm = Algorithm.CLASSIC if shown else Algorithm.FAIR_TREE
        result.algorithm_evidence = (
            f"{'a' if shown else 'no'} FairShare on account {association.account}"
            f" (line {entry.line})"
        )
        return
