"""Altair Accelerator preemption rules: which queued job may preempt which running jobs, and why.

A rule (`VovPreemptRule`, Altair's "Preemption Rules",
https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules.htm) selects
with `-preempting` the queued jobs (the bucket) that may preempt, once they have waited
`-bucketage` seconds, and with `-preemptable` the running jobs they may preempt; `@FIELD@` in
`-preemptable` is the preempting job's value ("Preemption Rules to Speed Up FairShare",
https://help.altair.com/accelerator/html/accel/topics/accelerator/preemption_rules_fairshare.htm,
which also defines the FS_* fields, FS_RANK9 and FS_EXCESS_RUNNING_LOCAL among them).

Both are selection rules, read as Altair's "Selection Rules"
(https://help.altair.com/accelerator/html/vov/topics/shared/selection_rules.htm) and "Selection
Rules Operators" (https://help.altair.com/accelerator/html/vov/topics/vov/operators.htm) say:
predicates `FIELD op VALUE`; a blank between predicates, `&` or `AND` is AND; `|` or `OR` is
OR, of lower precedence; `!` or `NOT` negates; parentheses group; AND, OR and NOT in any case.
Field names ignore case and extra underscores (FSRANK9 is FS_RANK9). The operators: `=` `==`
`!=` `<` `<=` `>` `>=`; `~` `!~` regular expression, `~~` `!~~` ignoring case; `^` `!^`
substring, `^^` `!^^` ignoring case; `:` `!:` glob, `::` `!::` ignoring case. A field alone
means `!=0` (a number) or `!=""` (a string). A value may be double-quoted or hold
backslash-escaped characters; `FIELD==X,Y` is `FIELD==X | FIELD==Y`, and a comma inside quotes is
literal; an integer value may be a timespec (`AGE>10m`).

Choices where the pages are silent, stated once:
* Numbers: a comparison is numeric when both sides are numbers (integers or decimals), else it
  compares the strings, `<` and `>` included. A value that is a timespec (`10m`, `1h30m`)
  counts as its seconds when the job's side is a number.
* A list after a negated operator (`!=X,Y`, `!~X,Y`) means none of the values; after `<`, `>`
  and the others, any of them.
* A bare value ends at a blank, or at a `)` while a parenthesis is open; `|` and `&` inside it
  are part of it (regular expressions use them), so write `A==1 | B==2` with blanks.
* Regular expressions are Python's, searched (not anchored); globs match the whole value, with
  `*`, `?` and `[...]`. A value substituted for `@FIELD@` is taken literally, never as a pattern.
  Inside double quotes everything is literal: no `@FIELD@`, no comma list.
* A field the job does not have is the empty string.
* Rules are considered by `-order`, rules without one after those with one, then in file order.
  Each rule is evaluated on its own: the pool's "one rule fires per cycle" is not applied, nor
  `-waitingfor` (the resource a job waits for is not known here). `-enabled 0` never fires.

The known fields are FIELDS: the job's ID, USER, GROUP (its FairShare group), JOBCLASS, PRIORITY,
STATUS and SUBMITTED (epoch seconds, for `-bucketage`), and the FS_* fields of its group.
FSEXCESS, used by Altair's fastfairshare.tcl, is in no page we could read: it is an unknown
field, not guessed to be an alias.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias, TypeVar

from trees.engine.accelerator import FsFields, FsJob


class PreemptRule(Protocol):
    """What the engine reads of a rule (trees.formats.preempt_rules.PreemptRuleLine is one):
    the engine never imports the formats, which import it."""

    @property
    def name(self) -> str: ...
    @property
    def preempting(self) -> str: ...
    @property
    def preemptable(self) -> str: ...
    @property
    def bucketage(self) -> int: ...
    @property
    def order(self) -> int | None: ...
    @property
    def options(self) -> tuple[tuple[str, str], ...]: ...


__all__ = [
    "FIELDS",
    "Job",
    "Preemption",
    "Selection",
    "SelectionError",
    "TermResult",
    "canonical_field",
    "evaluate",
    "job_of",
    "parse_selection",
    "preemptions",
]

FIELDS = (
    "ID",
    "USER",
    "GROUP",
    "JOBCLASS",
    "PRIORITY",
    "STATUS",
    "SUBMITTED",
    "FS_TARGET",
    "FS_RUNNING",
    "FS_RUNNING_COUNT",
    "FS_EXCESS_RUNNING",
    "FS_EXCESS_RUNNING_LOCAL",
    "FS_HISTORY",
    "FS_EXCESS_HISTORY",
    "FS_RANK",
    "FS_RANK9",
)
_BY_KEY = {name.replace("_", ""): name for name in FIELDS}
# Longest first, so that `!~~` is not read as `!~` followed by a value starting with `~`.
_OPERATOR = re.compile(r"!?(?:~~|\^\^|::|~|\^|:)|==|!=|<=|>=|=|<|>")
_NEGATED = frozenset({"!=", "!~", "!~~", "!^", "!^^", "!:", "!::"})
_ORDERED = frozenset({"<", "<=", ">", ">="})
_KEYWORDS = frozenset({"AND", "OR", "NOT"})
_BLANKS = " \t\r\n\v\f"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)@")
_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_TIMESPEC = re.compile(r"(?:[0-9]+[smhdw])+[0-9]*", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}  # "Time Specifications"
_GLOB_SPECIAL = re.compile(r"([*?\[])")

Job: TypeAlias = Mapping[str, str | int]
_Comparable = TypeVar("_Comparable", float, str)


class SelectionError(ValueError):
    """A selection rule that does not parse (or a reference to a job that was not given)."""

    def __init__(self, message: str, position: int = 0) -> None:
        super().__init__(f"{message} (at offset {position})")
        self.message = message
        self.position = position  # 0-based offset in the selection's text


@dataclass(frozen=True, slots=True)
class _Reference:
    field: str  # canonical


@dataclass(frozen=True, slots=True)
class _Term:
    text: str  # as written: "FSRANK9>@FSRANK9@"
    field: str  # canonical: "FS_RANK9"
    op: str  # "" for a field alone
    values: tuple[tuple[str | _Reference, ...], ...]  # the alternatives of a comma list


@dataclass(frozen=True, slots=True)
class _Not:
    operand: _Node


@dataclass(frozen=True, slots=True)
class _All:
    operands: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Any:
    operands: tuple[_Node, ...]


_Node: TypeAlias = "_Term | _Not | _All | _Any"


@dataclass(frozen=True)
class Selection:
    text: str
    _root: _Node | None = field(default=None, repr=False, compare=False)  # None: selects all


@dataclass(frozen=True)
class TermResult:
    term: str  # as written
    holds: bool
    left: str | int  # the job's value
    right: str | int  # the value compared with, after @FIELD@ substitution


@dataclass(frozen=True)
class Preemption:
    rule: str
    queued_job: str
    fires: bool
    victims: tuple[str, ...]  # running job ids this rule would let the queued job preempt
    why: str  # one sentence: why it fires, or the first condition that stops it


def canonical_field(name: str) -> str:
    """The field a name means, case and underscores ignored: "fsrank9" is "FS_RANK9"."""
    found = _BY_KEY.get(name.upper().replace("_", ""))
    if found is None:
        raise SelectionError(f"unknown field {name}")
    return found


def parse_selection(text: str) -> Selection:
    """The selection rule compiled; raises SelectionError naming the fault and its offset."""
    parser = _Parser(text)
    return Selection(text, parser.parse())


class _Parser:
    """Recursive descent: or := and ('|' and)*; and := unary (['&'] unary)*; unary := '!' unary
    | '(' or ')' | predicate."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.depth = 0  # open parentheses

    def parse(self) -> _Node | None:
        self.skip()
        if self.at >= len(self.text):
            return None
        node = self.any_of()
        self.skip()
        if self.at < len(self.text):
            raise SelectionError("a ) with no ( open", self.at)
        return node

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in _BLANKS:
            self.at += 1

    def keyword(self) -> str | None:
        """AND, OR or NOT standing alone at the cursor, in any case."""
        found = _NAME.match(self.text, self.at)
        if found is None or found.group().upper() not in _KEYWORDS:
            return None
        after = found.end()
        if after < len(self.text) and self.text[after] not in _BLANKS + "(!":
            return None  # a field that starts like a keyword, or a keyword used as a field
        return found.group().upper()

    def at_end(self) -> bool:
        return self.at >= len(self.text) or self.text[self.at] == ")"

    def any_of(self) -> _Node:
        operands = [self.all_of()]
        while True:
            self.skip()
            if self.at_end():
                break
            if self.text[self.at] == "|":
                self.at += 1
            elif self.keyword() == "OR":
                self.at += 2
            else:
                break
            operands.append(self.all_of())
        return operands[0] if len(operands) == 1 else _Any(tuple(operands))

    def all_of(self) -> _Node:
        operands = [self.unary()]
        while True:
            self.skip()
            if self.at_end() or self.text[self.at] == "|" or self.keyword() == "OR":
                break
            if self.text[self.at] == "&":
                self.at += 1
            elif self.keyword() == "AND":
                self.at += 3
            operands.append(self.unary())  # a blank between predicates is an AND
        return operands[0] if len(operands) == 1 else _All(tuple(operands))

    def unary(self) -> _Node:
        self.skip()
        if self.at >= len(self.text):
            raise SelectionError("a condition is missing at the end", self.at)
        character = self.text[self.at]
        if character == "!":
            self.at += 1
            return _Not(self.unary())
        if self.keyword() == "NOT":
            self.at += 3
            return _Not(self.unary())
        if character == "(":
            opening = self.at
            self.at += 1
            self.depth += 1
            self.skip()
            if self.at < len(self.text) and self.text[self.at] == ")":
                raise SelectionError("empty parentheses", opening)
            node = self.any_of()
            self.skip()
            if self.at >= len(self.text):
                raise SelectionError("this ( is never closed", opening)
            self.at += 1
            self.depth -= 1
            return node
        if character == ")":
            raise SelectionError("a ) where a condition should be", self.at)
        return self.term()

    def term(self) -> _Term:
        start = self.at
        name = _NAME.match(self.text, start)
        if name is None:
            raise SelectionError(f"expected a field name, found {self.text[start]!r}", start)
        field_name = _field_at(name.group(), start)
        self.at = name.end()
        found = _OPERATOR.match(self.text, self.at)
        op = "" if found is None else found.group()
        if not op:
            if self.at < len(self.text) and self.text[self.at] not in _BLANKS + ")&|":
                raise SelectionError(
                    f"expected an operator after {name.group()}, found {self.text[self.at]!r}",
                    self.at,
                )
            return _Term(name.group(), field_name, "", ())
        self.at += len(op)
        values = self.values(op)
        term = _Term(self.text[start : self.at], field_name, op, values)
        _check_patterns(term, start)
        return term

    def values(self, op: str) -> tuple[tuple[str | _Reference, ...], ...]:
        """The comma-separated alternatives after an operator."""
        text = self.text
        begin = self.at
        alternatives: list[tuple[str | _Reference, ...]] = []
        parts: list[str | _Reference] = []
        literal = ""
        written = False  # the alternative has something, if only ""
        while self.at < len(text):
            character = text[self.at]
            if character in _BLANKS or (character == ")" and self.depth):
                break
            if character == '"':
                close = _closing_quote(text, self.at + 1)
                if close < 0:
                    raise SelectionError('this " is never closed', self.at)
                literal += _unescape(text[self.at + 1 : close])
                written = True
                self.at = close + 1
                continue
            if character == "\\" and self.at + 1 < len(text):
                literal += text[self.at + 1]
                written = True
                self.at += 2
                continue
            if character == ",":
                if not written:
                    raise SelectionError(f"an empty value in the list after {op}", self.at)
                alternatives.append((*parts, literal) if literal else tuple(parts))
                parts, literal, written = [], "", False
                self.at += 1
                continue
            reference = _REFERENCE.match(text, self.at)
            if reference is not None:
                if literal:
                    parts.append(literal)
                    literal = ""
                parts.append(_Reference(_field_at(reference.group(1), self.at + 1)))
                written = True
                self.at = reference.end()
                continue
            literal += character
            written = True
            self.at += 1
        if self.at == begin:
            raise SelectionError(f"{op} has no value after it", begin)
        if not written:
            raise SelectionError(f"an empty value in the list after {op}", self.at)
        alternatives.append((*parts, literal) if literal or not parts else tuple(parts))
        return tuple(alternatives)


