"""Fuzzing the sshare reader: random bytes, and the Fair Tree sample with users' rows replaced
(an account's row rightly takes its users with it, so only users' rows are replaced)."""

from accounting.services.demo import DEMO_SAMPLES
from tests.fuzzing import Reading, junk_lines_test, lines_of, lines_reading, random_bytes_test
from trees.formats.sshare_read import read_sshare

GOOD = (DEMO_SAMPLES / "fairtree/sshare.txt").read_bytes()
USERS = [
    n
    for n, line in enumerate(lines_of(GOOD))
    if n > 0 and line.count(b"|") > 2 and line.split(b"|")[1]
]


def reading(data: bytes) -> Reading:
    parsed = read_sshare(data)
    return lines_reading(((e.line, e.association) for e in parsed.entries), parsed.rejected)


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), seed.rejected, len(USERS)) == (18, [], 11)


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


test_good_rows_around_junk_read_as_before = junk_lines_test(reading, GOOD, USERS)
