"""Altair Accelerator preemption rules as `VovPreemptRule` commands in a Tcl file (vovpreemptd's
`config.tcl`, or a rule file such as `fastfairshare.tcl`).

The command, from Altair's "Preemption Rules"
(https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules.htm) and
"Preemption Rules to Speed Up FairShare"
(https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules_fairshare.htm):
`VovPreemptRule -rulename NAME -preempting "SELECTION" -preemptable "SELECTION" [-bucketage T]
[-killage T] [-pool NAME] [-ruletype TYPE] [-order N] ...`. The pool defaults to `mainpool`.
Every option takes a value. The options known are those of a rule object as the vtk_preemptrule
page lists them
(https://2021.help.altair.com/2021.2/accelerator/html/vov/extract/vtk/dita/vtk_preemptrule.htm):
besides those above, `-enabled -debug -waitingfor -multiqueueres -mqthresh -donotdisturb
-preemptslavespec -preemptslavenum -method -skipresumedjob -reservetime -reservetype -reservenum
-reserveslave -reservefor -resumeres -resumedelay -numjobs -maxattempts -sortjobsby -script
-fireonce`, kept as written in `options`. `-bucketage` and `-killage` are VOV timespecs ("Time
Specifications", https://help.altair.com/accelerator/html/accel/topics/shared/time_specs.htm:
`10`, `2m`, `1h30m`).

The file is split into commands and words by Tcl's rules (the Tcl(n) manual page,
https://www.tcl-lang.org/man/tcl8.6/TclCmd/Tcl.htm): a command ends at a newline or `;`, `#`
starts a comment where a command starts, backslash-newline joins lines, `"..."` and `{...}`
make one word. `$var` and `[command]` are not evaluated: a rule holding one is a problem.

Nothing raises. A rule Tcl or VovPreemptRule would refuse (an unknown option, an option with no
value, a bad number or timespec, no -rulename, a substitution) is left out with one problem, its
first fault, as Tcl stops at the first error; the other rules are kept. A -preempting or
-preemptable selection that does not parse (see trees.engine.preempt) is a problem too, but the
rule is kept as written: the server, not the command, reads selections (a rule object carries an
`errormsg`), and trees.engine.preempt.preemptions says it never fires. So is FSEXCESS, which
Altair's fastfairshare.tcl uses but no page we could read documents.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from trees.engine.preempt import SelectionError, parse_selection
from trees.formats.fsgroups import parse_timespec
from trees.formats.rejected import RejectedLine
from trees.formats.tcl import BLANKS, substitutes, unescape, word_ends

__all__ = ["DEFAULT_POOL", "PreemptRuleLine", "PreemptRulesFile", "parse_preempt_rules"]

DEFAULT_POOL = "mainpool"
_COMMAND = "VovPreemptRule"
_OPTIONS = frozenset(
    [
        "rulename",
        "ruletype",
        "pool",
        "order",
        "enabled",
        "debug",
        "preempting",
        "waitingfor",
        "bucketage",
        "multiqueueres",
        "mqthresh",
        "donotdisturb",
        "preemptable",
        "preemptslavespec",
        "preemptslavenum",
        "killage",
        "method",
        "skipresumedjob",
        "reservetime",
        "reservetype",
        "reservenum",
        "reserveslave",
        "reservefor",
        "resumeres",
        "resumedelay",
        "numjobs",
        "maxattempts",
        "sortjobsby",
        "script",
        "fireonce",
    ]
)
_MODELLED = frozenset(
    [
        "-rulename",
        "-preempting",
        "-preemptable",
        "-bucketage",
        "-killage",
        "-pool",
        "-ruletype",
        "-order",
    ]
)
_SELECTIONS = ("-preempting", "-preemptable")
_ORDER = re.compile(r"-?[0-9]+")
_SHOWN = 40  # characters of a value quoted in a problem
WRONG_FORMAT_AFTER = 100


@dataclass(frozen=True, slots=True)
class PreemptRuleLine:
    name: str
    preempting: str  # selection of the queued jobs that may preempt; "" if absent
    preemptable: str  # selection of the running jobs they may preempt; "" if absent
    bucketage: int  # seconds a queued job must have waited; default 0
    killage: int | None  # seconds
    pool: str  # default "mainpool"
    ruletype: str  # as written, "" if absent
    order: int | None
    options: tuple[tuple[str, str], ...]  # every other option, as written, in file order
    line: int  # 1-based line of its VovPreemptRule word


@dataclass(frozen=True, slots=True)
class PreemptRulesFile:
    rules: tuple[PreemptRuleLine, ...]  # in file order
    problems: tuple[RejectedLine, ...]


def parse_preempt_rules(text: str) -> PreemptRulesFile:
    """Every VovPreemptRule of the file, in file order, and every problem; never raises."""
    reader = _Reader(text.replace("\r\n", "\n"))  # Tcl reads CRLF files as LF
    for number, (words, fault) in enumerate(_commands(reader.text), 1):
        if number > WRONG_FORMAT_AFTER and not reader.rules and len(reader.problems) >= number - 1:
            # Its first commands all refused: another kind of file, whose lines are not listed.
            reader.problems = reader.problems[:WRONG_FORMAT_AFTER]
            at = words[0].start if words else fault.at if fault else 0
            reason = (
                f"not a {_COMMAND} file: none of its first {WRONG_FORMAT_AFTER} commands is a"
                " rule that could be read; the rest of the file is not read"
            )
            reader.problem(at, "file", reason)
            break
        if fault is not None:
            reader.broken(words, fault)
        elif words[0].text != _COMMAND:
            reader.problem(
                words[0].start, "line", f"not a {_COMMAND} command: {_shown(words[0].text)}"
            )
        else:
            reader.rule(words)
    return PreemptRulesFile(tuple(reader.rules), tuple(reader.problems))


@dataclass(frozen=True, slots=True)
class _Word:
    text: str  # after Tcl's backslash substitution
    start: int  # offset of its first character, quote or brace included
    inner: int  # offset of its first character inside the quotes or braces
    verbatim: bool  # `text` is the file's characters from `inner` on, unchanged
    substitutes: bool  # holds `$name` or `[...]`, which Tcl would replace and we do not


class _Fault(Exception):
    """Where Tcl could not split a command into words."""

    def __init__(self, at: int, reason: str, *, rest_lost: bool = False) -> None:
        super().__init__(reason)
        self.at = at
        self.reason = reason
        self.rest_lost = rest_lost  # an unclosed quote or brace swallowed the rest of the file


def _check_after(text: str, at: int, closer: str) -> None:
    if at < len(text) and not word_ends(text, at):
        raise _Fault(at, f"extra characters after a closing {closer}")


def _word(text: str, at: int) -> tuple[_Word, int]:
    """The word starting at `at`, and the offset just after it."""
    end = len(text)
    if text[at] == "{":
        depth = 0
        close = at
        while close < end:
            if text[close] == "\\":
                close += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[close], 0)
            if depth == 0:
                break
            close += 1
        if close >= end:
            raise _Fault(at, "this `{` is never closed", rest_lost=True)
        _check_after(text, close + 1, "`}`")
        raw = text[at + 1 : close]
        inner = re.sub(r"\\\n[ \t]*", " ", raw)  # the one substitution inside braces
        return _Word(inner, at, at + 1, inner == raw, False), close + 1
    if text[at] == '"':
        close = at + 1
        while close < end and text[close] != '"':
            close += 2 if text[close] == "\\" else 1
        if close >= end:
            raise _Fault(at, 'this `"` is never closed', rest_lost=True)
        _check_after(text, close + 1, '`"`')
        raw = text[at + 1 : close]
        unescaped = unescape(raw)
        return _Word(unescaped, at, at + 1, unescaped == raw, substitutes(raw)), close + 1
    stop = at
    while stop < end and not word_ends(text, stop):
        stop += 2 if text[stop] == "\\" else 1
    stop = min(stop, end)
    raw = text[at:stop]
    unescaped = unescape(raw)
    return _Word(unescaped, at, at, unescaped == raw, substitutes(raw)), stop


def _commands(text: str) -> Iterator[tuple[list[_Word], _Fault | None]]:
    """Each command's words, and the fault that stopped its reading, if any."""
    end = len(text)
    at = 0
    while True:
        while at < end and (text[at] in BLANKS + "\n;" or text.startswith("\\\n", at)):
            at += 2 if text[at] == "\\" else 1
        if at >= end:
            return
        if text[at] == "#":  # a comment runs to a newline no backslash escapes
            while at < end and text[at] != "\n":
                at += 2 if text[at] == "\\" else 1
            continue
        words: list[_Word] = []
        fault: _Fault | None = None
        while True:
            while at < end and (text[at] in BLANKS or text.startswith("\\\n", at)):
                at += 2 if text[at] == "\\" else 1
            if at >= end or text[at] in "\n;":
                break
            try:
                word, at = _word(text, at)
            except _Fault as error:
                fault = error
                newline = text.find("\n", error.at)
                at = end if error.rest_lost or newline < 0 else newline
                break
            words.append(word)
        yield words, fault


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0, *(found.end() for found in re.finditer("\n", text))]
        self.rules: list[PreemptRuleLine] = []
        self.problems: list[RejectedLine] = []

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)

    def problem(self, at: int, field: str, reason: str) -> None:
        line = self.line(at)
        start = self._starts[line - 1]
        stop = self.text.find("\n", start)
        text = self.text[start : stop if stop >= 0 else len(self.text)]
        self.problems.append(RejectedLine(line, field, reason, text))

    def broken(self, words: list[_Word], fault: _Fault) -> None:
        reason = fault.reason
        if words and words[0].text == _COMMAND:
            reason += "; the rule is left out"
        if fault.rest_lost:
            reason += "; the rest of the file is left out"
        self.problem(fault.at, "line", reason)

    def rule(self, words: list[_Word]) -> None:
        """One VovPreemptRule: kept, or left out at its first fault."""
        values: dict[str, _Word] = {}
        index = 1
        while index < len(words):
            option = words[index]
            name = option.text
            if option.substitutes:
                self.problem(option.start, "line", f"{_shown(name)} holds a Tcl substitution")
                return
            if not name.startswith("-") or len(name) < 2:
                self.problem(
                    option.start,
                    "line",
                    f"{_shown(name)} is not an option: {_COMMAND} takes -option value pairs",
                )
                return
            if name[1:] not in _OPTIONS:
                self.problem(option.start, name, f"unknown option {name}; the rule is left out")
                return
            value = words[index + 1] if index + 1 < len(words) else None
            if value is None or (value.text.startswith("-") and value.text[1:] in _OPTIONS):
                self.problem(option.start, name, f"{name} has no value after it")
                return
            if value.substitutes:
                self.problem(
                    value.start,
                    name,
                    f"{_shown(value.text)} holds a Tcl substitution ($ or [ ]), not read",
                )
                return
            if name in values:
                self.problem(option.start, name, f"{name} is given twice: the last is kept")
            values[name] = value
            index += 2
        self.build(words[0], values)

    def build(self, command: _Word, values: dict[str, _Word]) -> None:
        name = values.get("-rulename")
        if name is None or not name.text:
            self.problem(command.start, "-rulename", f"{_COMMAND} without a -rulename")
            return
        seconds: dict[str, int] = {}
        for option in ("-bucketage", "-killage"):
            word = values.get(option)
            if word is not None:
                try:
                    seconds[option] = parse_timespec(word.text.strip())
                except ValueError as error:
                    self.problem(word.start, option, str(error))
                    return
        order_word = values.get("-order")
        if order_word is not None and _ORDER.fullmatch(order_word.text.strip()) is None:
            self.problem(
                order_word.start, "-order", f"{_shown(order_word.text)} is not a whole number"
            )
            return
        for option in _SELECTIONS:
            word = values.get(option)
            if word is None:
                continue
            try:
                parse_selection(word.text)
            except SelectionError as error:
                # Exact where the word is the file's text, else the word's own start.
                at = word.inner + error.position if word.verbatim else word.start
                self.problem(
                    at,
                    option,
                    f"{error.message}, at offset {error.position} of "
                    f"{_shown(word.text)}: rule {name.text} is kept but never fires",
                )

        def text(option: str, default: str = "") -> str:
            word = values.get(option)
            return default if word is None else word.text

        self.rules.append(
            PreemptRuleLine(
                name=name.text,
                preempting=text("-preempting"),
                preemptable=text("-preemptable"),
                bucketage=seconds.get("-bucketage", 0),
                killage=seconds.get("-killage"),
                pool=text("-pool", DEFAULT_POOL),
                ruletype=text("-ruletype"),
                order=None if order_word is None else int(order_word.text.strip()),
                options=tuple(
                    (option, word.text)
                    for option, word in values.items()
                    if option not in _MODELLED
                ),
                line=self.line(command.start),
            )
        )