def _field_at(name: str, position: int) -> str:
    try:
        return canonical_field(name)
    except SelectionError as error:
        raise SelectionError(error.message, position) from None


def _closing_quote(text: str, at: int) -> int:
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text[at] == '"':
            return at
        else:
            at += 1
    return -1


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _check_patterns(term: _Term, start: int) -> None:
    """A regular expression that cannot compile is an error now, not at each evaluation."""
    if term.op.lstrip("!") not in ("~", "~~"):
        return
    for alternative in term.values:
        pattern = "".join(part if isinstance(part, str) else "x" for part in alternative)
        try:
            re.compile(pattern)
        except re.error as error:
            raise SelectionError(
                f"{pattern!r} is not a regular expression: {error.msg}", start
            ) from None


def _number(value: str | int) -> int | float | None:
    if isinstance(value, int):
        return value
    if _INTEGER.fullmatch(value):
        return int(value)
    if _DECIMAL.fullmatch(value):
        return float(value)
    return None


def _timespec(value: str) -> int | None:
    if _TIMESPEC.fullmatch(value) is None:
        return None
    total = 0
    for digits, unit in re.findall(r"([0-9]+)([smhdw]?)", value, re.IGNORECASE):
        total += int(digits) * _UNITS.get(unit.lower(), 1)  # digits without a unit: seconds
    return total


