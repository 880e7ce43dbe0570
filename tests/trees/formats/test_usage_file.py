"""The binary usage database against pbsfs-behaviour.md §6.

Files are built here byte by byte with struct, independently of the module's own layouts.
"""

from __future__ import annotations

import math
import string
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.pbs import GroupDef, UsageRecord
from trees.formats.usage_file import (
    JUNK_AFTER,
    MAX_USAGE,
    RECORD_V1,
    RejectedRecord,
    UsageFile,
    read_usage_file,
    screen_records,
    truncated_names,
    write_usage_file,
)

TAG = b"PBS_MAG!\0"
HEADER_V2 = TAG + bytes(7) + struct.pack("<d", 2.0)
FIRST_RECORD = 32
NAME_RULE = "PBS names use letters, digits and .-_ :"


def header(version: float = 2.0, *, last_decay: int = 0, endian: str = "<") -> bytes:
    return TAG + bytes(7) + struct.pack(f"{endian}d", version) + struct.pack("<q", last_decay)


def v2_record(name: bytes, usage: float) -> bytes:
    return name.ljust(50, b"\0") + bytes(6) + struct.pack("<d", usage)


def v2_file(*records: tuple[bytes, float], last_decay: int = 0) -> bytes:
    return header(last_decay=last_decay) + b"".join(v2_record(n, u) for n, u in records)


def v1_record(name: bytes, usage: float) -> bytes:
    return name.ljust(16, b"\0") + struct.pack("<d", usage)


def v2_offset(number: int) -> int:
    return FIRST_RECORD + (number - 1) * 64


class TestWriteLayout:
    def test_the_header_is_the_tag_padding_and_version_2_as_a_double(self) -> None:
        data = write_usage_file([], last_decay=0)
        assert data[:9] == b"PBS_MAG!\0"
        assert data[9:16] == bytes(7)
        assert data[16:24] == bytes.fromhex("0000000000000040")
        assert struct.unpack_from("<d", data, 16) == (2.0,)

    def test_last_decay_is_a_little_endian_int64_at_offset_24(self) -> None:
        data = write_usage_file([], last_decay=1_700_000_000)
        assert len(data) == 32
        assert data[24:32] == (1_700_000_000).to_bytes(8, "little")

    def test_each_record_is_a_padded_name_six_zero_bytes_and_a_double(self) -> None:
        data = write_usage_file(
            [UsageRecord("alice", 12.5), UsageRecord("bob smith:x", 0.0)], last_decay=0
        )
        assert len(data) == 32 + 2 * 64
        first, second = data[32:96], data[96:160]
        assert first[:50] == b"alice" + bytes(45)
        assert first[50:56] == bytes(6)
        assert first[56:] == struct.pack("<d", 12.5)
        assert second[:50] == b"bob smith:x".ljust(50, b"\0")
        assert second[56:] == bytes(8)

    def test_it_writes_exactly_the_bytes_pbs_writes(self) -> None:
        records = [UsageRecord("L1", 100.0), UsageRecord("L5", 1e-3)]
        expected = v2_file((b"L1", 100.0), (b"L5", 1e-3), last_decay=946713601)
        assert write_usage_file(records, last_decay=946713601) == expected

    def test_it_cuts_a_50_byte_name_to_49_bytes(self) -> None:
        data = write_usage_file([UsageRecord("n" * 50, 3.0)], last_decay=0)
        assert data[32 : 32 + 50] == b"n" * 49 + b"\0"


