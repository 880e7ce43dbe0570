"""Altair Accelerator's FairShare configuration in the Tcl form that `vovfsgroup genconfig`
writes and `vovfsgroup loadconfig` reads (`genconfig -leaf` adds the user leaves).

The form, from Altair's page "Configure FairShare via File"
(https://help.altair.com/accelerator/html/accel/topics/shared/fairshare_configure_via_file.htm):
`FSGROUP name [options] [{ body }]`, where the body holds more FSGROUP commands and a name is
relative to the enclosing group (at the top, to the root `/`); an absolute name is taken as it
is. The options are `-w WEIGHT` (default 100, or a `default` sibling's), `-t TIME` or
`-window TIME` (default inherited; 0 turns FairShare off below the group), `-u USERS` (the only
users allowed in the group) and `-user` (a USER-level group). A weight is an integer from 0 to
100,000 ("FairShare Weights",
https://2021.help.altair.com/2021.2/accelerator/html/accel/topics/shared/fairshare_weights.htm).
A time is a VOV timespec ("Time Specifications",
https://help.altair.com/accelerator/html/accel/topics/shared/time_specs.htm): digits and the
letters s, m, h, d, w in any case, digits without a letter being seconds (`3h30m`, `2M`, `60`).
User leaves are groups named `group.user`, as `/time/users.pistol` in "FairShare Tree Access"
(https://help.altair.com/accelerator/html/accel/topics/shared/fairshare_tree_access.htm).

The file is Tcl, so it is split into commands and words as Tcl's own rules say (the Tcl(n)
manual page, https://www.tcl-lang.org/man/tcl8.6/TclCmd/Tcl.htm): commands end at a newline or
`;`; `#` starts a comment only where a command starts (hence `;#` after one); backslash-newline
joins lines; `{...}` nests and counts every brace inside it, comments included; `"..."` may span
lines. A body is read as a script in turn, so its line numbers are the file's. `$var` and
`[command]` are not evaluated: a name or value holding one is a problem. Groups come in file
order, each after the group whose body holds it; an absolute name may name a group whose
parent comes later or nowhere, and no ancestor is invented for it.

`genconfig -serial` writes another form, which loadconfig also reads, but every copy of the
page we found stops before its example, so its syntax is unknown and it is not read: a file
with no FSGROUP command is one problem, "not a vovfsgroup genconfig Tcl file".

Nothing raises. Each fault is a RejectedLine naming its line and field; a faulty command is
left out whole (an FSGROUP with the groups of its body, said in its one problem, only its first
fault reported, as Tcl stops at the first error) and the rest of the file is kept.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from trees.formats.rejected import RejectedLine
from trees.formats.tcl import BLANKS, substitutes, unescape, word_ends

__all__ = [
    "MAX_NESTING",
    "MAX_WEIGHT",
    "FsGroupLine",
    "FsGroupsFile",
    "parse_fsgroups",
    "parse_timespec",
]

MAX_WEIGHT = 100_000
_ROOT = "/"
_COMMAND = "FSGROUP"
_WINDOW_OPTIONS = frozenset({"-t", "-window"})
_VALUED = frozenset({"-w", "-u"}) | _WINDOW_OPTIONS  # options followed by a value
_OPTIONS = "-w, -t, -window, -u and -user"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}  # Time Specifications
_WEIGHT = re.compile(r"-?[0-9]+", re.ASCII)
_BAD_NAME_CHARACTER = re.compile(r"[\s\x00-\x1f\x7f]")
_BRACED_NEWLINE = re.compile(r"\\\n[ \t]*")  # the one substitution Tcl makes inside braces
_BRACE_OR_ESCAPE = re.compile(r"\\.|[{}]", re.DOTALL)
# Groups within groups: Altair's examples nest 3 deep. Past this the file is no FairShare
# tree, and reading on would only nest the reader as deep.
MAX_NESTING = 100
MAX_PATH = 255  # characters of a group's path, which is its node's name
# A file whose first commands are none of them FSGROUP is another kind of file: not read on.
WRONG_FORMAT_AFTER = 100
_SHOWN = 40  # characters of a value quoted in a problem
# `1w2d3h4m5s` is 10; digits enough for any window (a century is 3,155,760,000 s) and then some.
_TIMESPEC_MAX = 40


@dataclass(frozen=True, slots=True)
class FsGroupLine:
    path: str  # absolute: "/class/sim/jolly"
    weight: int | None  # None when the file does not say (100 applies, or a `default` sibling's)
    window: int | None  # seconds; None when the file does not say (inherited)
    users: tuple[str, ...]  # -u
    user_level: bool  # -user
    line: int  # 1-based line of its FSGROUP word


@dataclass(frozen=True, slots=True)
class FsGroupsFile:
    groups: tuple[FsGroupLine, ...]  # in file order (a parent before its children)
    problems: tuple[RejectedLine, ...]


def parse_timespec(text: str) -> int:
    """Seconds in a VOV timespec (`7200`, `2h`, `1h30m`, `2h00m`, `1m00s`, `1d`, `2M`); raises
    ValueError saying what is wrong."""
    if not text:
        raise ValueError("an empty timespec")
    if text.startswith("-"):
        raise ValueError(f"{text!r} is negative")
    total = 0
    digits = ""
    if len(text) > _TIMESPEC_MAX:
        raise ValueError(f"{_shown(text)} is not a timespec: {len(text):,} characters")
    for character in text:
        if character in "0123456789":
            digits += character
        elif character.lower() in _UNITS:
            if not digits:
                raise ValueError(
                    f"{text!r} is not a timespec: {character!r} has no number before it"
                )
            total += int(digits) * _UNITS[character.lower()]
            digits = ""
        else:
            raise ValueError(
                f"{text!r} is not a timespec: {character!r} is neither a digit "
                "nor a unit (s, m, h, d or w)"
            )
    return total + int(digits or "0")  # digits without a unit are seconds


def parse_fsgroups(text: str) -> FsGroupsFile:
    """Every group the file defines, in file order, and every problem; never raises."""
    reader = _Reader(_Source(text.replace("\r\n", "\n")))  # Tcl reads CRLF files as LF
    reader.script(0, len(reader.source.text), _ROOT, top=True)
    return FsGroupsFile(tuple(reader.groups), tuple(reader.problems))


class _Source:
    """The text, and the line of any offset in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0, *(found.end() for found in re.finditer("\n", text))]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def line_text(self, line: int) -> str:
        start = self._starts[line - 1]
        stop = self.text.find("\n", start)
        return self.text[start : stop if stop >= 0 else len(self.text)]