def _resolve(
    alternative: tuple[str | _Reference, ...], op: str, preempting: Job | None, term: _Term
) -> str:
    """An alternative's text, each @FIELD@ replaced by the preempting job's value."""
    pieces = []
    for part in alternative:
        if isinstance(part, str):
            pieces.append(part)
            continue
        if preempting is None:
            raise SelectionError(f"{term.text} needs the preempting job for @{part.field}@")
        value = str(preempting.get(part.field, ""))
        kind = op.lstrip("!")
        if kind in ("~", "~~"):
            value = re.escape(value)  # substituted values are literal, never patterns
        elif kind in (":", "::"):
            value = _GLOB_SPECIAL.sub(r"[\1]", value)
        pieces.append(value)
    return "".join(pieces)


def _ordered(op: str, a: _Comparable, b: _Comparable) -> bool:
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    return a == b


def _compare(op: str, left: str | int, right: str) -> bool:
    """One alternative of `left op right` (a negated operator is negated by the caller)."""
    kind = op.lstrip("!")  # "!=" gives "="
    if kind in ("=", "==") or op in _ORDERED:
        left_number = _number(left)
        right_number = _number(right)
        if left_number is not None and right_number is None:
            right_number = _timespec(right)
        if left_number is not None and right_number is not None:
            return _ordered(kind, left_number, right_number)
        return _ordered(kind, str(left), right)
    text = str(left)
    flags = re.IGNORECASE if kind in ("~~", "^^", "::") else 0
    if kind in ("~", "~~"):
        return re.search(right, text, flags) is not None
    if kind in ("^", "^^"):
        return right.casefold() in text.casefold() if flags else right in text
    return re.fullmatch(fnmatch.translate(right), text, flags) is not None  # `:` and `::`