class TestRoundTrip:
    def test_records_written_are_read_back_in_order(self) -> None:
        records = [UsageRecord("alice", 12.5), UsageRecord("bob", 0.0), UsageRecord("c d", 1e30)]
        usage = read_usage_file(write_usage_file(records, last_decay=1_700_000_000))
        assert usage == UsageFile(
            version=2,
            last_decay=1_700_000_000,
            records=records,
            numbers=[1, 2, 3],
            rejected=[],
            header_ok=True,
        )

    def test_a_file_without_records_reads_as_empty(self) -> None:
        usage = read_usage_file(write_usage_file([], last_decay=0))
        assert usage == UsageFile(version=2, last_decay=0, records=[], numbers=[], rejected=[])

    def test_a_49_byte_name_round_trips(self) -> None:
        name = "a" * 49
        usage = read_usage_file(write_usage_file([UsageRecord(name, 2.0)], last_decay=0))
        assert usage.records == [UsageRecord(name, 2.0)]
        assert truncated_names([UsageRecord(name, 2.0)]) == []

    def test_a_50_byte_name_comes_back_cut_to_49_bytes(self) -> None:
        long = UsageRecord("b" * 50, 2.0)
        usage = read_usage_file(write_usage_file([long], last_decay=0))
        assert usage.records == [UsageRecord("b" * 49, 2.0)]
        assert usage.rejected == []

    def test_truncated_names_lists_the_names_longer_than_49_bytes(self) -> None:
        records = [
            UsageRecord("a" * 49, 1.0),
            UsageRecord("b" * 50, 1.0),
            UsageRecord("short", 1.0),
            UsageRecord("c" * 80, 1.0),
            UsageRecord("é" * 25, 1.0),  # 25 characters, 50 bytes
        ]
        assert truncated_names(records) == ["b" * 50, "c" * 80, "é" * 25]

    def test_negative_zero_usage_is_kept_as_pbs_keeps_it(self) -> None:
        usage = read_usage_file(v2_file((b"alice", -0.0)))
        assert usage.rejected == []
        assert [r.name for r in usage.records] == ["alice"]
        assert math.copysign(1.0, usage.records[0].usage) == -1.0


class TestVersion1:
    def test_a_headerless_file_is_read_as_version_1(self) -> None:
        data = v1_record(b"alice", 5.0) + v1_record(b"bob", 7.25) + v1_record(b"abcdefgh", 1.5)
        usage = read_usage_file(data)
        assert usage == UsageFile(
            version=1,
            last_decay=0,
            records=[
                UsageRecord("alice", 5.0),
                UsageRecord("bob", 7.25),
                UsageRecord("abcdefgh", 1.5),
            ],
            numbers=[1, 2, 3],
            rejected=[],
            header_ok=True,
        )

    def test_a_version_1_record_is_24_bytes(self) -> None:
        assert len(v1_record(b"alice", 5.0)) == 24
        usage = read_usage_file(v1_record(b"alice", 5.0))
        assert usage.records == [UsageRecord("alice", 5.0)]
        assert usage.version == 1

    def test_a_tag_without_its_nul_is_not_a_header(self) -> None:
        data = b"PBS_MAG!X" + bytes(7) + struct.pack("<d", 2.0)
        usage = read_usage_file(data)
        assert usage.version == 1
        assert usage.header_ok is True
        assert usage.records == []
        assert usage.rejected == [
            RejectedRecord(1, 0, "name", f"name 'PBS_MAG!X' has '!'; {NAME_RULE}")
        ]

    def test_a_version_1_name_without_nul_is_rejected(self) -> None:
        usage = read_usage_file(b"n" * 16 + struct.pack("<d", 1.0) + v1_record(b"ok", 2.0))
        assert usage.records == [UsageRecord("ok", 2.0)]
        assert usage.numbers == [2]
        assert usage.rejected == [
            RejectedRecord(1, 0, "name", "name is not NUL-terminated within 9 bytes")
        ]

    def test_a_version_1_file_reports_its_truncated_tail(self) -> None:
        data = v1_record(b"alice", 5.0) + v1_record(b"bob", 6.0) + b"carol\0\0\0\0\0"
        usage = read_usage_file(data)
        assert usage.records == [UsageRecord("alice", 5.0), UsageRecord("bob", 6.0)]
        assert usage.rejected == [
            RejectedRecord(
                3, 48, "record", "last 10 bytes are not a whole 24-byte record (truncated file)"
            )
        ]

    def test_a_version_1_record_is_checked_like_a_version_2_one(self) -> None:
        data = v1_record(b"alice", 5.0) + v1_record(b"bob", -1.0) + v1_record(b"x@y", 2.0)
        usage = read_usage_file(data)
        assert usage.records == [UsageRecord("alice", 5.0)]
        assert usage.rejected == [
            RejectedRecord(2, 24, "usage", "usage -1.0 is negative"),
            RejectedRecord(3, 48, "name", f"name 'x@y' has '@'; {NAME_RULE}"),
        ]


