"""read_accelerator_jobs: the project's CSV export of Altair Accelerator jobs, as job runs."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounting.parsers.accelerator_jobs import (
    ACCELERATOR_JOB_FIELDS,
    ACCELERATOR_STATUSES,
    read_accelerator_jobs,
)
from accounting.parsers.records import (
    JobRecord,
    JobRequest,
    JobState,
    Parsed,
    Recognised,
    RejectedLine,
)
from tests.fuzzing import FUZZ, Reading, items_reading, junk_lines_test, random_bytes_test

HEADER = "id,fsgroup,user,status,jobclass,priority,submitted,started,ended"
EXPECTED = f"the header must be {HEADER}"
SUBMITTED, STARTED, ENDED = 1_700_000_000, 1_700_000_060, 1_700_003_660

# A job that ran an hour, written for these tests.
BASE = {
    "id": "000123",
    "fsgroup": "/class/vcs.u1",
    "user": "john",
    "status": "DONE",
    "jobclass": "vcs",
    "priority": "4",
    "submitted": str(SUBMITTED),
    "started": str(STARTED),
    "ended": str(ENDED),
}


def row(**fields: str) -> str:
    """A job line as Python's csv module writes it: BASE with `fields` changed."""
    unknown = set(fields) - set(ACCELERATOR_JOB_FIELDS)
    assert not unknown, unknown
    out = io.StringIO()
    csv.writer(out).writerow([{**BASE, **fields}[name] for name in ACCELERATOR_JOB_FIELDS])
    return out.getvalue()


def read(*lines: str, header: str = HEADER + "\r\n") -> list[Parsed]:
    return list(read_accelerator_jobs([header, *lines]))


def one(line: str) -> Parsed:
    items = read(line)
    assert len(items) == 1, items
    return items[0]


def record(line: str) -> JobRecord:
    item = one(line)
    assert isinstance(item, JobRecord), item
    return item


def rejected(line: str) -> RejectedLine:
    item = one(line)
    assert isinstance(item, RejectedLine), item
    return item


def expected_record(**fields: Any) -> JobRecord:
    """The run BASE's fields give at line 2, with `fields` changed."""
    values: dict[str, Any] = {
        "line": 2,
        "job_id": "000123",
        "run": 1,
        "user": "john",
        "account": "/class/vcs.u1",
        "queue": "vcs",
        "ncpus": 1,
        "ctime": SUBMITTED,
        "qtime": SUBMITTED,
    }
    values.update(fields)
    return JobRecord(**values)


