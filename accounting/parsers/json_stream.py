"""A JSON snapshot (qstat -f -F json, squeue --json) read as a stream of events with ijson, so
that memory holds one job, not the document: a site with 100,000 pending jobs writes 300 MB of
squeue --json, which json.loads made 3 GB of objects.

The document is read twice. The first pass reads it all to know that it is JSON (a snapshot cut
short says nothing of the queue: no job of it is taken) and to read its envelope (squeue writes
`meta` and `last_update` after the jobs); the text waits meanwhile in a temporary file (in
memory up to SPOOL_BYTES). The second pass yields the jobs one by one. Lines are fed to the
parser one at a time, so every item names the line its job starts on, as before.

What Python's json module read and yajl refuses is rewritten before yajl sees it, so that every
value reads as json.loads read it: NaN and Infinity; integers of more than 40 characters, read
as floats (which the readers refuse as out of range; int() refuses 4,300 digits and more); lone
surrogates, `?` as UTF-8 cannot store them (yajl fails on a low one and eats the character
after a high one).
A document that is not JSON is refused with json's own message, line and column: on yajl's
error the line is decoded again by json behind a prefix that puts json in the state the
parser was in at that line's start.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import IO, Any

import ijson
from ijson.common import ObjectBuilder

from accounting.parsers.records import RejectedLine
from trees.formats.lines import MAX_LINE_BYTES, overlong_reason

__all__ = ["MAX_DEPTH", "MAX_VALUE_BYTES", "Entry", "Envelope", "JsonSnapshot", "storable"]

MAX_TEXT = 1000  # characters of a line kept in RejectedLine.text
# json.loads stopped near 1,000 levels (the recursion limit); a snapshot has 6.
MAX_DEPTH = 500
# One job, or one member of the envelope: squeue writes about 3 KB a job, qstat up to a few
# hundred KB for the exec_host of a 10,000-node job.
MAX_VALUE_BYTES = MAX_LINE_BYTES
SPOOL_BYTES = 256 << 10
_BLOCK = 256  # lines read, checked and written to the spool together
_BLOCK_BYTES = 64 << 10
_JSON_SPACE = b" \t\n\r"
_INTEGER_CHARS = 40  # a 128-bit integer has 39 digits
_NAN = b"-0e-999999"  # a number no scheduler writes, read back as NaN
_NAN_EXPONENT = -999999
_SUSPECT = re.compile(rb"\d{40}|NaN|Infinity|\\u[dD][89a-fA-F]")
_DIGITS = bytes.maketrans(b"123456789", b"000000000")  # to find 40 digits in a row fast
_FORTY_DIGITS = b"0" * _INTEGER_CHARS
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity')
_ESCAPE = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
_STARTS = frozenset({"start_map", "start_array"})
_ENDS = frozenset({"end_map", "end_array"})
_SCALARS = {"string": "str", "boolean": "bool", "null": "NoneType"}
_LOOKAHEAD = 8  # lines after a yajl error that json may read to reach its own


@dataclass
class Envelope:
    """What a snapshot holds besides its jobs, read by the first pass."""

    kind: str  # the type json.loads gave the document: dict, list, str...
    first_line: str  # the text of line 1, which a refusal of the whole file shows
    members: dict[str, Any] = field(default_factory=dict)  # the kept members' values
    lines: dict[str, tuple[int, str]] = field(default_factory=dict)  # named keys: line, text
    keys: list[str] = field(default_factory=list)  # the 6 smallest top-level keys, sorted
    container: str | None = None  # the type of the jobs' container; None without one


@dataclass(frozen=True)
class Entry:
    """One element of the container (an array's) or member (an object's)."""

    line: int  # where it starts (an object's member: the line of its key)
    text: str  # that line
    index: int
    key: str  # the member's key; "" in an array
    value: Any
    refused: str = ""  # why the value was not read (then None)


class _Broken(Exception):
    """yajl stopped: `line` the line it was fed, `window` that line and a few after it."""

    def __init__(
        self, line: int, said: str, window: list[bytes], last: bytes, *, end: bool
    ) -> None:
        super().__init__(said)
        self.line = line
        self.said = said
        self.window = window
        self.last = last  # the last character before the line that is not space
        self.end = end  # the window reaches the end of the document


class _Refused(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


@dataclass
class _State:
    """Where the parser is at the start of a line: enough to put json in the same place."""

    stack: list[bool]  # the open containers, True for an object
    after_key: bool  # the last event was an object's key
    done: bool  # the top value is complete
    last: bytes  # the last character before the line that is not space

    def prefix(self) -> str:
        """JSON text after which json.loads is where this state is."""
        if not self.stack:
            return "0" if self.done else ""
        parts = ['{"":' if is_object else "[" for is_object in self.stack[:-1]]
        last = self.last
        if self.stack[-1]:
            if last == b"{":
                parts.append("{")
            elif last in (b",", b":"):
                parts.append('{"":0,' if last == b"," else '{"":')
            else:
                parts.append('{""' if self.after_key else '{"":0')
        else:
            parts.append("[" if last == b"[" else "[0," if last == b"," else "[0")
        return "".join(parts)


_Block = tuple[int, bytes, list[bytes], list[bytes]]
_Fed = Iterator[tuple[int, bytes, list[tuple[str, Any]]]]


class JsonSnapshot:
    """One JSON snapshot whose jobs are the elements (or members) of the top-level member
    `container`; read `envelope()` first, then `entries()` once.

    `keep` names the members of the envelope to read, `named` those whose line a refusal may
    name; `skipped` are lines a bounded reader left out (a blank line in their place): a job
    that spans one is refused. `what` names the output expected in refusals, `hint` is added
    to a JSON error's reason.
    """

    def __init__(
        self,
        lines: Iterable[bytes | str],
        *,
        what: str,
        container: str,
        keep: Sequence[str] = (),
        named: Sequence[str] = (),
        hint: str = "",
        skipped: Sequence[int] = (),
    ) -> None:
        self._lines = lines
        self._what = what
        self._container = container
        self._keep = frozenset(keep)
        self._named = frozenset((*named, container))
        self._hint = hint
        self._skipped = skipped
        self._spool: IO[bytes] | None = None
        self._last_container = 0  # which occurrence of the container is read (the last)
        self._blank = True  # nothing but space read so far

    def envelope(self) -> Envelope | RejectedLine:
        """The envelope, or the RejectedLine refusing the whole document."""
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
        self._spool = spool
        first: list[str] = []
        try:
            read = self._read_envelope(self._fed(self._lines, spool, first), first)
        except _Refused as refused:
            read = RejectedLine(refused.line, "file", refused.reason, "")
        if isinstance(read, RejectedLine):
            spool.close()
            self._spool = None
        return read

    def entries(self) -> Iterator[Entry]:
        """The container's elements (an object's members) in the file's order. A container
        repeated at the top is read where it last appears, as json.loads kept it; a key repeated
        inside it is read each time (json.loads kept the last; no scheduler repeats a job)."""
        spool = self._spool
        if spool is None:
            return
        spool.seek(0)
        try:
            yield from self._read_entries(self._fed(iter(spool.readline, b""), None, []))
        except (_Broken, _Refused):
            return  # not after a first pass that read the document whole
        finally:
            spool.close()
            self._spool = None

    def _fed(self, lines: Iterable[bytes | str], spool: IO[bytes] | None, first: list[str]) -> _Fed:
        """Each line with the events yajl gave for it: (number, the line as read, events).
        A line's events are handed on once the next line is fed without error (or the end
        of the document is reached), so that on _Broken the caller is at that line's start."""
        sink = ijson.utils.sendable_list()
        parser = ijson.basic_parse_coro(sink)
        send = parser.send
        pending: tuple[int, bytes, list[tuple[str, Any]]] | None = None
        blocks = self._blocks(lines)
        before = b""  # the last character that is not space before the block
        originals: list[bytes] = []
        for start, joined, originals, feds in blocks:
            if spool is not None:
                spool.write(joined)
                if start == 1:
                    first.append(_line_text(originals[0]))
            number = start
            for fed in feds:
                if pending is not None:
                    yield pending
                try:
                    send(fed)
                except (ijson.JSONError, ValueError) as error:
                    raise self._stopped(
                        error, number, number - start, originals, before, blocks
                    ) from None
                pending = (number, originals[number - start], sink[:])
                del sink[:]
                number += 1
            before = _last_character([joined]) or before
        try:
            if pending is not None and not pending[1].endswith(b"\n"):
                # yajl lets an unfinished token after the document pass (`{}"`, `{} 5`):
                # a newline finishes it, and it is the error it is.
                send(b"\n")
            parser.close()
        except (ijson.JSONError, ValueError) as error:
            if pending is None:
                raise _Broken(1, _first_line(error), [], b"", end=True) from None
            last = _last_character(originals[:-1]) or before
            raise _Broken(pending[0], _first_line(error), [pending[1]], last, end=True) from None
        if pending is not None:
            pending[2].extend(sink)
            yield pending

    def _stopped(
        self,
        error: Exception,
        number: int,
        offset: int,
        originals: list[bytes],
        before: bytes,
        blocks: Iterator[_Block],
    ) -> _Broken:
        """The _Broken for yajl's error on line `number`, at `offset` in its block."""
        last = _last_character(originals[:offset]) or before
        window = originals[offset : offset + _LOOKAHEAD]
        ended = False
        if len(window) < _LOOKAHEAD:
            rest = _take(blocks, _LOOKAHEAD + 1 - len(window))
            ended = len(window) + len(rest) <= _LOOKAHEAD
            window = [*window, *rest][:_LOOKAHEAD]
        return _Broken(number, _first_line(error), window, last, end=ended)

    def _blocks(self, lines: Iterable[bytes | str]) -> Iterator[_Block]:
        """(number of the first line, their text, the lines, what yajl is fed of each), a
        block at a time: lines split at newlines only, valid UTF-8 (bytes that are not become
        U+FFFD, as they only ever sit in strings), without the byte order mark; a line over
        MAX_LINE_BYTES refuses the document."""
        number = 1
        held = b""
        pieces: list[bytes | str] = []
        size = 0
        for piece in lines:
            pieces.append(piece)
            size += len(piece)
            if size < _BLOCK_BYTES and len(pieces) < _BLOCK:
                continue
            block, held = _cut(held, pieces, number)
            pieces, size = [], 0
            if block:
                yield self._block(number, block)
                number += len(block)
        block, held = _cut(held, pieces, number)
        if held:
            block.append(held)
        if block:
            yield self._block(number, block)

    def _block(self, number: int, block: list[bytes]) -> _Block:
        joined = b"".join(block)
        if self._blank and joined.strip(_JSON_SPACE):
            self._blank = False
        suspect = b"NaN" in joined or b"Infinity" in joined or b"\\u" in joined
        if not suspect and _FORTY_DIGITS not in joined.translate(_DIGITS):
            return number, joined, block, block
        feds = [_TOKEN.sub(_token, line) if _SUSPECT.search(line) else line for line in block]
        return number, joined, block, feds

    def _read_envelope(self, fed: _Fed, first: list[str]) -> Envelope | RejectedLine:
        envelope: Envelope | None = None
        stack: list[bool] = []
        after_key = done = False
        key = ""
        builder: ObjectBuilder | None = None
        size = containers = 0
        try:
            for number, original, events in fed:
                if builder is not None:
                    size += len(original)
                    if size > MAX_VALUE_BYTES:
                        reason = (
                            f"`{key}` is over {MAX_VALUE_BYTES:,} bytes, more than"
                            f" {self._what} writes: not read"
                        )
                        return RejectedLine(number, "file", reason, _line_text(original))
                for event, value in events:
                    depth = len(stack)
                    if event in _STARTS:
                        if depth >= MAX_DEPTH:
                            reason = f"JSON nested too deep to be {self._what}"
                            return RejectedLine(number, "file", reason, _line_text(original))
                        stack.append(event == "start_map")
                    elif event in _ENDS:
                        stack.pop()
                    after_key = event == "map_key"
                    if depth >= 2 and builder is None:
                        continue  # inside the container, or a member not kept
                    if event == "number":
                        value = _number(value)
                    if envelope is None:
                        envelope = Envelope(_kind(event, value), first[0] if first else "")
                    elif builder is not None:
                        builder.event(event, value)
                        if event in _ENDS and depth == 2:
                            envelope.members[key] = builder.value
                            builder = None
                    elif depth == 1 and after_key:
                        key = value
                        _note_key(envelope.keys, key)
                        if key in self._named:
                            envelope.lines[key] = (number, _line_text(original))
                    elif depth == 1 and event not in _ENDS:
                        if key == self._container:
                            containers += 1
                            envelope.container = _kind(event, value)
                        elif key in self._keep:
                            if event in _STARTS:
                                builder = ObjectBuilder()
                                builder.event(event, value)
                                size = len(original)
                            else:
                                envelope.members[key] = value
                    if not stack and not after_key:
                        done = True
        except _Broken as broken:
            return self._broken(broken, _State(stack, after_key, done, broken.last))
        self._last_container = containers
        if envelope is None:
            return RejectedLine(1, "file", f"empty: no JSON document, not {self._what}", "")
        return envelope

    def _read_entries(self, fed: _Fed) -> Iterator[Entry]:
        depth = containers = index = start = size = 0
        key = member = text = refused = ""
        reading = in_object = False
        builder: ObjectBuilder | None = None
        build = None
        skipped = iter(self._skipped)
        next_skipped = next(skipped, None)
        container, last = self._container, self._last_container
        done: Any = None
        for number, original, events in fed:
            if start:
                size += len(original)
                if size > MAX_VALUE_BYTES and not refused:
                    refused = f"over {MAX_VALUE_BYTES:,} bytes: no job is; not read"
                    builder = build = None
            for event, value in events:
                if depth >= 3:  # inside an element
                    if event == "number":
                        value = _number(value)
                    if build is not None:
                        build(event, value)
                    if event in _STARTS:
                        depth += 1
                        continue
                    if event not in _ENDS:
                        continue
                    depth -= 1
                    if depth > 2 or not reading:
                        continue
                    done = builder.value if builder is not None else None
                    builder = build = None
                elif depth == 2 and reading:
                    if event in _ENDS:
                        depth, reading = 1, False  # the container ends
                        continue
                    if event == "map_key":
                        member, start, text, size = value, number, _line_text(original), 0
                        continue
                    if not in_object:
                        start, text, size = number, _line_text(original), 0
                    if event in _STARTS:
                        depth = 3
                        if not refused:
                            builder = ObjectBuilder()
                            build = builder.event
                            build(event, value)
                        continue
                    done = _number(value) if event == "number" else value
                else:
                    if event in _STARTS:
                        depth += 1
                        if depth == 2:
                            reading = key == container and containers == last
                            in_object = event == "start_map"
                    elif event in _ENDS:
                        depth -= 1
                    elif depth == 1 and event == "map_key":
                        key = value
                        containers += key == container
                    continue
                while next_skipped is not None and next_skipped < start:
                    next_skipped = next(skipped, None)
                if next_skipped is not None and next_skipped <= number and not refused:
                    refused = (
                        f"line {next_skipped} is longer than {MAX_LINE_BYTES:,} bytes (no job"
                        " is) and was not read: nor is the job"
                    )
                yield Entry(start, text, index, member, None if refused else done, refused)
                index += 1
                start, size, refused, member, done = 0, 0, "", "", None

    def _broken(self, broken: _Broken, state: _State) -> RejectedLine:
        """The refusal of a document yajl found not to be JSON, in json.loads's words."""
        if self._blank:
            return RejectedLine(1, "file", f"empty: no JSON document, not {self._what}", "")
        window = [line.decode() for line in broken.window]
        text = state.prefix() + "\n" + "".join(window)
        hint = self._hint
        try:
            _DECODER.decode(text)
        except json.JSONDecodeError as error:
            if error.lineno >= 2 and (broken.end or error.pos < len(text)):
                line = broken.line + error.lineno - 2
                reason = f"not valid JSON at line {line}, column {error.colno}: {error.msg}"
                shown = line - broken.line
                said = _line_text(broken.window[shown]) if shown < len(window) else ""
                return RejectedLine(line, "file", reason + hint, said)
        except RecursionError:
            pass
        reason = f"not valid JSON at line {broken.line}: {broken.said}"
        said = _line_text(broken.window[0]) if broken.window else ""
        return RejectedLine(broken.line, "file", reason + hint, said)