class TestRejectedRecords:
    @pytest.mark.parametrize(
        ("name", "value", "field", "reason"),
        [
            (b"bad", -1.5, "usage", "usage -1.5 is negative"),
            (b"bad", -math.inf, "usage", "usage -inf is negative"),
            (b"bad", math.nan, "usage", "usage is NaN"),
            (b"bad", math.inf, "usage", "usage is infinite"),
            (b"bob@x", 1.0, "name", f"name 'bob@x' has '@'; {NAME_RULE}"),
            (b"caf\xe9", 1.0, "name", f"name 'café' has 'é'; {NAME_RULE}"),
            (b"tab\there", 1.0, "name", f"name 'tab\\there' has '\\t'; {NAME_RULE}"),
            (b"a/b", 1.0, "name", f"name 'a/b' has '/'; {NAME_RULE}"),
            (b"n" * 50, 1.0, "name", "name is not NUL-terminated within 50 bytes"),
        ],
    )
    def test_a_bad_record_is_reported_and_the_others_kept(
        self, name: bytes, value: float, field: str, reason: str
    ) -> None:
        data = v2_file((b"first", 1.5), (name, value), (b"third", 2.5))
        usage = read_usage_file(data)
        assert usage.header_ok is True
        assert usage.records == [UsageRecord("first", 1.5), UsageRecord("third", 2.5)]
        assert usage.numbers == [1, 3]
        assert usage.rejected == [RejectedRecord(2, 96, field, reason)]

    def test_a_name_with_letters_digits_and_punctuation_is_valid(self) -> None:
        usage = read_usage_file(v2_file((b"Ab9.-_ :z", 4.0)))
        assert usage.records == [UsageRecord("Ab9.-_ :z", 4.0)]
        assert usage.rejected == []

    def test_a_nan_is_reported_before_a_bad_name(self) -> None:
        usage = read_usage_file(v2_file((b"bob@x", math.nan)))
        assert usage.rejected == [RejectedRecord(1, 32, "usage", "usage is NaN")]

    def test_a_truncated_tail_is_reported_as_a_record(self) -> None:
        data = v2_file((b"alice", 1.5), (b"bob", 2.5)) + v2_record(b"carol", 3.5)[:20]
        usage = read_usage_file(data)
        assert usage.records == [UsageRecord("alice", 1.5), UsageRecord("bob", 2.5)]
        assert usage.header_ok is True
        assert usage.rejected == [
            RejectedRecord(
                3, 160, "record", "last 20 bytes are not a whole 64-byte record (truncated file)"
            )
        ]

    def test_a_rejected_record_names_its_place(self) -> None:
        usage = read_usage_file(v2_file((b"a", 1.0), (b"b", -2.0)))
        assert str(usage.rejected[0]) == "record 2 (byte 96): usage: usage -2.0 is negative"