class TestStatuses:
    def test_a_done_job_is_an_ended_run_with_exit_status_0(self):
        assert record(row(status="DONE")) == expected_record(
            state=JobState.ENDED,
            start=STARTED,
            end=ENDED,
            walltime=3600,
            exit_status=0,
            kind="DONE",
        )

    def test_a_failed_job_is_an_ended_run_without_an_exit_status(self):
        assert record(row(status="FAILED")) == expected_record(
            state=JobState.ENDED,
            start=STARTED,
            end=ENDED,
            walltime=3600,
            exit_status=None,
            kind="FAILED",
        )

    def test_a_running_job_is_a_run_without_end_or_walltime(self):
        assert record(row(status="RUNNING", ended="", priority="7")) == expected_record(
            state=JobState.RUNNING,
            start=STARTED,
            kind="RUNNING",
            request=JobRequest(job_priority=7),
        )

    def test_a_suspended_job_is_a_running_run_of_kind_suspended(self):
        assert record(row(status="SUSPENDED", ended="0", priority="7")) == expected_record(
            state=JobState.RUNNING,
            start=STARTED,
            kind="SUSPENDED",
            request=JobRequest(job_priority=7, suspended=True),
        )

    def test_a_queued_job_is_a_queued_record_with_its_priority_as_request(self):
        assert record(row(status="QUEUED", started="", ended="", priority="12")) == (
            expected_record(
                run=0, state=JobState.QUEUED, kind="QUEUED", request=JobRequest(job_priority=12)
            )
        )

    @pytest.mark.parametrize("status", ["DONE", "FAILED"])
    def test_an_ended_job_that_never_started_is_recognised_as_withdrawn(self, status):
        assert one(row(status=status, started="", ended="")) == Recognised(
            2, kind=status, withdrawn="000123"
        )

    def test_zero_times_are_not_set(self):
        assert one(row(status="FAILED", started="0", ended="0")) == Recognised(
            2, kind="FAILED", withdrawn="000123"
        )
        job = record(row(status="QUEUED", submitted="0", started="0", ended="0"))
        assert (job.ctime, job.qtime, job.start, job.end) == (None, None, None, None)

    @pytest.mark.parametrize(
        ("written", "kind"),
        [
            ("done", "DONE"),
            ("Failed", "FAILED"),
            ("running", "RUNNING"),
            ("sUsPeNdEd", "SUSPENDED"),
        ],
    )
    def test_statuses_are_read_in_any_case(self, written, kind):
        ended = "" if kind in {"RUNNING", "SUSPENDED"} else str(ENDED)
        assert record(row(status=written, ended=ended)).kind == kind

    def test_a_queued_status_in_lower_case_keeps_its_request(self):
        job = record(row(status="queued", started="", ended="", priority="0"))
        assert (job.state, job.kind, job.request) == (
            JobState.QUEUED,
            "QUEUED",
            JobRequest(job_priority=0),
        )

    def test_the_five_statuses_are_public(self):
        assert ACCELERATOR_STATUSES == ("QUEUED", "RUNNING", "SUSPENDED", "DONE", "FAILED")
        assert ",".join(ACCELERATOR_JOB_FIELDS) == HEADER

    @pytest.mark.parametrize("status", ["Idle", "Transfer", "Sleeping", "Withdrawn", "IDLE"])
    def test_accelerators_other_statuses_are_named_and_refused(self, status):
        bad = rejected(row(status=status))
        assert (bad.line, bad.field, bad.reason) == (
            2,
            "status",
            f"Accelerator status {status!r} is not one of QUEUED, RUNNING, SUSPENDED, DONE, FAILED",
        )

    @pytest.mark.parametrize("status", ["COMPLETED", "dońe", "DONE ", "FAıLED"])
    def test_an_unknown_status_is_refused(self, status):
        bad = rejected(row(status=status))
        assert (bad.field, bad.reason) == (
            "status",
            f"unknown status {status!r}; one of QUEUED, RUNNING, SUSPENDED, DONE, FAILED",
        )

    def test_an_empty_status_is_refused(self):
        bad = rejected(row(status=""))
        assert (bad.field, bad.reason) == ("status", "status is empty")


class TestFields:
    def test_the_id_is_kept_as_written(self):
        assert record(row(id="x" * 128)).job_id == "x" * 128

    @pytest.mark.parametrize(
        ("fields", "field", "reason"),
        [
            ({"id": ""}, "id", "id is empty"),
            ({"id": "x" * 129}, "id", "id is 129 characters; at most 128"),
            ({"fsgroup": ""}, "fsgroup", "fsgroup is empty"),
            ({"fsgroup": "class/vcs"}, "fsgroup", "fsgroup 'class/vcs' does not start with /"),
            ({"fsgroup": "/"}, "fsgroup", "fsgroup '/' has an empty part"),
            ({"fsgroup": "/class//vcs"}, "fsgroup", "fsgroup '/class//vcs' has an empty part"),
            ({"fsgroup": "/class/"}, "fsgroup", "fsgroup '/class/' has an empty part"),
            ({"user": ""}, "user", "user is empty"),
            ({"priority": ""}, "priority", "priority is empty"),
            ({"priority": "high"}, "priority", "priority 'high' is not an integer"),
            ({"priority": "4.0"}, "priority", "priority '4.0' is not an integer"),
            ({"priority": "16"}, "priority", "priority '16' is not in 0..15"),
            ({"priority": "-1"}, "priority", "priority '-1' is not in 0..15"),
            ({"priority": "9" * 5000}, "priority", f"priority {'9' * 60!r}… is not in 0..15"),
            ({"submitted": "-5"}, "submitted", "submitted '-5' is negative"),
            ({"started": "1.5"}, "started", "started '1.5' is not epoch seconds"),
            ({"ended": "soon"}, "ended", "ended 'soon' is not epoch seconds"),
            ({"ended": "٣"}, "ended", "ended '٣' is not epoch seconds"),
            ({"ended": "253402300800"}, "ended", "ended '253402300800' is after 9999-12-31"),
            ({"ended": "9" * 5000}, "ended", f"ended {'9' * 60!r}… is after 9999-12-31"),
        ],
    )
    def test_a_bad_field_is_refused_by_its_column_name(self, fields, field, reason):
        bad = rejected(row(**fields))
        assert (bad.line, bad.field, bad.reason) == (2, field, reason)
        assert bad.text == row(**fields).rstrip("\r\n")[:1000]

    @pytest.mark.parametrize("priority", ["0", "1", "15", "015"])
    def test_priorities_0_to_15_are_taken(self, priority):
        job = record(row(status="QUEUED", started="", ended="", priority=priority))
        assert job.request == JobRequest(job_priority=int(priority))

    def test_an_empty_jobclass_is_no_queue(self):
        assert record(row(jobclass="")).queue == ""

    def test_the_first_bad_field_in_column_order_is_reported(self):
        assert rejected(row(user="", priority="", ended="x")).field == "user"

    def test_the_last_possible_second_is_taken(self):
        assert record(row(ended="253402300799")).end == 253_402_300_799