def _evaluate_term(term: _Term, job: Job, preempting: Job | None) -> TermResult:
    left = job.get(term.field, "")
    if not term.op:  # a field alone: non-zero, or non-empty
        number = _number(left)
        holds = number != 0 if number is not None else left != ""
        return TermResult(term.text, holds, left, 0 if number is not None else "")
    rights = [_resolve(values, term.op, preempting, term) for values in term.values]
    matched = any(_compare(term.op, left, right) for right in rights)
    holds = not matched if term.op in _NEGATED else matched
    right: str | int = ",".join(rights)
    number = _number(right) if len(rights) == 1 else None
    if isinstance(number, int) and _number(left) is not None:
        right = number
    return TermResult(term.text, holds, left, right)


def _walk(
    node: _Node, job: Job, preempting: Job | None, out: list[tuple[_Term, TermResult]]
) -> bool:
    """The node's truth; every predicate is evaluated (no short cut), in text order, so that an
    explanation can show them all."""
    if isinstance(node, _Term):
        result = _evaluate_term(node, job, preempting)
        out.append((node, result))
        return result.holds
    if isinstance(node, _Not):
        return not _walk(node.operand, job, preempting, out)
    results = [_walk(operand, job, preempting, out) for operand in node.operands]
    return all(results) if isinstance(node, _All) else any(results)


