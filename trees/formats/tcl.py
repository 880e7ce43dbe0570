"""Tcl's word rules (the Tcl(n) manual page's "Rules"), as the vovserver's Tcl configuration
files use them: `FSGROUP` (trees/formats/fsgroups.py) and `VovPreemptRule`
(trees/formats/preempt_rules.py). Nothing is evaluated: a word Tcl would substitute into is
recognised, never expanded.
"""

from __future__ import annotations

import re

__all__ = ["BLANKS", "substitutes", "unescape", "word_ends"]

BLANKS = " \t\r\v\f"  # Tcl's word separators other than the newline
_ESCAPE = re.compile(r"\\(\n[ \t]*|.)", re.DOTALL)
_ESCAPED = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_VARIABLE_START = re.compile(r"[A-Za-z0-9_:{(]")


def word_ends(text: str, at: int) -> bool:
    """Whether a word may end before `at`: a blank, a backslash-newline, or a command's end."""
    return text[at] in BLANKS or text[at] in "\n;" or text.startswith("\\\n", at)


def unescape(raw: str) -> str:
    """A bare or quoted word's backslash sequences replaced (a backslash-newline and the blanks
    after it are one space)."""

    def replace(found: re.Match[str]) -> str:
        escaped = found.group(1)
        return " " if escaped.startswith("\n") else _ESCAPED.get(escaped, escaped)

    return _ESCAPE.sub(replace, raw)


def substitutes(raw: str) -> bool:
    """Whether Tcl would substitute a variable or a command in this bare or quoted word."""
    at = 0
    while at < len(raw):
        character = raw[at]
        if character == "\\":
            at += 2
            continue
        if character == "[" or (
            character == "$" and _VARIABLE_START.match(raw, at + 1) is not None
        ):
            return True
        at += 1
    return False
