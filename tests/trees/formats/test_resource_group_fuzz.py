"""Fuzzing the resource_group reader: random bytes (refused whole when binary), and the white
paper's tree with some of its entities' lines replaced by printable junk."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ, PRINTABLE_LINE, Reading, check_random_bytes, lines_of, mutations
from trees.formats.resource_group import parse_resource_group

GOOD = (Path(__file__).resolve().parents[3] / "trees/sample/whitepaper/resource_group").read_bytes()
# Entities (leaves): replacing a group's line would rightly reject its children with it.
LEAVES = [n for n, line in enumerate(lines_of(GOOD)) if line.startswith(b"L")]


def reading(data: bytes) -> Reading:
    parsed = parse_resource_group(data)
    kept: dict[int, list[object]] = {}
    for number, group in parsed.entries:
        kept.setdefault(number, []).append(group)
    return Reading(kept, parsed.rejected, parsed.refused)


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), seed.rejected, len(LEAVES)) == (12, [], 8)


def test_a_binary_file_is_refused_whole_with_its_first_binary_line() -> None:
    seed = reading(GOOD + b"\x01\x02\x03 7 root 5\n")
    assert (seed.kept, seed.rejected) == ({}, [])
    assert seed.refused == "line 15 holds control bytes: not a resource_group, which is text"


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    check_random_bytes(reading, data)


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    mutations(reading, GOOD, LEAVES, PRINTABLE_LINE)(data)
