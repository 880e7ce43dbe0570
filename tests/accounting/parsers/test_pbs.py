"""accounting.parsers.pbs: PBS Pro, OpenPBS and Torque accounting logs.

The inline lines are written for these tests (FORMATS.md section 1 describes each quirk); the
acceptance tests read the real logs of SOURCES.md section 1 from ../shared/data when present.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accounting.parsers import pbs
from accounting.parsers.pbs import (
    QuoteError,
    format_attributes,
    parse_job_id,
    quote_value,
    read_pbs_accounting,
    record_type,
    split_attributes,
)
from accounting.parsers.pbs_values import MAX_NCPUS, resource_amount
from accounting.parsers.records import JobRecord, JobState, Recognised, RejectedLine
from accounting.parsers.units import parse_duration, parse_size
from tests.conftest import SHARED

PBS_DATA = SHARED / "data" / "pbs_accounting"
STAMP = "03/14/2026 09:26:53"
START, END = 1_773_480_000, 1_773_483_723  # 3723 s apart


def line(kind: str, ident: str, message: str, stamp: str = STAMP) -> str:
    return f"{stamp};{kind};{ident};{message}\n"


def attribute(name: str) -> str:
    """The attribute a keyword argument names: `Resource_List_ncpus` is `Resource_List.ncpus`."""
    for prefix in ("Resource_List_", "resources_used_"):
        if name.startswith(prefix):
            return f"{prefix[:-1]}.{name[len(prefix) :]}"
    return name


def changed(attributes: dict[str, str], changes: dict[str, str | None]) -> str:
    """The message of `attributes` with `changes` set, or dropped where None."""
    for name, value in changes.items():
        if value is None:
            attributes.pop(attribute(name), None)
        else:
            attributes[attribute(name)] = value
    return " ".join(f"{key}={value}" for key, value in attributes.items())


def ended(ident: str = "7001.pbs01", **changes: str | None) -> str:
    """A PBS Pro E line, with trailing space; `changes` as in `changed`."""
    attributes = {
        "user": "ada",
        "group": "lab",
        "account": '"ABCD0001"',
        "project": "_pbs_project_default",
        "jobname": "relax.sh",
        "queue": "cpu",
        "ctime": str(START - 600),
        "qtime": str(START - 590),
        "etime": str(START - 580),
        "start": str(START),
        "exec_host": "nodeA/0*8+nodeB/0*8",
        "exec_vnode": "(nodeA:ncpus=8:mem=1048576kb)+(nodeB:ncpus=8:mem=1048576kb)",
        "Resource_List.mem": "2gb",
        "Resource_List.mpiprocs": "16",
        "Resource_List.ncpus": "16",
        "Resource_List.ngpus": "0",
        "Resource_List.nodect": "2",
        "Resource_List.place": "scatter:exclhost",
        "Resource_List.preempt_targets": "QUEUE=pcpu",
        "Resource_List.select": "2:ncpus=8:mpiprocs=8:mem=1GB",
        "Resource_List.walltime": "02:00:00",
        "session": "4242",
        "end": str(END),
        "Exit_status": "0",
        "resources_used.cpupercent": "1590",
        "resources_used.cput": "16:24:48",
        "resources_used.mem": "1048576kb",
        "resources_used.ncpus": "16",
        "resources_used.vmem": "2097152kb",
        "resources_used.walltime": "01:02:03",
        "resources_used.x-ncar-gpu0-energy-init": "0",
        "eligible_time": "00:00:10",
        "run_count": "1",
    }
    return line("E", ident, changed(attributes, changes) + " ")


def torque_ended(ident: str = "961.torque.example.org", **changes: str | None) -> str:
    """A Torque E line: no ncpus, account or project; exec_host one entry per core."""
    attributes = {
        "user": "bo",
        "group": "phys",
        "jobname": "mdrun",
        "queue": "batch",
        "ctime": str(START - 60),
        "qtime": str(START - 60),
        "etime": str(START - 60),
        "start": str(START),
        "owner": "bo@login1",
        "exec_host": "n07/3+n07/2+n07/1+n07/0+n08/3+n08/2+n08/1+n08/0",
        "Resource_List.mem": "8gb",
        "Resource_List.neednodes": "2:ppn=4",
        "Resource_List.nodect": "2",
        "Resource_List.nodes": "2:ppn=4",
        "Resource_List.walltime": "120:00:00",
        "session": "812",
        "end": str(END),
        "Exit_status": "0",
        "resources_used.cput": "04:00:00",
        "resources_used.mem": "524288kb",
        "resources_used.vmem": "1048576kb",
        "resources_used.walltime": "01:02:03",
    }
    return line("E", ident, changed(attributes, changes))


def parse(*lines: str) -> list[JobRecord | Recognised | RejectedLine]:
    return list(read_pbs_accounting(lines))


def only(text: str) -> JobRecord | Recognised | RejectedLine:
    (item,) = parse(text)
    return item


def record(text: str) -> JobRecord:
    item = only(text)
    assert isinstance(item, JobRecord), item
    return item


def rejected(text: str) -> RejectedLine:
    item = only(text)
    assert isinstance(item, RejectedLine), item
    return item


# split_attributes, quote_value, format_attributes


def test_split_plain_tokens_with_trailing_and_repeated_spaces():
    assert split_attributes(" user=ada   queue=cpu ") == [("user", "ada"), ("queue", "cpu")]
    assert split_attributes("") == []
    assert split_attributes("   ") == []


def test_split_on_the_first_equals_only():
    message = "Resource_List.preempt_targets=QUEUE=pcpu exec_vnode=(n1:ncpus=2:mem=10GB)"
    assert split_attributes(message) == [
        ("Resource_List.preempt_targets", "QUEUE=pcpu"),
        ("exec_vnode", "(n1:ncpus=2:mem=10GB)"),
    ]


def test_split_keeps_dash_and_dot_in_keys_and_empty_values():
    message = "resources_used.x-ncar-gpu0-energy-init=0 depend= a=1"
    assert split_attributes(message) == [
        ("resources_used.x-ncar-gpu0-energy-init", "0"),
        ("depend", ""),
        ("a", "1"),
    ]


def test_split_double_quoted_value_with_spaces():
    message = 'Resource_List.select="2:ncpus=12:test=hi girish" account="XY01" q=a '
    assert split_attributes(message) == [
        ("Resource_List.select", "2:ncpus=12:test=hi girish"),
        ("account", "XY01"),
        ("q", "a"),
    ]


def test_split_single_quoted_value_holding_double_quotes():
    message = """jobname='say "hi"  twice' queue=cpu"""
    assert split_attributes(message) == [("jobname", 'say "hi"  twice'), ("queue", "cpu")]


def test_a_quote_closes_only_before_a_space_or_the_end():
    assert split_attributes('k="a"b c" d=1') == [("k", 'a"b c'), ("d", "1")]
    assert split_attributes('k="a b"c d" e=1') == [("k", 'a b"c d'), ("e", "1")]
    assert split_attributes('k="x y\\\\" z=1') == [("k", "x y\\\\"), ("z", "1")]
    assert split_attributes("k=it's v=1") == [("k", "it's"), ("v", "1")]


def test_split_names_the_token_without_equals():
    with pytest.raises(ValueError, match="'girish\"'"):
        split_attributes('user=ada girish" queue=cpu')


def test_an_unmatched_quote_gives_its_column():
    message = 'user=ada jobname="never closed queue=cpu'
    with pytest.raises(QuoteError) as caught:
        split_attributes(message)
    assert caught.value.column == len("user=ada jobname=")
    assert message[caught.value.column] == '"'
    assert caught.value.key == "jobname"
    with pytest.raises(QuoteError) as caught:
        split_attributes("a=1  b='")
    assert caught.value.column == len("a=1  b=")


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("economy", "economy"),
        ("", ""),
        ("hi steve", '"hi steve"'),
        ('say "hi" now', "'say \"hi\" now'"),
        ('a"b', 'a"b'),
        ("it's me", '"it\'s me"'),
    ],
)
def test_quote_value_as_openpbs_writes_it(value, written):
    assert quote_value(value) == written


def test_format_attributes_is_the_inverse_of_split():
    pairs = [("account", "AB 01"), ("jobname", 'x "y"'), ("queue", "cpu")]
    text = format_attributes(pairs)
    assert text == 'account="AB 01" jobname=\'x "y"\' queue=cpu'
    assert split_attributes(text) == pairs


KEYS = st.text(st.characters(exclude_characters=" ="), min_size=1, max_size=12)
VALUES = st.text(max_size=12) | st.sampled_from(
    ["", " ", '"', "'", "a b", '"a b"', "' \"", "' ", "a \"b'c d", "x'' \"", "'a \"b'"]
)


def round_trips(value: str) -> bool:
    """Where PBS's quoting can be read back: see quote_value and split_attributes."""
    if " " not in value:
        return not value.startswith(('"', "'"))  # written bare, it would read as quoted
    return '"' not in value or "' " not in value  # in '...', a "' " would close it early