@dataclass(frozen=True, slots=True)
class _Word:
    text: str  # after Tcl's backslash substitution
    start: int  # offset of its first character, brace or quote included
    end: int  # offset just after it
    inner: tuple[int, int]  # offsets of what is between its braces or quotes
    kind: str  # "bare", "braced" or "quoted"
    substitutes: bool  # holds `$name` or `[...]`, which Tcl would replace and we do not


@dataclass(frozen=True, slots=True)
class _Command:
    words: tuple[_Word, ...]


@dataclass(frozen=True, slots=True)
class _Broken:
    """A command Tcl could not split into words."""

    words: tuple[_Word, ...]  # those read before the fault
    at: int
    reason: str
    rest_lost: bool  # an unclosed brace or quote: the rest of the script went into it


class _Fault(Exception):
    def __init__(self, at: int, reason: str, *, rest_lost: bool = False) -> None:
        super().__init__(reason)
        self.at = at
        self.reason = reason
        self.rest_lost = rest_lost


class _Problem(Exception):
    """A fault in an FSGROUP command's words: the group is left out."""

    def __init__(self, at: int, field: str, reason: str) -> None:
        super().__init__(reason)
        self.at = at
        self.field = field
        self.reason = reason


def _skip_blanks(text: str, at: int, end: int, *, newlines: bool = False) -> int:
    while at < end:
        if text[at] in BLANKS or (newlines and text[at] in "\n;"):
            at += 1
        elif text.startswith("\\\n", at):
            at += 2
        else:
            break
    return at


