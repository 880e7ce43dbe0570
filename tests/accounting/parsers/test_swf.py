"""accounting.parsers.swf: Standard Workload Format 2.2 traces as job runs.

The reference is the archive's swf.html and FORMATS.md §4; the real traces under
../shared/data/swf are the Parallel Workloads Archive's cleaned logs (SOURCES.md §6).
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.parsers.records import JobRecord, JobState, Parsed, RejectedLine
from accounting.parsers.swf import FIELDS, MAX_NCPUS, SwfHeader, SwfReader
from tests.conftest import SHARED

TRACES = SHARED / "data" / "swf"
HPC2N = "HPC2N-2002-2.2-cln.swf.gz"
SDSC_BLUE = "SDSC-BLUE-2000-4.2-cln.swf.gz"
CEA_CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"
LLNL_THUNDER = "LLNL-Thunder-2007-1.1-cln.swf.gz"
SANDIA_ROSS = "Sandia-Ross-2001-1.1-cln.swf.gz"
KTH_SP2 = "KTH-SP2-1996-2.1-cln.swf.gz"


def swf_line(**values: float | str) -> str:
    """A data line: job 1 submitted at 0, every other field -1 unless given by its SWF name."""
    row: dict[str, float | str] = dict.fromkeys(FIELDS, -1)
    row.update(job_number=1, submit_time=0)
    row.update(values)
    return " ".join(f"{row[name]:>6}" for name in FIELDS) + "\n"


def read(text: str | bytes) -> tuple[SwfReader, list[Parsed]]:
    """The reader over a file's bytes, and what it yields."""
    data = text.encode() if isinstance(text, str) else text
    reader = SwfReader(data.splitlines(keepends=True))
    return reader, list(reader)


def one(text: str | bytes) -> Parsed:
    _, items = read(text)
    assert len(items) == 1, items
    return items[0]


def record(text: str | bytes) -> JobRecord:
    item = one(text)
    assert isinstance(item, JobRecord), item
    return item


def rejected(text: str | bytes) -> RejectedLine:
    item = one(text)
    assert isinstance(item, RejectedLine), item
    return item


