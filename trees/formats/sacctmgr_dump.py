"""The flat file `sacctmgr dump CLUSTER file=F` writes, read as `sacctmgr load file=F` reads it.

Follows Slurm 22.05 src/sacctmgr/file_functions.c. _get_next_line(): a `#` not escaped by an odd
run of backslashes starts a comment (inside quotes too), an odd run of trailing backslashes
continues the line, then each backslash escapes the next character, all in a 4096-byte buffer.
load_sacctmgr_cfg_file(): `Object - name:Key=value:...`, the Cluster (or Machine) line first,
Account (Project) and User lines hanging from the last `Parent - account`, root before any.
_parse_options() and strip_quotes(): `:` separates options unless quoted, names are lowercased.
sacctmgr_set_assoc_rec() (association_functions.c): option names match by case-insensitive prefix
with a shortest length; FairShare or Shares is a number or `parent`.

sacctmgr stops at the first bad line; we reject it, and whatever would hang from it, and read on.
We also refuse what sacctmgr takes silently and gets wrong: lines with no ` - `, an account or
association given twice, shares slurmdbd cannot store, numbers with trailing junk, and text after a
closing quote (sacctmgr drops it and the rest of the line). We are lenient about spaces around the
object word, names and option names, and glue back `gres/gpu:a100=2` that the dump writes
unquoted and sacctmgr would split at the `:`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from trees.engine.slurm import INFINITE, ROOT_ACCOUNT, USE_PARENT, AssociationDef
from trees.formats.rejected import RejectedLine

BUFFER_SIZE = 4096  # file_functions.c: the line buffer fgets() fills, NUL included
_SPACE = b" \t\n\v\f\r"  # isspace() in the C locale

Kind = Literal["cluster", "parent", "account", "user"]
_OBJECTS: dict[str, Kind] = {
    "cluster": "cluster",
    "machine": "cluster",
    "parent": "parent",
    "account": "account",
    "project": "account",
    "user": "user",
}

# (option, shortest abbreviation) in the order _parse_options() then sacctmgr_set_assoc_rec()
# try them: the first whose name starts with the given key, at least that long, wins.
_OPTIONS: tuple[tuple[str, int], ...] = (
    ("AdminLevel", 2),
    ("Coordinator", 2),
    ("Classification", 2),
    ("DefaultAccount", 8),
    ("DefaultWCKey", 8),
    ("Description", 3),
    ("Organization", 1),
    ("Partition", 1),
    ("WCKeys", 2),
    ("DefaultQOS", 8),
    ("FairShare", 1),
    ("Shares", 1),
    ("GrpCPUMins", 7),
    ("GrpCPURunMins", 7),
    ("GrpCpus", 7),
    ("GrpJobs", 4),
    ("GrpJobsAccrue", 8),
    ("GrpMemory", 4),
    ("GrpNodes", 4),
    ("GrpSubmitJobs", 4),
    ("GrpTRES", 7),
    ("GrpTRESMins", 8),
    ("GrpTRESRunMins", 8),
    ("GrpWall", 4),
    ("MaxCPUMinsPerJob", 7),
    ("MaxCPURunMins", 7),
    ("MaxCpusPerJob", 7),
    ("MaxJobs", 4),
    ("MaxJobsAccrue", 8),
    ("MaxNodesPerJob", 4),
    ("MinPrioThresh", 4),
    ("MaxSubmitJobs", 4),
    ("MaxTRESPerJob", 7),
    ("MaxTRESPerNode", 11),
    ("MaxTRESMinsPerJob", 8),
    ("MaxTRESRunMins", 8),
    ("MaxWallDurationPerJob", 4),
    ("Parent", 2),
    ("Priority", 2),
    ("QosLevel", 1),
)
_SHARES = ("FairShare", "Shares")
_TRES_LISTS = frozenset(name for name, _ in _OPTIONS if "TRES" in name)
_OPTION_END = re.compile(r"[+-]?=")  # parse_option_end(): `=`, `+=` or `-=`
_NUMBER = re.compile(r"[+-]?[0-9]+")
_ESCAPE = re.compile(r"\\(.?)", re.DOTALL)


@dataclass
class SacctmgrDump:
    cluster: str | None = None
    root_shares: int = 1
    root_priority: int | None = None
    entries: list[tuple[int, AssociationDef]] = field(default_factory=list)  # (line, association)
    rejected: list[RejectedLine] = field(default_factory=list)
    grp_tres_mins: dict[tuple[str, str | None], str] = field(default_factory=dict)

    @property
    def associations(self) -> list[AssociationDef]:
        """The root account (shares from the Cluster line), then every entry in file order."""
        root = AssociationDef(
            ROOT_ACCOUNT, parent=None, shares=self.root_shares, priority=self.root_priority
        )
        return [root, *(association for _, association in self.entries)]


class _Bad(Exception):
    def __init__(
        self, field: str, reason: str, *, name: str | None = None, quote: bool = False
    ) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason
        self.name = name  # the line's name, where it was read before the fault
        self.quote = quote  # an unterminated quote, which a `#` may have caused


@dataclass(frozen=True)
class _Line:
    number: int  # of its first physical line
    raw: bytes  # its physical lines, `\r` removed, for the rejection's text
    content: bytes  # comments and continuation backslashes removed, escapes still in
    too_long: bool


@dataclass
class _Options:
    name: str
    shares: int | None = None
    partition: str | None = None
    grp_tres_mins: str | None = None
    priority: int | None = None


def parse_sacctmgr_dump(data: bytes, *, preserve_case_user: bool = False) -> SacctmgrDump:
    """Every association the file defines with its line number, and every rejected line.

    User names are lowercased as sacctmgr does unless slurmdbd.conf has
    `Parameters=PreserveCaseUser` (`preserve_case_user=True`); other names always are.
    """
    reader = _Reader(preserve_case_user)
    for line in _logical_lines(data):
        reader.read(line)
    return reader.result


def _logical_lines(data: bytes) -> Iterator[_Line]:
    """_get_next_line(): physical lines joined by trailing backslashes, comments cut."""
    physical = data.split(b"\n")
    if physical[-1] == b"":
        physical.pop()  # after the final newline
    raw: list[bytes] = []
    content = b""
    first, used, too_long = 0, 0, False
    for number, text in enumerate(physical, start=1):
        text = text.removesuffix(b"\r")
        if not raw:
            first, used, too_long, content = number, 0, False, b""
        raw.append(text)
        kept = _strip_comment(text)
        # fgets() has BUFFER_SIZE - 1 - used bytes left; past them it cuts the line in two
        too_long = too_long or used + len(kept) > BUFFER_SIZE - 1
        cut = _continuation(kept)
        if cut is None:
            yield _Line(first, b"\n".join(raw), content + kept, too_long)
            raw = []
        else:
            content += kept[:cut]
            used += cut
    if raw:  # a backslash on the last line continues into nothing
        yield _Line(first, b"\n".join(raw), content, too_long)


def _strip_comment(text: bytes) -> bytes:
    """_strip_comments(): cut at the first `#` after an even run of backslashes."""
    backslashes = 0
    for index, byte in enumerate(text):
        if byte == ord("#") and backslashes % 2 == 0:
            return text[:index]
        backslashes = backslashes + 1 if byte == ord("\\") else 0
    return text


def _continuation(text: bytes) -> int | None:
    """_strip_continuation(): where the line stops if it ends in an odd run of backslashes."""
    end = len(text.rstrip(_SPACE))
    start = len(text[:end].rstrip(b"\\"))
    return end - 1 if (end - start) % 2 == 1 else None


def _unquote(text: str) -> str:
    """strip_quotes(): the text inside a leading quote, other quote marks turned into '`'."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        text = text[1:] if end < 0 else text[1:end]
    return text.replace("'", "`").replace('"', "`")