def _line_end(text: str, at: int, end: int) -> int:
    stop = text.find("\n", at, end)
    return end if stop < 0 else stop


def _comment_end(text: str, at: int, end: int) -> int:
    """A comment runs to a newline that no backslash escapes."""
    while at < end and text[at] != "\n":
        at += 2 if text[at] == "\\" else 1
    return min(at, end)


def _matching_brace(text: str, at: int, end: int) -> int:
    """The `}` closing the `{` at `at`, counting every unescaped brace between; -1 if none.
    Only braces and backslashes are visited: a body is scanned once for each group around it."""
    depth = 0
    for found in _BRACE_OR_ESCAPE.finditer(text, at, end):
        character = found.group()
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return found.start()
    return -1


def _closing_quote(text: str, at: int, end: int) -> int:
    while at < end:
        if text[at] == "\\":
            at += 2
        elif text[at] == '"':
            return at
        else:
            at += 1
    return -1


def _bare_end(text: str, at: int, end: int) -> int:
    while at < end and not word_ends(text, at):
        at += 2 if text[at] == "\\" else 1
    return min(at, end)


def _check_after(text: str, after: int, end: int, closer: str) -> None:
    """Tcl's "extra characters after close-brace" (or close-quote)."""
    if after >= end or word_ends(text, after):
        return
    if text[after] == "}":
        raise _Fault(after, "a `}` with no `{` open")
    extra = text[after : _bare_end(text, after, end)]
    raise _Fault(after, f"extra characters after a closing {closer}: {_shown(extra)}")


def _read_word(text: str, at: int, end: int) -> _Word:
    first = text[at]
    if first == "{":
        close = _matching_brace(text, at, end)
        if close < 0:
            raise _Fault(at, "this `{` is never closed", rest_lost=True)
        _check_after(text, close + 1, end, "`}`")
        inner = text[at + 1 : close]
        return _Word(
            _BRACED_NEWLINE.sub(" ", inner), at, close + 1, (at + 1, close), "braced", False
        )
    if first == '"':
        close = _closing_quote(text, at + 1, end)
        if close < 0:
            raise _Fault(at, 'this `"` is never closed', rest_lost=True)
        _check_after(text, close + 1, end, '`"`')
        raw = text[at + 1 : close]
        return _Word(unescape(raw), at, close + 1, (at + 1, close), "quoted", substitutes(raw))
    if first == "}":  # Tcl would take it as a word; here it is always a brace too many
        raise _Fault(at, "a `}` with no `{` open")
    stop = _bare_end(text, at, end)
    raw = text[at:stop]
    return _Word(unescape(raw), at, stop, (at, stop), "bare", substitutes(raw))


def _command(text: str, at: int, end: int) -> tuple[_Command | _Broken, int]:
    """The command starting at `at`, and where the next one may start."""
    words: list[_Word] = []
    while True:
        at = _skip_blanks(text, at, end)
        if at >= end or text[at] in "\n;":
            return _Command(tuple(words)), at
        try:
            word = _read_word(text, at, end)
        except _Fault as fault:
            broken = _Broken(tuple(words), fault.at, fault.reason, fault.rest_lost)
            return broken, end if fault.rest_lost else _line_end(text, fault.at, end)
        words.append(word)
        at = word.end


def _commands(text: str, begin: int, end: int) -> Iterator[_Command | _Broken]:
    at = begin
    while True:
        at = _skip_blanks(text, at, end, newlines=True)
        if at >= end:
            return
        if text[at] == "#":
            at = _comment_end(text, at, end)
            continue
        item, at = _command(text, at, end)
        yield item


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def _no_substitution(word: _Word, field: str) -> None:
    if word.substitutes:
        raise _Problem(
            word.start, field, f"{_shown(word.text)} holds a Tcl substitution ($ or [ ]), not read"
        )