class TestHeader:
    def test_every_key_in_order_as_written_with_or_without_the_space(self):
        reader, items = read(
            "; Version: 2.2\n;Computer: Compaq DS10L\n; Information: http://a/\n"
            "; Information: http://b/\n; MaxQueues: 4\n;MaxQueues: 3\n"
        )
        assert items == []
        assert reader.header.fields == {
            "Version": ["2.2"],
            "Computer": ["Compaq DS10L"],
            "Information": ["http://a/", "http://b/"],
            "MaxQueues": ["4", "3"],
        }

    def test_an_empty_reader_has_an_empty_header(self):
        reader, items = read(b"")
        assert items == []
        assert reader.header == SwfHeader({}, 0, "", None, None, {}, {})

    def test_unix_start_time_is_added_to_submit_times(self):
        job = record("; UnixStartTime: 1027839845\n" + swf_line(submit_time=342072))
        assert job.ctime == job.qtime == 1027839845 + 342072

    def test_without_unix_start_time_submit_times_are_epochs(self):
        reader, items = read(swf_line(submit_time=1356994800))
        assert reader.header.unix_start_time == 0
        assert isinstance(items[0], JobRecord)
        assert items[0].ctime == 1356994800

    def test_time_zone_string_with_or_without_the_space(self):
        assert read("; TimeZoneString: Europe/Stockholm\n")[0].header.time_zone == (
            "Europe/Stockholm"
        )
        assert read(";TimeZoneString: US/Mountain\n")[0].header.time_zone == "US/Mountain"

    @pytest.mark.parametrize(
        ("value", "count"),
        [
            ("338 (batch partition; 512 total)", 338),
            ("184  ( 6,  171,   7)", 184),
            ("240", 240),
            ("N/A", None),
            ("", None),
            ("9" * 30, None),
        ],
    )
    def test_max_nodes_and_max_procs_are_their_leading_integer(self, value, count):
        header = read(f"; MaxNodes: {value}\n;MaxProcs: {value}\n")[0].header
        assert (header.max_nodes, header.max_procs) == (count, count)
        assert header.fields["MaxNodes"] == [value.strip()]

    def test_a_non_numeric_unix_start_time_leaves_it_unset(self):
        assert read("; UnixStartTime: soon\n")[0].header.unix_start_time == 0

    def test_queue_and_partition_names_only_when_given(self):
        reader, _ = read(
            "; Queue:  0  interactive    \n; Queue: 1 batch  (the default)\n; Queue:  2  \n"
            "; Partition:  1  DEFAULT\n;Partition: 02 z+i5U=:\n; Partition: x y\n"
        )
        assert reader.header.queues == {"0": "interactive", "1": "batch"}
        assert reader.header.partitions == {"1": "DEFAULT", "2": "z+i5U=:"}

    def test_jobs_carry_queue_and_partition_names_else_numbers(self):
        _, items = read(
            "; Queue: 1 batch\n; Partition: 2 pdebug\n"
            + swf_line(queue_number=1, partition_number=2)
            + swf_line(queue_number=7, partition_number=3)
            + swf_line(queue_number=0, partition_number=-1)
        )
        assert [(item.queue, item.partition) for item in items if isinstance(item, JobRecord)] == [
            ("batch", "pdebug"),
            ("7", "3"),
            ("0", ""),
        ]

    def test_continuation_lines_extend_the_last_value_and_are_ignored_before_any_key(self):
        reader, items = read(
            ";   --- SWF file converted from SACCT ---\n"
            "; Note: Curie is composed of thin, fat, and hybrid,\n"
            ";\tsee: http://www-hpc.cea.fr/\n"
            "; Information: http://www.pdc.kth.se/\n"
            ";              http://www.cs.huji.ac.il/labs/parallel/workload/\n"
            "; Note: THIS IS A CLEANED VERSION OF THE LOG!\n"
            ";         submit<=2012-02-03 00:00:00 (272392 jobs removed)\n"
        )
        assert items == []
        assert reader.header.fields == {
            "Note": [
                "Curie is composed of thin, fat, and hybrid, see: http://www-hpc.cea.fr/",
                "THIS IS A CLEANED VERSION OF THE LOG! submit<=2012-02-03 00:00:00 "
                "(272392 jobs removed)",
            ],
            "Information": [
                "http://www.pdc.kth.se/ http://www.cs.huji.ac.il/labs/parallel/workload/"
            ],
        }

    def test_a_continuation_can_complete_a_max_procs_value(self):
        header = read("; MaxProcs:\n;          338 (batch)\n")[0].header
        assert header.max_procs == 338
        assert header.fields["MaxProcs"] == ["338 (batch)"]

    def test_lone_semicolons_are_nothing(self):
        reader, items = read(";\n; \n;\t\n; Version: 2.2\n;\n")
        assert items == []
        assert reader.header.fields == {"Version": ["2.2"]}

    def test_header_lines_after_data_lines_apply_to_later_jobs(self):
        reader, items = read(
            "; UnixStartTime: 1000\n"
            + swf_line(job_number=1, submit_time=5, queue_number=1)
            + "; UnixStartTime: 2000\n; Queue: 1 late\n"
            + swf_line(job_number=2, submit_time=5, queue_number=1)
        )
        assert [(item.ctime, item.queue) for item in items if isinstance(item, JobRecord)] == [
            (1005, "1"),
            (2005, "late"),
        ]
        assert reader.header.fields["UnixStartTime"] == ["1000", "2000"]

    def test_a_byte_order_mark_does_not_hide_the_first_line(self):
        reader, items = read(b"\xef\xbb\xbf; Version: 2.2\n" + swf_line().encode())
        assert reader.header.fields == {"Version": ["2.2"]}
        assert [type(item) for item in items] == [JobRecord]

    def test_a_header_line_that_is_not_utf8_still_yields_nothing(self):
        reader, items = read(b"; Acknowledge: \xc5ke Sandgren\n")
        assert items == []
        assert reader.header.fields == {"Acknowledge": ["\\xc5ke Sandgren"]}


