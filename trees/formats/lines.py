"""Input read with a bound on its lines: the one rule every reader of a site's files keeps.

No scheduler writes a line this long (a PBS E record of a 10,000-node job is about 200 KB, a
qstat -F json document is indented, one attribute a line): a longer one is something else,
and reading it whole is what made a 60 MB single-line upload cost a worker 1.3 GB. Readers take
their lines through `bounded_lines`, whole-file formats (Tcl, qmgr) through `bounded_bytes`,
which refuses such a file with the line named. JSON snapshots of the queue, which big sites
write at hundreds of MB, are streamed instead (accounting/parsers/json_stream.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_TEXT_BYTES",
    "LineTooLong",
    "bounded_bytes",
    "bounded_lines",
    "overlong_reason",
]

MAX_LINE_BYTES = 4 << 20
# A whole-file format is parsed in memory, a few times its size: a bigger file is refused, so
# that no import grows a process past about 500 MB.
MAX_TEXT_BYTES = 32 << 20


class LineTooLong(ValueError):
    """A file with a line over MAX_LINE_BYTES, or over MAX_TEXT_BYTES in all; the message names
    the line."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def bounded_lines(stream: IO[bytes], overlong: list[int]) -> Iterator[bytes]:
    """The stream's lines, each read with at most MAX_LINE_BYTES + 1 bytes in memory; a longer
    one is skipped to its end, a blank line stands for it and its number goes to `overlong`."""
    number = 0
    readline = stream.readline
    while line := readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            overlong.append(number)
            line = b"\n"
        yield line


def overlong_reason() -> str:
    """Why a line over MAX_LINE_BYTES is rejected, in every reader's words."""
    return f"longer than {MAX_LINE_BYTES:,} bytes: no record is; not read"


def bounded_bytes(path: str | Path) -> bytes:
    """The file's bytes; raises LineTooLong for a file with a line over MAX_LINE_BYTES or more
    than MAX_TEXT_BYTES in all (nothing more of it is read), OSError when it cannot be read."""
    overlong: list[int] = []
    parts: list[bytes] = []
    size = 0
    with Path(path).open("rb") as stream:
        for line in bounded_lines(stream, overlong):
            if overlong:
                raise LineTooLong(overlong[0], overlong_reason() + ", nor the rest of the file")
            size += len(line)
            if size > MAX_TEXT_BYTES:
                reason = f"the file is over {MAX_TEXT_BYTES:,} bytes: no such file is; not read"
                raise LineTooLong(len(parts) + 1, reason)
            parts.append(line)
    return b"".join(parts)