def _option_name(key: str) -> str | None:
    key = key.lower()
    for name, shortest in _OPTIONS:
        if len(key) >= shortest and name.lower().startswith(key):
            return name
    return None


def _segments(text: str) -> Iterator[str]:
    """_parse_options()'s split at `:`, where a quote open at a `:` runs to its closing mark."""
    index, end = 0, len(text)
    while index < end:
        start, quote = index, ""
        while index < end and text[index] != ":":
            if text[index] in "'\"":
                if not quote:
                    quote = text[index]
                elif text[index] == quote:
                    quote = ""
            index += 1
        if quote:
            close = text.find(quote, index)
            if close < 0:
                opened = text[start:].strip()
                raise _Bad("line", f"the quote in {opened!r} is never closed", quote=True)
            index = close + 1
        if index > start:
            yield text[start:index]
        if index < end and text[index] != ":":
            raise _Bad(
                "line",
                f"text {text[index:]!r} follows the closing quote of {text[start:index]!r}; "
                "sacctmgr would drop it and the rest of the line",
            )
        index += 1


def _shares(value: str) -> int:
    """FairShare=: a whole number from 0 up, or `parent` (SLURMDB_FS_USE_PARENT)."""
    word = value.strip().lower()
    if word == "parent":
        return USE_PARENT
    if not _NUMBER.fullmatch(word):
        raise _Bad("Fairshare", f"{value!r} is not a number of shares or 'parent'")
    shares = int(word)
    if shares < 0:
        raise _Bad("Fairshare", f"{shares} is negative; shares must be 0 or more")
    if shares > USE_PARENT:
        # slurmdbd keeps shares in a signed int column and drops larger values for its default
        raise _Bad(
            "Fairshare",
            f"{shares} is more than Slurm stores (at most {USE_PARENT}, which means parent)",
        )
    return shares


