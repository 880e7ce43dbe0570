"""Fuzzing the resource_group reader: random bytes (refused whole when binary), text of
another kind (refused whole, each line's reason kept), and trees (the white paper's, and the
shared samples when present) with some of their entities' lines replaced by printable junk."""

from hypothesis import given
from hypothesis import strategies as st

from accounting.services.demo import DEMO_SAMPLES
from tests.fuzzing import (
    FUZZ,
    PRINTABLE_LINE,
    Reading,
    check_random_bytes,
    check_rejections,
    mutations,
    shared_seeds,
)
from trees.formats.resource_group import parse_resource_group

GOOD = (DEMO_SAMPLES / "whitepaper/resource_group").read_bytes()


def leaves(data: bytes) -> list[int]:
    """0-based lines of entities no other entry names as parent: replacing a group's line would
    rightly reject its children with it."""
    entries = parse_resource_group(data).entries
    parents = {group.parent for _, group in entries}
    return [number - 1 for number, group in entries if group.name not in parents]


# Seeds whose leaves outnumber what a test replaces; CRLF-free (PBS rejects those lines).
SEEDS = [
    seed
    for seed in [GOOD, *shared_seeds("data/resource_group/*/*", lines=150)]
    if len(leaves(seed)) >= 4
]


def reading(data: bytes) -> Reading:
    parsed = parse_resource_group(data)
    kept: dict[int, list[object]] = {}
    for number, group in parsed.entries:
        kept.setdefault(number, []).append(group)
    return Reading(kept, parsed.rejected, parsed.refused)


def test_the_seed_reads_without_rejection() -> None:
    seed = reading(GOOD)
    assert (len(seed.kept), seed.rejected, leaves(GOOD)) == (12, [], [3, 4, 7, 8, 9, 10, 12, 13])


def test_a_binary_file_is_refused_whole_with_its_first_binary_line() -> None:
    seed = reading(GOOD + b"\x01\x02\x03 7 root 5\n")
    assert (seed.kept, seed.rejected) == ({}, [])
    assert seed.refused == "line 15 holds control bytes: not a resource_group, which is text"


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    read = reading(data)
    check_random_bytes(reading, data)
    if read.refused:
        assert read.kept == {}


@FUZZ
@given(st.lists(PRINTABLE_LINE.filter(lambda line: len(line.split()) < 4), min_size=1))
def test_text_of_another_kind_is_refused_whole(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    read = reading(data)
    check_rejections(read, len(lines))
    comments = any(line.lstrip()[:1] in (b"#", b"*") for line in lines)
    others = [line for line in lines if line.strip() and line.lstrip()[:1] not in (b"#", b"*")]
    assert read.kept == {}
    assert len(read.rejected) == len(others)
    # Comments alone (OpenPBS ships such a file) or an empty file are PBS's empty tree.
    assert bool(read.refused) == bool(others or (data and not comments))


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SEEDS))
    mutations(reading, seed, leaves(seed), PRINTABLE_LINE)(data)