class TestHeader:
    def test_an_empty_file_has_no_records_and_no_rejections(self) -> None:
        assert read_usage_file(b"") == UsageFile()
        assert read_usage_file(b"").header_ok is True

    def test_a_file_shorter_than_the_header_is_rejected(self) -> None:
        usage = read_usage_file(b"PBS_MAG!\0\0")
        assert usage.header_ok is False
        assert usage.records == []
        assert usage.rejected == [
            RejectedRecord(0, 0, "header", "file is 10 bytes, shorter than the header")
        ]
        assert str(usage.rejected[0]) == (
            "header (byte 0): header: file is 10 bytes, shorter than the header"
        )

    @pytest.mark.parametrize("version", [1.0, 3.0, 0.0, 2.5])
    def test_a_version_other_than_2_reads_no_usage(self, version: float) -> None:
        data = header(version) + v2_record(b"alice", 5.0)
        usage = read_usage_file(data)
        assert usage.header_ok is False
        assert usage.records == []
        assert usage.rejected == [
            RejectedRecord(0, 16, "version", f"version is {version!r}, PBS reads only 2")
        ]

    def test_a_big_endian_version_2_is_named_as_another_architecture(self) -> None:
        data = header(endian=">") + v2_record(b"alice", 5.0)
        usage = read_usage_file(data)
        assert usage.header_ok is False
        assert usage.records == []
        [bad] = usage.rejected
        little = struct.unpack("<d", struct.pack(">d", 2.0))[0]
        assert bad == RejectedRecord(
            0,
            16,
            "version",
            f"version is {little!r}, PBS reads only 2 "
            "(it reads 2 big-endian: a file from another architecture)",
        )
        assert "another architecture" in bad.reason

    def test_a_nan_version_reads_no_usage(self) -> None:
        usage = read_usage_file(header(math.nan) + v2_record(b"alice", 5.0))
        assert usage.header_ok is False
        assert usage.records == []
        assert [bad.field for bad in usage.rejected] == ["version"]

    @pytest.mark.parametrize("last_decay", [1, 12345, 946713599, 946713600, -1, -(2**63)])
    def test_a_last_decay_before_2000_reads_no_usage(self, last_decay: int) -> None:
        usage = read_usage_file(v2_file((b"alice", 5.0), last_decay=last_decay))
        assert usage.header_ok is False
        assert usage.records == []
        assert usage.last_decay == 0
        assert usage.rejected == [
            RejectedRecord(
                0,
                24,
                "last_decay",
                f"{last_decay} is neither 0 nor after 2000-01-01 (Invalid usage file header)",
            )
        ]

    @pytest.mark.parametrize("last_decay", [0, 946713601, 1_700_000_000, 2**63 - 1])
    def test_a_last_decay_of_0_or_after_2000_is_read(self, last_decay: int) -> None:
        usage = read_usage_file(v2_file((b"alice", 5.0), last_decay=last_decay))
        assert usage.header_ok is True
        assert usage.last_decay == last_decay
        assert usage.records == [UsageRecord("alice", 5.0)]
        assert usage.rejected == []

    def test_a_header_without_last_decay_reads_as_empty(self) -> None:
        usage = read_usage_file(HEADER_V2)
        assert usage.header_ok is True
        assert usage.records == []
        assert usage.rejected == []

    @pytest.mark.parametrize("extra", [1, 4, 7])
    def test_a_cut_last_decay_is_reported_inside_the_file(self, extra: int) -> None:
        data = HEADER_V2 + bytes(extra)
        usage = read_usage_file(data)
        assert (usage.header_ok, usage.records) == (True, [])
        assert [(bad.offset, bad.field) for bad in usage.rejected] == [(24, "last_decay")]
        assert f"ends {extra} bytes into last_decay" in usage.rejected[0].reason


class TestScreenRecords:
    groups = (
        GroupDef("grp", 1, "root", 10),
        GroupDef("alice", 2, "grp", 5),
        GroupDef("sub", 3, "grp", 5),
        GroupDef("bob", 4, "sub", 5),
        GroupDef("leafgroup", 5, "root", 1),
    )

    def test_records_naming_a_group_are_rejected(self) -> None:
        usage = read_usage_file(
            v2_file(
                (b"grp", 9.0),
                (b"alice", 1.5),
                (b"TREEROOT", 9.0),
                (b"sub", 9.0),
                (b"unknown", 9.0),
                (b"bob", 2.5),
            )
        )
        kept, rejected = screen_records(usage, self.groups)
        assert kept == [UsageRecord("alice", 1.5), UsageRecord("bob", 2.5)]
        assert rejected == [
            RejectedRecord(
                n, v2_offset(n), "name", f"{name!r} is a group; only entities (leaves) carry usage"
            )
            for n, name in [(1, "grp"), (3, "TREEROOT"), (4, "sub"), (5, "unknown")]
        ]

    def test_entities_and_unknown_names_are_kept(self) -> None:
        usage = read_usage_file(v2_file((b"leafgroup", 3.0), (b"stranger", 4.0), (b"root", 5.0)))
        kept, rejected = screen_records(usage, self.groups)
        assert kept == [
            UsageRecord("leafgroup", 3.0),
            UsageRecord("stranger", 4.0),
            UsageRecord("root", 5.0),
        ]
        assert rejected == []

    def test_a_repeated_name_keeps_the_last_record(self) -> None:
        usage = read_usage_file(
            v2_file((b"alice", 1.0), (b"bob", 2.0), (b"alice", 3.0), (b"alice", 4.0))
        )
        kept, rejected = screen_records(usage, self.groups)
        assert kept == [UsageRecord("bob", 2.0), UsageRecord("alice", 4.0)]
        assert rejected == [
            RejectedRecord(1, 32, "name", "'alice' comes again at record 4; that one is kept"),
            RejectedRecord(3, 160, "name", "'alice' comes again at record 4; that one is kept"),
        ]

    def test_offsets_count_the_records_the_reader_dropped(self) -> None:
        usage = read_usage_file(
            v2_file((b"alice", 1.0), (b"bad@name", 2.0), (b"carol", math.nan), (b"alice", 3.0))
        )
        assert usage.numbers == [1, 4]
        kept, rejected = screen_records(usage, self.groups)
        assert kept == [UsageRecord("alice", 3.0)]
        assert rejected == [
            RejectedRecord(1, 32, "name", "'alice' comes again at record 4; that one is kept")
        ]

    def test_version_1_offsets_are_24_bytes_apart(self) -> None:
        data = (
            v1_record(b"grp", 9.0)
            + v1_record(b"alice", 1.0)
            + v1_record(b"x", 1.0)
            + v1_record(b"alice", 2.0)
        )
        usage = read_usage_file(data)
        assert usage.version == 1
        kept, rejected = screen_records(usage, self.groups)
        assert kept == [UsageRecord("x", 1.0), UsageRecord("alice", 2.0)]
        assert [(bad.record, bad.offset, bad.field) for bad in rejected] == [
            (1, 0, "name"),
            (2, 24, "name"),
        ]

    def test_nothing_is_rejected_without_groups_or_repeats(self) -> None:
        records = [UsageRecord("a", 1.0), UsageRecord("b", 2.0)]
        usage = read_usage_file(write_usage_file(records, last_decay=0))
        assert screen_records(usage, []) == (records, [])