def _parse_options(text: str, *, lower_name: bool) -> _Options:
    """The name (the one option without `=`), the shares, and the options we keep."""
    name: str | None = None
    options: dict[str, str] = {}
    last = ""  # the option before, if it holds a TRES list
    try:
        for segment in _segments(text):
            if last and _open_gres(options[last]):
                options[last] += ":" + segment  # `gres/gpu` + `a100=2`, split at the `:`
                continue
            last = ""
            end = _OPTION_END.search(segment)
            if end is None:
                if name is not None:
                    raise _Bad(
                        "line", f"{segment.strip()!r} has no '='; only the name comes without one"
                    )
                name = _unquote(segment)
                name = name.lower() if lower_name else name
                continue
            key, value = segment[: end.start()].strip(), _unquote(segment[end.end() :])
            if not value:
                continue  # sacctmgr discards blank options
            option = _option_name(key)
            if option is None:
                raise _Bad("line", f"unknown option {key!r}")
            options["FairShare" if option in _SHARES else option] = value
            last = option if option in _TRES_LISTS else ""
        if name is None:
            raise _Bad("name", "no name given")
        if not name:
            raise _Bad("name", "the name is empty")
        shares = _shares(options["FairShare"]) if "FairShare" in options else None
        priority = _priority(options["Priority"]) if "Priority" in options else None
    except _Bad as bad:
        bad.name = name or None
        raise
    partition = options.get("Partition")
    return _Options(
        name=name,
        shares=shares,
        partition=partition.lower() if partition else None,
        grp_tres_mins=options.get("GrpTRESMins"),
        priority=priority,
    )


def _priority(value: str) -> int | None:
    """Priority=: a whole number from 0 to 4294967294; -1 clears it (the parent's holds)."""
    word = value.strip()
    if word == "-1":
        return None
    if not _NUMBER.fullmatch(word) or not 0 <= int(word) < INFINITE:
        raise _Bad(
            "Priority", f"{value!r} is not a priority (a whole number from 0 to {INFINITE - 1})"
        )
    return int(word)


def _open_gres(tres: str) -> bool:
    """Whether a TRES list ends in a GRES name whose `:type=count` the `:` split off."""
    item = tres.rsplit(",", 1)[-1]
    return item.lower().startswith("gres/") and "=" not in item