S, T, E = str(SUBMITTED), str(STARTED), str(ENDED)


class TestRules:
    @pytest.mark.parametrize(
        ("status", "submitted", "started", "ended", "field", "reason"),
        [
            ("RUNNING", S, "", "", "started", "a RUNNING job has no started time"),
            ("SUSPENDED", S, "0", "", "started", "a SUSPENDED job has no started time"),
            ("RUNNING", S, T, E, "ended", "a RUNNING job has an ended time"),
            ("SUSPENDED", S, T, E, "ended", "a SUSPENDED job has an ended time"),
            ("QUEUED", S, T, "", "started", "a QUEUED job has a started time"),
            ("QUEUED", S, "", E, "ended", "a QUEUED job has an ended time"),
            ("DONE", S, T, "", "ended", "a DONE job that started has no ended time"),
            ("FAILED", S, T, "0", "ended", "a FAILED job that started has no ended time"),
            ("DONE", S, "", E, "started", "a DONE job that ended has no started time"),
            ("FAILED", S, "0", E, "started", "a FAILED job that ended has no started time"),
            ("DONE", S, "1699999999", E, "started", f"started 1699999999 is before submitted {S}"),
            ("DONE", S, T, "1700000059", "ended", f"ended 1700000059 is before started {T}"),
            ("RUNNING", S, "5", "", "started", f"started 5 is before submitted {S}"),
            ("done", S, T, "5", "ended", f"ended 5 is before started {T}"),
        ],
    )
    def test_a_rule_violation_names_its_field(
        self, status, submitted, started, ended, field, reason
    ):
        bad = rejected(row(status=status, submitted=submitted, started=started, ended=ended))
        assert (bad.line, bad.field, bad.reason) == (2, field, reason)

    def test_equal_times_are_in_order(self):
        same = str(SUBMITTED)
        job = record(row(submitted=same, started=same, ended=same))
        assert (job.start, job.end, job.walltime) == (SUBMITTED, SUBMITTED, 0)

    def test_without_a_submit_time_the_other_times_are_not_compared_with_it(self):
        job = record(row(submitted="", started="5", ended="7"))
        assert (job.ctime, job.start, job.end, job.walltime) == (None, 5, 7, 2)