def _evaluated(
    selection: Selection, job: Job, preempting: Job | None
) -> tuple[bool, list[tuple[_Term, TermResult]]]:
    out: list[tuple[_Term, TermResult]] = []
    if selection._root is None:
        return True, out
    return _walk(selection._root, job, preempting, out), out


def evaluate(
    selection: Selection, job: Job, preempting: Job | None = None
) -> tuple[bool, list[TermResult]]:
    """Whether the job matches, and each predicate as evaluated, in text order; `@FIELD@` takes
    the `preempting` job's value (SelectionError if it is needed and not given)."""
    holds, pairs = _evaluated(selection, job, preempting)
    return holds, [result for _, result in pairs]


def _shown(value: str | int) -> str:
    return '""' if value == "" else str(value)


def _condition(term: _Term, result: TermResult) -> str:
    """`FS_EXCESS_RUNNING > 0`, as evaluated (the @FIELD@ substituted)."""
    if not term.op:
        return f"{term.field} non-zero" if isinstance(result.right, int) else f"{term.field} set"
    return f"{term.field} {term.op} {_shown(result.right)}"


def _held(term: _Term, result: TermResult) -> str:
    """`FS_RANK9 9999999 > 0`: the value and the condition it meets."""
    if not term.op:
        return f"{term.field} {_shown(result.left)}"
    return f"{term.field} {_shown(result.left)} {term.op} {_shown(result.right)}"


def _first_failure(pairs: list[tuple[_Term, TermResult]]) -> int | None:
    """The index of the first predicate that does not hold, None if all hold (under a NOT)."""
    return next((index for index, (_, result) in enumerate(pairs) if not result.holds), None)


def _jobs(count: int) -> str:
    return f"{count} running job{'s' if count != 1 else ''}"


def _by_group(jobs: Sequence[Job]) -> dict[str, list[Job]]:
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(str(job.get("GROUP", "")), []).append(job)
    return groups


def _no_victim(running: Sequence[Job], tried: list[list[tuple[_Term, TermResult]]]) -> str:
    """Why no running job matches: the condition that stops the jobs that got furthest."""

    def reach(i: int) -> int:
        stop = _first_failure(tried[i])
        return len(tried[i]) if stop is None else stop

    furthest = max(range(len(running)), key=reach)
    stop = _first_failure(tried[furthest])
    if stop is None:
        return "but no running job matches -preemptable"
    term, result = tried[furthest][stop]
    nearest = [i for i in range(len(running)) if _first_failure(tried[i]) == stop]
    values: dict[str, list[str]] = {}
    for i in nearest:
        group = str(running[i].get("GROUP", ""))
        shown = _shown(tried[i][stop][1].left)
        values.setdefault(group, [])
        if shown not in values[group]:
            values[group].append(shown)
    counts = {group: len(jobs) for group, jobs in _by_group([running[i] for i in nearest]).items()}
    details = ", ".join(
        f"{group}'s {counts[group]} job{'s' if counts[group] != 1 else ''} "
        f"{'have' if counts[group] != 1 else 'has'} {', '.join(shown)}"
        for group, shown in values.items()
    )
    # The conditions those jobs met come first: others failed earlier, and may well have it.
    passed = [_condition(*pair) for pair in tried[furthest][:stop]]
    which = f"running job with {' and '.join(passed)}" if passed else "running job"
    return f"but no {which} has {_condition(term, result)} ({details})"


def _sorted_rules(rules: Sequence[PreemptRule]) -> list[PreemptRule]:
    order = sorted(
        range(len(rules)),
        key=lambda i: (rules[i].order is None, rules[i].order or 0, i),
    )
    return [rules[i] for i in order]


def _disabled(rule: PreemptRule) -> bool:
    return any(
        name == "-enabled" and value.strip() in ("0", "false") for name, value in rule.options
    )