class TestJobs:
    def test_the_first_hpc2n_line(self):
        job = record(
            "; UnixStartTime: 1027839845\n; Partition:  1  DEFAULT    \n"
            "   11   342072     32  43306   32  43307    -1   32  43200    -1  1   4   1  -1 -1"
            "  1 -1 -1\n"
        )
        # Every field by keyword: this also pins the parser's positional JobRecord call.
        assert job == JobRecord(
            line=3,
            job_id="11",
            run=1,
            state=JobState.ENDED,
            user="4",
            group="1",
            queue="",
            partition="DEFAULT",
            ncpus=32,
            memory=None,
            requested_walltime=43200,
            walltime=43306,
            cput=43307.0 * 32,
            ctime=1028181917,
            qtime=1028181917,
            start=1028181949,
            end=1028225255,
            exit_status=1,
            extra={},
        )

    def test_known_values(self):
        job = record(
            swf_line(
                job_number=7,
                submit_time=100,
                wait_time=20,
                run_time=300,
                allocated_processors=8,
                average_cpu_time=250,
                used_memory=2048,
                requested_processors=16,
                requested_time=3600,
                requested_memory=4096,
                status=5,
                user_id=17,
                group_id=3,
                queue_number=2,
                partition_number=4,
            )
        )
        assert (job.job_id, job.user, job.group, job.queue, job.partition) == (
            "7",
            "17",
            "3",
            "2",
            "4",
        )
        assert (job.ctime, job.start, job.end, job.walltime) == (100, 120, 420, 300)
        assert (job.ncpus, job.cput, job.memory) == (8, 2000.0, 2048 * 1024 * 8)
        assert (job.requested_walltime, job.exit_status) == (3600, 5)
        assert (job.account, job.project, job.jobname, job.server) == ("", "", "", "")
        assert (job.ngpus, job.nodes, job.etime, job.extra) == (0, 0, None, {})

    def test_minus_one_is_unknown(self):
        job = record(swf_line(run_time=10))
        assert (job.user, job.group, job.queue, job.partition) == ("", "", "", "")
        assert (job.ncpus, job.cput, job.memory) == (0, None, None)
        assert (job.requested_walltime, job.exit_status) == (None, None)

    def test_requested_processors_stand_in_for_unknown_allocated_ones(self):
        job = record(swf_line(requested_processors=128, average_cpu_time=10, used_memory=1))
        assert (job.ncpus, job.cput, job.memory) == (128, 1280.0, 1024 * 128)

    def test_fractional_average_cpu_time(self):
        job = record(swf_line(allocated_processors=40, average_cpu_time="552.21"))
        assert job.cput == pytest.approx(552.21 * 40)

    def test_fractional_integer_fields_are_rounded(self):
        job = record(swf_line(run_time="10.6", allocated_processors="3.2", user_id="17.0"))
        assert (job.walltime, job.ncpus, job.user) == (11, 3, "17")

    def test_wait_minus_one_starts_at_submit(self):
        job = record(swf_line(submit_time=50, wait_time=-1, run_time=10))
        assert (job.ctime, job.start, job.end, job.walltime) == (50, 50, 60, 10)

    def test_run_time_minus_one_did_not_run(self):
        job = record(swf_line(submit_time=50, wait_time=5, run_time=-1, status=5))
        assert (job.ctime, job.start, job.end, job.walltime) == (50, None, None, None)
        assert job.exit_status == 5

    def test_zero_run_time_ran_for_nothing(self):
        job = record(swf_line(submit_time=50, wait_time=5, run_time=0))
        assert (job.start, job.end, job.walltime) == (55, 55, 0)

    def test_raw_exit_codes_in_status_are_kept(self):
        jobs = [record(swf_line(status=status)) for status in (-4, -2, 0, 137, 255)]
        assert [job.exit_status for job in jobs] == [-4, -2, 0, 137, 255]

    def test_partial_execution_records_number_their_runs(self):
        _, items = read(
            swf_line(job_number=5, status=1)
            + swf_line(job_number=9, status=2)
            + swf_line(job_number=5, status=0)
            + swf_line(job_number=9, status=2)
            + swf_line(job_number=9, status=3)
            + swf_line(job_number=10, status=2)
            + swf_line(job_number=10, status=4)
        )
        assert [(item.job_id, item.run) for item in items if isinstance(item, JobRecord)] == [
            ("5", 1),
            ("9", 1),
            ("5", 1),
            ("9", 2),
            ("9", 3),
            ("10", 1),
            ("10", 2),
        ]

    def test_status_2_then_3_are_runs_1_and_2(self):
        _, items = read(swf_line(job_number=4, status=2) + swf_line(job_number=4, status=3))
        assert [item.run for item in items if isinstance(item, JobRecord)] == [1, 2]

    def test_unsorted_submit_times_are_kept_in_file_order(self):
        _, items = read(
            swf_line(job_number=1, submit_time=500)
            + swf_line(job_number=2, submit_time=100)
            + swf_line(job_number=3, submit_time=300)
        )
        assert [item.ctime for item in items if isinstance(item, JobRecord)] == [500, 100, 300]

    def test_extra_columns_are_ignored_and_never_shift_the_18(self):
        wagap = (
            "0 1356994800 0 3600 64 1 1024 64 86400 4096 1 5 -1 -1 -1 1 1 1 "
            "{1241,1241,1242} q_1d 1:ppn=64:x86_64:cl_zewura#excl\n"
        )
        job = record(wagap)
        assert (job.job_id, job.ctime, job.ncpus, job.user, job.partition) == (
            "0",
            1356994800,
            64,
            "5",
            "1",
        )
        assert (job.walltime, job.requested_walltime, job.memory) == (3600, 86400, 1024**2 * 64)

    def test_tabs_and_runs_of_spaces_separate_fields(self):
        job = record("\t1\t\t0 5  \t 10" + " -1" * 14 + "\r\n")
        assert (job.job_id, job.start, job.walltime) == ("1", 5, 10)

    def test_str_lines_are_read_like_bytes(self):
        lines = ["; UnixStartTime: 100\n", swf_line(submit_time=1, run_time=2)]
        items = list(SwfReader(lines))
        assert len(items) == 1
        assert isinstance(items[0], JobRecord)
        assert (items[0].ctime, items[0].end) == (101, 103)

    def test_line_numbers_count_every_line(self):
        _, items = read("; Version: 2.2\n\n" + swf_line() + "   \n" + swf_line(job_number=2))
        assert [item.line for item in items] == [3, 5]