def _cut(held: bytes, pieces: list[bytes | str], number: int) -> tuple[list[bytes], bytes]:
    """The whole lines of `held` and `pieces`, and what is left after the last newline."""
    try:
        joined = held + b"".join(pieces)  # type: ignore[arg-type]
    except TypeError:  # text: a lone surrogate becomes ?
        parts = [p.encode(errors="replace") if isinstance(p, str) else p for p in pieces]
        joined = held + b"".join(parts)
    if number == 1 and not held and joined.startswith(b"\xef\xbb\xbf"):
        joined = joined[3:]
    if not joined.isascii():
        joined = joined.decode(errors="replace").encode()
    if b"\r" in joined:
        lines = [line + b"\n" for line in joined.split(b"\n")]
        lines[-1] = lines[-1][:-1]
    else:
        lines = joined.splitlines(keepends=True)
    rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
    if len(joined) > MAX_LINE_BYTES:
        for offset, line in enumerate([*lines, rest]):
            if len(line) > MAX_LINE_BYTES:
                raise _Refused(number + offset, overlong_reason() + ", nor the rest of the file")
    return lines, rest


def _last_character(lines: list[bytes]) -> bytes:
    for line in reversed(lines):
        text = line.rstrip(_JSON_SPACE)
        if text:
            return text[-1:]
    return b""