@given(st.lists(st.tuples(KEYS, VALUES), max_size=6))
def test_split_reads_back_what_format_writes(pairs):
    assume(all(round_trips(value) for _, value in pairs))
    assert split_attributes(format_attributes(pairs)) == pairs


@given(st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=6))
def test_outside_that_domain_the_round_trip_fails(pairs):
    assume(not all(round_trips(value) for _, value in pairs))
    with contextlib.suppress(ValueError):
        assert split_attributes(format_attributes(pairs)) != pairs


TOKEN_PIECES = st.sampled_from(
    ['"', "'", "=", " ", "  ", "a", "k=", "k=v", 'k="', "v'", 'b="x y"', ' k="v" ', " k='v'"]
)
MESSAGES = st.lists(TOKEN_PIECES | st.text(max_size=4), max_size=10).map("".join)


def outcome(read: Callable[[str], dict[str, str]], message: str) -> object:
    """What `read` makes of `message`: its dict, or its error's type and arguments."""
    try:
        return read(message)
    except ValueError as error:
        return type(error), error.args


def test_the_last_of_duplicate_keys_wins():
    assert (
        record(ended().replace(" queue=cpu ", ' jobname="x" jobname=y queue=cpu ')).jobname == "y"
    )
    assert (
        record(ended().replace(" queue=cpu ", ' jobname=y jobname="x" queue=cpu ')).jobname == "x"
    )


@given(MESSAGES)
def test_the_record_dict_agrees_with_split_attributes(message):
    """_attribute_map, the fast path read_pbs_accounting uses, against the reference reading."""
    reference = outcome(lambda text: dict(split_attributes(text)), message)
    assert outcome(pbs._attribute_map, message) == reference


# parse_job_id


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4529746[4].desched1", ("4529746[4]", "desched1")),
        ("4529746[].desched1", ("4529746[]", "desched1")),
        ("6", ("6", "")),
        ("6.edge.ccr.buffalo.edu", ("6", "edge.ccr.buffalo.edu")),
        ("3073070.[hostname_1]", ("3073070", "[hostname_1]")),
        ("17[3]", ("17[3]", "")),
    ],
)
def test_parse_job_id(text, expected):
    assert parse_job_id(text) == expected


@pytest.mark.parametrize(
    "text", ["", "license", "R123.server", "12a.s", "12[x].s", "12[3.s", "12.", ".s", "-5", "١٢"]
)
def test_parse_job_id_refuses(text):
    with pytest.raises(ValueError, match="not a job id"):
        parse_job_id(text)


