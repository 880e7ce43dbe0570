"""What the parsers' fuzz tests share: hostile inputs, and the checks every parser must pass.

Each parser is seen through a `Reading`: what it kept, by line (or record) number, and what it
rejected. A fuzz test feeds it random bytes, and a good input with some of its lines replaced
by junk: nothing may escape as an exception, every rejected line must say where and why, and
every good line the junk left alone must read exactly as it did before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trees.formats.rejected import RejectedLine

# FUZZ_EXAMPLES=5000 pytest -k fuzz searches deeper than the suite's few seconds do.
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class Rejection(Protocol):
    line: int
    field: str
    reason: str


@dataclass
class Reading:
    kept: dict[int, list[Any]] = field(default_factory=dict)  # line -> what it gave
    rejected: Sequence[Any] = ()  # each with .line (or .record), .field, .reason
    refused: str = ""  # the whole input refused, and why


Parse = Callable[[bytes], Reading]

# Junk for a line: bytes of any kind, text of any script, and the edge cases parsers trip on.
EDGES = [
    b"",
    b" ",
    b"\x00",
    b"\r",
    b"\xff\xfe",
    b"9" * 400,
    b"-1",
    b"nan",
    b"inf",
    b"1e999",
    b"1e308",
    b"9223372036854775808",  # 2^63
    b"9" * 5000,  # int() refuses 4,300 digits and more
    b"{" * 2000,  # nesting, for the Tcl readers
    b"\xe2\x80\xae",  # right-to-left override
    b"=" * 50,
    b"'unterminated",
    b'"unterminated',
    b";;;;;;",
    b"|" * 30,
    b":" * 10,
    "²³".encode(),
]
ANY_LINE = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=120).map(str.encode),
    st.sampled_from(EDGES),
).map(lambda junk: junk.replace(b"\n", b" "))
# For text formats that refuse a file with control bytes whole (sched_config, resource_group):
# printable junk, so that the file is still judged line by line.
PRINTABLE_LINE = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=120).map(
    str.encode
)


def lines_of(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def check_rejections(reading: Reading, lines: int) -> None:
    """Every rejection says where (a line of the input, or 0 for the file) and why."""
    for bad in reading.rejected:
        where = getattr(bad, "line", getattr(bad, "record", None))
        assert isinstance(where, int), bad
        assert 0 <= where <= lines + 1, bad
        assert getattr(bad, "field", None) or getattr(bad, "key", None), bad  # the column
        assert isinstance(bad.reason, str), bad
        assert bad.reason.strip(), bad
    if reading.refused:
        assert reading.refused.strip()


def check_random_bytes(parse: Parse, data: bytes) -> None:
    reading = parse(data)  # no exception may escape
    check_rejections(reading, data.count(b"\n") + 1)


def check_mutation(
    parse: Parse,
    good: bytes,
    mutable: Sequence[int],
    draw: Callable[[st.SearchStrategy[Any]], Any],
    junk: st.SearchStrategy[bytes],
    paired: bool = False,
) -> None:
    """Replace some of the `mutable` lines (0-based) of `good` with junk: the lines left alone
    read as they did, unless a junk line happened to read as a good one (a name defined again
    takes the place of a later one, as the scheduler's own reader would have it). `paired`:
    the reader pairs lines (a PBS start with its end), so a line left alone is still read, but
    what it gives may change with its partner's loss."""
    lines = lines_of(good)
    chosen = draw(st.sets(st.sampled_from(list(mutable)), min_size=1, max_size=3))
    for index in chosen:
        lines[index] = draw(junk)
    before = parse(good)
    after = parse(b"\n".join(lines))
    check_rejections(after, len(lines))
    assert not after.refused, after.refused
    touched = {index + 1 for index in chosen}
    if touched & after.kept.keys():
        return
    for number, kept in before.kept.items():
        if number not in touched:
            found = after.kept.get(number)
            assert found if paired else found == kept, (number, lines[number - 1])


def mutations(
    parse: Parse,
    good: bytes,
    mutable: Sequence[int],
    junk: st.SearchStrategy[bytes] = ANY_LINE,
    *,
    paired: bool = False,
) -> Callable[[st.DataObject], None]:
    """The body of a mutation test: `@given(st.data())` then call it with the data."""

    def body(data: st.DataObject) -> None:
        check_mutation(parse, good, mutable, data.draw, junk, paired)

    return body


def shared_seeds(*patterns: str, lines: int = 200) -> list[bytes]:
    """Real inputs from the shared data beside the checkout (tests/conftest.py SHARED), their
    first `lines` lines each, to mutate beside a test's built-in seeds; none when it is absent."""
    from tests.conftest import SHARED

    seeds = []
    for pattern in patterns:
        for path in sorted(SHARED.glob(pattern)):
            if path.is_file():
                seeds.append(b"".join(path.read_bytes().splitlines(keepends=True)[:lines]))
    return seeds


def items_reading(items: Iterable[Any]) -> Reading:
    """A streaming reader's items (records and RejectedLines, each with its line) as a Reading."""
    result = Reading()
    rejected = []
    for item in items:
        if isinstance(item, RejectedLine):
            rejected.append(item)
        else:
            result.kept.setdefault(item.line, []).append(item)
    result.rejected = rejected
    return result


def lines_reading(entries: Iterable[tuple[int, Any]], rejected: Sequence[Any]) -> Reading:
    """A whole-file reader's entries, each with its line number, and its rejections."""
    result = Reading(rejected=rejected)
    for line, entry in entries:
        result.kept.setdefault(line, []).append(entry)
    return result


def random_bytes_test(parse: Parse) -> Callable[..., None]:
    """The test every parser gets: random bytes never escape as an exception, and every line
    it rejects says where and why."""

    @FUZZ
    @given(st.binary(max_size=4000))
    def random_bytes(data: bytes) -> None:
        check_random_bytes(parse, data)

    return random_bytes


def junk_lines_test(
    parse: Parse,
    good: bytes,
    mutable: Sequence[int],
    junk: st.SearchStrategy[bytes] = ANY_LINE,
    *,
    paired: bool = False,
) -> Callable[..., None]:
    """The test every parser with a good sample gets: some of its `mutable` lines replaced
    with junk, the others read as before (check_mutation)."""

    @FUZZ
    @given(st.data())
    def junk_lines(data: st.DataObject) -> None:
        mutations(parse, good, mutable, junk, paired=paired)(data)

    return junk_lines