def _rule_preemptions(
    rule: PreemptRule, queued: Sequence[Job], running: Sequence[Job], now: int
) -> list[Preemption]:
    def never(why: str) -> list[Preemption]:
        return [Preemption(rule.name, str(job.get("ID", "")), False, (), why) for job in queued]

    if _disabled(rule):
        return never(f"{rule.name} is disabled (-enabled 0), so it never fires.")
    try:
        preempting = parse_selection(rule.preempting)
    except SelectionError as error:
        return never(f"{rule.name}: its -preempting does not parse ({error}), so it never fires.")
    try:
        preemptable = parse_selection(rule.preemptable)
    except SelectionError as error:
        return never(f"{rule.name}: its -preemptable does not parse ({error}), so it never fires.")
    out = []
    for job in queued:
        job_id = str(job.get("ID", ""))
        who = f"{rule.name}: job {job_id} ({job.get('GROUP', '')})"

        def stopped(why: str, job_id: str = job_id) -> None:
            out.append(Preemption(rule.name, job_id, False, (), why))

        matches, pairs = _evaluated(preempting, job, job)
        if not matches:
            stop = _first_failure(pairs)
            if stop is None:
                stopped(f"{who} does not match -preempting {rule.preempting!r}.")
            else:
                term, result = pairs[stop]
                stopped(
                    f"{who} does not match -preempting: it needs {_condition(term, result)} "
                    f"and has {_shown(result.left)}."
                )
            continue
        if rule.bucketage > 0:
            submitted = _number(job.get("SUBMITTED", ""))
            if submitted is None:
                stopped(f"{who} matches -preempting, but has no SUBMITTED time for -bucketage.")
                continue
            waited = now - submitted
            if waited < rule.bucketage:
                stopped(
                    f"{who} matches -preempting, but has waited {waited:g} s, less than "
                    f"-bucketage {rule.bucketage} s."
                )
                continue
        if not running:
            stopped(f"{who} matches -preempting, but no job is running.")
            continue
        tried = [_evaluated(preemptable, victim, job) for victim in running]
        chosen = [i for i, (holds, _) in enumerate(tried) if holds]
        victims = [running[i] for i in chosen]
        if not victims:
            stopped(f"{who} matches -preempting, {_no_victim(running, [t for _, t in tried])}.")
            continue
        groups = _by_group(victims)
        if len(groups) == 1:
            whose = f"of {next(iter(groups))}"
        else:
            whose = "of " + ", ".join(f"{group} ({len(jobs)})" for group, jobs in groups.items())
        first = tried[chosen[0]][1]
        reasons = ", ".join(_held(term, result) for term, result in first)
        because = f" ({reasons})" if reasons else ""
        out.append(
            Preemption(
                rule.name,
                job_id,
                True,
                tuple(str(victim.get("ID", "")) for victim in victims),
                f"{who} may preempt {_jobs(len(victims))} {whose}{because}.",
            )
        )
    return out


def job_of(job: FsJob, fields: FsFields, *, user: str, jobclass: str) -> Job:
    """A job as selection rules read it: its own fields (its status as Accelerator spells it:
    Queued, Running, Suspended) and the FS_* fields of its group."""
    return {
        "ID": job.job_id,
        "USER": user,
        "GROUP": job.group,
        "JOBCLASS": jobclass,
        "PRIORITY": job.priority,
        "STATUS": job.status.capitalize(),
        "SUBMITTED": job.submitted,
        "FS_TARGET": fields.target,
        "FS_RUNNING": fields.running,
        "FS_RUNNING_COUNT": fields.running_count,
        "FS_EXCESS_RUNNING": fields.excess_running,
        "FS_EXCESS_RUNNING_LOCAL": fields.excess_running_local,
        "FS_HISTORY": fields.history,
        "FS_EXCESS_HISTORY": fields.excess_history,
        "FS_RANK": fields.rank,
        "FS_RANK9": fields.rank9,
    }


def preemptions(
    rules: Sequence[PreemptRule], queued: Sequence[Job], running: Sequence[Job], now: int
) -> list[Preemption]:
    """For each rule (by -order, then file order) and each queued job: whether the rule fires
    for it, the running jobs it may preempt, and why, in words."""
    out: list[Preemption] = []
    for rule in _sorted_rules(rules):
        out.extend(_rule_preemptions(rule, queued, running, now))
    return out