# The line frame


def test_blank_lines_yield_nothing_but_count():
    items = parse("\n", "   \t\n", line("a", "1.s", "Priority=1"))
    assert items == [Recognised(3, "a")]


@pytest.mark.parametrize(
    "text", ["01/02/2026 03:04:05;Q;1.s", "garbage", "01/02/2026 03:04:05 Q 1.s queue=a"]
)
def test_fewer_than_three_semicolons(text):
    bad = rejected(text)
    assert (bad.line, bad.field, bad.text) == (1, "line", text)


@pytest.mark.parametrize(
    "stamp",
    [
        "13/01/2026 00:00:00",
        "02/30/2026 00:00:00",
        "01/01/2026 24:00:00",
        "01/01/2026 00:60:00",
        "2026-01-01 00:00:00",
        "1/1/2026 0:00:00",
        "01/01/2026 00:00:00 ",
        "０1/01/2026 00:00:00",
    ],
)
def test_bad_timestamp(stamp):
    bad = rejected(line("Q", "1.s", "queue=a", stamp=stamp))
    assert bad.field == "time"
    assert stamp[:10] in bad.reason


def test_leap_second_and_leap_day_are_times():
    assert only(line("a", "1.s", "Priority=1", stamp="02/29/2024 23:59:60")) == Recognised(1, "a")


def test_unknown_record_type():
    bad = rejected(line("X", "1.s", "queue=a"))
    assert (bad.field, bad.reason) == ("type", "unknown record type 'X'")
    assert rejected(line("QQ", "1.s", "queue=a")).field == "type"
    assert rejected(line("", "1.s", "queue=a")).field == "type"


def test_binary_garbage_and_nul():
    items = list(
        read_pbs_accounting([b"\xff\xfe\x00garbage\n", line("Q", "1.s", "a\x00").encode()])
    )
    assert all(isinstance(item, RejectedLine) for item in items)
    bad = [item for item in items if isinstance(item, RejectedLine)]
    assert [(item.line, item.field) for item in bad] == [(1, "line"), (2, "line")]
    assert all("binary data" in item.reason for item in bad)
    assert all("\x00" not in item.text for item in bad)


def test_str_lines_that_are_not_utf8():
    bad = rejected(line("Q", "1.s", "queue=\udcff"))
    assert "binary" in bad.reason


def test_rejected_text_is_the_line_cut_to_1000_characters():
    text = line("X", "1.s", "a=" + "b" * 5000)
    assert rejected(text).text == text[:1000]


def test_crlf_lines():
    assert record(ended().replace("\n", "\r\n")).run == 1


@pytest.mark.parametrize(
    ("kind", "ident", "message"),
    [
        ("L", "license", "floating license hour:0 day:0 month:2304 max:5184"),
        ("A", "7001.pbs01", "Job deleted as result of dependency on job 7000.pbs01"),
        ("D", "7001.pbs01", "requestor=ada@login1.example.org"),
        ("a", "7001.pbs01", "Priority=1023"),
        ("s", "7001.pbs01", 'broken="quote'),
        ("e", "7001.pbs01", "resources_used.walltime=abc"),
        ("R", "7001.pbs01", "Job rerun by the operator"),
        ("U", "R123.pbs01", "requestor=ada@login1"),
        ("z", "7001.pbs01", ""),
    ],
)
def test_other_record_types_are_recognised_untokenised(kind, ident, message):
    # A job deleted or aborted will not start from the queue: its id goes with the record.
    withdrawn = "7001" if kind in "AD" else ""
    assert only(line(kind, ident, message)) == Recognised(1, kind, withdrawn)


def test_every_known_type_is_recognised():
    lines = [line(kind, "1.s", "free text") for kind in sorted(pbs.KNOWN_TYPES - {"E", "S"})]
    assert [record_type(item) for item in parse(*lines)] == sorted(pbs.KNOWN_TYPES - {"E", "S"})


# E records


def test_a_pbs_pro_end_record():
    job = record(ended())
    assert job == JobRecord(
        line=1,
        job_id="7001",
        run=1,
        state=JobState.ENDED,
        server="pbs01",
        user="ada",
        group="lab",
        account="ABCD0001",
        project="_pbs_project_default",
        queue="cpu",
        jobname="relax.sh",
        ncpus=16,
        ngpus=0,
        nodes=2,
        memory=1048576 * 1024,
        requested_walltime=7200,
        walltime=3723,
        cput=16 * 3600 + 24 * 60 + 48,
        ctime=START - 600,
        qtime=START - 590,
        etime=START - 580,
        start=START,
        end=END,
        exit_status=0,
        extra={"vmem": 2097152 * 1024, "cpupercent": 1590, "mpiprocs": 16},
        mom="nodeA",
    )


def test_bytes_and_str_lines_read_the_same():
    text = ended()
    assert list(read_pbs_accounting([text.encode()])) == parse(text)


def test_quoted_values_with_spaces_in_a_record():
    job = record(
        ended(
            jobname='"my job"',
            Resource_List_select='"2:ncpus=12:test=hi girish"',
            resources_used_ncpus=None,
            exec_host=None,
        )
    )
    assert (job.jobname, job.ncpus, job.walltime) == ("my job", 24, 3723)


def test_single_quoted_value_in_a_record():
    assert record(ended(jobname="'say \"hi\" now'")).jobname == 'say "hi" now'


def test_array_subjob_and_parent():
    assert record(ended("4529746[4].desched1")).job_id == "4529746[4]"
    assert only(ended("4529746[].desched1")) == Recognised(1, "E", "4529746[]")


def test_bare_job_id():
    job = record(ended("6"))
    assert (job.job_id, job.server) == ("6", "")


