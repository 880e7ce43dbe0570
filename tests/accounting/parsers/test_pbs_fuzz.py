"""Fuzzing the PBS accounting log reader: random bytes, and a real day with lines replaced."""

import io

from hypothesis import given
from hypothesis import strategies as st

from accounting.parsers.pbs import read_pbs_accounting
from accounting.parsers.records import RejectedLine
from tests.accounting.test_services import DAY1, DAY2
from tests.fuzzing import FUZZ, Reading, check_random_bytes, lines_of, mutations

GOOD = (DAY1 + DAY2).encode()


def reading(data: bytes) -> Reading:
    result = Reading()
    rejected = []
    for item in read_pbs_accounting(io.BytesIO(data)):  # lines as a file gives them
        if isinstance(item, RejectedLine):
            rejected.append(item)
        else:
            result.kept.setdefault(item.line, []).append(item)
    result.rejected = rejected
    return result


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), len(seed.rejected)) == (11, 0)


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    check_random_bytes(reading, data)


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    # A start (S) reads as running only without its end (E) in the file: paired lines.
    mutate = mutations(reading, GOOD, range(len(lines_of(GOOD)) - 1), paired=True)
    mutate(data)
