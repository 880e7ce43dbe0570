"""Job runs as COPY text lines: every column in place, times as UTC, odd text escaped."""

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from accounting.copy_text import (
    JOB_COLUMNS,
    TEXT_MAX,
    CopyLines,
    copy_text,
    copy_time,
    node_text,
    with_node,
)
from accounting.parsers.records import JobRecord, JobState

LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z


def test_a_time_is_utc_text_and_none_is_null() -> None:
    assert copy_time(0) == "1970-01-01 00:00:00+00"
    assert copy_time(1772355605) == "2026-03-01 09:00:05+00"
    assert copy_time(LAST_SECOND) == "9999-12-31 23:59:59+00"
    assert copy_time(None) == "\\N"


@given(st.integers(min_value=0, max_value=LAST_SECOND))
def test_a_time_is_what_datetime_prints(epoch: int) -> None:
    expected = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S+00")
    assert copy_time(epoch) == expected


def record(**fields: object) -> JobRecord:
    values: dict[str, object] = {
        "line": 3,
        "job_id": "101[2]",
        "run": 2,
        "state": JobState.REQUEUED,
        "server": "pbs01",
        "user": "ann",
        "group": "chem",
        "account": "CHEM01",
        "project": "p1",
        "queue": "work",
        "jobname": "a",
        "mom": "node07",
        "ncpus": 4,
        "memory": 1048576,
        "requested_walltime": 7200,
        "walltime": 1800,
        "cput": 5400,
        "ctime": 1772352000,
        "qtime": 1772352000,
        "start": 1772352005,
        "end": 1772353805,
        "exit_status": -11,
        "extra": {"vmem": 2048.0, "cpupercent": 299.6, "billing": 1.5},
    }
    values.update(fields)
    return JobRecord(**values)  # type: ignore[arg-type]


def columns(line: str) -> dict[str, str]:
    assert line.endswith("\n")
    cells = line[:-1].split("\t")
    assert len(cells) == len(JOB_COLUMNS)
    return dict(zip(JOB_COLUMNS, cells, strict=True))


def test_every_column_of_a_run_in_order() -> None:
    line = with_node(CopyLines(7, "/logs/20260301", 42).line(record(), 7200.0, "ann"), 9)
    assert columns(line) == {
        "cluster_id": "7", "job_id": "101[2]", "run": "2", "state": "requeued",
        "server": "pbs01", "entity": "ann", "user": "ann", "group": "chem",
        "account": "CHEM01", "project": "p1", "queue": "work", "partition": "",
        "jobname": "a", "ncpus": "4", "ngpus": "0", "nodes": "0", "memory": "1048576",
        "vmem": "2048", "mpiprocs": "\\N", "cpupercent": "300", "billing": "1.5",
        "requested_walltime": "7200", "walltime": "1800", "cput": "5400",
        "ctime": "2026-03-01 08:00:00+00", "qtime": "2026-03-01 08:00:00+00",
        "etime": "\\N", "start": "2026-03-01 08:00:05+00", "end": "2026-03-01 08:30:05+00",
        "exit_status": "-11", "usage": "7200.0", "mom": "node07",
        "source_file": "/logs/20260301",
        "source_line": "3", "ingest_id": "42", "node_id": "9",
    }  # fmt: skip
    # Completed as it is made, the line is the same.
    made = CopyLines(7, "/logs/20260301", 42).line(record(), 7200.0, "ann", node_text(9))
    assert made == line


def test_a_run_without_a_node_or_usage_figures_has_nulls() -> None:
    bare = record(memory=None, requested_walltime=None, walltime=None, cput=None, extra={})
    cells = columns(with_node(CopyLines(1, "f", 1).line(bare, 0.0, "x"), None))
    assert [cells[name] for name in ("memory", "vmem", "billing", "cput", "node_id")] == ["\\N"] * 5


def test_tabs_newlines_and_backslashes_are_escaped_and_names_cut() -> None:
    odd = record(jobname="a\tb\\c\nd\re", user="u" * 300)
    cells = columns(with_node(CopyLines(1, "dir\\with\ttab", 1).line(odd, 1.0, "u" * 300), 1))
    assert cells["jobname"] == "a\\tb\\\\c\\nd\\re"
    assert cells["user"] == cells["entity"] == "u" * TEXT_MAX
    assert cells["source_file"] == "dir\\\\with\\ttab"


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00")))
def test_escaping_is_undone_by_copy(text: str) -> None:
    unescape = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
    escaped = copy_text(text)
    assert "\t" not in escaped
    assert "\n" not in escaped
    out, index = [], 0
    while index < len(escaped):
        pair = escaped[index : index + 2]
        if pair in unescape:
            out.append(unescape[pair])
            index += 2
        else:
            out.append(escaped[index])
            index += 1
    assert "".join(out) == text
