"""Fuzzing the SWF reader: random bytes, and a trace with job lines replaced."""

import io

from accounting.parsers.swf import SwfReader
from tests.accounting.services.test_ingest import SWF
from tests.fuzzing import (
    Reading,
    items_reading,
    junk_lines_test,
    lines_of,
    random_bytes_test,
)

GOOD = (SWF + "4 200 5 60 8 -1 -1 8 600 -1 1 9 3 -1 1 -1 -1 -1\n").encode()
JOB_LINES = [n for n, line in enumerate(lines_of(GOOD)) if line and not line.startswith(b";")]


def reading(data: bytes) -> Reading:
    return items_reading(SwfReader(io.BytesIO(data)))  # lines as a file gives them


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (sorted(seed.kept), seed.rejected) == ([3, 4, 5, 6], [])


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


test_good_jobs_around_junk_read_as_before = junk_lines_test(reading, GOOD, JOB_LINES)