def test_bad_job_id():
    bad = rejected(ended("license"))
    assert (bad.field, bad.reason) == ("id", "not a job id: 'license'")


def test_torque_end_record():
    job = record(torque_ended())
    assert (job.ncpus, job.nodes, job.account, job.project) == (8, 2, "", "")
    assert job.requested_walltime == 120 * 3600
    assert job.extra == {"vmem": 1048576 * 1024}


@pytest.mark.parametrize(
    ("spec", "ncpus", "nodes"),
    [("4:ppn=8", 32, 4), ("1:ppn=4:avx", 4, 1), ("host1:ppn=2+host2:ppn=2", 4, 2), ("2", 2, 2)],
)
def test_torque_nodes_spec_without_exec_host(spec, ncpus, nodes):
    job = record(torque_ended(exec_host=None, Resource_List_nodect=None, Resource_List_nodes=spec))
    assert (job.ncpus, job.nodes) == (ncpus, nodes)


def test_torque_neednodes_when_nodes_is_absent():
    job = record(torque_ended(exec_host=None, Resource_List_nodes=None))
    assert job.ncpus == 8


@pytest.mark.parametrize(
    ("exec_host", "ncpus", "nodes"),
    [
        ("node0703/0-27", 28, 1),
        ("c1/0-3+c2/0-7", 12, 2),
        ("h1/0,2-3", 3, 1),
        ("r1i0n0/0*36+r1i0n1/0*36", 72, 2),
        ("n1/11+n1/10+n2/0", 3, 2),
        ("solo", 1, 1),
    ],
)
def test_exec_host_counts(exec_host, ncpus, nodes):
    job = record(ended(exec_host=exec_host, resources_used_ncpus=None, Resource_List_nodect=None))
    assert (job.ncpus, job.nodes) == (ncpus, nodes)


@pytest.mark.parametrize(
    ("exec_host", "mom"),
    [("nodeA/0*8+nodeB/0*8", "nodeA"), ("solo", "solo"), ("c1/0-3+c2/0-7", "c1"), (None, "")],
)
def test_the_mom_is_exec_hosts_first_host(exec_host, mom):
    # The mother superior: the MoM whose samples a job's usage comes from.
    assert record(ended(exec_host=exec_host)).mom == mom


def test_zero_core_exec_host_falls_back_to_select():
    job = record(ended(exec_host="[hostname_2]/0*0", resources_used_ncpus=None))
    assert job.ncpus == 16


def test_bad_exec_host_is_rejected_when_needed():
    bad = rejected(ended(exec_host="n1/x-y", resources_used_ncpus=None))
    assert bad.field == "exec_host"


@pytest.mark.parametrize(
    ("select", "ncpus", "ngpus", "nodes"),
    [
        ("2:ncpus=4:ngpus=1+1:ncpus=8", 16, 2, 3),
        ("3:mem=1gb", 3, 0, 3),
        ("ncpus=6", 6, 0, 1),
    ],
)
def test_select_chunks(select, ncpus, ngpus, nodes):
    job = record(
        ended(
            exec_host=None,
            resources_used_ncpus=None,
            Resource_List_nodect=None,
            Resource_List_ngpus=None,
            Resource_List_select=select,
        )
    )
    assert (job.ncpus, job.ngpus, job.nodes) == (ncpus, ngpus, nodes)


def test_requested_ncpus_last():
    job = record(ended(exec_host=None, resources_used_ncpus=None, Resource_List_select=None))
    assert job.ncpus == 16
    job = record(
        ended(
            exec_host=None,
            resources_used_ncpus=None,
            Resource_List_select=None,
            Resource_List_ncpus=None,
        )
    )
    assert job.ncpus == 0


def test_gpus_from_each_source():
    assert record(ended(resources_used_ngpus="3")).ngpus == 3
    assert record(ended(Resource_List_ngpus="4")).ngpus == 4
    assert record(ended(Resource_List_gpu="2")).ngpus == 2
    assert record(ended(Resource_List_select="2:ncpus=8:ngpus=2")).ngpus == 4
    torque = torque_ended(Resource_List_nodes="2:ppn=4:gpus=2")
    assert record(torque).ngpus == 4


def test_malformed_nodect_takes_its_leading_count():
    job = record(ended(Resource_List_nodect="1:ppn=24:gpu=4:reqmem=128849018880:gpu"))
    assert job.nodes == 1


@pytest.mark.parametrize(
    ("mem", "expected"),
    [
        ("7b", 7),
        ("2kb", 2048),
        ("3mb", 3 << 20),
        ("4gb", 4 << 30),
        ("5tb", 5 << 40),
        ("1pb", 1 << 50),
        ("2w", 16),
        ("1kw", 8192),
        ("12.27M", round(12.27 * 1024 * 1024)),
        ("295.56M", round(295.56 * 1024 * 1024)),
        ("123", 123),
    ],
)
def test_memory_units(mem, expected):
    assert record(ended(resources_used_mem=mem)).memory == expected


@pytest.mark.parametrize(
    ("walltime", "seconds"),
    [("105:04:32", 105 * 3600 + 272), ("1280:19:30", 1280 * 3600 + 1170), ("0", 0), ("59", 59)],
)
def test_walltime_hours_unbounded_and_bare_seconds(walltime, seconds):
    job = record(ended(resources_used_walltime=walltime, resources_used_cput="0"))
    assert (job.walltime, job.cput) == (seconds, 0)


def test_missing_usage_fields():
    job = record(
        torque_ended(
            exec_host=None,
            qtime=None,
            etime=None,
            resources_used_walltime=None,
            resources_used_cput=None,
            resources_used_mem=None,
            resources_used_vmem=None,
        )
    )
    assert job.walltime == END - START
    assert (job.cput, job.memory, job.qtime, job.etime, job.extra) == (None, None, None, None, {})
    assert job.ncpus == 8


