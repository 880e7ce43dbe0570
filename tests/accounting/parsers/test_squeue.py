"""accounting.parsers.squeue: `squeue --json` snapshots, Slurm 22.05 to 24.11.

JEAN_ZAY is cut down from a real `squeue -u www26kf --json` of Slurm 23.02.6 (data_parser
v0.0.39, IDRIS Jean Zay, quoted in a public job viewer); its job keeps its real values. The
pending jobs are written by hand in the shapes SchedMD/slurm dumps: v0.0.38 from
src/plugins/openapi/v0.0.38/jobs.c (22.05), v0.0.42 from data_parser/v0.0.42/parsers.c (24.11,
meta as a 24.11.5 slurmrestd prints it).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.parsers.records import JobRecord, JobState, Recognised, RejectedLine
from accounting.parsers.squeue import INFINITE, read_squeue_json

JEAN_ZAY = r"""{
   "meta": {
     "plugins": {
       "data_parser": "data_parser\/v0.0.39",
       "accounting_storage": "accounting_storage\/slurmdbd"
     },
     "command": [
       "squeue",
       "-u",
       "www26kf",
       "--json"
     ],
     "Slurm": {
       "version": {
         "major": 23,
         "micro": 6,
         "minor": 2
       },
       "release": "23.02.6"
     }
   },
   "jobs": [
     {
       "account": "dmn@v100",
       "accrue_time": 1701982989,
       "array_job_id": {
         "set": true,
         "infinite": false,
         "number": 0
       },
       "array_task_id": {
         "set": false,
         "infinite": false,
         "number": 0
       },
       "array_task_string": "",
       "cluster": "data-center",
       "eligible_time": 1701982989,
       "end_time": 1705313394,
       "group_id": 300359,
       "group_name": "genini01",
       "job_id": 1618871,
       "job_state": "RUNNING",
       "name": "model_pretrain",
       "nodes": "data-center-ia830",
       "nice": 0,
       "cpus": {
         "set": true,
         "infinite": false,
         "number": 16
       },
       "node_count": {
         "set": true,
         "infinite": false,
         "number": 1
       },
       "partition": "gpu_p2",
       "hold": false,
       "priority": {
         "set": true,
         "infinite": false,
         "number": 239256
       },
       "qos": "qos_gpu-t4",
       "restart_cnt": 0,
       "start_time": 1701983394,
       "state_reason": "None",
       "submit_time": 1701982989,
       "time_limit": {
         "set": true,
         "infinite": false,
         "number": 6000
       },
       "tres_req_str": "cpu=8,mem=120000M,node=1,billing=80,gres\/gpu=8",
       "tres_alloc_str": "cpu=16,mem=120000M,node=1,billing=80,gres\/gpu=8",
       "user_id": 303600,
       "user_name": "www26kf"
     }
   ],
   "warnings": [
   ],
   "errors": [
   ]
}
"""


def no_val(number: int, *, infinite: bool = False, unset: bool = False) -> dict[str, Any]:
    """A v0.0.39+ UINT32_NO_VAL / TIMESTAMP_NO_VAL."""
    if infinite:
        return {"set": False, "infinite": True, "number": 0}
    return {"set": not unset, "infinite": False, "number": 0 if unset else number}


def pending_v42(**changes: Any) -> dict[str, Any]:
    """A pending job as data_parser/v0.0.42 dumps it (the keys this reader uses, and some)."""
    job: dict[str, Any] = {
        "account": "chem",
        "accrue_time": no_val(1790000100),
        "array_job_id": no_val(0),
        "array_task_id": no_val(0, unset=True),
        "array_task_string": "",
        "cluster": "hpc",
        "eligible_time": no_val(1790000050),
        "group_name": "chem",
        "hold": False,
        "job_id": 4103947,
        "job_state": ["PENDING"],
        "name": "relax",
        "nice": 0,
        "cpus": no_val(4),
        "node_count": no_val(1),
        "partition": "cpu,cpu_long",
        "priority": no_val(1234),
        "qos": "normal",
        "restart_cnt": 0,
        "start_time": no_val(0),
        "state_reason": "Priority",
        "submit_time": no_val(1790000000),
        "time_limit": no_val(90),
        "tres_req_str": "cpu=4,mem=16G,node=1,billing=4",
        "user_name": "ada",
    }
    job.update(changes)
    return {key: value for key, value in job.items() if value is not None}


def pending_v38(**changes: Any) -> dict[str, Any]:
    """The same job as openapi/v0.0.38 (22.05) dumps it: plain numbers, null where unset."""
    job: dict[str, Any] = {
        "account": "chem",
        "accrue_time": 1790000100,
        "array_job_id": 0,
        "array_task_id": None,
        "cluster": "hpc",
        "eligible_time": 1790000050,
        "group_name": "chem",
        "job_id": 4103947,
        "job_state": "PENDING",
        "name": "relax",
        "nice": 0,
        "cpus": 4,
        "node_count": 1,
        "partition": "cpu,cpu_long",
        "priority": 1234,
        "qos": "normal",
        "start_time": 0,
        "state_reason": "Priority",
        "submit_time": 1790000000,
        "time_limit": 90,
        "tres_req_str": "cpu=4,mem=16G,node=1,billing=4",
        "user_name": "ada",
    }
    job.update(changes)
    return {key: value for key, value in job.items() if value is not None}


META_42 = {
    "plugin": {
        "type": "openapi/slurmctld",
        "name": "Slurm OpenAPI slurmctld",
        "data_parser": "data_parser/v0.0.42",
        "accounting_storage": "accounting_storage/slurmdbd",
    },
    "command": [],
    "slurm": {
        "version": {"major": "24", "micro": "5", "minor": "11"},
        "release": "24.11.5",
        "cluster": "hpc",
    },
}
META_38 = {
    "plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"},
    "Slurm": {"version": {"major": 22, "micro": 9, "minor": 5}, "release": "22.05.9"},
}


def document(*jobs: Any, meta: Any = None, **top: Any) -> str:
    body = {"jobs": list(jobs), "meta": META_42 if meta is None else meta, **top}
    body.setdefault("errors", [])
    body.setdefault("warnings", [])
    return json.dumps(body, indent=2)


def read(text: str) -> list[JobRecord | Recognised | RejectedLine]:
    return list(read_squeue_json(text.splitlines(keepends=True)))


def only(text: str) -> JobRecord | Recognised | RejectedLine:
    (item,) = read(text)
    return item


def queued(text: str) -> JobRecord:
    item = only(text)
    assert isinstance(item, JobRecord), item
    assert item.state is JobState.QUEUED
    assert item.request is not None
    return item


def rejected(text: str) -> RejectedLine:
    item = only(text)
    assert isinstance(item, RejectedLine), item
    return item


def test_a_running_jean_zay_job():
    job = only(JEAN_ZAY)
    assert isinstance(job, JobRecord)
    assert (job.job_id, job.state, job.run, job.kind, job.line) == (
        "1618871", JobState.RUNNING, 1, "RUNNING", 23,
    )  # fmt: skip
    assert (job.server, job.user, job.group, job.account, job.queue, job.jobname) == (
        "data-center", "www26kf", "genini01", "dmn@v100", "gpu_p2", "model_pretrain",
    )  # fmt: skip
    assert (job.ncpus, job.ngpus, job.nodes) == (16, 8, 1)
    assert (job.ctime, job.etime, job.start, job.end) == (1701982989, 1701982989, 1701983394, None)
    assert job.requested_walltime == 6000 * 60
    assert job.memory == 120000 * 2**20  # tres_alloc_str mem, in bytes
    assert job.request is None


@pytest.mark.parametrize("shape", [pending_v42, pending_v38], ids=["v0.0.42", "v0.0.38"])
def test_a_pending_job_is_queued_with_its_request(shape):
    job = queued(document(shape(), meta=META_42 if shape is pending_v42 else META_38))
    assert (job.job_id, job.run, job.kind, job.server, job.user, job.account) == (
        "4103947", 0, "PENDING", "hpc", "ada", "chem",
    )  # fmt: skip
    assert (job.queue, job.ncpus, job.nodes, job.requested_walltime) == ("cpu,cpu_long", 4, 1, 5400)
    assert (job.ctime, job.etime, job.start) == (1790000000, 1790000050, None)
    request = job.request
    assert request is not None
    assert request.resources == {"cpu": 4, "mem": 16384, "node": 1, "billing": 4}  # mem in MB
    assert (request.held, request.reported_priority, request.qos, request.nice) == (
        False, 1234, "normal", 0,
    )  # fmt: skip
    assert request.partitions == ["cpu", "cpu_long"]
    assert (request.min_nodes, request.time_limit, request.accrue_time) == (1, 90, 1790000100)
    assert request.reason == "Priority"


def test_the_line_is_where_the_job_opens():
    text = document(pending_v42(), pending_v42(job_id=4103948))
    lines = text.splitlines()
    items = read(text)
    assert [lines[item.line - 1].strip() for item in items] == ["{", "{"]
    assert items[0].line < items[1].line


@pytest.mark.parametrize(
    "changes",
    [
        {"priority": no_val(0)},
        {"hold": True},
        {"state_reason": "JobHeldUser"},
        {"state_reason": "JobHeldAdmin"},
        {"state_reason": "JobHoldMaxRequeue"},
        {"job_state": ["PENDING", "REQUEUE_HOLD"]},
    ],
)
def test_held_pending_jobs(changes):
    request = queued(document(pending_v42(**changes))).request
    assert request is not None
    assert request.held


def test_a_v39_requeue_hold_string_is_a_held_pending_job():
    job = queued(document(pending_v38(job_state="SPECIAL_EXIT", priority=0), meta=META_38))
    assert job.request is not None
    assert job.request.held
    assert job.kind == "SPECIAL_EXIT"


def test_unset_and_infinite_values():
    job = queued(
        document(
            pending_v42(
                time_limit=no_val(0, infinite=True),
                priority=no_val(0, unset=True),
                accrue_time=no_val(0),
                eligible_time=no_val(0),
            )
        )
    )
    assert job.request is not None
    assert (job.requested_walltime, job.request.time_limit) == (None, INFINITE)
    assert (job.request.reported_priority, job.request.held) == (None, False)
    assert job.request.accrue_time == 0  # not accruing yet
    assert job.etime is None


@pytest.mark.parametrize(
    ("nice", "read_as"),
    [(4294967096, -200), (4294967246, -50), (500, 500), (None, 0), (-300, -300)],
)
def test_22_05_writes_a_negative_nice_unsigned(nice, read_as):
    """openapi/v0.0.38 writes `nice - NICE_OFFSET` in uint32 arithmetic (`--nice=-200` as
    4294967096, a capture of 22.05.8's squeue --json); later shapes write it signed."""
    shaped = pending_v38()
    shaped["nice"] = nice
    job = queued(document(shaped, meta=META_38))
    assert job.request is not None
    assert job.request.nice == read_as


@pytest.mark.parametrize("nice", [2**32, -(2**31) - 1, 1.5])
def test_a_nice_no_slurm_writes_is_refused(nice):
    assert rejected(document(pending_v38(nice=nice), meta=META_38)).field == "jobs[0].nice"


def test_a_time_limit_of_null_is_unlimited_in_22_05():
    """v0.0.38 writes INFINITE as null; a job without --time has its partition's MaxTime."""
    unlimited = pending_v38()
    unlimited["time_limit"] = None
    job = queued(document(unlimited, meta=META_38))
    assert job.request is not None
    assert (job.request.time_limit, job.requested_walltime) == (INFINITE, None)
    unset = queued(document(pending_v42(time_limit=no_val(0, unset=True))))
    assert unset.request is not None
    assert unset.request.time_limit is None


def test_the_begin_time_is_kept_with_the_request():
    """eligible_time is the begin time; 0 while a dependency holds it (sprio leaves it out)."""
    later = queued(document(pending_v38(eligible_time=1790009000), meta=META_38))
    waiting = queued(document(pending_v38(eligible_time=0), meta=META_38))
    assert later.request is not None
    assert waiting.request is not None
    assert (later.request.begin_time, waiting.request.begin_time) == (1790009000, 0)
    assert waiting.etime is None


@pytest.mark.parametrize(
    ("changes", "job_id"),
    [
        ({"array_job_id": no_val(4103900), "array_task_id": no_val(7)}, "4103900_7"),
        (
            {"array_job_id": no_val(4103900), "array_task_string": "8-20%4"},
            "4103900_[8-20%4]",
        ),
        ({"het_job_id": no_val(900), "het_job_offset": no_val(1)}, "900+1"),
    ],
)
def test_array_and_heterogeneous_ids(changes, job_id):
    assert queued(document(pending_v42(**changes))).job_id == job_id


def test_gpus_and_other_tres():
    tres = "cpu=8,mem=1T,node=2,billing=12.5,gres/gpu:a100=2,gres/gpu:v100=1,license/abaqus=5"
    job = queued(document(pending_v42(tres_req_str=tres)))
    assert job.ngpus == 3
    assert job.request is not None
    assert job.request.resources["mem"] == 1024 * 1024
    assert job.request.resources["billing"] == 12.5
    assert job.request.resources["license/abaqus"] == 5


def test_the_last_update_is_when_the_requests_were_sampled():
    job = queued(document(pending_v42(), last_update=no_val(1790000500)))
    assert job.request is not None
    assert job.request.sampled == 1790000500


@pytest.mark.parametrize(
    "state", [["COMPLETED"], ["CANCELLED", "COMPLETING"], "TIMEOUT", ["SUSPENDED"]]
)
def test_other_states_are_recognised(state):
    item = only(document(pending_v42(job_state=state)))
    assert isinstance(item, Recognised)


def test_missing_keys_are_named_with_the_version():
    job = pending_v42()
    del job["accrue_time"], job["tres_req_str"]
    bad = rejected(document(job))
    assert bad.field == "jobs[0]"
    assert bad.reason.startswith("no accrue_time, tres_req_str: is this squeue --json")
    assert "Slurm 24.11.5 (data_parser/v0.0.42)" in bad.reason


def test_a_bad_job_does_not_stop_the_others():
    items = read(document(pending_v42(priority="high"), pending_v42(job_id=2)))
    assert isinstance(items[0], RejectedLine)
    assert items[0].field == "jobs[0].priority"
    assert isinstance(items[1], JobRecord)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"job_state": []}, "jobs[0].job_state"),
        ({"tres_req_str": "cpu"}, "jobs[0].tres_req_str"),
        ({"tres_req_str": "cpu=many"}, "jobs[0].tres_req_str"),
        ({"cpus": no_val(-4)}, "jobs[0].cpus"),
        ({"submit_time": "yesterday"}, "jobs[0].submit_time"),
        ({"user_name": 17}, "jobs[0].user_name"),
        ({"job_state": ["RUNNING"], "start_time": no_val(0)}, "jobs[0].start_time"),
    ],
)
def test_bad_values_name_the_job_and_key(changes, field):
    assert rejected(document(pending_v42(**changes))).field == field


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"nodes": []}', "not squeue --json: no `jobs` list (its keys: nodes)"),
        ('{"jobs": {}}', "`jobs` is a dict"),
        ("[]", "a JSON list"),
        ("JOBID PARTITION NAME\n", "not valid JSON at line 1, column 1"),
        ("", "empty"),
    ],
)
def test_other_files_are_said_to_be_other(text, said):
    bad = rejected(text)
    assert said in bad.reason


