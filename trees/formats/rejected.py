"""A line of an input file that was not taken, and why."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RejectedLine:
    line: int
    field: str  # the column at fault (a file's own column name); `line` for the whole line
    reason: str
    text: str
    pbs_messages: tuple[str, ...] = ()  # what pbsfs prints to stderr for it; () if PBS takes it

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.reason}"