def test_etime_zero_means_not_eligible():
    assert record(ended(etime="0")).etime is None


def test_negative_exit_status_and_run_count():
    job = record(ended(Exit_status="-29", run_count="3"))
    assert (job.exit_status, job.run) == (-29, 3)


def test_mpiprocs_used_before_requested():
    assert record(ended(resources_used_mpiprocs="4")).extra["mpiprocs"] == 4


def test_end_record_without_end():
    bad = rejected(ended(end=None))
    assert (bad.field, bad.reason) == ("end", "E record without end time")


@pytest.mark.parametrize("start", [None, "0"])
def test_end_record_without_start(start):
    assert rejected(ended(start=start)).field == "start"


def test_end_before_start():
    bad = rejected(ended(end=str(START - 1)))
    assert bad.field == "end"
    assert "ends before it starts" in bad.reason


def test_a_trillion_core_job():
    bad = rejected(ended(resources_used_ncpus=str(10**12)))
    assert bad.field == "ncpus"
    assert str(10**12) in bad.reason
    assert "beyond any machine" in bad.reason
    assert record(ended(resources_used_ncpus=str(MAX_NCPUS))).ncpus == MAX_NCPUS


def test_too_many_gpus_and_nodes():
    assert rejected(ended(Resource_List_ngpus=str(10**9))).field == "ngpus"
    assert rejected(ended(Resource_List_nodect=str(10**9))).field == "nodes"


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("resources_used_walltime", "abc", "not a duration: 'abc'"),
        ("resources_used_walltime", "-00:01:00", "negative duration: '-00:01:00'"),
        ("resources_used_cput", "1:2:3:4", "not a duration: '1:2:3:4'"),
        ("resources_used_cput", "1::3", "not a duration: '1::3'"),
        ("resources_used_cput", "٣:00:00", "not a duration: '٣:00:00'"),
        ("resources_used_mem", "lots", "not a size: 'lots'"),
        ("resources_used_mem", "-5kb", "negative size: '-5kb'"),
        ("resources_used_vmem", "1e400kb", "not a size: '1e400kb'"),
        ("resources_used_vmem", "9" * 400 + ".5kb", "not a size: '999"),
        ("start", "-5", "negative time: '-5'"),
        ("ctime", "yesterday", "not an epoch time: 'yesterday'"),
        ("Exit_status", "ok", "not an integer: 'ok'"),
        ("run_count", "-1", "negative count: '-1'"),
        ("resources_used_ncpus", "²", "not a count: '²'"),
        ("Resource_List_walltime", "9" * 400, "not a duration"),
        ("resources_used_walltime", "9" * 5000 + ":00:00", "not a duration"),
    ],
)
def test_values_that_do_not_parse_name_their_field(key, value, reason):
    bad = rejected(ended(**{key: value}))
    assert bad.field == attribute(key)
    assert bad.reason.startswith(reason)


def test_memory_beyond_any_machine():
    bad = rejected(ended(resources_used_mem="2000000tb"))
    assert (bad.field, bad.reason) == (
        "resources_used.mem",
        f"{2000000 << 40} bytes is beyond any machine",
    )


def test_durations_beyond_any_clock():
    bad = rejected(ended(resources_used_walltime="9" * 20 + ":00:00"))
    assert bad.field == "resources_used.walltime"
    assert "beyond any clock" in bad.reason


def test_a_broken_quote_among_good_lines():
    broken = ended("7002.pbs01", jobname='"never closed')
    items = parse(ended("7001.pbs01"), broken, ended("7003.pbs01"))
    assert [type(item) for item in items] == [JobRecord, RejectedLine, JobRecord]
    bad = items[1]
    assert isinstance(bad, RejectedLine)
    column = broken.split(";", 3)[3].index('"never')
    assert (bad.line, bad.field) == (2, "jobname")
    assert f"column {column}" in bad.reason


def test_a_token_without_equals_in_a_record():
    bad = rejected(ended().replace(" queue=cpu ", " queue=cpu oops "))
    assert (bad.field, bad.reason) == ("line", "no '=' in 'oops'")


# S and R records


def started(ident: str = "7001.pbs01", **changes: str | None) -> str:
    """The S line of the job `ended` ends."""
    text = ended(ident, session=None, end=None, Exit_status=None, run_count=None, **changes)
    kept = [token for token in text.split(";", 3)[3].split(" ") if "resources_used" not in token]
    return line("S", ident, " ".join(kept))


def test_a_start_matched_by_its_end():
    items = parse(line("Q", "7001.pbs01", "queue=cpu"), started(), ended())
    assert items[:2] == [Recognised(1, "Q"), Recognised(2, "S")]
    assert isinstance(items[2], JobRecord)
    assert items[2].state is JobState.ENDED
    assert [record_type(item) for item in items] == ["Q", "S", "E"]


def test_a_matched_start_is_never_tokenised():
    items = parse(started(jobname='"unclosed'), ended())
    assert items[0] == Recognised(1, "S")
    assert isinstance(items[1], JobRecord)


def test_an_unmatched_start_is_a_running_job_at_the_end():
    items = parse(started(), line("L", "license", "floating license hour:0"))
    assert items[0] == Recognised(2, "L")
    job = items[1]
    assert isinstance(job, JobRecord)
    assert (job.line, job.state, job.start, job.end) == (1, JobState.RUNNING, START, None)
    assert (job.walltime, job.cput, job.memory, job.exit_status) == (None, None, None, None)
    assert (job.ncpus, job.nodes, job.account, job.requested_walltime) == (16, 2, "ABCD0001", 7200)
    assert job.extra == {"mpiprocs": 16}
    assert record_type(job) == "S"