def test_errors_squeue_reports_are_rejections():
    error = {
        "description": "Unable to query jobs",
        "error_number": 1007,
        "error": "Protocol authentication error",
        "source": "slurm_load_jobs",
    }
    items = read(document(errors=[error]))
    assert len(items) == 1
    assert isinstance(items[0], RejectedLine)
    assert items[0].field == "errors[0]"
    assert "Protocol authentication error: Unable to query jobs" in items[0].reason


def test_the_real_sample_reads_the_same_from_bytes():
    assert read(JEAN_ZAY) == list(read_squeue_json(JEAN_ZAY.encode().splitlines(keepends=True)))


def test_v39_and_v42_shapes_give_the_same_record():
    v42 = queued(document(pending_v42()))
    v38 = queued(document(pending_v38(), meta=META_38))
    assert replace(v42, line=0) == replace(v38, line=0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = [
    *pending_v42(),
    "tres_alloc_str",
    "het_job_id",
    "het_job_offset",
]
JOBS = st.dictionaries(
    st.sampled_from(KEYS),
    JSON
    | st.sampled_from([["PENDING"], ["RUNNING"], "PENDING", "cpu=1,mem=1G", no_val(5)])
    | st.builds(no_val, st.integers()),
)


@settings(max_examples=300)
@given(JSON)
def test_any_json_never_raises(value):
    for item in read(json.dumps(value)):
        assert isinstance(item, JobRecord | Recognised | RejectedLine)


@settings(max_examples=300)
@given(st.lists(JOBS, max_size=3), JSON)
def test_any_jobs_never_raise(jobs, errors):
    text = json.dumps({"jobs": jobs, "errors": errors, "meta": {"slurm": errors}})
    for item in read(text):
        assert isinstance(item, JobRecord | Recognised | RejectedLine)


def test_strings_that_utf8_cannot_hold_are_replaced():
    job = queued(document(pending_v42(name="run\udcff", user_name="ad\u00e9")))
    assert (job.jobname, job.user) == ("run?", "ad\u00e9")


@pytest.mark.parametrize("key", ["job_id", "priority", "cpus", "submit_time"])
def test_a_number_of_thousands_of_digits_is_a_rejection(key):
    # json.loads raised ValueError (int() refuses 4,300 digits and more) out of the import.
    huge = "9" * 5000
    text = document(pending_v42(**{key: 7})).replace(f'"{key}": 7', f'"{key}": {huge}')
    assert huge in text
    bad = rejected(text)
    assert (bad.field.startswith("jobs[0]"), bool(bad.reason)) == (True, True), bad


def streamed(jobs: int, *, pad: int = 0) -> Iterator[bytes]:
    """An indented squeue --json of `jobs` pending jobs (each with a comment of `pad` bytes),
    made a line at a time as it is read: the document never exists whole."""
    meta = json.dumps({"meta": META_42, "last_update": no_val(1790000500)}, indent=2)
    yield from (b"{\n", b'  "jobs": [\n')
    for number in range(jobs):
        job = json.dumps(pending_v42(job_id=1000 + number, comment="x" * pad), indent=2)
        lines = job.encode().splitlines(keepends=True)
        if number < jobs - 1:
            lines[-1] = b"},\n"
        yield from lines
    yield b"  ],\n"
    yield from meta[1:].encode().splitlines(keepends=True)  # after the jobs, as 23.11 writes


def test_a_snapshot_over_32_mib_is_read_a_job_at_a_time():
    # A site with 20,000 pending jobs writes 60 MB of squeue --json: a bound on the document
    # refused it whole. The envelope after the jobs still reaches every job.
    jobs = 350
    assert sum(len(line) for line in streamed(jobs, pad=100_000)) > 33 << 20
    seen = 0
    for item in read_squeue_json(streamed(jobs, pad=100_000)):
        assert isinstance(item, JobRecord), item
        assert item.request is not None
        assert item.request.sampled == 1790000500
        seen += 1
    assert seen == jobs


def test_memory_holds_a_job_not_the_document():
    size = sum(len(line) for line in streamed(800, pad=12_000))
    assert size > 9 << 20
    tracemalloc.start()
    try:
        items = read_squeue_json(streamed(800, pad=12_000))
        read = sum(1 for item in items if isinstance(item, JobRecord))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 800
    assert peak < size / 4, f"{peak:,} bytes at the peak for a {size:,}-byte document"


def test_a_cut_snapshot_is_one_refusal_and_no_job():
    text = document(pending_v42(), pending_v42(job_id=2))
    bad = rejected(text[: text.index('"job_id": 2')])
    assert bad.field == "file"
    assert bad.reason.startswith("not valid JSON at line ")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"jobs": [' + "[" * 20_000 + "]" * 20_000 + "]}", "JSON nested too deep"),
        (
            '{"jobs": [{"job_id": 1\x00}]}',
            "not valid JSON at line 1, column 23: Expecting ',' delimiter",
        ),
        ('{"jobs": [{"name": "a\x00b"}]}', "Invalid control character at"),
    ],
    ids=["20,000 deep", "NUL", "NUL in a string"],
)
def test_json_no_squeue_writes_is_refused_naming_where(text, said):
    bad = rejected(text)
    assert (bad.field, said in bad.reason) == ("file", True), bad


