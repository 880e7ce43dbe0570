"""Fuzzing the PBS usage file reader: random bytes (refused whole as no usage file), and a
good file with some of its records replaced by random bytes."""

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ, Reading, check_rejections
from trees.engine.pbs import UsageRecord
from trees.formats.usage_file import (
    HEADER,
    LAST_DECAY,
    RECORD_V2,
    read_usage_file,
    write_usage_file,
)

RECORDS = [UsageRecord(f"user{n}", 100.0 * n + 1) for n in range(10)]
GOOD = write_usage_file(RECORDS, last_decay=1_772_352_000)
FIRST = HEADER.size + LAST_DECAY.size


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
    check_rejections(reading(data), len(data) // 24 + 1)  # records, not lines


@FUZZ
@given(
    st.dictionaries(
        st.integers(0, len(RECORDS) - 1), st.binary(min_size=64, max_size=64), max_size=4
    )
)
def test_good_records_around_junk_read_as_before(junk: dict[int, bytes]) -> None:
    data = bytearray(GOOD)
    for index, record in junk.items():
        data[FIRST + index * RECORD_V2.size : FIRST + (index + 1) * RECORD_V2.size] = record
    after = reading(bytes(data))
    assert not after.refused
    for number, kept in reading(GOOD).kept.items():
        if number - 1 not in junk:
            assert after.kept[number] == kept
    assert len(after.kept) + len(after.rejected) == len(RECORDS)