class TestBlankLines:
    def test_blank_and_whitespace_only_lines_yield_nothing(self):
        _, items = read("\n" + swf_line() + "   \n\t\n \r\n" + swf_line(job_number=2) + "   ")
        assert [item.job_id for item in items if isinstance(item, JobRecord)] == ["1", "2"]
        assert len(items) == 2


class TestRejected:
    def test_too_few_fields_are_rejected_and_the_others_kept(self):
        short = " ".join(["1"] * 17)
        _, items = read(swf_line(job_number=1) + short + "\n" + swf_line(job_number=3))
        assert [type(item) for item in items] == [JobRecord, RejectedLine, JobRecord]
        assert items[1] == RejectedLine(2, "line", "17 fields; SWF has 18", short)

    def test_a_letter_in_a_numeric_field_names_the_field(self):
        line = rejected(swf_line(run_time=43306, user_id="4a"))
        assert (line.field, line.reason) == ("user_id", "not a number: '4a'")

    @pytest.mark.parametrize(
        "text", ["nan", "inf", "-inf", "1e400", "1_000", "١٢", "0x10", "--1", "1-2", "."]
    )
    def test_what_float_takes_but_swf_does_not_write(self, text):
        line = rejected(swf_line(used_memory=text))
        assert line.field == "used_memory"
        assert line.reason.startswith("not a number")

    def test_an_exponent_is_a_number(self):
        assert record(swf_line(run_time="1e3")).walltime == 1000

    def test_the_first_bad_field_is_named(self):
        assert rejected(swf_line(wait_time="x", think_time="y")).field == "wait_time"

    @pytest.mark.parametrize(
        "name",
        ["job_number", "submit_time", "wait_time", "run_time", "used_memory", "think_time"],
    )
    @pytest.mark.parametrize("value", [-2, "-0.5", "-1.4", -86400])
    def test_negatives_other_than_minus_one_are_refused(self, name, value):
        line = rejected(swf_line(**{name: value}))
        assert line.field == name
        assert line.reason == f"negative: '{value}'; only -1 (unknown) may be negative"

    def test_a_job_of_ten_to_the_twelve_processors_is_absurd(self):
        line = rejected(swf_line(allocated_processors=10**12))
        assert line.field == "allocated_processors"
        assert line.reason.startswith("absurd")
        assert rejected(swf_line(requested_processors="1e12")).field == "requested_processors"

    def test_max_ncpus_itself_is_a_job(self):
        assert record(swf_line(allocated_processors=MAX_NCPUS)).ncpus == 10_000_000

    def test_unknown_submit_time(self):
        line = rejected(swf_line(submit_time=-1, run_time=-1))
        assert (line.field, line.reason) == (
            "submit_time",
            "unknown submit time: the job cannot be placed in time",
        )

    def test_unknown_job_number(self):
        assert rejected(swf_line(job_number=-1)).field == "job_number"

    def test_binary_garbage_gives_rejected_lines(self):
        garbage = bytes(range(256)) * 3 + b"\n\x00\x00\n\x1f\x8b\x08\x00\xff\xfe\n"
        _, items = read(garbage + swf_line(job_number=9).encode())
        lines = [item for item in items if isinstance(item, RejectedLine)]
        assert lines == items[:-1]
        assert len(lines) >= 4
        assert {line.field for line in lines} == {"line"}
        assert isinstance(items[-1], JobRecord)

    def test_non_utf8_bytes_are_rejected_with_the_bytes_escaped(self):
        line = rejected(b"1 0 \xff" + b" -1" * 15 + b"\n")
        assert (line.field, line.reason) == ("line", "not UTF-8 text")
        assert line.text == "1 0 \\xff" + " -1" * 15

    def test_the_text_is_the_line_without_newline_cut_to_1000_characters(self):
        long_line = "x" * 5000
        line = rejected(long_line + "\r\n")
        assert line.text == "x" * 1000
        assert line.reason == "1 fields; SWF has 18"

    def test_a_long_field_is_cut_in_the_reason(self):
        line = rejected(swf_line(user_id="z" * 5000))
        assert line.reason == f"not a number: '{'z' * 40}...'"

    def test_a_huge_number_is_no_crash(self):
        assert rejected(swf_line(run_time="9" * 5000)).field == "run_time"
        job = record(swf_line(allocated_processors=1, used_memory="9" * 300))
        assert job.memory == int("9" * 300) * 1024


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=200),
            st.text(max_size=200),
            st.lists(
                st.sampled_from(
                    ["-1", "0", "7", "2.5", "-2", "nan", "1e400", "x", "١", "1_0", ";", "\x00"]
                ),
                min_size=15,
                max_size=22,
            ).map(lambda words: " ".join(words)),
        ),
        max_size=30,
    )
)
def test_random_lines_never_raise_and_yield_at_most_one_item_each(lines):
    encoded = [line if isinstance(line, bytes) else line.encode() for line in lines]
    items = list(SwfReader(encoded))
    numbers = [item.line for item in items]
    assert len(numbers) == len(set(numbers)) <= len(lines)
    assert all(1 <= number <= len(lines) for number in numbers)
    for item in items:
        assert isinstance(item, JobRecord | RejectedLine)
        if isinstance(item, RejectedLine):
            assert item.field in {"line", *FIELDS}
            assert len(item.text) <= 1000


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_random_text_as_str_lines_never_raises(text):
    items = list(SwfReader(text.splitlines(keepends=True)))
    assert len(items) <= len(text.splitlines())