def test_an_unmatched_malformed_start_is_rejected_at_the_end():
    items = parse(started(jobname='"unclosed'), started("7002.pbs01", start=None))
    assert [(item.line, item.field) for item in items if isinstance(item, RejectedLine)] == [
        (1, "jobname"),
        (2, "start"),
    ]


@pytest.mark.parametrize("kind", ["D", "A"])
def test_delete_or_abort_supersede_the_start(kind):
    items = parse(started(), line(kind, "7001.pbs01", "requestor=ada@login1"))
    assert items == [Recognised(1, "S"), Recognised(2, kind, "7001")]


def test_a_second_start_supersedes_the_first():
    items = parse(started(), started())
    assert items[0] == Recognised(1, "S")
    assert isinstance(items[1], JobRecord)
    assert (items[1].line, items[1].state) == (2, JobState.RUNNING)


def test_rerun_with_usage_then_end():
    rerun = ended(run_count="1").replace(";E;", ";R;", 1)
    items = parse(started(), rerun, started(), ended(run_count="2"))
    assert [record_type(item) for item in items] == ["S", "R", "S", "E"]
    requeued, final = items[1], items[3]
    assert isinstance(requeued, JobRecord)
    assert isinstance(final, JobRecord)
    assert (requeued.state, requeued.run, requeued.walltime) == (JobState.REQUEUED, 1, 3723)
    assert (final.state, final.run) == (JobState.ENDED, 2)


def test_rerun_without_usage():
    assert only(line("R", "7001.pbs01", "requestor=root@pbs01")) == Recognised(1, "R")


def test_rerun_without_end():
    rerun = ended(end=None).replace(";E;", ";R;", 1)
    assert (rejected(rerun).field, rejected(rerun).reason) == ("end", "R record without end time")


def test_record_type_of_each_item():
    assert record_type(Recognised(1, "L")) == "L"
    assert record_type(RejectedLine(1, "line", "why", "text")) == ""
    assert record_type(record(ended())) == "E"


# Streaming


def test_items_come_while_the_input_is_read():
    read = []

    def lines() -> Iterator[str]:
        for number in itertools.count(1):
            read.append(number)
            ident = f"{number}.pbs01"
            yield started(ident)
            yield ended(ident)

    items = read_pbs_accounting(lines())
    first_run = list(itertools.islice(items, 4))
    assert [record_type(item) for item in first_run] == ["S", "E", "S", "E"]
    assert len(read) <= 3


def test_io_errors_go_through():
    def lines() -> Iterator[str]:
        yield line("Q", "1.s", "queue=a")
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        list(read_pbs_accounting(lines()))


def nonblank_numbers(lines: Sequence[bytes | str]) -> list[int]:
    numbers = []
    for number, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode()
            except UnicodeDecodeError:
                numbers.append(number)
                continue
        text = raw.rstrip("\r\n")
        if text and not text.isspace():
            numbers.append(number)
    return numbers


def check_one_item_per_line(lines: Sequence[bytes | str]) -> None:
    items = list(read_pbs_accounting(lines))
    assert sorted(item.line for item in items) == nonblank_numbers(lines)


@given(st.lists(st.text(st.characters(exclude_categories=[]), max_size=60), max_size=8))
def test_any_text_is_one_item_per_line(lines):
    check_one_item_per_line(lines)


@given(st.lists(st.binary(max_size=60), max_size=8))
def test_any_bytes_are_one_item_per_line(lines):
    check_one_item_per_line(lines)


INTERESTING_KEYS = [
    "start",
    "end",
    "etime",
    "run_count",
    "exec_host",
    "Exit_status",
    "Resource_List.select",
    "Resource_List.nodes",
    "Resource_List.nodect",
    "Resource_List.ncpus",
    "Resource_List.gpu",
    "Resource_List.walltime",
    "resources_used.walltime",
    "resources_used.mem",
    "resources_used.ncpus",
]
VALUE_PIECES = st.sampled_from(["1", "0", "9" * 25, "-", ":", "+", "/", "*", ",", "=", "kb", "[]"])
FUZZ_VALUES = st.lists(VALUE_PIECES | st.text(max_size=3), max_size=6).map("".join)
FUZZ_MESSAGES = st.lists(st.tuples(st.sampled_from(INTERESTING_KEYS), FUZZ_VALUES), max_size=10)


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("ESRDAQ"), st.sampled_from(["1.s", "2.s", "3[].s", "x"]), FUZZ_MESSAGES
        ),
        max_size=8,
    )
)
def test_fuzzed_job_records_are_one_item_per_line(records):
    lines = [
        line(kind, ident, " ".join(f"{key}={value}" for key, value in pairs))
        for kind, ident, pairs in records
    ]
    check_one_item_per_line(lines)


@given(
    st.from_regex(r"\A[0-9]{1,7}:[0-9]{1,3}:[0-9]{1,3}\Z")
    | st.from_regex(r"\A[0-9]{1,9}\Z")
    | st.from_regex(r"\A([0-9]{1,3}-)?[0-9]{1,3}:[0-9]{2}(\.[0-9]*)?\Z")
)
def test_durations_as_parse_duration_reads_them(walltime):
    assert record(ended(resources_used_walltime=walltime)).walltime == parse_duration(walltime)


@given(st.from_regex(r"\A([0-9]{1,6}|[0-9]{1,4}\.[0-9]{0,3})(b|kb|mb|gb|tb|w|kw|M|G)?\Z"))
def test_sizes_as_parse_size_reads_them(mem):
    assert record(ended(resources_used_mem=mem)).memory == parse_size(mem)


# The real logs of SOURCES.md section 1


def data_or_skip() -> Path:
    if not PBS_DATA.is_dir():
        pytest.skip(f"the real PBS accounting logs are not at {PBS_DATA}")
    return PBS_DATA


def read_log(path: Path) -> list[JobRecord | Recognised | RejectedLine]:
    with path.open("rb") as lines:
        return list(read_pbs_accounting(lines))


