"""Fuzzing the sacct dump reader: random bytes, and a dump with rows replaced."""

import io

from accounting.parsers.sacct import read_sacct
from tests.accounting.services.test_ingest import SACCT
from tests.fuzzing import (
    Reading,
    items_reading,
    junk_lines_test,
    lines_of,
    random_bytes_test,
)

THIRD = SACCT.splitlines()[0].replace("11|11|", "13|13|").replace("|dan|", "|fay|")
GOOD = (SACCT + THIRD + "\n").encode()


def reading(data: bytes) -> Reading:
    return items_reading(read_sacct(io.BytesIO(data)))  # lines as a file gives them


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (sorted(seed.kept), seed.rejected) == ([1, 2, 3], [])


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


# A job id seen as REQUEUED numbers the runs of its later rows: rows pair up.
test_good_rows_around_junk_read_as_before = junk_lines_test(
    reading, GOOD, range(len(lines_of(GOOD)) - 1), paired=True
)
