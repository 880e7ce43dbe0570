"""Fuzzing the sshare reader: random bytes, and the Fair Tree sample with users' rows replaced
(an account's row rightly takes its users with it, so only users' rows are replaced)."""

from hypothesis import given
from hypothesis import strategies as st

from accounting.services.demo import DEMO_SAMPLES
from tests.fuzzing import FUZZ, Reading, check_random_bytes, lines_of, mutations
from trees.formats.sshare_read import read_sshare

GOOD = (DEMO_SAMPLES / "fairtree/sshare.txt").read_bytes()
USERS = [
    n
    for n, line in enumerate(lines_of(GOOD))
    if n > 0 and line.count(b"|") > 2 and line.split(b"|")[1]
]


def reading(data: bytes) -> Reading:
    parsed = read_sshare(data)
    kept: dict[int, list[object]] = {}
    for entry in parsed.entries:
        kept.setdefault(entry.line, []).append(entry.association)
    return Reading(kept, parsed.rejected)


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), seed.rejected, len(USERS)) == (18, [], 11)


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    check_random_bytes(reading, data)


@FUZZ
@given(st.data())
def test_good_rows_around_junk_read_as_before(data: st.DataObject) -> None:
    mutations(reading, GOOD, USERS)(data)
