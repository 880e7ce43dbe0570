"""Fuzzing the sacctmgr dump reader: random bytes, and an example dump with its users' lines
replaced (a Parent or Account line rightly places the lines after it)."""

from tests.fuzzing import (
    ANY_LINE,
    Reading,
    junk_lines_test,
    lines_of,
    lines_reading,
    random_bytes_test,
)
from tests.trees.formats.test_sacctmgr_dump import EXAMPLE
from trees.formats.sacctmgr_dump import parse_sacctmgr_dump

GOOD = EXAMPLE.encode()
USERS = [n for n, line in enumerate(lines_of(GOOD)) if line.startswith(b"User - ")]
# A line ending in a backslash (spaces aside) continues on the next, the format's own rule:
# junk must not join the good line after it.
JUNK = ANY_LINE.map(lambda junk: junk.replace(b"\\", b"/"))


def reading(data: bytes) -> Reading:
    parsed = parse_sacctmgr_dump(data)
    return lines_reading(parsed.entries, parsed.rejected)


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), seed.rejected, len(USERS)) == (6, [], 3)


test_random_bytes_never_escape_and_every_rejection_says_why = random_bytes_test(reading)


test_good_lines_around_junk_read_as_before = junk_lines_test(reading, GOOD, USERS, JUNK)
