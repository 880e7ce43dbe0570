"""bounded_lines / bounded_bytes: no line of a site's file is read past MAX_LINE_BYTES."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from trees.formats import lines
from trees.formats.lines import MAX_LINE_BYTES, LineTooLong, bounded_bytes, bounded_lines


def test_a_line_over_the_bound_is_a_blank_line_and_its_number_is_kept() -> None:
    data = b"a\n" + b"x" * (MAX_LINE_BYTES + 10) + b"\nb\n" + b"y" * MAX_LINE_BYTES + b"\n"
    overlong: list[int] = []
    read = list(bounded_lines(io.BytesIO(data), overlong))
    assert [line[:3] for line in read] == [b"a\n", b"\n", b"b\n", b"yyy"]
    assert len(read[3]) == MAX_LINE_BYTES + 1  # the bound itself is a line
    assert overlong == [2]


def test_bounded_bytes_refuses_a_file_with_a_line_over_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "rules.tcl"
    path.write_bytes(b"VovPreemptRule -rulename a\n" + b"x" * (MAX_LINE_BYTES + 1))
    with pytest.raises(LineTooLong) as refused:
        bounded_bytes(path)
    assert refused.value.line == 2
    assert refused.value.reason.startswith("longer than 4,194,304 bytes")


def test_bounded_bytes_refuses_a_file_over_the_whole_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lines, "MAX_TEXT_BYTES", 10)
    path = tmp_path / "config"
    path.write_bytes(b"abc\n" * 3)
    with pytest.raises(LineTooLong) as refused:
        bounded_bytes(path)
    assert (refused.value.line, refused.value.reason) == (
        3, "the file is over 10 bytes: no such file is; not read",
    )  # fmt: skip
    path.write_bytes(b"abc\n" * 2)
    assert bounded_bytes(path) == b"abc\nabc\n"