def _take(blocks: Iterator[_Block], count: int) -> list[bytes]:
    """Up to `count` lines more (fewer at the end of the document)."""
    taken: list[bytes] = []
    try:
        for _, _, lines, _ in blocks:
            taken.extend(lines)
            if len(taken) >= count:
                break
    except _Refused:
        pass
    return taken[:count]


def _token(match: re.Match[bytes]) -> bytes:
    text = match.group()
    if text[:1] == b'"':
        return _ESCAPE.sub(_escape, text) if b"\\u" in text else text
    # A space after, so that the number never runs on into what follows (NaN1 is no number).
    if text == b"NaN":
        return _NAN + b" "
    if text.endswith(b"Infinity"):
        return text[:-8] + b"1e999999 "
    if len(text) > _INTEGER_CHARS and text.lstrip(b"-").isdigit():
        return text + b"e0"  # read as a float, as json.loads read it
    return text


def _escape(match: re.Match[bytes]) -> bytes:
    text = match.group()
    return b"?" if len(text) == 6 else text  # a lone surrogate


def _number(value: int | Decimal) -> int | float:
    """A JSON number as json.loads read it: an int, or a float."""
    if type(value) is int:
        return value
    number = float(value)
    if number == 0 and value.as_tuple().exponent == _NAN_EXPONENT:  # type: ignore[union-attr]
        return math.nan
    return number