def _path(word: _Word, parent: str) -> str:
    """The absolute path a name gives below `parent`."""
    name = word.text
    _no_substitution(word, "name")
    if not name:
        raise _Problem(word.start, "name", "the name is empty")
    if name.startswith("-"):
        raise _Problem(word.start, "name", f"no name before the option {name}")
    if _BAD_NAME_CHARACTER.search(name):
        raise _Problem(
            word.start, "name", f"name {_shown(name)} holds a blank or a control character"
        )
    if name == _ROOT:
        raise _Problem(word.start, "name", "the root / is the server's, not a group of the file")
    parts = name.removeprefix("/").split("/")
    if "" in parts:
        raise _Problem(word.start, "name", f"name {_shown(name)} has an empty part between slashes")
    if "." in parts or ".." in parts:
        raise _Problem(word.start, "name", f"name {_shown(name)} has a '.' or '..' part")
    path = name if name.startswith("/") else f"{parent.rstrip('/')}/{name}"
    if len(path) > MAX_PATH:
        raise _Problem(
            word.start, "name", f"path {_shown(path)} is over {MAX_PATH} characters, a node's name"
        )
    return path


def _weight(word: _Word) -> int:
    _no_substitution(word, "-w")
    if _WEIGHT.fullmatch(word.text) is None:
        raise _Problem(word.start, "-w", f"weight {_shown(word.text)} is not a whole number")
    if len(word.text.lstrip("-").lstrip("0")) > len(str(MAX_WEIGHT)):
        sign = "negative" if word.text.startswith("-") else "over the maximum of 100,000"
        raise _Problem(
            word.start, "-w", f"weight {_shown(word.text)} is {sign}: it is 0 to 100,000"
        )
    weight = int(word.text)
    if weight < 0:
        raise _Problem(word.start, "-w", f"weight {weight} is negative: it is 0 to 100,000")
    if weight > MAX_WEIGHT:
        raise _Problem(word.start, "-w", f"weight {weight} is over the maximum of 100,000")
    return weight


def _window(option: str, word: _Word) -> int:
    _no_substitution(word, option)
    try:
        return parse_timespec(word.text)
    except ValueError as error:
        raise _Problem(word.start, option, str(error)) from None


def _users(word: _Word) -> tuple[str, ...]:
    _no_substitution(word, "-u")
    if any(character in word.text for character in '{}"'):
        raise _Problem(
            word.start, "-u", f"users {_shown(word.text)} hold braces or quotes: one word a user"
        )
    return tuple(word.text.split())  # a Tcl list of plain words


def _stray(word: _Word, last: bool) -> _Problem:
    """Why a word after the name is neither an option, an option's value nor the body."""
    text = word.text
    if word.kind != "bare" and not last:
        return _Problem(word.start, "body", "a body in braces must be the last word")
    if text.startswith("-"):
        return _Problem(word.start, text, f"unknown option {text} (FSGROUP takes {_OPTIONS})")
    if text.startswith("#"):
        return _Problem(word.start, "line", "a comment after a command is written `;#`, not `#`")
    return _Problem(word.start, "line", f"{_shown(text)} is neither an option nor a body in braces")


def _left_out(count: int) -> str:
    if not count:
        return ""
    return f"; left out with the {count} group{'s' if count > 1 else ''} of its body"


