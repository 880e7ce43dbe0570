"""What every file the site hands out goes through: CSV cells that a spreadsheet shows and never
runs, and a Content-Disposition header that no name can add to."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

from django.utils.http import content_disposition_header

# OWASP's "CSV Injection": spreadsheets take a cell starting with one of these for a formula
# (the tab and the carriage return because some strip them first, then see the formula).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Letters and digits of any script, `_`, `.` and `-`: nothing that quotes, separates parameters,
# escapes, names a folder or breaks a line. Runs of anything else become one `_`.
_UNSAFE = re.compile(r"[^\w.-]+")
STEM_LENGTH = 120  # characters of a file name before its extension; file systems allow 255 bytes


def csv_cell(value: object) -> object:
    """`value` as a CSV cell: text that starts like a formula gets a leading single quote, which
    spreadsheets show as text; numbers, negative ones too, are numbers and stay as they are.
    So numbers go in as numbers, never formatted to text first."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _Stream(Protocol):
    def write(self, text: str, /) -> Any: ...


class CsvWriter:
    """`csv.writer` whose every cell goes through `csv_cell`: the one writer of the site's CSV
    files (downloads and command output alike)."""

    def __init__(self, out: _Stream, **options: Any) -> None:
        self._writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[object]) -> Any:
        """The stream's answer to the write (what a streamed response yields)."""
        return self._writer.writerow([csv_cell(value) for value in row])


def _safe(part: object) -> str:
    return _UNSAFE.sub("_", str(part)).strip("._-")


def download_header(*parts: object, extension: str = "", inline: bool = False) -> str:
    """The Content-Disposition of a download named by `parts` joined with `-` (site names in
    them reduced to safe characters), then `.extension`: RFC 6266's `filename*` where a name
    has letters beyond ASCII, as Django writes it."""
    stem = "-".join(safe for safe in map(_safe, parts) if safe)[:STEM_LENGTH] or "download"
    filename = f"{stem}.{_safe(extension)}" if extension else stem
    header = content_disposition_header(not inline, filename)
    assert header is not None  # Django leaves it out only for an inline file with no name
    return header