@dataclass
class TraceRun:
    """One pass over a real trace: what the reader yielded, and what the file holds."""

    header: SwfHeader = field(default_factory=SwfHeader)
    data_lines: int = 0
    records: int = 0
    unknown_submit_lines: list[int] = field(default_factory=list)
    rejected: list[RejectedLine] = field(default_factory=list)
    first: list[JobRecord] = field(default_factory=list)
    exit_statuses: Counter[int | None] = field(default_factory=Counter)
    queues: set[str] = field(default_factory=set)


def counted(lines: Iterable[bytes], run: TraceRun) -> Iterator[bytes]:
    """The lines, counting data lines (not `;`, not blank) and those with submit time -1."""
    for number, line in enumerate(lines, start=1):
        if not line.startswith(b";") and line.strip():
            run.data_lines += 1
            if line.split(None, 2)[1:2] == [b"-1"]:
                run.unknown_submit_lines.append(number)
        yield line


_RUNS: dict[str, TraceRun] = {}


def trace(name: str) -> TraceRun:
    """Each trace is read once per session, whichever tests ask for it."""
    path: Path = TRACES / name
    if not path.is_file():
        pytest.skip(f"the shared SWF traces are not at {TRACES}")
    if name not in _RUNS:
        run = TraceRun()
        with gzip.open(path, "rb") as lines:
            reader = SwfReader(counted(lines, run))
            run.header = reader.header
            for item in reader:
                if isinstance(item, JobRecord):
                    run.records += 1
                    run.exit_statuses[item.exit_status] += 1
                    run.queues.add(item.queue)
                    if len(run.first) < 2:
                        run.first.append(item)
                else:
                    assert isinstance(item, RejectedLine), item
                    run.rejected.append(item)
        _RUNS[name] = run
    return _RUNS[name]