@pytest.mark.parametrize(
    "name", ["ncar-casper", "ncar-derecho", "ncar-laramie", "torque2db-travis", "xdmod-unit"]
)
def test_real_logs_count_per_type_and_reject_nothing(name):
    folder = data_or_skip() / name
    paths = sorted(folder.iterdir())
    assert paths, f"no logs in {folder}"
    for path in paths:
        items = read_log(path)
        assert [item for item in items if isinstance(item, RejectedLine)] == [], path
        with path.open() as raw:
            expected = Counter(text.split(";")[1] for text in raw if text.strip())
        assert Counter(record_type(item) for item in items) == expected, path


def counts(path: Path) -> dict[str, int]:
    return dict(Counter(record_type(item) for item in read_log(path)))


def test_sources_md_figures():
    data = data_or_skip()
    assert counts(data / "ncar-laramie" / "20180212") == {
        "Q": 43,
        "S": 34,
        "E": 33,
        "L": 19,
        "D": 3,
    }
    torque = counts(data / "torque2db-travis" / "20130819")
    assert torque == {"Q": 239, "S": 236, "E": 234, "D": 5}
    assert counts(data / "ncar-casper" / "20260103") == {
        "Q": 310,
        "E": 279,
        "S": 189,
        "D": 148,
        "a": 74,
    }


def jobs(path: Path) -> dict[int, JobRecord]:
    return {item.line: item for item in read_log(path) if isinstance(item, JobRecord)}


def test_first_derecho_end():
    job = jobs(data_or_skip() / "ncar-derecho" / "20260101")[3]
    assert (job.job_id, job.server, job.account, job.run) == ("4519896", "desched1", "NHAP0008", 1)
    assert (job.ncpus, job.exit_status, job.memory) == (128, 0, 29097252 * 1024)
    assert job.walltime == 3 * 3600 + 15 * 60 + 22
    assert job.cput == 88 * 3600 + 50 * 60 + 10
    assert (job.start, job.end) == (1767239062, 1767250806)


def test_xdmod_fixture_lines():
    by_line = jobs(data_or_skip() / "xdmod-unit" / "accounting-logs.log")
    assert sorted(by_line) == list(range(1, 10))
    assert by_line[1].ncpus == 32
    assert (by_line[1].job_id, by_line[1].server) == ("6", "edge.ccr.buffalo.edu")
    assert (by_line[2].job_id, by_line[2].server) == ("6", "")
    assert by_line[3].ncpus == 4
    assert (by_line[5].ncpus, by_line[5].nodes) == (12, 2)
    six = by_line[6]
    assert (six.start, six.end) == (1485451424, 1485459831)
    assert (six.ncpus, six.ngpus, six.walltime) == (28, 1, 1485459831 - 1485451424)
    assert (six.cput, six.qtime, six.etime) == (None, None, None)
    assert (by_line[7].memory, by_line[7].nodes) == (round(12.27 * 1024 * 1024), 1)
    assert by_line[8].ngpus == 2
    assert (by_line[9].ncpus, by_line[9].exit_status, by_line[9].ngpus) == (48, 271, 4)


def test_torque_walltime_past_100_hours():
    torque = jobs(data_or_skip() / "torque2db-travis" / "20130819")
    walltimes = {job.job_id: job.walltime for job in torque.values()}
    assert walltimes["961071"] == 105 * 3600 + 4 * 60 + 32
    assert walltimes["961068"] == 110 * 3600 + 44 * 60 + 16
    assert {job.exit_status for job in torque.values()} >= {-10, -1, 271}


def test_laramie_quoted_values_and_running_jobs():
    laramie = jobs(data_or_skip() / "ncar-laramie" / "20180212")
    girish = [job for job in laramie.values() if job.job_id == "1048086"]
    assert [(job.state, job.ncpus) for job in girish] == [(JobState.ENDED, 24)]
    running = [job for job in laramie.values() if job.state is JobState.RUNNING]
    assert [(job.job_id, job.ncpus, job.nodes) for job in running] == [("1048050", 64 * 36, 64)]
    assert (running[0].end, running[0].walltime) == (None, None)


# Q records: a job waiting to start

QUEUED = (
    'user=tcraig group=ncar account="P93300606" project=_pbs_project_default jobname=icepack'
    " queue=cpu ctime=1766818867 qtime=1767423600 etime=0 Resource_List.ncpus=36"
    " Resource_List.ngpus=1 Resource_List.nodect=2 Resource_List.walltime=12:00:00"
)


def test_a_q_left_at_the_end_is_a_queued_job_with_what_it_asks_for():
    items = parse(line("Q", "4179686.desched1", QUEUED))
    (job,) = items
    assert isinstance(job, JobRecord)
    assert (job.job_id, job.server, job.run, job.state) == (
        "4179686", "desched1", 0, JobState.QUEUED,
    )  # fmt: skip
    assert (job.user, job.account, job.queue, job.jobname) == (
        "tcraig",
        "P93300606",
        "cpu",
        "icepack",
    )
    assert (job.ncpus, job.ngpus, job.nodes, job.requested_walltime) == (36, 1, 2, 12 * 3600)
    assert (job.ctime, job.qtime, job.etime) == (1766818867, 1767423600, None)  # etime=0: not yet
    assert (job.start, job.end, job.walltime, job.cput) == (None, None, None, None)
    assert record_type(job) == "Q"


def test_a_q_without_user_is_rejected_rather_charged_to_no_one():
    # It made an entity named ":" (egroup:euser, both empty) under unknown.
    message = QUEUED.replace("user=tcraig ", "").replace("group=ncar ", "")
    assert "user=" not in message
    (bad,) = parse(line("Q", "4179686.desched1", message))
    assert isinstance(bad, RejectedLine)
    assert (bad.line, bad.field, bad.reason) == (
        1, "user", "Q record without user: the queued job has no entity to wait as",
    )  # fmt: skip


