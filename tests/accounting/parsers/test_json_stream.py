"""accounting.parsers.json_stream: a snapshot streamed, refused in json.loads's own words."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.parsers.json_stream import Envelope, JsonSnapshot
from accounting.parsers.records import RejectedLine

BASE = json.dumps(
    {
        "jobs": [{"job_id": 1, "name": "relax", "cpus": {"set": True, "number": 4}}, 2, [3]],
        "meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}},
        "errors": [],
    },
    indent=2,
)
BROKEN = st.sampled_from(
    [",", "}", "]", '"', "x", "\x00", "\n", "{", "[", ":", "-", "0", "\\", " 5", "t", "NaN", "\r"]
)


def snapshot(text: str) -> JsonSnapshot:
    lines = text.encode().splitlines(keepends=True)
    return JsonSnapshot(lines, what="squeue --json", container="jobs", keep=("meta",))


@settings(max_examples=400)
@given(st.integers(0, len(BASE)), st.integers(0, 3), BROKEN)
def test_a_broken_document_is_refused_where_and_as_json_loads_says(at, cut, inserted):
    text = BASE[:at] + inserted + BASE[at + cut :]
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        line = error.lineno
        said = f"not valid JSON at line {line}, column {error.colno}: {error.msg}"
    else:
        return
    refused = snapshot(text).envelope()
    assert isinstance(refused, RejectedLine)
    assert (refused.line, refused.field, refused.reason) == (line, "file", said)


def test_the_envelope_and_the_entries_of_a_document():
    read = snapshot(BASE)
    envelope = read.envelope()
    assert isinstance(envelope, Envelope)
    assert (envelope.kind, envelope.container, envelope.keys) == (
        "dict",
        "list",
        ["errors", "jobs", "meta"],
    )
    assert envelope.members == {"meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}}
    entries = list(read.entries())
    assert [(entry.index, entry.value) for entry in entries] == [
        (0, {"job_id": 1, "name": "relax", "cpus": {"set": True, "number": 4}}), (1, 2), (2, [3]),
    ]  # fmt: skip
    assert [BASE.splitlines()[entry.line - 1].strip() for entry in entries] == ["{", "2,", "["]


def test_a_container_given_twice_is_read_where_it_last_is_as_json_loads_kept_it():
    read = snapshot('{"jobs": [1, 2],\n "jobs": [3]}')
    assert isinstance(read.envelope(), Envelope)
    assert [(entry.line, entry.value) for entry in read.entries()] == [(2, 3)]