def test_a_line_longer_than_any_job_is_refused_with_its_number():
    lines = list(streamed(2))
    long = 5 << 20
    at = next(n for n, line in enumerate(lines) if b'"name"' in line)
    lines[at] = lines[at].replace(b'"relax"', b'"' + b"x" * long + b'"')
    (bad,) = read_squeue_json(lines)
    assert isinstance(bad, RejectedLine)
    assert (bad.line, bad.field) == (at + 1, "file")
    assert "longer than 4,194,304 bytes" in bad.reason


def test_a_job_a_reader_left_a_line_out_of_is_rejected_naming_it():
    lines = list(streamed(3))
    at = [n for n, line in enumerate(lines) if b'"name"' in line][1]
    lines[at] = b"\n"  # what bounded readers put for a line over MAX_LINE_BYTES
    items = list(read_squeue_json(lines, skipped=[at + 1]))
    assert [type(item) for item in items] == [JobRecord, RejectedLine, JobRecord]
    bad = items[1]
    assert isinstance(bad, RejectedLine)
    assert bad.field == "jobs[1]"
    assert f"line {at + 1} is longer than 4,194,304 bytes" in bad.reason
    assert bad.text.strip() == "{"


@pytest.mark.parametrize(
    ("value", "reason"),
    [("NaN", "not a number: nan"), ("Infinity", "not a number: inf"),
     ("-Infinity", "not a number: -inf"), ("1e400", "not a number: inf"),
     ("9" * 41, "not a count up to 10,000,000: 1e+41"),
     ("-" + "9" * 40, "not a count up to 10,000,000: -1e+40")],
)  # fmt: skip
def test_numbers_json_read_and_yajl_does_not_are_read_as_before(value, reason):
    text = document(pending_v42(cpus=7)).replace('"cpus": 7', f'"cpus": {value}')
    assert value in text
    bad = rejected(text)
    assert (bad.field, bad.reason) == ("jobs[0].cpus", reason)


def test_a_lone_low_surrogate_is_replaced_as_before():
    text = document(pending_v42(name="run")).replace('"run"', '"run\\udcff \\ud83d\\ude00"')
    job = queued(text)
    assert job.jobname == "run? \U0001f600"
