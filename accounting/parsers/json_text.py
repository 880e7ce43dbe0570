"""A JSON document read whole, with the line each of its parts starts on: what the parsers of
JSON outputs (qstat -f -F json, squeue --json) need to name the line of a bad entry."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable

from accounting.parsers.records import RejectedLine
from trees.formats.lines import MAX_TEXT_BYTES

MAX_TEXT = 1000  # characters of a line kept in RejectedLine.text
_JSON_SPACE = " \t\n\r"
_INTEGER_DIGITS = 40  # a 128-bit integer has 39


class JsonText:
    """A JSON document as read, with the line of any offset in it."""

    def __init__(self, text: str, value: object) -> None:
        self.text = text
        self.value = value
        self._newlines = [match.start() for match in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        """The 1-based line of a character offset."""
        return bisect_right(self._newlines, offset - 1) + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline, cut to MAX_TEXT."""
        start = self._newlines[line - 2] + 1 if line > 1 else 0
        end = self._newlines[line - 1] if line - 1 < len(self._newlines) else len(self.text)
        return self.text[start:end].rstrip("\r")[:MAX_TEXT]

    def rejected(self, offset: int, field: str, reason: str) -> RejectedLine:
        """A RejectedLine for what is at `offset`."""
        line = self.line_of(offset)
        return RejectedLine(line, field, reason, self.line_text(line))


def json_text(
    lines: Iterable[bytes | str], *, what: str, hint: str = ""
) -> JsonText | RejectedLine:
    """The JSON document in `lines` (bytes not UTF-8 become U+FFFD, as they only ever sit in
    strings), or the RejectedLine saying where it stops being JSON; `what` names the output
    expected, `hint` is added to a parse error's reason."""
    parts: list[str] = []
    size = 0
    for number, raw in enumerate(lines, 1):
        size += len(raw)
        if size > MAX_TEXT_BYTES:
            reason = (
                f"over {MAX_TEXT_BYTES:,} bytes, the most a JSON snapshot may have (it is parsed"
                f" whole): not read as {what}"
            )
            return RejectedLine(number, "file", reason, "")
        parts.append(raw.decode(errors="replace") if isinstance(raw, bytes) else raw)
    text = "".join(parts).removeprefix("\ufeff")
    text = storable(text)
    if not text.strip(_JSON_SPACE):
        return RejectedLine(1, "file", f"empty: no JSON document, not {what}", "")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        reason = f"not valid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        document = JsonText(text, None)
        return RejectedLine(error.lineno, "file", reason + hint, document.line_text(error.lineno))
    except RecursionError:
        return RejectedLine(1, "file", f"JSON nested too deep to be {what}", "")
    return JsonText(text, value)


def _integer(digits: str) -> int | float:
    """A JSON integer; one of more digits than any count or time has is read as a float (int()
    refuses 4,300 digits and more), which the readers refuse as out of range."""
    return int(digits) if len(digits) <= _INTEGER_DIGITS else float(digits)


_DECODER = json.JSONDecoder(parse_int=_integer)


def skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in _JSON_SPACE:
        index += 1
    return index


def member_offsets(text: str, start: int, *, until: str | None = None) -> dict[str, int]:
    """The offset of each key of the (valid) JSON object that opens at `start`; with `until`,
    the walk stops at that key, whose value is then left unparsed."""
    offsets: dict[str, int] = {}
    index = skip_space(text, start + 1)
    while text[index] != "}":
        if text[index] == ",":
            index = skip_space(text, index + 1)
        key, after = _DECODER.raw_decode(text, index)
        offsets[str(key)] = index
        if key == until:
            return offsets
        value_start = skip_space(text, skip_space(text, after) + 1)  # past the ':'
        _, index = _DECODER.raw_decode(text, value_start)
        index = skip_space(text, index)
    return offsets


def value_offset(text: str, key_offset: int) -> int:
    """Where the value of the key at `key_offset` starts."""
    _, after = _DECODER.raw_decode(text, key_offset)
    return skip_space(text, skip_space(text, after) + 1)


def element_offsets(text: str, start: int) -> list[int]:
    """The offset of each element of the (valid) JSON array that opens at `start`."""
    offsets: list[int] = []
    index = skip_space(text, start + 1)
    while text[index] != "]":
        if text[index] == ",":
            index = skip_space(text, index + 1)
        offsets.append(index)
        _, index = _DECODER.raw_decode(text, index)
        index = skip_space(text, index)
    return offsets


def storable(text: str) -> str:
    """`text` without lone surrogates, which UTF-8 cannot hold."""
    return text if text.isascii() else text.encode(errors="replace").decode()