def _kind(event: str, value: Any) -> str:
    if event in _STARTS:
        return "dict" if event == "start_map" else "list"
    if event == "number":
        return type(value).__name__
    return _SCALARS.get(event, event)


def _note_key(keys: list[str], key: str) -> None:
    """Keep the 6 smallest keys, sorted (the message that lists them shows 6)."""
    if key in keys or (len(keys) == 6 and key >= keys[-1]):
        return
    keys.append(key)
    keys.sort()
    del keys[6:]


def _first_line(error: Exception) -> str:
    said = str(error).strip().splitlines()
    return said[0] if said else type(error).__name__


def _line_text(line: bytes) -> str:
    """A line as RejectedLine.text keeps it: without its newline, cut to MAX_TEXT."""
    text = line[: 4 * MAX_TEXT].decode(errors="ignore")
    return text.removesuffix("\n").rstrip("\r")[:MAX_TEXT]


def _integer(digits: str) -> int | float:
    """A JSON integer as the snapshot readers always took it: one of more characters than any
    count or time has is a float (int() refuses 4,300 digits and more)."""
    return int(digits) if len(digits) <= _INTEGER_CHARS else float(digits)


_DECODER = json.JSONDecoder(parse_int=_integer)


def storable(text: str) -> str:
    """`text` without lone surrogates, which UTF-8 cannot hold."""
    return text if text.isascii() else text.encode(errors="replace").decode()
