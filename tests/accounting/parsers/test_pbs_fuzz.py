"""Fuzzing the PBS accounting log reader (read_pbs_log, as ingest reads a file): random bytes,
and real days (built in, and the shared samples when present) with lines replaced by junk."""

import io

from hypothesis import given
from hypothesis import strategies as st

from accounting.parsers.pbs import read_pbs_log
from tests.accounting.services.test_ingest import DAY1, DAY2
from tests.fuzzing import (
    FUZZ,
    PRINTABLE_LINE,
    Reading,
    check_rejections,
    items_reading,
    lines_of,
    mutations,
    random_bytes_test,
    shared_seeds,
)

GOOD = (DAY1 + DAY2).encode()
# Torque, old and new PBS Pro: each writer's quirks (quotes, arrays, trailing spaces, L lines).
SEEDS = [GOOD, *shared_seeds("data/pbs_accounting/*/*", lines=120)]


def reading(data: bytes) -> Reading:
    return items_reading(read_pbs_log(io.BytesIO(data)))  # lines as a file gives them


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), len(seed.rejected)) == (11, 0)


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


@FUZZ
@given(st.lists(PRINTABLE_LINE.filter(lambda line: b";" not in line), min_size=1, max_size=20))
def test_text_of_another_kind_is_refused_whole_on_its_last_line(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    read = reading(data)
    check_rejections(read, len(lines))
    nonblank = [n for n, line in enumerate(lines, 1) if line.decode().strip()]
    if not nonblank:
        assert (read.kept, read.rejected) == ({}, [])
        return
    *each, whole = read.rejected
    assert read.kept == {}
    assert [bad.line for bad in each] == nonblank
    assert (whole.line, whole.field) == (nonblank[-1], "file")
    assert whole.reason.startswith("not a PBS accounting log: ")


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    # A start (S) reads as running only without its end (E) in the file: paired lines.
    seed = data.draw(st.sampled_from(SEEDS))
    mutate = mutations(reading, seed, range(len(lines_of(seed)) - 1), paired=True)
    mutate(data)