def test_openpbs_own_q_record_of_its_queue_alone_is_recognised():
    assert parse(line("Q", "1048051.laadmin1", "queue=economy")) == [Recognised(1, "Q")]


@pytest.mark.parametrize("kind", ["S", "D", "A"])
def test_a_start_delete_or_abort_supersedes_the_q(kind):
    later = started() if kind == "S" else line(kind, "7001.pbs01", "requestor=ada@login1")
    items = parse(line("Q", "7001.pbs01", QUEUED), later)
    assert items[0] == Recognised(1, "Q")
    assert all(
        not (isinstance(item, JobRecord) and item.state == JobState.QUEUED) for item in items
    )


def test_a_second_q_supersedes_the_first_and_other_jobs_stay_queued():
    items = parse(line("Q", "1.s", QUEUED), line("Q", "2.s", QUEUED), line("Q", "1.s", QUEUED))
    assert items[0] == Recognised(1, "Q")
    queued = sorted((item.job_id, item.line) for item in items if isinstance(item, JobRecord))
    assert queued == [("1", 3), ("2", 2)]


# Q records carry their request: the numeric Resource_List amounts as the scheduler reads them

DERECHO_Q = (
    'user=phutton group=ncar account="WYOM0200" project=_pbs_project_default'
    " jobname=2071_WRF_extractvar queue=main ctime=1767250801 qtime=1767250801 etime=0"
    " Resource_List.job_priority=regular Resource_List.mem=692tb Resource_List.mpiprocs=256"
    " Resource_List.ncpus=256 Resource_List.ngpus=0 Resource_List.nodect=2"
    " Resource_List.place=scatter:exclhost"
    " Resource_List.select=2:ncpus=128:mpiprocs=128:ompthreads=1 Resource_List.walltime=03:00:00 "
)  # the first line of ncar-derecho/20260101


def test_a_queued_job_carries_its_numeric_requests_in_kb_and_seconds():
    job = record(line("Q", "4520930.desched1", DERECHO_Q, stamp="01/01/2026 00:00:01"))
    assert job.request is not None
    assert job.request.resources == {
        "mem": 692 * 1024**3,  # 692 TB in kB
        "mpiprocs": 256,
        "ncpus": 256,
        "ngpus": 0,
        "nodect": 2,
        "walltime": 3 * 3600,
    }
    assert (job.request.held, job.request.job_priority, job.request.eligible_time) == (
        False,
        0,
        None,
    )


def test_string_resources_are_left_out_of_the_request():
    job = record(line("Q", "1.s", QUEUED + " Resource_List.place=pack Resource_List.ib=True"))
    assert job.request is not None
    assert {"place", "select", "job_priority", "ib"}.isdisjoint(job.request.resources)
    assert job.request.resources["walltime"] == 12 * 3600


def test_runs_carry_no_request():
    assert record(ended()).request is None
    (running,) = [item for item in parse(started()) if isinstance(item, JobRecord)]
    assert running.request is None


def test_a_log_of_only_q_records_is_all_queued_jobs_with_their_requests():
    path = data_or_skip() / "ncar-derecho" / "20260101"
    with path.open("rb") as lines:
        q_lines = [raw for raw in lines if b";Q;" in raw]
    items = list(read_pbs_accounting(q_lines))
    queued = [item for item in items if isinstance(item, JobRecord)]
    assert len(queued) > 100
    assert all(job.state is JobState.QUEUED for job in queued)
    assert all(job.request is not None and job.request.resources for job in queued)
    first = next(job for job in queued if job.job_id == "4520930")
    assert first.request is not None
    assert first.request.resources["mem"] == 470 * 1024**2  # its second Q (queue cpu): 470gb
    assert first.request.resources["walltime"] == 10800
    assert not any(isinstance(item, RejectedLine) for item in items)


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("692tb", 692 * 1024**3),
        ("470gb", 470 * 1024**2),
        ("2048mb", 2048 * 1024),
        ("512kb", 512),
        ("10GB", 10 * 1024**2),  # units in any case
        ("1024b", 1),
        ("1025b", 2),  # bytes round up to whole kB
        ("2w", 8),  # words: ceil(2 / 1024) kB, times 8
        ("2kw", 16),
        ("03:00:00", 10800),
        ("1280:19:30", 1280 * 3600 + 19 * 60 + 30),  # hours unbounded
        ("30:00", 1800),  # MM:SS
        ("256", 256),
        ("0.0615", 0.0615),
        ("-5", -5),
    ],
)
def test_resource_amount_reads_like_res_to_num(text, amount):
    assert resource_amount(text) == amount


@pytest.mark.parametrize(
    "text",
    [
        "regular",
        "scatter:exclhost",
        "2:ncpus=128:mpiprocs=128:ompthreads=1",
        "QUEUE=pcpu",
        "True",
        "false",
        "1pb",  # res_to_num knows no peta
        "1.5gb",  # is_num takes no fraction with a unit
        "1:2:3:4",  # three colons
        "1:2:3kb",  # HH:MM:SS must end after the seconds
        "1e5",
    ],
)
def test_resource_amount_is_none_for_what_the_scheduler_cannot_count(text):
    assert resource_amount(text) is None


def test_resource_amount_keeps_res_to_num_quirks():
    assert resource_amount("5W") == 5  # only a lowercase w multiplies by 8
    assert resource_amount("5KW") == 5
    assert resource_amount("") == 0  # is_num takes an empty text, strtod reads 0


@given(st.text(max_size=30))
def test_resource_amount_never_raises(text):
    amount = resource_amount(text)
    assert amount is None or isinstance(amount, float)