class TestHeader:
    @pytest.mark.parametrize(
        ("header", "differs"),
        [
            (
                "id,user,fsgroup,status,jobclass,priority,submitted,started,ended",
                "out of order: user, fsgroup",
            ),
            ("id,fsgroup,user,status,jobclass,priority,submitted,started", "missing ended"),
            (
                "id,fsgroup,user,status,jobclass,priority,submitted,started,ended,host",
                "not expected 'host'",
            ),
            (
                "id,fsgroup,user,state,jobclass,priority,submitted,started,ended",
                "missing status; not expected 'state'",
            ),
            (
                "ID,fsgroup,user,status,jobclass,priority,submitted,started,ended",
                "missing id; not expected 'ID'",
            ),
            (
                "id,fsgroup,user,status,jobclass,priority,submitted,started,ended,id",
                "not expected 'id'",
            ),
            (
                "id, fsgroup,user,status,jobclass,priority,submitted,started,ended",
                "missing fsgroup; not expected ' fsgroup'",
            ),
            (
                "id|fsgroup|user|status|jobclass|priority|submitted|started|ended",
                "missing id, fsgroup, user, status, jobclass, priority, submitted, started, ended;"
                " not expected 'id|fsgroup|user|status|jobclass|priority|submitted|started|e'…",
            ),
        ],
    )
    def test_a_different_header_is_one_rejected_line_and_nothing_else_is_read(
        self, header, differs
    ):
        items = read(row(), row(id="2"), header=header + "\n")
        assert len(items) == 1
        bad = items[0]
        assert isinstance(bad, RejectedLine)
        assert (bad.line, bad.field, bad.text) == (1, "line", header)
        assert bad.reason == f"{EXPECTED}; {differs}"

    def test_many_unexpected_columns_are_counted_after_ten(self):
        header = ",".join(f"c{n}" for n in range(12))
        (bad,) = read(header=header)
        assert isinstance(bad, RejectedLine)
        named = ", ".join(f"'c{n}'" for n in range(10))
        assert bad.reason == f"{EXPECTED}; missing {', '.join(ACCELERATOR_JOB_FIELDS)};" + (
            f" not expected {named} and 2 more"
        )

    def test_a_job_line_in_place_of_the_header_is_rejected(self):
        (bad,) = list(read_accelerator_jobs([row(), row()]))
        assert isinstance(bad, RejectedLine)
        assert (bad.line, bad.field) == (1, "line")
        assert bad.reason.startswith(f"{EXPECTED}; missing id, fsgroup")

    def test_a_header_that_is_not_utf8_is_rejected_and_nothing_else_is_read(self):
        items = list(read_accelerator_jobs([b"id,fsgr\xffoup\n", row().encode()]))
        assert items == [RejectedLine(1, "line", f"not UTF-8 text; {EXPECTED}", "id,fsgr\\xffoup")]

    def test_comments_and_blank_lines_may_come_before_the_header(self):
        lines = ["# exported by the dashboard\n", "\n", HEADER + "\n", row()]
        (job,) = list(read_accelerator_jobs(lines))
        assert isinstance(job, JobRecord)
        assert job.line == 4

    def test_a_byte_order_mark_before_the_header_is_skipped(self):
        data = ("\ufeff" + HEADER + "\r\n" + row()).encode()
        (job,) = list(read_accelerator_jobs(data.splitlines(keepends=True)))
        assert isinstance(job, JobRecord)

    def test_a_quoted_header_is_the_same_header(self):
        quoted = ",".join(f'"{name}"' for name in ACCELERATOR_JOB_FIELDS)
        assert isinstance(read(row(), header=quoted)[0], JobRecord)

    @pytest.mark.parametrize("lines", [[], [""], ["\n", "# only a comment\n", "  \n"]])
    def test_a_file_without_a_header_gives_nothing(self, lines):
        assert list(read_accelerator_jobs(lines)) == []

    def test_a_header_alone_gives_nothing(self):
        assert read() == []