valid_names = st.text(
    alphabet=string.ascii_letters + string.digits + ".-_ :", min_size=1, max_size=49
)
usages = st.floats(min_value=0.0, max_value=MAX_USAGE)
last_decays = st.one_of(st.just(0), st.integers(946713601, 2**63 - 1))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(valid_names, usages), unique_by=lambda pair: pair[0]), last_decays)
def test_written_records_read_back_exactly(pairs: list[tuple[str, float]], last_decay: int) -> None:
    records = [UsageRecord(name, usage) for name, usage in pairs]
    data = write_usage_file(records, last_decay=last_decay)
    assert len(data) == 32 + 64 * len(records)
    usage = read_usage_file(data)
    assert usage.records == records
    assert [struct.pack("<d", r.usage) for r in usage.records] == [
        struct.pack("<d", r.usage) for r in records
    ]
    assert usage.last_decay == last_decay
    assert usage.rejected == []
    assert usage.numbers == list(range(1, len(records) + 1))


def check_invariants(usage: UsageFile) -> None:
    assert len(usage.records) == len(usage.numbers)
    assert usage.numbers == sorted(set(usage.numbers))
    if not usage.header_ok:
        assert usage.records == []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    check_invariants(read_usage_file(data))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_after_a_v2_header_never_raise(tail: bytes) -> None:
    usage = read_usage_file(HEADER_V2 + tail)
    check_invariants(usage)
    assert usage.version == 2


class TestWriteV1:
    def test_it_writes_24_byte_records_without_header(self) -> None:
        data = write_usage_file([UsageRecord("alice", 2.5)], last_decay=123, version=1)
        assert data == b"alice" + b"\0" * 11 + struct.pack("<d", 2.5)

    def test_names_are_cut_to_8_bytes(self) -> None:
        records = [UsageRecord("abcdefghij", 1.5)]
        usage = read_usage_file(write_usage_file(records, last_decay=0, version=1))
        assert usage.records == [UsageRecord("abcdefgh", 1.5)]
        assert truncated_names(records, version=1) == ["abcdefghij"]
        assert truncated_names(records) == []


def test_a_junk_file_is_refused_after_its_first_rejections_not_read_on() -> None:
    # A 60 MB single-line text uploaded as a usage file kept 2.5 million rejections: 1.2 GB.
    junk = b"x" * (RECORD_V1.size * 100_000)
    usage = read_usage_file(junk)
    assert len(usage.rejected) == JUNK_AFTER
    assert usage.records == []
    assert usage.refused == (
        "1000 of its first 1000 records are not usage records: not a PBS usage file (read as"
        " version 1); the rest is not read"
    )


def test_a_file_mostly_good_is_read_whole_with_its_rejections() -> None:
    good = [UsageRecord(f"u{number}", 5.0) for number in range(JUNK_AFTER + 1)]
    data = write_usage_file(good, last_decay=0, version=1) + b"\xff" * RECORD_V1.size * JUNK_AFTER
    usage = read_usage_file(data)
    assert (len(usage.records), len(usage.rejected), usage.refused) == (
        JUNK_AFTER + 1,
        JUNK_AFTER,
        "",
    )