class _Reader:
    def __init__(self, source: _Source) -> None:
        self.source = source
        self.groups: list[FsGroupLine] = []
        self.problems: list[RejectedLine] = []
        self.seen: dict[str, int] = {}  # path: line of the FSGROUP that defined it

    def problem(self, at: int, field: str, reason: str) -> None:
        line = self.source.line(at)
        self.problems.append(RejectedLine(line, field, reason, self.source.line_text(line)))

    def script(self, begin: int, end: int, parent: str, *, top: bool, depth: int = 0) -> None:
        """The commands between `begin` and `end`, their relative names below `parent`, which
        is `depth` groups deep."""
        rest = "the rest of the file" if top else f"the rest of the body of {parent}"
        first: tuple[int, str] | None = None  # the file's first command, if not FSGROUP
        fsgroups = others = 0
        for item in _commands(self.source.text, begin, end):
            words = item.words
            if words and words[0].text == _COMMAND:
                fsgroups += 1
            else:
                others += 1
                if first is None and fsgroups == 0:
                    start = item.at if isinstance(item, _Broken) and not words else words[0].start
                    what = words[0].text if words else self.source.text[start : start + 20]
                    first = (start, what)
                if top and fsgroups == 0 and others > WRONG_FORMAT_AFTER:
                    break  # another kind of file: reading on would only list its lines
            if isinstance(item, _Broken):
                self.broken(item, rest)
            elif words[0].text == _COMMAND:
                self.fsgroup(words, parent, depth)
            else:
                self.problem(
                    words[0].start, "line", f"not an FSGROUP command: {_shown(words[0].text)}"
                )
        if top and first is not None and fsgroups == 0:
            # Another kind of file (genconfig -serial's, say): one problem, not one a line.
            self.problems.clear()
            self.problem(
                first[0],
                "line",
                "not a vovfsgroup genconfig Tcl file: no command in it is FSGROUP (the first is "
                f"{_shown(first[1])}); genconfig's -serial form is not read",
            )

    def broken(self, item: _Broken, rest: str) -> None:
        reason = item.reason
        if item.rest_lost:
            reason += f": {rest} is left out"
        elif len(item.words) >= 2 and item.words[0].text == _COMMAND:
            reason += f"; FSGROUP {item.words[1].text} is left out"
        self.problem(item.at, "line", reason)

    def fsgroup(self, words: tuple[_Word, ...], parent: str, depth: int) -> None:
        """One FSGROUP command: kept with its body, or left out with it on its first fault."""
        faults: list[_Problem] = []
        path: str | None = None
        if len(words) < 2:
            faults.append(_Problem(words[0].start, "name", "FSGROUP without a name"))
        else:
            try:
                path = _path(words[1], parent)
            except _Problem as fault:
                faults.append(fault)
        weight: int | None = None
        window: int | None = None
        users: tuple[str, ...] = ()
        user_level = False
        body: _Word | None = None
        index = 2
        while index < len(words):
            word = words[index]
            option = word.text
            last = index == len(words) - 1
            if option in _VALUED:
                value = words[index + 1] if not last else None
                if value is None or (
                    option != "-u" and value.kind == "braced" and index + 1 == len(words) - 1
                ):
                    # `-w {...}` at the end: the braces are surely the body, not the weight.
                    body = value
                    faults.append(_Problem(word.start, option, f"{option} has no value after it"))
                    break
                try:
                    if option == "-w":
                        weight = _weight(value)
                    elif option == "-u":
                        users = _users(value)
                    else:
                        window = _window(option, value)
                except _Problem as fault:
                    faults.append(fault)
                index += 2
                continue
            index += 1
            if option == "-user":
                user_level = True
            elif last and word.kind != "bare":
                body = word
            else:
                faults.append(_stray(word, last))
        if not faults and path in self.seen:
            faults.append(
                _Problem(
                    words[1].start,
                    "name",
                    f"{path} is defined before, on line {self.seen[path]}: the first is kept",
                )
            )
        if body is not None and depth + 1 >= MAX_NESTING:
            # Its body is not read, not even to count what goes with it: no nesting goes deeper.
            reason = (
                f"FSGROUP {_shown(words[1].text)} is {depth + 1} groups deep: the groups of its"
                f" body would be deeper than {MAX_NESTING}, which no FairShare tree is; left"
                " out with its body"
            )
            faults.append(_Problem(words[0].start, "body", reason))
            body = None
        if faults or path is None:
            first = faults[0]
            kept = self.shadow(body, path or f"{parent.rstrip('/')}/?", depth) if body else 0
            self.problem(first.at, first.field, first.reason + _left_out(kept))
            return
        line = self.source.line(words[0].start)
        self.seen[path] = line
        self.groups.append(FsGroupLine(path, weight, window, users, user_level, line))
        if body is not None:
            self.script(*body.inner, path, top=False, depth=depth + 1)

    def shadow(self, body: _Word, path: str, depth: int) -> int:
        """How many groups a left-out group's body would have given: they go with it."""
        shadow = _Reader(self.source)
        shadow.seen = dict(self.seen)
        shadow.script(*body.inner, path, top=False, depth=depth + 1)
        return len(shadow.groups)