class TestRealTraces:
    """The six traces take a few seconds in all: each is read once, by the first test."""

    @pytest.mark.parametrize(
        ("name", "jobs"),
        [
            (HPC2N, 202_871),
            (SDSC_BLUE, 243_306),
            (CEA_CURIE, 312_826),
            (SANDIA_ROSS, 57_882),
            (KTH_SP2, 28_476),
        ],
    )
    def test_every_data_line_is_a_job(self, name, jobs):
        run = trace(name)
        assert run.rejected == []
        assert run.records == run.data_lines == jobs

    def test_llnl_thunder_rejects_exactly_its_unknown_submit_times(self):
        run = trace(LLNL_THUNDER)
        assert run.records + len(run.rejected) == run.data_lines == 121_039
        assert len(run.unknown_submit_lines) == 1190
        assert [line.line for line in run.rejected] == run.unknown_submit_lines
        assert {(line.field, line.reason) for line in run.rejected} == {
            ("submit_time", "unknown submit time: the job cannot be placed in time")
        }

    def test_hpc2n_header(self):
        header = trace(HPC2N).header
        assert header.unix_start_time == 1027839845
        assert (header.max_procs, header.max_nodes) == (240, 240)
        assert header.time_zone == "Europe/Stockholm"
        assert header.queues == {"1": "[fque:1]"}
        assert header.partitions == {"1": "DEFAULT", "2": "ALL"}
        assert header.fields["MaxJobs"] == ["527371"]

    def test_hpc2n_first_jobs(self):
        first, second = trace(HPC2N).first
        # Line 32: `11 342072 32 43306 32 43307 -1 32 43200 -1 1 4 1 -1 -1 1 -1 -1`
        assert (first.line, first.job_id, first.run, first.state) == (32, "11", 1, JobState.ENDED)
        assert (first.ctime, first.qtime) == (1028181917, 1028181917)
        assert (first.start, first.end, first.walltime) == (1028181949, 1028225255, 43306)
        assert (first.ncpus, first.cput, first.memory) == (32, 1385824.0, None)
        assert (first.requested_walltime, first.exit_status) == (43200, 1)
        assert (first.user, first.group, first.queue, first.partition) == ("4", "1", "", "DEFAULT")
        # Line 33 has a fractional average CPU time: 552.21 s on 40 processors.
        assert (second.line, second.job_id, second.ncpus) == (33, "12", 40)
        assert second.cput == pytest.approx(22088.4)

    def test_sdsc_blue_queue_names(self):
        run = trace(SDSC_BLUE)
        assert len(run.header.queues) == 24
        assert run.header.queues["0"] == "interactive"
        assert {"express", "high", "normal", "low", "standby"} <= run.queues
        assert run.header.max_procs == 1152

    def test_cea_curie_header(self):
        header = trace(CEA_CURIE).header
        assert (header.unix_start_time, header.time_zone) == (1296571124, "Europe/Paris")
        assert (header.max_procs, header.max_nodes) == (93312, 5544)
        assert len(header.partitions) == 33
        assert header.partitions["13"] == "-1"
        assert header.queues == {}
        assert header.fields["Note"][0] == (
            "Curie is composed of 3 types of nodes: thin, fat, and hybrid, "
            "see: http://www-hpc.cea.fr/en/complexe/tgcc-curie.htm"
        )
        assert "see" not in header.fields

    def test_sandia_ross_header_without_spaces_and_exit_codes(self):
        run = trace(SANDIA_ROSS)
        assert run.header.time_zone == "US/Mountain"
        assert run.header.fields["Version"] == ["SWF v2"]
        assert (run.header.max_nodes, run.header.max_procs) == (1524, 1524)
        assert run.header.fields["MaxRuntime"] == ["N/A"]
        assert run.exit_statuses[-4] == 2
        assert run.exit_statuses[None] == 59

    def test_kth_sp2_header(self):
        header = trace(KTH_SP2).header
        assert (header.unix_start_time, header.max_procs) == (843480031, 100)
        assert header.fields["Information"] == [
            "http://www.pdc.kth.se/ http://www.cs.huji.ac.il/labs/parallel/workload/"
        ]
