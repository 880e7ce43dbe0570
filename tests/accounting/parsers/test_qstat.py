"""accounting.parsers.qstat: `qstat -f -F json` snapshots.

POLARIS is cut down from a real snapshot of ALCF Polaris (PBS Pro 2022.1.1) quoted in a public
module by J. Taylor Childers: the three jobs keep their real values, less Variable_List, paths
and the allocation resources. qstat there ran in US Central time (stime 13:05:50 is the 19:05
UTC the server's own comment gives).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.parsers.qstat import HELD_STATES, QstatJsonReader, read_qstat_json
from accounting.parsers.records import JobRecord, JobState, Recognised, RejectedLine

CHICAGO = ZoneInfo("America/Chicago")
SERVER = "polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov"

POLARIS = """{
    "timestamp":1699637718,
    "pbs_version":"2022.1.1.20220926110806",
    "pbs_server":"polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
    "Jobs":{
        "359322.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov":{
            "Job_Name":"STDIN",
            "Job_Owner":"christopherkang@polaris-login-02.hsn.cm.polaris.alcf.anl.gov",
            "job_state":"Q",
            "queue":"debug",
            "server":"polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
            "Account_Name":"transformer_eval",
            "Checkpoint":"u",
            "ctime":"Sat Dec  3 20:25:38 2022",
            "Hold_Types":"n",
            "interactive":"True",
            "mtime":"Fri Nov 10 11:31:19 2023",
            "Priority":0,
            "qtime":"Sat Dec  3 20:25:38 2022",
            "Rerunable":"False",
            "Resource_List":{
                "base_score":51,
                "burn_ratio":0.0615,
                "eagle_fs":"True",
                "filesystems":"home:eagle",
                "ncpus":64,
                "ngpus":8,
                "nodect":1,
                "place":"free",
                "project_priority":2,
                "select":"1:ngpus=8",
                "walltime":"01:00:00"
            },
            "substate":10,
            "comment":"Not Running: Job is requesting an exclusive node and node is in use",
            "etime":"Sat Dec  3 20:25:38 2022",
            "umask":22,
            "eligible_time":"8199:09:40",
            "project":"transformer_eval",
            "Submit_Host":"polaris-login-02.hsn.cm.polaris.alcf.anl.gov"
        },
        "412020.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov":{
            "Job_Name":"pyannote",
            "Job_Owner":"nkvatsa@polaris-login-01.hsn.cm.polaris.alcf.anl.gov",
            "job_state":"H",
            "queue":"preemptable",
            "server":"polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
            "Account_Name":"BPC",
            "ctime":"Fri Feb 10 16:47:11 2023",
            "Hold_Types":"s",
            "Priority":0,
            "qtime":"Fri Feb 10 16:47:11 2023",
            "Resource_List":{
                "ncpus":64,
                "nodect":1,
                "place":"scatter",
                "select":"1:system=polaris",
                "walltime":"08:00:00"
            },
            "stime":"Fri Feb 10 17:02:23 2023",
            "obittime":"Fri Feb 10 17:02:59 2023",
            "comment":"job held, too many failed attempts to run",
            "etime":"Fri Feb 10 16:47:11 2023",
            "run_count":21,
            "eligible_time":"6546:33:12",
            "Exit_status":-3,
            "project":"BPC"
        },
        "1147579.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov":{
            "Job_Name":"xgc1_core",
            "Job_Owner":"jdominsk@polaris-login-01.hsn.cm.polaris.alcf.anl.gov",
            "resources_used":{
                "cpupercent":465226,
                "cput":"16648:25:43",
                "mem":"28999922880kb",
                "ncpus":160,
                "vmem":"370249416kb",
                "walltime":"22:28:30"
            },
            "job_state":"R",
            "queue":"large",
            "server":"polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
            "Account_Name":"TokamakITER",
            "ctime":"Tue Nov  7 18:12:33 2023",
            "Priority":0,
            "qtime":"Tue Nov  7 18:12:33 2023",
            "Resource_List":{
                "ncpus":160,
                "nodect":160,
                "nodes":160,
                "place":"scatter",
                "select":"160:ncpus=1",
                "walltime":"24:00:00"
            },
            "stime":"Thu Nov  9 13:05:50 2023",
            "etime":"Tue Nov  7 18:12:33 2023",
            "run_count":1,
            "eligible_time":"42:53:26",
            "project":"TokamakITER"
        }
    }
}
"""


def read(text: str) -> list[JobRecord | Recognised | RejectedLine]:
    return list(read_qstat_json(text.splitlines(keepends=True), tz=CHICAGO))


def by_id(text: str) -> dict[str, JobRecord]:
    return {item.job_id: item for item in read(text) if isinstance(item, JobRecord)}


def snapshot(jobs: dict[str, dict[str, object]], **top: object) -> str:
    return json.dumps({"timestamp": 1699637718, **top, "Jobs": jobs}, indent=4)


def job(state: str = "Q", **changes: object) -> dict[str, object]:
    attributes: dict[str, object] = {
        "Job_Name": "relax",
        "Job_Owner": "ada@login1",
        "job_state": state,
        "queue": "workq",
        "Account_Name": "ABCD0001",
        "ctime": "Thu Nov 26 10:00:00 2026",
        "Priority": 0,
        "Resource_List": {"ncpus": 4, "mem": "2gb", "walltime": "01:30:00", "nodect": 1},
        "eligible_time": "00:30:00",
    }
    attributes.update(changes)
    return {key: value for key, value in attributes.items() if value is not None}


def only(text: str) -> JobRecord | Recognised | RejectedLine:
    (item,) = read(text)
    return item


def rejected(text: str) -> RejectedLine:
    item = only(text)
    assert isinstance(item, RejectedLine), item
    return item


def test_a_queued_polaris_job_is_queued_with_its_request():
    queued = by_id(POLARIS)["359322"]
    assert (queued.state, queued.run, queued.kind, queued.server) == (
        JobState.QUEUED, 0, "Q", SERVER,
    )  # fmt: skip
    assert (queued.user, queued.group, queued.account, queued.project) == (
        "christopherkang", "", "transformer_eval", "transformer_eval",
    )  # fmt: skip
    assert (queued.queue, queued.jobname, queued.ncpus, queued.ngpus, queued.nodes) == (
        "debug", "STDIN", 64, 8, 1,
    )  # fmt: skip
    assert queued.requested_walltime == 3600
    # Sat Dec  3 20:25:38 2022 CST is 2022-12-04 02:25:38 UTC.
    assert (queued.ctime, queued.qtime, queued.etime, queued.start) == (
        1670120738, 1670120738, 1670120738, None,
    )  # fmt: skip
    request = queued.request
    assert request is not None
    assert request.resources == {
        "base_score": 51,
        "burn_ratio": 0.0615,
        "ncpus": 64,
        "ngpus": 8,
        "nodect": 1,
        "project_priority": 2,
        "walltime": 3600,
    }  # "True", "home:eagle", "free", "1:ngpus=8" are not numbers the scheduler counts
    assert (request.held, request.job_priority, request.accrue_type) == (False, 0, None)
    assert request.eligible_time == 8199 * 3600 + 9 * 60 + 40
    assert request.sampled == 1699637718
    assert request.reason == "Not Running: Job is requesting an exclusive node and node is in use"


def test_a_held_job_is_queued_and_held_with_its_comment():
    held = by_id(POLARIS)["412020"]
    assert (held.state, held.run, held.kind, held.start) == (JobState.QUEUED, 0, "H", None)
    assert held.ctime == 1676069231  # Fri Feb 10 16:47:11 2023 CST
    assert held.request is not None
    assert held.request.held
    assert held.request.reason == "job held, too many failed attempts to run"
    assert held.request.eligible_time == 6546 * 3600 + 33 * 60 + 12


def test_a_running_job_starts_at_its_stime():
    running = by_id(POLARIS)["1147579"]
    assert (running.state, running.run, running.kind) == (JobState.RUNNING, 1, "R")
    assert running.start == 1699556750  # Thu Nov  9 13:05:50 2023 CST = 19:05:50 UTC
    assert (running.ncpus, running.nodes, running.requested_walltime) == (160, 160, 24 * 3600)
    assert running.request is None


def test_the_reader_gives_the_snapshot_header_before_the_first_job():
    reader = QstatJsonReader(POLARIS.splitlines(keepends=True), tz=CHICAGO)
    items = iter(reader)
    first = next(items)
    assert (reader.timestamp, reader.pbs_version, reader.pbs_server) == (
        1699637718, "2022.1.1.20220926110806", SERVER,
    )  # fmt: skip
    assert isinstance(first, JobRecord)
    assert len([first, *items]) == 3


def test_each_job_is_on_the_line_of_its_key():
    lines = POLARIS.splitlines()
    for item in read(POLARIS):
        assert isinstance(item, JobRecord)
        assert lines[item.line - 1].strip().startswith(f'"{item.job_id}.')


def test_bytes_read_like_text():
    assert read(POLARIS) == list(
        read_qstat_json(POLARIS.encode().splitlines(keepends=True), tz=CHICAGO)
    )


@pytest.mark.parametrize("state", sorted(HELD_STATES))
def test_states_the_scheduler_does_not_start_from_are_queued_and_held(state):
    item = only(snapshot({"7.pbs": job(state)}))
    assert isinstance(item, JobRecord)
    assert (item.state, item.kind, item.run) == (JobState.QUEUED, state, 0)
    assert item.request is not None
    assert item.request.held


def test_an_exiting_job_is_still_running_and_counts_its_runs():
    item = only(snapshot({"7.pbs": job("E", stime="Thu Nov 26 11:00:00 2026", run_count=3)}))
    assert isinstance(item, JobRecord)
    assert (item.state, item.run, item.start) == (JobState.RUNNING, 3, 1795712400)


@pytest.mark.parametrize(
    ("state", "ident", "withdrawn"),
    [("F", "7.pbs", "7"), ("X", "7[2].pbs", "7[2]"), ("B", "7[].pbs", ""), ("M", "7.pbs", "")],
)
def test_finished_expired_begun_and_moved_jobs_are_recognised(state, ident, withdrawn):
    assert only(snapshot({ident: job(state)})) == Recognised(4, state, withdrawn)


def test_euser_and_egroup_come_before_the_owner():
    item = only(snapshot({"7.pbs": job(euser="ada2", egroup="lab", Job_Owner="x@y")}))
    assert isinstance(item, JobRecord)
    assert (item.user, item.group) == ("ada2", "lab")


def test_request_amounts_follow_res_to_num():
    item = only(snapshot({"7.pbs": job(accrue_type=2, Priority=-5)}))
    assert isinstance(item, JobRecord)
    assert item.request is not None
    assert item.request.resources == {"ncpus": 4, "mem": 2 * 1024**2, "walltime": 5400, "nodect": 1}
    assert (item.request.accrue_type, item.request.job_priority) == (2, -5)
    assert item.request.eligible_time == 1800
    assert item.ctime == 1795708800  # Thu Nov 26 10:00:00 2026 CST


def test_a_missing_queue_is_rejected_on_the_line_of_the_job():
    bad = rejected(snapshot({"123.server": job(queue=None)}))
    assert (bad.line, bad.field) == (4, "Jobs.123.server.queue")
    assert "no queue" in bad.reason
    assert bad.text.strip() == '"123.server": {'


def test_a_bad_job_does_not_stop_the_others():
    items = read(snapshot({"1.s": job(ctime="yesterday"), "2.s": job()}))
    assert [type(item) for item in items] == [RejectedLine, JobRecord]
    assert isinstance(items[0], RejectedLine)
    assert items[0].field == "Jobs.1.s.ctime"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"Priority": "high"}, "Jobs.7.s.Priority"),
        ({"Priority": 5000}, "Jobs.7.s.Priority"),
        ({"eligible_time": "soon"}, "Jobs.7.s.eligible_time"),
        ({"Resource_List": {"walltime": "long"}}, "Jobs.7.s.Resource_List.walltime"),
        ({"Resource_List": {"ncpus": "many"}}, "Jobs.7.s.Resource_List.ncpus"),
        ({"Resource_List": "4 cpus"}, "Jobs.7.s.Resource_List"),
        ({"job_state": "Z"}, "Jobs.7.s.job_state"),
        ({"job_state": "R"}, "Jobs.7.s.stime"),
    ],
)
def test_bad_values_name_the_job_and_key(changes, field):
    assert rejected(snapshot({"7.s": job(**changes)})).field == field


def test_a_job_id_that_is_none_is_rejected():
    assert rejected(snapshot({"seven.s": job()})).field == "Jobs.seven.s"


def test_old_qstat_invalid_json_is_one_rejection_with_line_and_column():
    # OpenPBS #2049: `export MYVAR=\'\"asads\"\'` came out as "MYVAR":"\'\"asads\"\'".
    text = snapshot({"7.s": job()}).replace(
        '"Job_Name"', '"Variable_List": {"MYVAR": "\\\'\\"asads\\"\\\'"},\n        "Job_Name"'
    )
    bad = rejected(text)
    assert (bad.line, bad.field) == (5, "file")
    assert bad.reason.startswith("not valid JSON at line 5, column 41: Invalid \\escape")
    assert "MYVAR" in bad.text


def test_a_number_with_a_leading_zero_is_invalid_json():
    # OpenPBS #1255: `qsub -v foo=005` printed "foo":005.
    bad = rejected('{"timestamp": 1, "Jobs": {"7.s": {"Variable_List": {"foo":005}}}}')
    assert bad.line == 1
    assert "not valid JSON" in bad.reason


def test_no_jobs_is_an_empty_snapshot_with_its_timestamp():
    reader = QstatJsonReader(['{"timestamp":1699637718,"pbs_version":"23.06.06"}'], tz=CHICAGO)
    assert list(reader) == []
    assert reader.timestamp == 1699637718


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"timestamp":1,"pbs_version":"x","Queue":{"debug":{}}}', "qstat -Q, -B or pbsnodes"),
        ('{"pbs_version":"x"}', "no Jobs and no timestamp"),
        ("[1, 2]", "a JSON list"),
        ("Job Id: 7.s\n    Job_Name = x\n", "not valid JSON at line 1, column 1"),
        ("", "empty"),
    ],
)
def test_other_files_are_said_to_be_other(text, said):
    (bad,) = read(text)
    assert isinstance(bad, RejectedLine)
    assert said in bad.reason


def test_a_bad_timestamp_is_reported_and_the_jobs_still_read():
    items = read(snapshot({"7.s": job()}, timestamp="now"))
    assert isinstance(items[0], RejectedLine)
    assert items[0].field == "timestamp"
    assert isinstance(items[1], JobRecord)


def test_an_hour_that_occurs_twice_is_taken_the_first_time():
    # 2026-11-01 01:30 happens twice in Chicago; the first is CDT, 06:30 UTC.
    item = only(snapshot({"7.s": job(ctime="Sun Nov  1 01:30:00 2026")}))
    assert isinstance(item, JobRecord)
    assert item.ctime == 1793514600


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
JOB_VALUES = st.dictionaries(
    st.sampled_from(
        ["job_state", "queue", "Job_Owner", "euser", "Resource_List", "ctime", "stime",
         "Priority", "eligible_time", "accrue_type", "run_count", "comment", "exec_host"]
    ),
    JSON | st.sampled_from(["Q", "R", "H", "B", "01:00:00", "2gb", "Thu Nov 26 10:00:00 2026"]),
)  # fmt: skip


@settings(max_examples=300)
@given(JSON)
def test_any_json_never_raises(value):
    for item in read(json.dumps(value)):
        assert isinstance(item, JobRecord | Recognised | RejectedLine)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=12), JOB_VALUES, max_size=3), JSON)
def test_any_jobs_never_raise(jobs, stamp):
    for item in read(json.dumps({"timestamp": stamp, "Jobs": jobs})):
        assert isinstance(item, JobRecord | Recognised | RejectedLine)


@given(st.text(max_size=200))
def test_any_text_never_raises(text):
    assert all(isinstance(item, RejectedLine) for item in read(text))


def test_text_that_cannot_be_utf8_is_replaced_not_kept():
    text = snapshot({"7.s": job(Job_Name="run\udcff")})
    item = only(text)
    assert isinstance(item, JobRecord)
    assert item.jobname == "run?"
    latin1 = snapshot({"7.s": job()}).encode().replace(b'"relax"', b'"caf\xe9"')
    (item,) = read_qstat_json(latin1.splitlines(keepends=True), tz=CHICAGO)
    assert isinstance(item, JobRecord)
    assert item.jobname == "caf\ufffd"


def test_a_number_of_thousands_of_digits_is_the_jobs_rejection():
    # json.loads raised ValueError (int() refuses 4,300 digits and more) out of the import.
    text = snapshot({"1.srv": job(), "2.srv": job()}).replace(
        '"Priority": 0', '"Priority": ' + "9" * 5000, 1
    )
    items = read(text)
    bad = [item for item in items if isinstance(item, RejectedLine)]
    assert [(item.field, item.reason) for item in bad] == [
        ("Jobs.1.srv.Priority", "not a priority from -1024 to 1023: inf")
    ]
    assert [item.job_id for item in items if isinstance(item, JobRecord)] == ["2"]


def test_a_timestamp_of_thousands_of_digits_is_rejected():
    items = read(
        snapshot({"1.srv": job()}, timestamp=0).replace(
            '"timestamp": 0', '"timestamp": ' + "9" * 5000
        )
    )
    assert [(i.line, i.field, i.reason) for i in items if isinstance(i, RejectedLine)] == [
        (2, "timestamp", "not an epoch time: inf")
    ]


def streamed(jobs: int, *, pad: int = 0) -> Iterator[bytes]:
    """`qstat -f -F json` of `jobs` queued jobs (each with a Variable_List of `pad` bytes), made
    a line at a time as it is read: the document never exists whole."""
    head = b'{\n    "timestamp": 1699637718,\n    "pbs_version": "2022.1.1",\n    "Jobs": {\n'
    yield from head.splitlines(keepends=True)
    for number in range(jobs):
        text = json.dumps({f"{number}.srv": job(Variable_List="x" * pad)}, indent=4)
        lines = text.encode().splitlines(keepends=True)[1:-1]
        if number < jobs - 1:
            lines[-1] = lines[-1].rstrip(b"\n") + b",\n"
        yield from lines
    yield b"    }\n}\n"


def test_a_snapshot_over_32_mib_is_read_a_job_at_a_time():
    jobs = 350
    assert sum(len(line) for line in streamed(jobs, pad=100_000)) > 33 << 20
    items = QstatJsonReader(streamed(jobs, pad=100_000), tz=CHICAGO)
    seen = [item.job_id for item in items if isinstance(item, JobRecord)]
    assert seen == [str(number) for number in range(jobs)]
    assert items.timestamp == 1699637718


def test_memory_holds_a_job_not_the_document():
    size = sum(len(line) for line in streamed(800, pad=12_000))
    assert size > 9 << 20
    tracemalloc.start()
    try:
        reader = read_qstat_json(streamed(800, pad=12_000), tz=CHICAGO)
        read = sum(1 for item in reader if isinstance(item, JobRecord))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 800
    assert peak < size / 4, f"{peak:,} bytes at the peak for a {size:,}-byte document"


def test_a_job_a_reader_left_a_line_out_of_is_rejected_naming_it():
    lines = list(streamed(3))
    at = [n for n, line in enumerate(lines) if b'"Job_Name"' in line][1]
    lines[at] = b"\n"  # what bounded readers put for a line over MAX_LINE_BYTES
    items = list(read_qstat_json(lines, tz=CHICAGO, skipped=[at + 1]))
    assert [type(item) for item in items] == [JobRecord, RejectedLine, JobRecord]
    bad = items[1]
    assert isinstance(bad, RejectedLine)
    assert (bad.field, bad.text.strip()) == ("Jobs.1.srv", '"1.srv": {')
    assert f"line {at + 1} is longer than 4,194,304 bytes" in bad.reason