class TestLines:
    def test_quoted_fields_may_hold_commas_and_quotes(self):
        line = '"job,1","/class/a,b","o\'neil, jr","done","vcs ""fast""","4",1,2,3\n'
        job = record(line)
        assert (job.job_id, job.account, job.user, job.queue, job.kind) == (
            "job,1",
            "/class/a,b",
            "o'neil, jr",
            'vcs "fast"',
            "DONE",
        )
        assert (job.ctime, job.start, job.end, job.walltime) == (1, 2, 3, 1)

    def test_a_quoted_id_may_start_with_a_hash(self):
        assert record(row(id="#7").replace("#7", '"#7"')).job_id == "#7"

    def test_comments_and_blank_lines_are_skipped_and_keep_line_numbers(self):
        items = read(
            "# a comment\n",
            row(id="a"),
            "\n",
            "   \r\n",
            "#id,fsgroup,user\n",
            row(id="b", user=""),
            row(id="c"),
        )
        assert [(type(item).__name__, item.line) for item in items] == [
            ("JobRecord", 3),
            ("RejectedLine", 7),
            ("JobRecord", 8),
        ]

    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            ("1,/a,u,DONE,c,4,1,2\n", "8 fields; the header has 9"),
            ("1,/a,u,DONE,c,4,1,2,3,4\n", "10 fields; the header has 9"),
            ("1\n", "1 fields; the header has 9"),
            ('1,/a,u,DONE,"c,4,1,2,3\n', "not a CSV line: unexpected end of data"),
            ('1,/a,u,DONE,"c"x,4,1,2,3\n', "not a CSV line: ',' expected after '\"'"),
        ],
    )
    def test_a_line_that_is_not_nine_csv_fields_is_rejected_whole(self, line, reason):
        bad = rejected(line)
        assert (bad.line, bad.field, bad.reason, bad.text) == (2, "line", reason, line[:-1])

    def test_a_bad_quote_costs_its_own_line_only(self):
        items = read('1,"/a\n', row(id="2"))
        assert [type(item) for item in items] == [RejectedLine, JobRecord]
        assert items[1].line == 3

    def test_bytes_are_read_as_utf8(self):
        data = (HEADER + "\n" + row(user="zoë", fsgroup="/time/users.zoë")).encode()
        (job,) = list(read_accelerator_jobs(data.splitlines(keepends=True)))
        assert isinstance(job, JobRecord)
        assert (job.user, job.account) == ("zoë", "/time/users.zoë")

    def test_a_line_that_is_not_utf8_is_rejected_and_the_next_read(self):
        lines = [HEADER.encode() + b"\n", b"1,/a,j\xe9r\xf4me,DONE,,4,1,2,3\n", row().encode()]
        items = list(read_accelerator_jobs(lines))
        assert items[0] == RejectedLine(
            2, "line", "not UTF-8 text", "1,/a,j\\xe9r\\xf4me,DONE,,4,1,2,3"
        )
        assert isinstance(items[1], JobRecord)
        assert items[1].line == 3

    def test_a_rejected_lines_text_is_cut_to_1000_characters(self):
        bad = rejected(row(id="x" * 5000))
        assert bad.reason == "id is 5,000 characters; at most 128"
        assert len(bad.text) == 1000

    def test_a_comment_that_is_not_utf8_is_still_a_comment(self):
        lines = [HEADER.encode(), b"# caf\xe9\n", row().encode()]
        assert [type(item) for item in read_accelerator_jobs(lines)] == [JobRecord]

    def test_lines_are_read_lazily(self):
        def lines():
            yield HEADER + "\n"
            yield row()
            raise AssertionError("read past the first job")

        assert isinstance(next(iter(read_accelerator_jobs(lines()))), JobRecord)


# Text a record line can hold: no newline (a record is one line) and no lone surrogate.
FIELD_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"))
NONEMPTY = FIELD_TEXT.filter(bool)
PART = st.text(st.characters(codec="utf-8", exclude_characters="\r\n/"), min_size=1)
EPOCH = st.integers(1, 253_402_300_799)


@st.composite
def jobs(draw: st.DrawFn) -> dict[str, Any]:
    """Valid values for one job line, its times consistent with its status."""
    status = draw(st.sampled_from(ACCELERATOR_STATUSES))
    submitted = draw(st.none() | EPOCH)
    started = ended = None
    ran = status in {"RUNNING", "SUSPENDED"} or (
        status in {"DONE", "FAILED"} and draw(st.booleans())
    )
    if ran:
        started = draw(st.integers(submitted or 1, 253_402_300_799))
        if status in {"DONE", "FAILED"}:
            ended = draw(st.integers(started, 253_402_300_799))
    return {
        "id": draw(NONEMPTY.filter(lambda text: not text.startswith("#")).map(lambda t: t[:128])),
        "fsgroup": "/" + "/".join(draw(st.lists(PART, min_size=1, max_size=4))),
        "user": draw(NONEMPTY),
        "status": status,
        "written_status": "".join(
            draw(st.sampled_from([letter.lower(), letter])) for letter in status
        ),
        "jobclass": draw(FIELD_TEXT),
        "priority": draw(st.integers(0, 15)),
        "submitted": submitted,
        "started": started,
        "ended": ended,
    }


