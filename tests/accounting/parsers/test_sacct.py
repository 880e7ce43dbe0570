"""read_sacct against FORMATS.md §5 (XDMoD's 26-field `sacct --parsable2` dump) and real dumps."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.parsers.records import JobRecord, JobState, Parsed, Recognised, RejectedLine
from accounting.parsers.sacct import MAX_ARRAY_TASKS, SACCT_FIELDS, read_sacct
from tests.conftest import SHARED

SACCT_DATA = SHARED / "data" / "sacct"
MIB = 1 << 20
GIB = 1 << 30
NEW_YORK = ZoneInfo("America/New_York")

# A run written for these tests: 2 nodes, 16 CPUs, 90 min 15 s on 2021-03-04 (UTC).
BASE = {
    "jobid": "5001",
    "jobidraw": "5001",
    "cluster": "kestrel",
    "partition": "batch",
    "qos": "normal",
    "account": "physics",
    "group": "phys",
    "gid": "2001",
    "user": "ada",
    "uid": "3001",
    "submit": "2021-03-04T09:58:00",
    "eligible": "2021-03-04T09:58:01",
    "start": "2021-03-04T10:00:00",
    "end": "2021-03-04T11:30:15",
    "elapsed": "01:30:15",
    "exitcode": "0:0",
    "state": "COMPLETED",
    "nnodes": "2",
    "ncpus": "16",
    "reqcpus": "16",
    "reqmem": "4000Mn",
    "reqtres": "billing=16,cpu=16,mem=8000M,node=2",
    "alloctres": "billing=20,cpu=16,mem=8000M,node=2",
    "timelimit": "02:00:00",
    "nodelist": "n[01-02]",
    "jobname": "relax",
}
START = 1_614_852_000  # 2021-03-04T10:00:00Z, by hand: 1609459200 (2021-01-01) + 62 days + 10 h
NO_MEM = "billing=16,cpu=16,node=2"  # an alloctres without mem, so ReqMem decides


def line(**fields: str) -> str:
    unknown = set(fields) - set(SACCT_FIELDS)
    assert not unknown, unknown
    row = {**BASE, **fields}
    return "|".join(row[name] for name in SACCT_FIELDS)


def parse(*lines: str | bytes, tz: ZoneInfo | None = None) -> list[Parsed]:
    if tz is None:
        return list(read_sacct(lines))
    return list(read_sacct(lines, tz=tz))


def only(items: list[Parsed]) -> Parsed:
    assert len(items) == 1, items
    return items[0]


def record(**fields: str) -> JobRecord:
    item = only(parse(line(**fields)))
    assert isinstance(item, JobRecord), item
    return item


def runs(items: list[Parsed]) -> list[JobRecord]:
    assert all(isinstance(item, JobRecord) for item in items), items
    return [item for item in items if isinstance(item, JobRecord)]


def rejection(text: str | bytes) -> RejectedLine:
    item = only(parse(text))
    assert isinstance(item, RejectedLine), item
    return item


class TestFields:
    def test_the_26_fields_in_xdmods_order(self) -> None:
        written = (
            "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,"
            "start,end,elapsed,exitcode,state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,"
            "timelimit,nodelist,jobname"
        )
        assert written.split(",") == list(SACCT_FIELDS)

    def test_a_completed_run_reads_every_field(self) -> None:
        assert record() == JobRecord(
            line=1,
            job_id="5001",
            run=1,
            state=JobState.ENDED,
            server="kestrel",
            user="ada",
            group="phys",
            account="physics",
            queue="batch",
            jobname="relax",
            ncpus=16,
            ngpus=0,
            nodes=2,
            memory=8000 * MIB,
            requested_walltime=2 * 3600,
            walltime=3600 + 30 * 60 + 15,
            cput=None,
            ctime=START - 120,
            qtime=None,
            etime=START - 119,
            start=START,
            end=START + 5415,
            exit_status=0,
            extra={"billing": 20.0},
            kind="COMPLETED",
        )

    def test_unknown_and_none_times_are_none(self) -> None:
        assert record(eligible="Unknown").etime is None
        assert record(eligible="None").etime is None
        assert record(submit="").ctime is None

    def test_empty_partition_reqtres_and_timelimit(self) -> None:
        run = record(partition="", reqtres="", timelimit="")
        assert (run.queue, run.requested_walltime, run.memory) == ("", None, 8000 * MIB)

    @pytest.mark.parametrize("limit", ["Partition_Limit", "UNLIMITED"])
    def test_time_limits_without_a_number_are_none(self, limit: str) -> None:
        assert record(timelimit=limit).requested_walltime is None

    def test_days_in_elapsed_and_timelimit(self) -> None:
        run = record(elapsed="10-13:27:06", timelimit="37-14:00:00", end="2021-03-14T23:27:06")
        assert run.walltime == 10 * 86400 + 13 * 3600 + 27 * 60 + 6
        assert run.requested_walltime == 37 * 86400 + 14 * 3600

    @pytest.mark.parametrize(
        ("exitcode", "status"), [("0:0", 0), ("1:0", 1), ("127:0", 127), ("0:9", 265)]
    )
    def test_exit_status_is_rc_or_256_plus_the_signal(self, exitcode: str, status: int) -> None:
        assert record(exitcode=exitcode).exit_status == status

    def test_ncpus_is_allocated_else_requested(self) -> None:
        assert record(ncpus="0", reqcpus="8").ncpus == 8
        assert record(ncpus="12", reqcpus="8").ncpus == 12

    def test_utf8_names(self) -> None:
        item = only(parse(line(jobname="aàb", user="zoë").encode()))
        assert isinstance(item, JobRecord)
        assert (item.jobname, item.user) == ("aàb", "zoë")


class TestStates:
    @pytest.mark.parametrize(
        "state",
        [
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "PREEMPTED",
            "NODE_FAIL",
            "OUT_OF_MEMORY",
            "BOOT_FAIL",
            "DEADLINE",
        ],
    )
    def test_ended_states_are_ended_runs(self, state: str) -> None:
        run = record(state=state)
        assert (run.state, run.end) == (JobState.ENDED, START + 5415)

    def test_cancelled_by_a_uid_is_cancelled(self) -> None:
        assert record(state="CANCELLED by 102216").state == JobState.ENDED

    def test_an_ended_job_that_never_started_records_no_run(self) -> None:
        items = parse(line(state="CANCELLED by 42", start="Unknown", elapsed="00:00:00"))
        assert items == [Recognised(1, "CANCELLED")]

    def test_requeued_is_a_requeued_run(self) -> None:
        run = record(state="REQUEUED")
        assert (run.state, run.end) == (JobState.REQUEUED, START + 5415)

    @pytest.mark.parametrize(
        "state",
        ["RUNNING", "SUSPENDED", "COMPLETING", "STOPPED", "RESIZING", "SIGNALING", "STAGE_OUT"],
    )
    def test_running_states_are_runs_without_an_end(self, state: str) -> None:
        run = record(state=state, end="Unknown")
        assert (run.state, run.start, run.end, run.walltime) == (
            JobState.RUNNING,
            START,
            None,
            5415,
        )

    def test_a_running_row_drops_the_end_sacct_prints(self) -> None:
        assert record(state="RUNNING").end is None

    @pytest.mark.parametrize(
        "state", ["PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT", "REVOKED"]
    )
    def test_waiting_states_are_recognised(self, state: str) -> None:
        assert parse(line(state=state, start="Unknown", end="Unknown")) == [Recognised(1, state)]

    def test_a_pending_row_with_a_start_is_still_recognised(self) -> None:
        assert parse(line(state="PENDING")) == [Recognised(1, "PENDING")]

    @pytest.mark.parametrize("state", ["FOO", "completed", "", "RUN NING"])
    def test_an_unknown_state_is_rejected(self, state: str) -> None:
        word = state.split()[0] if state.split() else ""
        rejected = rejection(line(state=state))
        assert (rejected.field, rejected.reason) == ("state", f"unknown job state {word!r}")


class TestArrays:
    def test_an_array_task_keeps_its_id(self) -> None:
        assert record(jobid="4103947_100", jobidraw="4103947").job_id == "4103947_100"

    @pytest.mark.parametrize(
        ("jobid", "tasks"),
        [
            ("4103947_[1-3]", [1, 2, 3]),
            ("4103947_[1,5]", [1, 5]),
            ("4103947_[9-11,13,16-20]", [9, 10, 11, 13, 16, 17, 18, 19, 20]),
            ("4103947_[7]", [7]),
            ("4103947_[1-3%2]", [1, 2, 3]),  # a throttle of 2 running tasks
            ("4103947_[2-10:4]", [2, 6, 10]),  # sacct's step form
            ("4103947_[1-3,2-4]", [1, 2, 3, 4]),
        ],
    )
    def test_a_started_range_is_one_run_per_task(self, jobid: str, tasks: list[int]) -> None:
        found = runs(parse(line(jobid=jobid, state="TIMEOUT")))
        assert [run.job_id for run in found] == [f"4103947_{task}" for task in tasks]
        assert {(run.line, run.start, run.ncpus) for run in found} == {(1, START, 16)}

    def test_the_tasks_of_a_range_are_separate_runs(self) -> None:
        first, second = runs(parse(line(jobid="9_[1-2]")))
        first.extra["billing"] = 0.0
        assert second.extra == {"billing": 20.0}

    def test_a_pending_range_is_one_recognised_line(self) -> None:
        items = parse(line(jobid="4103947_[1-3]", state="PENDING", start="Unknown"))
        assert items == [Recognised(1, "PENDING")]

    def test_a_range_cancelled_before_it_started_is_one_recognised_line(self) -> None:
        items = parse(line(jobid="4103947_[1-1000000]", state="CANCELLED", start="Unknown"))
        assert items == [Recognised(1, "CANCELLED")]

    @pytest.mark.parametrize(
        "jobid", ["4103947_[1-3,5,...]", "4103947_[1-3,5,...%4]", "4103947_[1-3,16-2"]
    )
    def test_a_range_sacct_cut_short(self, jobid: str) -> None:
        pending = parse(line(jobid=jobid, state="PENDING", start="Unknown"))
        assert pending == [Recognised(1, "PENDING")]
        started = rejection(line(jobid=jobid))
        assert (started.field, started.reason) == (
            "jobid",
            "the array task range is cut short; its tasks are unknown",
        )

    @pytest.mark.parametrize(
        "jobid",
        ["4103947_[3-1]", "4103947_[a]", "4103947_[]", "4103947_[1-3]x", "4103947_[[1]]", "7]"],
    )
    def test_a_malformed_range_is_rejected(self, jobid: str) -> None:
        for state in ("COMPLETED", "PENDING"):
            rejected = rejection(line(jobid=jobid, state=state))
            assert rejected.field == "jobid"

    def test_a_range_beyond_the_cap_is_rejected(self) -> None:
        assert len(parse(line(jobid=f"8_[1-{MAX_ARRAY_TASKS}]"))) == MAX_ARRAY_TASKS
        rejected = rejection(line(jobid=f"8_[0-{MAX_ARRAY_TASKS}]"))
        assert (rejected.field, rejected.reason) == (
            "jobid",
            f"{MAX_ARRAY_TASKS + 1:,} array tasks (more than {MAX_ARRAY_TASKS:,})",
        )


class TestRuns:
    def test_requeued_then_completed_are_runs_1_and_2(self) -> None:
        items = runs(parse(line(state="REQUEUED"), line(jobid="5002"), line(), line()))
        assert [(item.job_id, item.run, item.state) for item in items] == [
            ("5001", 1, JobState.REQUEUED),
            ("5002", 1, JobState.ENDED),
            ("5001", 2, JobState.ENDED),
            ("5001", 2, JobState.ENDED),  # a duplicate row, not another requeue
        ]

    def test_each_requeue_adds_a_run(self) -> None:
        items = runs(parse(line(state="REQUEUED"), line(state="REQUEUED"), line(state="FAILED")))
        assert [item.run for item in items] == [1, 2, 3]

    def test_the_same_id_on_another_cluster_is_another_job(self) -> None:
        items = runs(parse(line(state="REQUEUED"), line(cluster="osprey")))
        assert [item.run for item in items] == [1, 1]

    def test_requeued_array_tasks_count_per_task(self) -> None:
        items = runs(parse(line(jobid="7_3", state="REQUEUED"), line(jobid="7_[2-3]")))
        assert [(item.job_id, item.run) for item in items] == [
            ("7_3", 1),
            ("7_2", 1),
            ("7_3", 2),
        ]


class TestMemory:
    @pytest.mark.parametrize(
        ("reqmem", "nnodes", "memory"),
        [
            ("31000Mn", "2", 2 * 31000 * MIB),
            ("31000Mn", "0", 31000 * MIB),
            ("3000Mc", "2", 16 * 3000 * MIB),
            ("62.50Gn", "2", 125 * GIB),
            ("0n", "2", 0),
            ("4G", "2", 8 * GIB),  # Slurm 21.08+: per node, no suffix
            ("1024", "1", 1024 * MIB),
            ("2147486648Mn", "1", 2147486648 * MIB),  # kept as written
            ("", "2", None),
        ],
    )
    def test_reqmem_when_alloctres_has_no_mem(self, reqmem: str, nnodes: str, memory: int) -> None:
        assert record(reqmem=reqmem, nnodes=nnodes, alloctres=NO_MEM).memory == memory

    def test_alloctres_mem_wins_over_reqmem(self) -> None:
        run = record(reqmem="31000Mn", alloctres="cpu=16,mem=62.50G,node=2")
        assert run.memory == 62 * GIB + GIB // 2

    def test_a_bare_alloctres_mem_is_megabytes(self) -> None:
        assert record(alloctres="mem=500").memory == 500 * MIB

    @pytest.mark.parametrize("reqmem", ["lots", "31000Mx", "-5Mn", "Mn"])
    def test_a_reqmem_that_does_not_parse_is_rejected(self, reqmem: str) -> None:
        rejected = rejection(line(reqmem=reqmem))
        assert (rejected.field, rejected.reason) == (
            "reqmem",
            f"not a memory request: {reqmem!r}",
        )


class TestTres:
    @pytest.mark.parametrize(
        ("alloctres", "reqtres", "ngpus"),
        [
            ("cpu=4,gres/gpu=2,node=1", "", 2),
            ("cpu=4,gres/gpu:a100=2,gres/gpu=2", "", 2),  # Slurm lists a typed count twice
            ("gres/gpu:a100=1,gres/gpu:v100=2", "", 3),
            ("gres/gpumem=40G,gres/gpuutil=100", "", 0),
            ("cpu=4", "cpu=4,gres/gpu=4", 4),
            ("", "gres/gpu:k80=1", 1),
            ("cpu=4", "cpu=4", 0),
        ],
    )
    def test_gpus(self, alloctres: str, reqtres: str, ngpus: int) -> None:
        assert record(alloctres=alloctres, reqtres=reqtres).ngpus == ngpus

    def test_billing_is_allocated_else_requested(self) -> None:
        assert record().extra == {"billing": 20.0}
        assert record(alloctres="cpu=16").extra == {"billing": 16.0}
        assert record(alloctres="cpu=16", reqtres="cpu=16").extra == {}
        assert record(alloctres="billing=2.5").extra == {"billing": 2.5}

    @pytest.mark.parametrize(
        ("fields", "field", "reason"),
        [
            ({"alloctres": "cpu"}, "alloctres", "not a TRES list: 'cpu'"),
            ({"reqtres": "cpu=1,,node=1"}, "reqtres", "not a TRES list: 'cpu=1,,node=1'"),
            ({"alloctres": "gres/gpu=two"}, "alloctres", "not a count: 'two'"),
            ({"alloctres": "gres/gpu=-1"}, "alloctres", "negative: '-1'"),
            ({"alloctres": "mem=lots"}, "alloctres", "not a size: 'lots'"),
            ({"alloctres": "billing=inf"}, "alloctres", "billing is not a number: 'inf'"),
        ],
    )
    def test_a_tres_value_that_does_not_parse_is_rejected(
        self, fields: dict[str, str], field: str, reason: str
    ) -> None:
        rejected = rejection(line(**fields))
        assert (rejected.field, rejected.reason) == (field, reason)


class TestTimeZones:
    def test_utc_by_default(self) -> None:
        assert record().start == START

    def test_a_january_time_in_new_york_is_utc_minus_5(self) -> None:
        item = only(parse(line(start="2021-01-15T12:00:00", end="Unknown"), tz=NEW_YORK))
        assert isinstance(item, JobRecord)
        assert item.start == 1_610_730_000  # 2021-01-15T17:00:00Z

    def test_a_july_time_in_new_york_is_utc_minus_4(self) -> None:
        here = only(parse(line(start="2021-07-15T12:00:00", end="Unknown"), tz=NEW_YORK))
        utc = only(parse(line(start="2021-07-15T12:00:00", end="Unknown")))
        assert isinstance(here, JobRecord)
        assert isinstance(utc, JobRecord)
        assert (here.start or 0) - (utc.start or 0) == 4 * 3600

    def test_an_hour_that_occurs_twice_is_the_first(self) -> None:
        # 01:30 on 2021-11-07 happens in EDT (UTC-4), then again in EST (UTC-5).
        item = only(parse(line(start="2021-11-07T01:30:00", end="Unknown"), tz=NEW_YORK))
        assert isinstance(item, JobRecord)
        assert item.start == 1_636_263_000  # 2021-11-07T05:30:00Z


class TestLines:
    def test_a_25_field_line_is_rejected_among_good_ones(self) -> None:
        short = line().rsplit("|", 1)[0]
        items = parse(line(jobid="1"), short + "\n", line(jobid="3"))
        assert [item.line for item in items] == [1, 2, 3]
        rejected = items[1]
        assert rejected == RejectedLine(2, "line", "25 fields; the sacct dump has 26", short)

    def test_a_27th_field_that_is_not_empty_is_rejected(self) -> None:
        rejected = rejection(line() + "|extra")
        assert (rejected.field, rejected.reason) == ("line", "27 fields; the sacct dump has 26")

    def test_the_trailing_bar_of_sacct_p(self) -> None:
        assert only(parse(line() + "|\n")) == record()

    @pytest.mark.parametrize("header", ["JobID|JobIDRaw|Cluster", "jobid|jobidraw|cluster"])
    def test_a_header_line_is_skipped(self, header: str) -> None:
        items = parse(header + "\n", line())
        assert [(type(item), item.line) for item in items] == [(JobRecord, 2)]

    def test_blank_lines_yield_nothing_but_count(self) -> None:
        items = parse("\n", "   \r\n", b"", line())
        assert [item.line for item in items] == [4]

    def test_bytes_and_crlf(self) -> None:
        assert only(parse((line() + "\r\n").encode())) == record()

    def test_binary_garbage_is_rejected(self) -> None:
        rejected = rejection(b"\xff\xfe\x00garbage\x80|\n")
        assert (rejected.field, rejected.reason) == ("line", "not UTF-8 text")
        assert "\n" not in rejected.text

    def test_rejected_text_is_cut_to_1000_characters(self) -> None:
        text = line(jobname="x" * 5000, state="FOO")
        rejected = rejection(text + "\n")
        assert rejected.text == text[:1000]

    def test_a_job_step_row_is_rejected(self) -> None:
        rejected = rejection(line(jobid="5001.batch"))
        assert (rejected.field, rejected.reason) == (
            "jobid",
            "a job step '5001.batch'; dump with --allocations",
        )

    @pytest.mark.parametrize(
        ("fields", "field", "reason"),
        [
            ({"elapsed": "x"}, "elapsed", "not a duration: 'x'"),
            ({"timelimit": "soon"}, "timelimit", "not a duration: 'soon'"),
            ({"submit": "yesterday"}, "submit", "not a time: 'yesterday'"),
            ({"start": "2021-02-30T10:00:00"}, "start", "not a time: '2021-02-30T10:00:00'"),
            ({"end": "2021-03-04 11:30:15"}, "end", "not a time: '2021-03-04 11:30:15'"),
            (
                {"end": "2021-03-04T09:00:00"},
                "end",
                "end 2021-03-04T09:00:00 is before start 2021-03-04T10:00:00",
            ),
            ({"exitcode": "0"}, "exitcode", "not an exit code rc:signal: '0'"),
            ({"nnodes": "two"}, "nnodes", "not a count: 'two'"),
            ({"nnodes": "-1"}, "nnodes", "negative: '-1'"),
            ({"ncpus": "-16"}, "ncpus", "negative: '-16'"),
            ({"ncpus": "20000000"}, "ncpus", "absurd: '20000000' (more than 10,000,000)"),
            ({"ncpus": "0", "reqcpus": "1.5"}, "reqcpus", "not a count: '1.5'"),
            ({"reqcpus": "-2"}, "reqcpus", "negative: '-2'"),
            ({"jobid": "51.extern"}, "jobid", "a job step '51.extern'; dump with --allocations"),
            ({"jobid": "7_[1-3].0"}, "jobid", "a job step '7_[1-3].0'; dump with --allocations"),
            ({"jobid": ""}, "jobid", "empty job id"),
        ],
    )
    def test_a_field_that_does_not_parse_is_rejected(
        self, fields: dict[str, str], field: str, reason: str
    ) -> None:
        rejected = rejection(line(**fields))
        assert (rejected.field, rejected.reason) == (field, reason)
        assert rejected.text == line(**fields)

    def test_a_runaway_value_is_cut_in_the_reason(self) -> None:
        rejected = rejection(line(elapsed="9" * 500))
        assert rejected.reason == f"not a duration: {'9' * 60!r}…"


# Values a field may plausibly hold, so that random lines reach past the first check.
PLAUSIBLE = [
    "",
    "0",
    "-1",
    "Unknown",
    "None",
    "UNLIMITED",
    "2021-11-07T01:30:00",
    "9999-12-31T23:59:59",
    "0001-01-01T00:00:00",
    "1-00:00:00",
    "99999999999999999999:00",
    "0:9",
    "COMPLETED",
    "PENDING",
    "REQUEUED",
    "RUNNING",
    "CANCELLED by 1",
    "4103947_[1-3]",
    "4103947_[1-",
    "1_[999999999]",
    "31000Mn",
    "3000Mc",
    "9" * 400 + ".5Gn",
    "mem=1e400",
    "mem=" + "9" * 400 + ".5G",
    "gres/gpu=2,billing=1." + "9" * 400,
    "billing=" + "9" * 400,
]
FIELD = st.one_of(
    st.sampled_from(PLAUSIBLE), st.text(st.characters(blacklist_characters="|\r\n"), max_size=20)
)


class TestNeverRaises:
    @given(st.lists(st.binary(max_size=300), max_size=5))
    def test_binary_lines(self, lines: list[bytes]) -> None:
        items = list(read_sacct(lines))
        assert all(isinstance(item, JobRecord | Recognised | RejectedLine) for item in items)

    @given(st.lists(st.text(max_size=300), max_size=5))
    def test_text_lines(self, lines: list[str]) -> None:
        items = list(read_sacct(lines, tz=NEW_YORK))
        assert all(isinstance(item, JobRecord | Recognised | RejectedLine) for item in items)

    @given(st.lists(FIELD, min_size=26, max_size=27))
    def test_lines_of_random_fields(self, fields: list[str]) -> None:
        items = list(read_sacct(["|".join(fields)], tz=NEW_YORK))
        assert items
        assert all(item.line == 1 for item in items)
        if len(items) > 1:
            assert all(isinstance(item, JobRecord) for item in items)


def sacct_files() -> list[object]:
    if not SACCT_DATA.is_dir():
        reason = f"{SACCT_DATA} is absent: no real sacct dumps to read"
        return [pytest.param(None, id="sacct-data-absent", marks=pytest.mark.skip(reason=reason))]
    paths = sorted(SACCT_DATA.glob("*.log")) + sorted(SACCT_DATA.glob("xdmod-unit/*.log"))
    return [pytest.param(path, id=str(path.relative_to(SACCT_DATA))) for path in paths]


def dump_or_skip(name: str) -> Path:
    path = SACCT_DATA / name
    if not path.is_file():
        pytest.skip(f"the real sacct dump is not at {path}")
    return path


def read_file(path: Path) -> tuple[list[bytes], list[Parsed]]:
    with path.open("rb") as handle:
        items = list(read_sacct(handle))
    return path.read_bytes().splitlines(), items


def expected_tasks(jobid: str) -> int:
    """How many tasks a started row stands for, counted the simplest way."""
    if "_[" not in jobid:
        return 1
    count = 0
    for word in jobid.split("[")[1].rstrip("]").split(","):
        first, _, last = word.partition("-")
        count += int(last or first) - int(first) + 1
    return count


def state_words(lines: list[bytes]) -> list[str]:
    return [raw.decode().split("|")[16].split()[0] for raw in lines]


# The only rejections in the real files: the synthetic states of unknown-job-state.log.
EXPECTED_REJECTIONS = {
    "xdmod-unit/unknown-job-state.log": [
        (1, "state", "unknown job state 'FOO'"),
        (2, "state", "unknown job state 'BAR'"),
    ]
}


class TestRealDumps:
    @pytest.mark.parametrize("path", sacct_files())
    def test_every_line_is_read_or_rejected(self, path: Path) -> None:
        lines, items = read_file(path)
        by_line: dict[int, list[Parsed]] = defaultdict(list)
        for item in items:
            by_line[item.line].append(item)
        numbered = {number: raw for number, raw in enumerate(lines, start=1) if raw.strip()}
        assert set(by_line) == set(numbered)
        for number, found in by_line.items():
            if isinstance(found[0], JobRecord):
                jobid = numbered[number].decode().split("|")[0]
                assert len(found) == expected_tasks(jobid), (number, found)
                assert all(isinstance(item, JobRecord) for item in found)
            else:
                assert len(found) == 1, found

    @pytest.mark.parametrize("path", sacct_files())
    def test_the_only_rejections_are_the_synthetic_states(self, path: Path) -> None:
        _, items = read_file(path)
        rejected = [
            (item.line, item.field, item.reason) for item in items if isinstance(item, RejectedLine)
        ]
        assert rejected == EXPECTED_REJECTIONS.get(str(path.relative_to(SACCT_DATA)), [])

    def test_phillips_states_as_sources_md_counts_them(self) -> None:
        lines, items = read_file(dump_or_skip("phillips.log"))
        written = Counter(state_words(lines))
        assert written == {"COMPLETED": 2324, "FAILED": 1717, "CANCELLED": 243, "TIMEOUT": 1}
        ended = [item for item in items if isinstance(item, JobRecord)]
        assert all(run.state == JobState.ENDED for run in ended)
        assert Counter(state_words([lines[run.line - 1] for run in ended])) == written

    def test_pozidriv_states(self) -> None:
        lines, items = read_file(dump_or_skip("pozidriv.log"))
        written = Counter(state_words(lines))
        assert (written["PREEMPTED"], written["TIMEOUT"]) == (86, 9)
        ended = [item for item in items if isinstance(item, JobRecord)]
        assert len(ended) == len(items) == len(lines)
        assert all(run.state == JobState.ENDED for run in ended)
        assert Counter(state_words([lines[run.line - 1] for run in ended])) == written

    def test_the_first_phillips_row_by_hand(self) -> None:
        _, items = read_file(dump_or_skip("phillips.log"))
        run = items[0]
        assert isinstance(run, JobRecord)
        assert (run.line, run.job_id, run.run, run.state) == (1, "163485", 1, JobState.ENDED)
        assert (run.server, run.queue, run.account, run.user) == (
            "phillips",
            "focaccia",
            "chaff",
            "noror",
        )
        assert (run.ncpus, run.ngpus, run.nodes, run.extra) == (12, 2, 1, {"billing": 12.0})
        assert run.memory == 31000 * 1024 * 1024
        assert run.walltime == 10 * 86400 + 13 * 3600 + 27 * 60 + 6
        assert run.exit_status == 0
        assert run.end is not None
        assert run.start is not None
        assert run.end - run.start == run.walltime

    def test_the_xdmod_unit_quirks(self) -> None:
        _, items = read_file(dump_or_skip("xdmod-unit/accounting-logs.log"))
        found = runs(items)
        assert [run.job_id for run in found] == ["4103947", "4107166", "4107219", "5692623"]
        # ReqMem 3000Mc, but AllocTRES says mem=3000M and AllocTRES wins, as written.
        assert found[0].memory == 3000 * MIB
        assert (found[1].state, found[1].nodes, found[1].walltime) == (JobState.ENDED, 3, 252184)
        assert (found[3].queue, found[3].etime) == ("", None)
        assert (found[3].ncpus, found[3].ngpus, found[3].memory) == (0, 2, 0)  # 0n
        _, items = read_file(dump_or_skip("xdmod-unit/non-ended-job-state.log"))
        assert isinstance(items[0], JobRecord)
        assert (items[0].state, items[0].end) == (JobState.RUNNING, None)
        assert items[1] == Recognised(2, "PENDING")
        _, items = read_file(dump_or_skip("xdmod-unit/utf8-multibyte-chars.log"))
        assert isinstance(items[0], JobRecord)
        assert items[0].jobname == "aàb"
