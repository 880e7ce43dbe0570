"""Fuzzing the PBS usage file reader: random bytes (refused whole as no usage file), and good
v2 and v1 files (built in, and the shared examples' entities when present) with some of their
records replaced by random bytes."""

import math

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ, Reading, check_rejections, shared_seeds
from trees.engine.pbs import UsageRecord, is_valid_pbs_name
from trees.formats.usage_file import (
    HEADER,
    LAST_DECAY,
    MAX_USAGE,
    RECORD_V1,
    RECORD_V2,
    read_usage_file,
    write_usage_file,
)

RECORDS = [UsageRecord(f"user{n}", 100.0 * n + 1) for n in range(10)]
GOOD = write_usage_file(RECORDS, last_decay=1_772_352_000)
FIRST = HEADER.size + LAST_DECAY.size
# `entity usage` lines of the white paper's and the forum's examples, as pbsfs -s set them.
REAL = [
    UsageRecord(name, float(usage))
    for seed in shared_seeds("examples/pbs/*/usage.txt")
    for name, usage in (line.decode().split() for line in seed.splitlines() if line.strip())
]
# (file, where its records start, record layout): v2 and v1 (8-byte names, no header).
LAYOUTS = [
    (GOOD, FIRST, RECORD_V2),
    (write_usage_file(RECORDS, last_decay=0, version=1), 0, RECORD_V1),
    *([(write_usage_file(REAL, last_decay=1_772_352_000), FIRST, RECORD_V2)] if REAL else []),
]


def check_kept_records_are_sane(data: bytes) -> None:
    """What is kept is what a scheduler could write: a PBS name, a finite usage in range."""
    for record in read_usage_file(data).records:
        assert record.name, record
        assert is_valid_pbs_name(record.name), record
        assert math.isfinite(record.usage), record
        assert 0 <= record.usage <= MAX_USAGE, record


def reading(data: bytes) -> Reading:
    usage = read_usage_file(data)
    kept = {number: [record] for number, record in zip(usage.numbers, usage.records, strict=True)}
    return Reading(kept, usage.rejected, usage.refused)


def test_the_seed_reads_every_record() -> None:
    seed = reading(GOOD)
    assert (seed.kept[10], seed.rejected, seed.refused) == ([RECORDS[9]], [], "")


@FUZZ
@given(st.binary(max_size=6000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    read = reading(data)
    check_rejections(read, len(data) // 24 + 1)  # records, not lines
    check_kept_records_are_sane(data)
    bad = [problem for problem in read.rejected if problem.record > 0]
    assert bool(read.refused) == (len(bad) > len(read.kept))  # mostly junk: refused whole


@FUZZ
@given(st.data())
def test_good_records_around_junk_read_as_before(data: st.DataObject) -> None:
    good, first, layout = data.draw(st.sampled_from(LAYOUTS))
    count = (len(good) - first) // layout.size
    record = st.binary(min_size=layout.size, max_size=layout.size)
    junk = data.draw(st.dictionaries(st.integers(0, count - 1), record, max_size=count // 2))
    mutated = bytearray(good)
    for index, blob in junk.items():
        mutated[first + index * layout.size : first + (index + 1) * layout.size] = blob
    after = reading(bytes(mutated))
    check_rejections(after, count)
    check_kept_records_are_sane(bytes(mutated))
    assert not after.refused  # half the records or fewer are junk: rejected one by one
    for number, kept in reading(good).kept.items():
        if number - 1 not in junk:
            assert after.kept[number] == kept
    assert len(after.kept) + len(after.rejected) == count