class _Reader:
    def __init__(self, preserve_case_user: bool) -> None:
        self.result = SacctmgrDump()
        self.preserve_case_user = preserve_case_user
        self.cluster_line: int | None = None
        self.cluster_ok = False
        self.parent = ROOT_ACCOUNT
        self.bad_parent: str | None = None  # why lines hanging from the current Parent are refused
        self.accounts: dict[str, int] = {ROOT_ACCOUNT: 0}  # name -> line defined
        self.rejected_accounts: dict[str, int] = {}
        self.users: dict[tuple[str, str], tuple[int, str | None]] = {}  # -> (line, partition)

    def read(self, line: _Line) -> None:
        if not line.content.strip(_SPACE):
            return
        try:
            shown = line.raw.decode()
        except UnicodeDecodeError:
            shown = repr(line.raw)
        try:
            self._read(line)
        except _Bad as bad:
            reason = bad.reason
            if bad.quote and b"#" in line.raw:
                reason += " (a '#' starts a comment even inside quotes; write \\# for one)"
            self.result.rejected.append(RejectedLine(line.number, bad.field, reason, shown))

    def _read(self, line: _Line) -> None:
        if line.too_long:
            raise _Bad(
                "line",
                f"is longer than the {BUFFER_SIZE - 1} bytes sacctmgr reads as one line",
            )
        try:
            text = _ESCAPE.sub(r"\1", line.content.decode())
        except UnicodeDecodeError as exc:
            raise _Bad("line", f"is not valid UTF-8 ({exc.reason})") from None
        dash = text.find("-")
        if dash < 0:
            raise _Bad("object", "has no ' - ' between the object word and the name")
        word, rest = text[:dash].strip(), text[dash + 1 :].strip()
        kind = _OBJECTS.get(word.lower())
        if kind is None:
            raise _Bad(
                "object", f"unknown object {word!r}; expected Cluster, Parent, Account or User"
            )
        if not rest:
            raise _Bad("name", f"nothing after '{word} -'")
        if kind == "cluster":
            self._cluster(line.number, rest)
            return
        if self.cluster_line is None:
            raise _Bad("line", f"{word} line before any Cluster line")
        if not self.cluster_ok:
            raise _Bad("line", f"the Cluster line (line {self.cluster_line}) was rejected")
        if kind == "parent":
            self._parent(line.number, rest)
        elif kind == "account":
            self._account(line.number, rest)
        else:
            self._user(line.number, rest)

    def _cluster(self, number: int, rest: str) -> None:
        if self.cluster_line is not None:
            raise _Bad(
                "object",
                f"a second Cluster line (the first is line {self.cluster_line}); "
                "sacctmgr loads one cluster at a time",
            )
        self.cluster_line = number
        options = _parse_options(rest, lower_name=True)
        if options.shares == USE_PARENT:
            raise _Bad("Fairshare", "the root account has no parent to take its shares from")
        self.cluster_ok = True
        self.result.cluster = options.name
        if options.shares is not None:
            self.result.root_shares = options.shares
        self.result.root_priority = options.priority
        if options.grp_tres_mins is not None:
            self.result.grp_tres_mins[(ROOT_ACCOUNT, None)] = options.grp_tres_mins

    def _parent(self, number: int, rest: str) -> None:
        try:
            name = _parse_options(rest, lower_name=True).name
        except _Bad:
            self.bad_parent = f"the Parent line {number} was rejected"
            raise
        if name in self.accounts:
            self.parent, self.bad_parent = name, None
            return
        self.bad_parent = f"its parent account {name!r} (Parent line {number}) was rejected"
        if name in self.rejected_accounts:
            reason = f"account {name!r} was rejected on line {self.rejected_accounts[name]}"
        else:
            reason = f"account {name!r} is not defined above this line"
        raise _Bad("Parent", reason)

    def _account(self, number: int, rest: str) -> None:
        try:
            options = _parse_options(rest, lower_name=True)
            name = options.name
            if self.bad_parent is not None:
                raise _Bad("Parent", self.bad_parent, name=name)
        except _Bad as bad:
            if bad.name is not None and bad.name not in self.accounts:
                self.rejected_accounts.setdefault(bad.name, number)
            raise
        if name == ROOT_ACCOUNT:
            raise _Bad(
                "name", "root is the cluster's root account; its shares come from the Cluster line"
            )
        if name in self.accounts:
            raise _Bad(
                "name", f"account {name} is defined twice (first on line {self.accounts[name]})"
            )
        self.accounts[name] = number
        self.rejected_accounts.pop(name, None)
        shares = 1 if options.shares is None else options.shares
        association = AssociationDef(
            name, parent=self.parent, shares=shares, priority=options.priority
        )
        self._add(number, association, options)

    def _user(self, number: int, rest: str) -> None:
        options = _parse_options(rest, lower_name=not self.preserve_case_user)
        if self.bad_parent is not None:
            raise _Bad("Parent", self.bad_parent)
        key = (self.parent, options.name)
        if key in self.users:
            first, partition = self.users[key]
            reason = (
                f"duplicate association: user {options.name} in account {self.parent} "
                f"(first on line {first})"
            )
            if partition or options.partition:
                reason += "; associations per partition are not modelled"
            raise _Bad("name", reason)
        self.users[key] = (number, options.partition)
        shares = 1 if options.shares is None else options.shares
        association = AssociationDef(
            self.parent, parent=self.parent, user=options.name, shares=shares,
            priority=options.priority,
        )  # fmt: skip
        self._add(number, association, options)

    def _add(self, number: int, association: AssociationDef, options: _Options) -> None:
        self.result.entries.append((number, association))
        if options.grp_tres_mins is not None:
            self.result.grp_tres_mins[association.key] = options.grp_tres_mins