def written(job: dict[str, Any], unset: str) -> list[str]:
    def time(value: int | None) -> str:
        return unset if value is None else str(value)

    return [
        job["id"],
        job["fsgroup"],
        job["user"],
        job["written_status"],
        job["jobclass"],
        str(job["priority"]),
        time(job["submitted"]),
        time(job["started"]),
        time(job["ended"]),
    ]


# Eight jobs of many text fields each are slow to draw on a loaded 2-core machine (the suite
# runs in two processes); what is drawn is what matters here, not how fast.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(jobs(), max_size=8),
    st.sampled_from(["", "0"]),
    st.sampled_from(["\r\n", "\n"]),
    st.booleans(),
)
def test_rows_written_by_the_csv_module_read_back_as_written(values, unset, terminator, as_bytes):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=terminator)
    writer.writerow(ACCELERATOR_JOB_FIELDS)
    writer.writerows(written(job, unset) for job in values)
    # Split at the terminator only: str.splitlines() also breaks at \x85 or \u2028, which a
    # field may hold and a file's lines do not break at.
    texts = out.getvalue().split(terminator)[:-1]
    lines: list[str | bytes] = [text.encode() for text in texts] if as_bytes else list(texts)
    items = list(read_accelerator_jobs(lines))
    assert len(items) == len(values)
    for number, (item, job) in enumerate(zip(items, values, strict=True), start=2):
        if job["status"] in {"DONE", "FAILED"} and job["started"] is None:
            assert item == Recognised(number, kind=job["status"], withdrawn=job["id"])
            continue
        assert isinstance(item, JobRecord), item
        going = job["status"] in {"QUEUED", "RUNNING", "SUSPENDED"}
        suspended = job["status"] == "SUSPENDED"
        assert (
            item.line,
            item.job_id,
            item.account,
            item.user,
            item.kind,
            item.queue,
            item.request,
            item.ctime,
            item.start,
            item.end,
        ) == (
            number,
            job["id"],
            job["fsgroup"],
            job["user"],
            job["status"],
            job["jobclass"],
            JobRequest(job_priority=job["priority"], suspended=suspended) if going else None,
            job["submitted"],
            job["started"],
            job["ended"],
        )


# Fuzzing: random bytes, arbitrary text, and a good export with some job lines made junk.
GOOD = (
    HEADER
    + "\r\n# jobs of the vcs class\n"
    + row(id="1")
    + row(id="2", status="RUNNING", ended="")
    + "\n"
    + row(id="3", status="QUEUED", started="", ended="")
    + row(id="4", status="FAILED", started="", ended="")
    + '"5,a","/time/users.john",john,suspended,,8,1,2,\n'
).encode()
JOB_LINES = [2, 3, 5, 6, 7]


def reading(data: bytes) -> Reading:
    return items_reading(read_accelerator_jobs(io.BytesIO(data)))  # lines as a file gives them


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (sorted(seed.kept), seed.rejected) == ([3, 4, 6, 7, 8], [])


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


test_good_jobs_around_junk_read_as_before = junk_lines_test(reading, GOOD, JOB_LINES)


@FUZZ
@given(st.lists(st.text(), max_size=20), st.booleans())
def test_arbitrary_text_never_raises(lines, with_header):
    items = list(read_accelerator_jobs([HEADER, *lines] if with_header else lines))
    for item in items:
        assert isinstance(item, JobRecord | RejectedLine | Recognised)
        if isinstance(item, RejectedLine):
            assert item.field in {"line", *ACCELERATOR_JOB_FIELDS}
            assert item.reason
            assert len(item.text) <= 1000
