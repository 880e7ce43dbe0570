"""Fuzzing the sacct dump reader: random bytes, and a dump with rows replaced."""

import io

from hypothesis import given
from hypothesis import strategies as st

from accounting.parsers.sacct import read_sacct
from tests.accounting.services.test_ingest import SACCT
from tests.fuzzing import FUZZ, Reading, check_random_bytes, items_reading, lines_of, mutations

THIRD = SACCT.splitlines()[0].replace("11|11|", "13|13|").replace("|dan|", "|fay|")
GOOD = (SACCT + THIRD + "\n").encode()


def reading(data: bytes) -> Reading:
    return items_reading(read_sacct(io.BytesIO(data)))  # lines as a file gives them


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (sorted(seed.kept), seed.rejected) == ([1, 2, 3], [])


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    check_random_bytes(reading, data)


@FUZZ
@given(st.data())
def test_good_rows_around_junk_read_as_before(data: st.DataObject) -> None:
    # A job id seen as REQUEUED numbers the runs of its later rows: rows pair up.
    mutations(reading, GOOD, range(len(lines_of(GOOD)) - 1), paired=True)(data)
