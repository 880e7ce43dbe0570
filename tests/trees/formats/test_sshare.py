"""trees.formats.sshare: reading every sshare layout, and printing what Slurm 22.05's sshare prints.

The reference is slurm-fairtree-behaviour.md §4 and FORMATS.md §6; the captures under
../shared/examples/slurm are a real cluster's `sshare -a -l -P`, `sshare -a -l` and `sshare -a -P`,
and ../shared/data/sshare holds excerpts of real output (SOURCES.md §5).
"""

from __future__ import annotations

import pytest

from tests.conftest import SHARED
from trees.engine.slurm import (
    INFINITE,
    INFINITE64,
    NO_VAL,
    NO_VAL64,
    ROOT_ACCOUNT,
    USE_PARENT,
    Algorithm,
    AssociationDef,
    SlurmTree,
    compute,
)
from trees.engine.tree import ROOT
from trees.formats.rejected import RejectedLine
from trees.formats.sshare import (
    LONG_CLASSIC,
    LONG_FAIR_TREE,
    SHORT,
    SshareRow,
    columns_for,
    format_sshare,
    sshare_rows,
    transported,
)
from trees.formats.sshare_read import SshareFile, read_sshare

CAPTURES = SHARED / "examples" / "slurm"
EXCERPTS = SHARED / "data" / "sshare"
# file name: (long, parsable) as sshare was run for it
LAYOUTS = {
    "ft_basic_sshare_l_P.txt": (True, "P"),
    "ft_basic_sshare_l.txt": (True, ""),
    "ft_basic_sshare_P.txt": (False, "P"),
}
ZEROS = "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0"


def capture_or_skip(name: str) -> bytes:
    path = CAPTURES / name
    if not path.is_file():
        pytest.skip(f"the shared Slurm captures are not at {CAPTURES}")
    return path.read_bytes()


def excerpt_or_skip(name: str) -> bytes:
    path = EXCERPTS / name
    if not path.is_file():
        pytest.skip(f"the shared sshare excerpts are not at {EXCERPTS}")
    return path.read_bytes()


def read(*lines: str) -> SshareFile:
    return read_sshare("".join(line + "\n" for line in lines).encode())


# A small Fair Tree cluster, as this module prints it (checked against the real captures below):
# a `parent` user, a sub-account, the same user in two accounts, an unused account.
SMALL = [
    AssociationDef("root", None, None, 1, 30.0),
    AssociationDef("root", "root", "root", 1, 0.0),
    AssociationDef("a", "root", None, 10, 10.0),
    AssociationDef("a", "a", "u1", 1, 4.0),
    AssociationDef("a", "a", "u2", USE_PARENT, 6.0),
    AssociationDef("b", "a", None, 5, 0.0),
    AssociationDef("b", "b", "u3", 2, 0.0),
    AssociationDef("c", "root", None, 20, 20.0),
    AssociationDef("c", "c", "u1", 3, 20.0),
]
HEADER_P = "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare"
SMALL_P = [
    HEADER_P,
    "root|||0.000000|30|1.000000|",
    " root|root|1|0.032258|0|0.000000|1.000000",
    " a||10|0.322581|10|0.333333|",
    "  a|u1|1|0.166667|4|0.400000|0.400000",
    "  a|u2|parent|0.322581|6|0.600000|0.800000",
    "  b||5|0.833333|0|0.000000|",
    "   b|u3|2|1.000000|0|0.000000|0.800000",
    " c||20|0.645161|20|0.666667|",
    "  c|u1|3|1.000000|20|1.000000|0.400000",
]
SMALL_LONG_P = [
    "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS"
    "|GrpTRESMins|TRESRunMins",
    f"root|||0.000000|30||1.000000||||{ZEROS}",
    f" root|root|1|0.032258|0|0.000000|0.000000|1.000000|inf||{ZEROS}",
    f" a||10|0.322581|10|0.333333|0.333333||0.967742||{ZEROS}",
    f"  a|u1|1|0.166667|4|0.133333|0.400000|0.400000|0.416667||{ZEROS}",
    f"  a|u2|parent|0.322581|6|0.200000|0.600000|0.800000|||{ZEROS}",
    f"  b||5|0.833333|0|0.000000|0.000000||inf||{ZEROS}",
    f"   b|u3|2|1.000000|0|0.000000|0.000000|0.800000|inf||{ZEROS}",
    f" c||20|0.645161|20|0.666667|0.666667||0.967742||{ZEROS}",
    f"  c|u1|3|1.000000|20|0.666667|1.000000|0.400000|1.000000||{ZEROS}",
]
SMALL_CLASSIC_LONG_P = [
    "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|GrpTRESMins"
    "|TRESRunMins",
    f"root|||1.000000|30||1.000000|0.500000||{ZEROS}",
    f" root|root|1|0.032258|0|0.000000|0.000000|1.000000||{ZEROS}",
    f" a||10|0.322581|10|0.333333|0.333333|0.488580||{ZEROS}",
    f"  a|u1|1|0.053763|4|0.133333|0.166667|0.116629||{ZEROS}",
    f"  a|u2|parent|0.322581|6|0.200000|0.333333|0.488580||{ZEROS}",
    f"  b||5|0.268817|0|0.000000|0.277778|0.488580||{ZEROS}",
    f"   b|u3|2|0.268817|0|0.000000|0.277778|0.488580||{ZEROS}",
    f" c||20|0.645161|20|0.666667|0.666667|0.488580||{ZEROS}",
    f"  c|u1|3|0.645161|20|0.666667|0.666667|0.488580||{ZEROS}",
]
ALIGNED_HEADER = (
    "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare "
)
ALIGNED_DASHES = (
    "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- "
)
SMALL_ALIGNED_ROWS = [
    "root                                          0.000000          30      1.000000            ",
    " root                      root          1    0.032258           0      0.000000   1.000000 ",
    " a                                      10    0.322581          10      0.333333            ",
    "  a                          u1          1    0.166667           4      0.400000   0.400000 ",
    "  a                          u2     parent    0.322581           6      0.600000   0.800000 ",
    "  b                                      5    0.833333           0      0.000000            ",
    "   b                         u3          2    1.000000           0      0.000000   0.800000 ",
    " c                                      20    0.645161          20      0.666667            ",
    "  c                          u1          3    1.000000          20      1.000000   0.400000 ",
]
SMALL_ALIGNED = [ALIGNED_HEADER, ALIGNED_DASHES, *SMALL_ALIGNED_ROWS]


def small_rows(algorithm: Algorithm = Algorithm.FAIR_TREE) -> list[SshareRow]:
    tree = SlurmTree.build(SMALL)
    return sshare_rows(tree, compute(tree, algorithm))


def row(**changes: object) -> SshareRow:
    """An account row under root with every value given, then the changes."""
    values: dict[str, object] = {
        "account": "acct",
        "parent": "root",
        "user": None,
        "raw_shares": 1,
        "norm_shares": 0.5,
        "raw_usage": 0,
        "norm_usage": 0.0,
        "effectv_usage": 0.0,
        "fairshare": None,
        "level_fs": None,
    }
    values.update(changes)
    return SshareRow(**values)  # type: ignore[arg-type]


def cell(value: float, column: str = "NormShares", parsable: str = "P") -> str:
    """The text of one double column, without the Account column and separator."""
    text = format_sshare([row(**{_FIELD[column]: value})], ["Account", column], parsable=parsable)
    line = text.splitlines()[-1]
    return line.split("|")[1] if parsable else line[21:]


_FIELD = {
    "NormShares": "norm_shares",
    "NormUsage": "norm_usage",
    "EffectvUsage": "effectv_usage",
    "FairShare": "fairshare",
    "LevelFS": "level_fs",
}


class TestCapturesRoundTrip:
    """read_sshare → SlurmTree.build → compute → sshare_rows → format_sshare is the capture."""

    @pytest.mark.parametrize("source", list(LAYOUTS))
    @pytest.mark.parametrize("target", list(LAYOUTS))
    def test_each_capture_prints_every_capture(self, source: str, target: str) -> None:
        data = capture_or_skip(source)
        want = capture_or_skip(target)
        parsed = read_sshare(data)
        assert (parsed.rejected, parsed.algorithm, parsed.has_root) == (
            [],
            Algorithm.FAIR_TREE,
            True,
        )
        tree = SlurmTree.build(parsed.associations)
        metrics = compute(tree, Algorithm.FAIR_TREE)
        # The cells as read; an aligned capture holds cut ones, fit only for its own layout.
        run = {
            entry.association.key: entry.cells["TRESRunMins"]
            for entry in parsed.entries
            if "TRESRunMins" in entry.cells
        }
        keep = source == target or parsed.layout != "aligned"
        long, parsable = LAYOUTS[target]
        text = format_sshare(
            sshare_rows(tree, metrics, tres_run_mins=run if keep else None),
            columns_for(Algorithm.FAIR_TREE, long=long),
            parsable=parsable,
        )
        assert text.encode() == want

    def test_the_capture_is_read_as_the_tree_of_the_readme(self) -> None:
        parsed = read_sshare(capture_or_skip("ft_basic_sshare_l_P.txt"))
        by_key = {a.key: a for a in parsed.associations}
        assert len(by_key) == 18
        assert by_key[("root", None)] == AssociationDef("root", None, None, 1, 1786.0)
        assert by_key[("exp", None)] == AssociationDef("exp", "phys", None, 10, 282.0)
        assert by_key[("exp", "erin")] == AssociationDef("exp", "exp", "erin", USE_PARENT, 188.0)
        assert by_key[("chem", "gina")].shares == 0
        assert (by_key[("phys", "alice")].shares, by_key[("chem", "alice")].shares) == (10, 5)
        assert parsed.tres_names == ZEROS.replace("=0", "").split(",")

    def test_the_aligned_capture_keeps_the_cut_tres_text_and_says_where_its_lines_are(self) -> None:
        parsed = read_sshare(capture_or_skip("ft_basic_sshare_l.txt"))
        assert parsed.layout == "aligned"
        assert parsed.columns == LONG_FAIR_TREE
        assert {e.cells["TRESRunMins"] for e in parsed.entries} == {
            "cpu=0,mem=0,energy=0,node=0,b+"
        }
        assert [e.line for e in parsed.entries] == list(range(3, 21))
        # A cut list says nothing about the TRES: the default set is assumed.
        assert parsed.tres_names == ZEROS.replace("=0", "").split(",")

    def test_the_small_tree_prints_in_every_layout(self) -> None:
        rows = small_rows()
        short, long = columns_for(Algorithm.FAIR_TREE, long=False), LONG_FAIR_TREE
        assert format_sshare(rows, short, parsable="P").splitlines() == SMALL_P
        assert format_sshare(rows, long, parsable="P").splitlines() == SMALL_LONG_P
        assert format_sshare(rows, short).splitlines() == SMALL_ALIGNED
        classic = small_rows(Algorithm.CLASSIC)
        assert (
            format_sshare(classic, columns_for(Algorithm.CLASSIC, long=True), parsable="P")
        ).splitlines() == SMALL_CLASSIC_LONG_P


class TestColumns:
    def test_default_column_sets(self) -> None:
        assert columns_for(Algorithm.FAIR_TREE, long=False) == [
            "Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare",
        ]  # fmt: skip
        assert columns_for(Algorithm.CLASSIC, long=False) == SHORT
        assert columns_for(Algorithm.FAIR_TREE, long=True) == [
            "Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage",
            "EffectvUsage", "FairShare", "LevelFS", "GrpTRESMins", "TRESRunMins",
        ]  # fmt: skip
        assert columns_for(Algorithm.CLASSIC, long=True) == [
            c for c in LONG_FAIR_TREE if c != "LevelFS"
        ]

    def test_doubles_travel_through_packdouble(self) -> None:
        assert transported(1 / 37) == 0.027027027027027032 != 1 / 37
        assert transported(0.5) == 0.5


class TestDoubles:
    @pytest.mark.parametrize(
        ("value", "text"),
        [
            (0.0078125, "0.007812"),  # exactly half way in binary: to even
            (0.0234375, "0.023438"),  # exactly half way: to even, upwards
            (0.1234565, "0.123456"),  # the binary value is below the decimal half
            (0.0000005, "0.000000"),  # 4.99999999999999977e-07
            (1.0000005, "1.000001"),  # above the half in binary
            (12345.6789, "12345.678900"),  # parsable: %f, never %e
            (float("inf"), "inf"),
            (0.0, "0.000000"),
        ],
    )
    def test_parsable_is_printf_f(self, value: float, text: str) -> None:
        assert cell(value) == text

    @pytest.mark.parametrize(
        "value", [float(NO_VAL), float(INFINITE), float(NO_VAL64), float(INFINITE64)]
    )
    @pytest.mark.parametrize("column", ["NormShares", "NormUsage", "FairShare", "LevelFS"])
    def test_no_val_and_infinite_print_blank(self, value: float, column: str) -> None:
        width = {"NormShares": 11, "NormUsage": 11, "FairShare": 10, "LevelFS": 10}[column]
        assert cell(value, column) == ""
        assert cell(value, column, parsable="") == " " * width + " "

    def test_blank_cells_keep_the_column_width(self) -> None:
        line = format_sshare(
            [row(norm_shares=float(NO_VAL), level_fs=float(INFINITE64))],
            ["Account", "NormShares", "LevelFS"],
            header=False,
        )
        assert line == "acct" + " " * 17 + " " * 12 + " " * 11 + "\n"

    @pytest.mark.parametrize(
        ("column", "value", "text"),
        [
            ("LevelFS", 12345.6789, "1.2346e+04"),  # the example of §4
            ("NormShares", 12345.6789, "1.23457e+04"),  # width 11: one more digit
            ("LevelFS", 123456789.0, "1.2346e+08"),
            ("LevelFS", 1e100, "1.000e+100"),  # a longer exponent takes a digit
            ("LevelFS", 999999.0, "1.0000e+06"),  # %10f is 13 wide
            ("LevelFS", 99.5, " 99.500000"),  # fits: %10f
            ("LevelFS", float("inf"), "       inf"),
            ("EffectvUsage", 0.25, "     0.250000"),
        ],
    )
    def test_aligned_is_right_aligned_f_or_e_when_too_wide(
        self, column: str, value: float, text: str
    ) -> None:
        assert cell(value, column, parsable="") == text + " "

    def test_a_large_raw_usage_is_not_cut_and_shifts_the_later_columns(self) -> None:
        root = row(
            account="root",
            parent=None,
            raw_shares=None,
            norm_shares=0.0,
            raw_usage=6181868410096,
            norm_usage=float(NO_VAL),
            effectv_usage=1.0,
        )
        columns = ["Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage"]
        text = format_sshare([root], [*columns, "EffectvUsage", "FairShare"], header=False)
        assert text == (
            "root" + " " * 17 + " " * 11 + " " * 11
            + "   0.000000 " + "6181868410096 " + " " * 12 + "     1.000000 " + " " * 11 + "\n"
        )  # fmt: skip

    def test_the_large_raw_usage_lines_are_those_of_a_real_printout(self) -> None:
        want = excerpt_or_skip("excerpts/neuronic-fairshare-doc.sshare-l.txt").decode()
        rows = [
            row(account="root", parent=None, raw_shares=None, norm_shares=0.0,
                raw_usage=6181868410096, norm_usage=float(NO_VAL), effectv_usage=1.0),
            row(account="seas", raw_shares=1, norm_shares=0.5, raw_usage=6181868410096,
                norm_usage=1.0, effectv_usage=1.0, level_fs=0.5),
            row(account="seas", parent="seas", user="yy8435", raw_shares=1,
                norm_shares=0.004831, raw_usage=1316226032, norm_usage=0.000213,
                effectv_usage=0.000213, fairshare=0.269231, level_fs=22.689187),
        ]  # fmt: skip
        columns = [c for c in LONG_FAIR_TREE if "TRES" not in c]
        text = format_sshare(rows, columns)
        # The excerpt was pasted without the trailing blanks.
        assert [line.rstrip() for line in text.splitlines()] == want.splitlines()


class TestStrings:
    def test_raw_shares_parent_and_blank(self) -> None:
        rows = [
            row(raw_shares=None),
            row(raw_shares=USE_PARENT),
            row(raw_shares=NO_VAL),
            row(raw_shares=0),
            row(raw_usage=NO_VAL64),
        ]
        text = format_sshare(rows, ["Account", "RawShares", "RawUsage"], parsable="P")
        assert text.splitlines() == [
            "Account|RawShares|RawUsage",
            "acct||0",
            "acct|parent|0",
            "acct||0",
            "acct|0|0",
            "acct|1|",
        ]

    def test_names_longer_than_the_column_are_cut_with_a_plus(self) -> None:
        account = "a_very_long_account_name"  # 24 characters, 20 shown
        rows = [
            row(account=account),
            row(account=account, parent=account, user="someoneverylong"),
            row(account="exactly_twenty_chars", parent="root"),
        ]
        text = format_sshare(rows, ["Account", "User"], header=False)
        assert text.splitlines() == [
            "a_very_long_account+            ",
            " a_very_long_accoun+ someoneve+ ",
            "exactly_twenty_chars            ",
        ]
        # The parsable layouts print them whole.
        assert format_sshare(
            rows, ["Account", "User"], parsable="P", header=False
        ).splitlines() == [
            f"{account}|",
            f" {account}|someoneverylong",
            "exactly_twenty_chars|",
        ]

    def test_the_tres_lists_are_cut_at_30(self) -> None:
        text = format_sshare([row(tres_run_mins=ZEROS, grp_tres_mins="cpu=100")],
                             ["Account", "GrpTRESMins", "TRESRunMins"], header=False)  # fmt: skip
        assert text == "acct" + " " * 17 + " " * 23 + "cpu=100 cpu=0,mem=0,energy=0,node=0,b+ \n"


class TestLayouts:
    def test_p_ends_the_header_and_every_row_with_a_bar_and_P_does_not(self) -> None:
        rows = small_rows()
        short = columns_for(Algorithm.FAIR_TREE, long=False)
        lower = format_sshare(rows, short, parsable="p").splitlines()
        upper = format_sshare(rows, short, parsable="P").splitlines()
        assert lower == [line + "|" for line in SMALL_P]
        assert upper == SMALL_P
        assert upper[0] == HEADER_P
        assert not upper[2].endswith("|")

    @pytest.mark.parametrize("parsable", ["", "p", "P"])
    def test_no_header(self, parsable: str) -> None:
        rows = small_rows()
        short = columns_for(Algorithm.FAIR_TREE, long=False)
        with_header = format_sshare(rows, short, parsable=parsable).splitlines()
        without = format_sshare(rows, short, parsable=parsable, header=False).splitlines()
        skipped = 1 if parsable else 2  # the aligned layout drops its dash line too
        assert without == with_header[skipped:]
        assert without[0].startswith("root")

    def test_aligned_header_and_dash_line(self) -> None:
        text = format_sshare([], LONG_FAIR_TREE)
        assert text.splitlines() == [
            "Account                    User  RawShares  NormShares    RawUsage   NormUsage"
            "  EffectvUsage  FairShare    LevelFS                    GrpTRESMins"
            "                    TRESRunMins ",
            "-------------------- ---------- ---------- ----------- ----------- ----------- "
            "------------- ---------- ---------- ------------------------------ "
            "------------------------------ ",
        ]


class TestFilters:
    def test_users_keeps_their_rows_and_every_account_row_ignoring_case(self) -> None:
        rows = small_rows()
        text = format_sshare(rows, ["Account", "User"], parsable="P", users=["U1", "root"])
        assert text.splitlines() == [
            "Account|User",
            "root|",
            " root|root",
            " a|",
            "  a|u1",
            "  b|",
            " c|",
            "  c|u1",
        ]

    def test_no_user_matches(self) -> None:
        text = format_sshare(small_rows(), ["Account", "User"], parsable="P", users=["nobody"])
        assert text.splitlines() == ["Account|User", "root|", " a|", "  b|", " c|"]

    def test_accounts_unindents_where_the_parent_account_is_not_printed(self) -> None:
        rows = small_rows()
        text = format_sshare(rows, ["Account", "User"], parsable="P", accounts=["B"])
        assert text.splitlines() == ["Account|User", "b|", " b|u3"]
        text = format_sshare(rows, ["Account", "User"], parsable="P", accounts=["a", "b"])
        assert text.splitlines() == ["Account|User", "a|", " a|u1", " a|u2", " b|", "  b|u3"]
        text = format_sshare(rows, ["Account", "User"], parsable="P", accounts=["root", "c"])
        assert text.splitlines() == ["Account|User", "root|", " root|root", " c|", "  c|u1"]

    def test_accounts_and_users_together(self) -> None:
        text = format_sshare(
            small_rows(), ["Account", "User"], parsable="P", accounts=["a", "c"], users=["u1"]
        )
        assert text.splitlines() == ["Account|User", "a|", " a|u1", "c|", " c|u1"]

    def test_the_filtered_capture_is_the_capture_without_those_lines(self) -> None:
        data = capture_or_skip("ft_basic_sshare_l_P.txt").decode()
        parsed = read_sshare(data.encode())
        tree = SlurmTree.build(parsed.associations)
        rows = sshare_rows(tree, compute(tree))
        text = format_sshare(rows, LONG_FAIR_TREE, parsable="P", users=["Alice"])
        want = [line for line in data.splitlines() if line.split("|")[1] in ("", "User", "alice")]
        assert text.splitlines() == want
        assert len(want) == 1 + 6 + 2  # header, root bio chem phys exp theory, alice twice


class TestReadLayouts:
    def test_parsable2(self) -> None:
        parsed = read(*SMALL_P)
        assert (parsed.layout, parsed.columns, parsed.rejected, parsed.notes) == (
            "P", SHORT, [], []
        )  # fmt: skip
        assert parsed.associations == SMALL
        assert parsed.has_root
        assert [e.depth for e in parsed.entries] == [0, 1, 1, 2, 2, 2, 3, 1, 2]
        assert [e.line for e in parsed.entries] == list(range(2, 11))
        assert parsed.entries[4].cells == {
            "Account": "  a", "User": "u2", "RawShares": "parent", "NormShares": "0.322581",
            "RawUsage": "6", "EffectvUsage": "0.600000", "FairShare": "0.800000",
        }  # fmt: skip

    def test_parsable_with_the_trailing_bar(self) -> None:
        parsed = read(*(line + "|" for line in SMALL_P))
        assert (parsed.layout, parsed.columns, parsed.rejected) == ("p", SHORT, [])
        assert parsed.associations == SMALL
        assert parsed.entries[0].cells["FairShare"] == ""

    def test_long_parsable(self) -> None:
        parsed = read(*SMALL_LONG_P)
        assert (parsed.layout, parsed.columns, parsed.rejected) == ("P", LONG_FAIR_TREE, [])
        assert parsed.associations == SMALL
        assert parsed.entries[1].cells["LevelFS"] == "inf"
        assert parsed.entries[0].cells["NormUsage"] == ""
        assert parsed.entries[0].cells["TRESRunMins"] == ZEROS

    def test_crlf_lines(self) -> None:
        parsed = read_sshare("".join(line + "\r\n" for line in SMALL_P).encode())
        assert (parsed.associations, parsed.rejected) == (SMALL, [])

    def test_aligned_with_dash_groups(self) -> None:
        parsed = read(*SMALL_ALIGNED)
        assert (parsed.layout, parsed.columns, parsed.rejected, parsed.notes) == (
            "aligned", SHORT, [], []
        )  # fmt: skip
        assert parsed.associations == SMALL
        assert [e.line for e in parsed.entries] == list(range(3, 12))
        assert parsed.entries[2].cells == {
            "Account": " a", "User": "", "RawShares": "10", "NormShares": "0.322581",
            "RawUsage": "10", "EffectvUsage": "0.333333", "FairShare": "",
        }  # fmt: skip

    def test_aligned_with_one_merged_dash_line(self) -> None:
        parsed = read(ALIGNED_HEADER, "-" * 90, *SMALL_ALIGNED_ROWS)
        assert parsed.associations == SMALL
        assert parsed.rejected == []
        assert parsed.notes == [
            "line 2: the dash line does not mark each column; widths come from the header"
        ]

    def test_aligned_without_dash_line(self) -> None:
        parsed = read(ALIGNED_HEADER, *SMALL_ALIGNED_ROWS)
        assert (parsed.associations, parsed.rejected, parsed.notes) == (SMALL, [], [])
        assert parsed.entries[4].cells["RawShares"] == "parent"

    def test_aligned_long_capture_without_its_dash_line(self) -> None:
        data = capture_or_skip("ft_basic_sshare_l.txt").decode().splitlines()
        want = read_sshare(capture_or_skip("ft_basic_sshare_l_P.txt")).associations
        assert read(data[0], *data[2:]).associations == want
        merged = read(data[0], "-" * 200, *data[2:])
        assert merged.associations == want
        assert {e.cells["LevelFS"] for e in merged.entries} >= {"inf", "", "1.507937"}

    def test_aligned_with_a_raw_usage_wider_than_its_column(self) -> None:
        parsed = read_sshare(excerpt_or_skip("excerpts/neuronic-fairshare-doc.sshare-l.txt"))
        assert parsed.rejected == []
        root, seas, user = parsed.entries
        assert root.association == AssociationDef("root", None, None, 1, 6181868410096.0)
        assert (root.cells["NormUsage"], root.cells["EffectvUsage"]) == ("", "1.000000")
        assert (seas.cells["NormUsage"], seas.cells["LevelFS"]) == ("1.000000", "0.500000")
        assert user.association == AssociationDef("seas", "seas", "yy8435", 1, 1316226032.0)

    def test_old_headers_with_spaces(self) -> None:
        parsed = read(
            "             Account       User Raw Shares Norm Shares   Raw Usage Effectv Usage"
            "  FairShare",
            "-------------------- ---------- ---------- ----------- ----------- -------------"
            " ----------",
            "root                                          1.000000         709      1.000000"
            "   0.500000",
            " root                      root          1    0.000100           0      0.000000"
            "   1.000000",
            " cae                                  7416    0.741526         709      1.000000"
            "   0.392681",
            "  cae                  e104725     parent    0.741526         709      1.000000"
            "   0.392681",
        )
        assert parsed.columns == SHORT
        assert parsed.rejected == []
        assert parsed.associations == [
            AssociationDef("root", None, None, 1, 709.0),
            AssociationDef("root", "root", "root", 1, 0.0),
            AssociationDef("cae", "root", None, 7416, 709.0),
            AssociationDef("cae", "cae", "e104725", USE_PARENT, 709.0),
        ]
        assert (parsed.algorithm, parsed.algorithm_evidence) == (
            Algorithm.CLASSIC,
            "the root row's NormShares 1.000000 (line 3)",
        )

    def test_the_real_pre_15_08_printout(self) -> None:
        parsed = read_sshare(excerpt_or_skip("excerpts/schedmd-slurm-pr114.sshare-a.txt"))
        assert parsed.columns == SHORT
        assert [a.key for a in parsed.associations] == [
            ("root", None), ("root", "root"), ("cae", None), ("e104725", None),
            ("e104725", "e104725"),
        ]  # fmt: skip
        # One row per partition: the later ones are duplicates here.
        assert [(r.line, r.field) for r in parsed.rejected] == [(n, "User") for n in range(8, 14)]

    def test_a_title_line_before_the_header(self) -> None:
        parsed = read(
            "                      Shares for Account hpceng",
            "               Account       User  RawShares  NormShares    RawUsage  EffectvUsage"
            "  FairShare",
            "  -------------------- ---------- ---------- ----------- ----------- -------------"
            " ----------",
            "  hpceng                                 200    0.076894   102749687      0.041010"
            "   0.690955",
            "   hpceng                    dtse        100    0.010985           0      0.000000"
            "   1.000000",
        )
        assert parsed.notes == [
            "line 1: not part of the table, ignored: 'Shares for Account hpceng'"
        ]
        assert parsed.rejected == []
        assert parsed.associations == [
            AssociationDef("hpceng", "root", None, 200, 102749687.0),
            AssociationDef("hpceng", "hpceng", "dtse", 100, 0.0),
        ]

    def test_the_real_printout_with_a_title_line(self) -> None:
        parsed = read_sshare(excerpt_or_skip("excerpts/jobstats-doc-hpceng.sshare-A.txt"))
        assert parsed.notes == [
            "line 1: not part of the table, ignored: 'Shares for Account hpceng'"
        ]
        assert parsed.rejected == []
        assert [a.user for a in parsed.associations] == [
            None, "dkenna29", "dtse", "labeln", "maiset",
        ]  # fmt: skip
        assert parsed.associations[3].usage == 62482627.0

    @pytest.mark.parametrize(
        ("lines", "columns", "algorithm"),
        [
            (SMALL_P[1:], SHORT, Algorithm.FAIR_TREE),
            (SMALL_LONG_P[1:], LONG_FAIR_TREE, Algorithm.FAIR_TREE),
            (SMALL_CLASSIC_LONG_P[1:], LONG_CLASSIC, Algorithm.CLASSIC),
            ([line + "|" for line in SMALL_LONG_P[1:]], LONG_FAIR_TREE, Algorithm.FAIR_TREE),
        ],
    )
    def test_headerless_parsable_files_of_a_default_width(
        self, lines: list[str], columns: list[str], algorithm: Algorithm
    ) -> None:
        parsed = read(*lines)
        assert parsed.columns == columns
        assert parsed.rejected == []
        assert parsed.associations == SMALL
        assert parsed.algorithm == algorithm
        assert parsed.notes == [
            f"line 1: no header; {len(columns)} columns read as sshare's default"
            f" {'|'.join(columns)}"
        ]

    def test_a_headerless_two_column_file_is_rejected_line_by_line(self) -> None:
        lines = ["root|0.500000", " a|", "  a|0.400000"]
        parsed = read(*lines)
        assert parsed.entries == []
        assert parsed.rejected == [
            RejectedLine(n, "line", "no header to name its 2 columns", text)
            for n, text in enumerate(lines, start=1)
        ]
        assert parsed.notes == [
            "line 1: no header, and 2 columns is no default sshare column set:"
            " print it with its header (without -n) to import it"
        ]

    def test_the_real_two_column_files_are_rejected(self) -> None:
        for name in ("sshare.txt", "sshare_tree.txt"):
            data = excerpt_or_skip(f"vpenso-prometheus-slurm-exporter/{name}")
            parsed = read_sshare(data)
            assert parsed.entries == []
            assert {r.reason for r in parsed.rejected} == {"no header to name its 2 columns"}
            assert len(parsed.rejected) == len(data.decode().splitlines())

    def test_a_file_without_a_root_row(self) -> None:
        parsed = read(
            HEADER_P,
            "a||10|0.333333|10|0.333333|",
            " a|u1|1|0.500000|4|0.400000|0.400000",
            "c||20|0.666667|20|0.666667|",
            " c|u1|3|1.000000|20|1.000000|0.400000",
        )
        assert (parsed.rejected, parsed.has_root) == ([], False)
        assert parsed.associations == [
            AssociationDef("a", ROOT_ACCOUNT, None, 10, 10.0),
            AssociationDef("a", "a", "u1", 1, 4.0),
            AssociationDef("c", ROOT_ACCOUNT, None, 20, 20.0),
            AssociationDef("c", "c", "u1", 3, 20.0),
        ]
        tree = SlurmTree.build(parsed.associations)
        assert (tree.tree.usage[ROOT], tree.tree.shares[ROOT]) == (30.0, 1)

    def test_top_accounts_indented_by_one_without_a_root_row(self) -> None:
        parsed = read(*SMALL_P[:1], *SMALL_P[3:])  # no root row, no root user
        assert parsed.rejected == []
        assert parsed.associations == SMALL[2:]

    def test_inf_and_blank_cells(self) -> None:
        parsed = read(
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS",
            "root|||0.000000|||1.000000||",
            " a||1|1.000000||0.000000|0.000000||inf",
        )
        assert parsed.rejected == []
        assert parsed.associations == [
            AssociationDef("root", None, None, 1, 0.0),
            AssociationDef("a", "root", None, 1, 0.0),
        ]
        assert parsed.entries[1].cells["LevelFS"] == "inf"

    @pytest.mark.parametrize("text", ["parent", "Parent", "PARENT"])
    def test_parent_shares(self, text: str) -> None:
        parsed = read(HEADER_P, "a||10|1.0|0|0.0|", f" a|u|{text}|1.0|5|1.0|1.0")
        assert parsed.associations[1].shares == USE_PARENT
        assert parsed.rejected == []

    def test_a_name_cut_by_the_column_width_is_noted_and_imported_as_printed(self) -> None:
        parsed = read(
            ALIGNED_HEADER,
            ALIGNED_DASHES,
            "root                                          0.000000          20      1.000000"
            "            ",
            " a_very_long_accoun+                    10    0.500000          10      0.500000"
            "            ",
            " b                                      10    0.500000          10      0.500000"
            "            ",
            "  b                  someoneve+          1    1.000000          10      1.000000"
            "   1.000000 ",
        )
        assert parsed.rejected == []
        assert parsed.associations[1:] == [
            AssociationDef("a_very_long_accoun+", "root", None, 10, 10.0),
            AssociationDef("b", "root", None, 10, 10.0),
            AssociationDef("b", "b", "someoneve+", 1, 10.0),
        ]
        assert parsed.notes == [
            f"line {n}: a name was cut by sshare's column width and ends in '+';"
            " it is imported as printed"
            for n in (4, 6)
        ]

    @pytest.mark.parametrize("account", ["nineteen_chars_name", "a_very_long_account_name"])
    def test_the_users_of_an_account_whose_name_is_cut(self, account: str) -> None:
        tree = SlurmTree.build(
            [
                AssociationDef("root", None, None, 1, 10.0),
                AssociationDef(account, "root", None, 1, 10.0),
                AssociationDef(account, account, "u1", 1, 10.0),
            ]
        )
        text = format_sshare(sshare_rows(tree, compute(tree)), SHORT)
        parsed = read_sshare(text.encode())
        assert parsed.rejected == []
        assert [a.user for a in parsed.associations] == [None, None, "u1"]


class TestBadLines:
    def test_indentation_skipping_a_level_and_the_rows_under_it(self) -> None:
        parsed = read(
            HEADER_P,
            "root|||0.000000|30|1.000000|",
            " a||10|0.5|10|0.3|",
            "   b||5|0.5|0|0.0|",
            "    b|u3|2|1.0|0|0.0|0.8",
            "    c||5|0.5|0|0.0|",
            "     c|u4|2|1.0|0|0.0|0.8",
            "  a|u1|1|1.0|10|1.0|0.5",
            " d||1|0.5|20|0.7|",
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (4, "Account", "indentation skips a level: depth 3 under depth 1"),
            (5, "Account", "its account on line 4 was rejected"),
            (6, "Account", "its account on line 4 was rejected"),
            (7, "Account", "its account on line 6 was rejected"),
        ]
        assert parsed.rejected[0].text == "   b||5|0.5|0|0.0|"
        assert [a.key for a in parsed.associations] == [
            ("root", None), ("a", None), ("a", "u1"), ("d", None),
        ]  # fmt: skip

    def test_a_user_row_before_any_account(self) -> None:
        parsed = read(
            HEADER_P, "a|u1|1|1.0|10|1.0|0.5", "a||1|1.0|10|1.0|", " a|u2|1|1.0|10|1.0|0.5"
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (2, "User", "user row before any account (user u1)")
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "u2")]

    def test_a_user_row_naming_another_account(self) -> None:
        parsed = read(HEADER_P, "a||1|1.0|10|1.0|", " b|u|1|1.0|10|1.0|0.5", " a|v|1|1.0|0|0.0|1.0")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (3, "Account", "user u names account b but sits under a")
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "v")]

    def test_a_duplicate_account(self) -> None:
        parsed = read(
            HEADER_P,
            " a||1|0.5|10|0.5|",
            "  a|u1|1|1.0|10|1.0|0.5",
            " a||2|0.5|10|0.5|",
            " b||1|0.5|10|0.5|",
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (4, "Account", "account a is listed twice (first on line 2)")
        ]
        assert [(a.key, a.shares) for a in parsed.associations] == [
            (("a", None), 1), (("a", "u1"), 1), (("b", None), 1),
        ]  # fmt: skip

    def test_a_duplicate_user_in_one_account_but_not_in_two(self) -> None:
        parsed = read(
            HEADER_P,
            "a||1|0.5|10|0.5|",
            " a|alice|1|1.0|10|1.0|0.5",
            " a|alice|1|1.0|10|1.0|0.5",
            "b||1|0.5|10|0.5|",
            " b|alice|1|1.0|10|1.0|0.5",
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (
                4,
                "User",
                "duplicate association: user alice in account a (first on line 3;"
                " partitions are not supported)",
            )
        ]
        assert [a.key for a in parsed.associations] == [
            ("a", None), ("a", "alice"), ("b", None), ("b", "alice"),
        ]  # fmt: skip

    @pytest.mark.parametrize("shares", ["ten", "-5", "1.5", "+3", "٣"])
    def test_shares_that_are_not_a_number_or_parent(self, shares: str) -> None:
        parsed = read(
            HEADER_P, "a||1|1.0|10|1.0|", f" a|u1|{shares}|1.0|5|1.0|0.5", " a|u2|1|1|5|1|1"
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (3, "RawShares", f"{shares!r} is not a number of shares or 'parent'")
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "u2")]

    def test_shares_beyond_32_bits(self) -> None:
        parsed = read(HEADER_P, "a||4294967296|1.0|10|1.0|", "b||4294967295|1.0|10|1.0|")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (2, "RawShares", "4294967296 does not fit Slurm's 32-bit shares")
        ]
        assert parsed.associations == [AssociationDef("b", "root", None, 4294967295, 10.0)]

    def test_blank_shares_outside_the_root_row(self) -> None:
        parsed = read(HEADER_P, "a|||1.0|10|1.0|", "b||1|1.0|10|1.0|")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (2, "RawShares", "is empty (only the root row has no shares)")
        ]
        assert [a.key for a in parsed.associations] == [("b", None)]

    @pytest.mark.parametrize(
        ("shares", "reason"),
        [
            ("9" * 5000, f"{'9' * 5000} does not fit Slurm's 32-bit shares"),
            (str(2**63), "9223372036854775808 does not fit Slurm's 32-bit shares"),
        ],
    )
    def test_shares_of_thousands_of_digits_are_rejected(self, shares: str, reason: str) -> None:
        # int() of 4,300 digits and more raised ValueError out of the import.
        parsed = read(HEADER_P, "a||1|1.0|10|1.0|", f" a|u1|{shares}|1.0|5|1.0|0.5")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [(3, "RawShares", reason)]

    @pytest.mark.parametrize(
        ("usage", "reason"),
        [
            ("1e308", "1e308 is over 2^63 - 1, the most a 64-bit count of usage holds"),
            (str(2**63), f"{2**63} is over 2^63 - 1, the most a 64-bit count of usage holds"),
            ("9" * 5000, f"{'9' * 40}… is not a usage (negative or not finite)"),
        ],
    )  # fmt: skip
    def test_usage_beyond_64_bits_is_rejected(self, usage: str, reason: str) -> None:
        # Stored, it made the tree's JSON fail ("Integer exceeds 64-bit range") on every read.
        parsed = read(HEADER_P, "a||1|1.0|10|1.0|", f" a|u1|1|1.0|{usage}|1.0|0.5")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [(3, "RawUsage", reason)]

    @pytest.mark.parametrize(
        ("usage", "reason"),
        [
            ("-5", "-5 is not a usage (negative or not finite)"),
            ("nan", "nan is not a usage (negative or not finite)"),
            ("inf", "inf is not a usage (negative or not finite)"),
            ("-inf", "-inf is not a usage (negative or not finite)"),
            ("lots", "'lots' is not a number"),
        ],
    )
    def test_bad_usage(self, usage: str, reason: str) -> None:
        parsed = read(
            HEADER_P, "a||1|1.0|10|1.0|", f" a|u1|1|1.0|{usage}|1.0|0.5", " a|u2|1|1|5|1|1"
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [(3, "RawUsage", reason)]
        assert [(a.key, a.usage) for a in parsed.associations] == [
            (("a", None), 10.0), (("a", "u2"), 5.0),
        ]  # fmt: skip

    def test_a_line_that_is_not_utf8(self) -> None:
        data = (
            HEADER_P.encode()
            + b"\na||1|1.0|10|1.0|\n a|\xe9ric|1|1.0|5|1.0|0.5\n a|u2|1|1.0|5|1.0|0.5\n"
        )
        parsed = read_sshare(data)
        assert parsed.rejected == [
            RejectedLine(
                3,
                "line",
                "is not UTF-8 (invalid continuation byte)",
                "b' a|\\xe9ric|1|1.0|5|1.0|0.5'",
            )
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "u2")]

    def test_a_tab_indent(self) -> None:
        parsed = read(
            HEADER_P, "a||1|1.0|10|1.0|", "\ta|u1|1|1.0|5|1.0|0.5", " a|u2|1|1.0|5|1.0|0.5"
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (3, "Account", "indented with a TAB; sshare indents with spaces")
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "u2")]

    def test_too_many_fields(self) -> None:
        parsed = read(
            HEADER_P, "a||1|1.0|10|1.0|", " a|u1|1|1.0|5|1.0|0.5|x", " a|u2|1|1.0|5|1.0|0.5"
        )
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (3, "line", "8 fields where the header has 7")
        ]
        assert [a.key for a in parsed.associations] == [("a", None), ("a", "u2")]

    def test_an_empty_account(self) -> None:
        parsed = read(HEADER_P, "a||1|1.0|10|1.0|", "|u1|1|1.0|5|1.0|0.5")
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (3, "Account", "is empty")
        ]

    def test_an_empty_file(self) -> None:
        parsed = read_sshare(b"\n  \n")
        assert (parsed.entries, parsed.rejected, parsed.notes) == ([], [], ["the file has no rows"])

    def test_an_aligned_file_without_a_header(self) -> None:
        parsed = read(*SMALL_ALIGNED_ROWS[:2])
        assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
            (1, "line", "no sshare header (Account User ...) above it"),
            (2, "line", "no sshare header (Account User ...) above it"),
        ]

    def test_the_rows_under_an_account_line_that_is_not_utf8(self) -> None:
        data = (
            HEADER_P.encode() + b"\nroot|||0.000000|30|1.000000|\n a||1|0.5|10|0.3|\n"
            b" b\xff||1|0.5|20|0.6|\n  c||1|1.0|20|1.0|\n"
        )
        parsed = read_sshare(data)
        assert ("c", None) not in [a.key for a in parsed.associations]
        assert [(r.line, r.field) for r in parsed.rejected] == [(4, "line"), (5, "Account")]

    def test_the_rows_under_a_tab_indented_account(self) -> None:
        parsed = read(
            HEADER_P,
            "root|||0.000000|30|1.000000|",
            " a||1|0.5|10|0.3|",
            "\tb||1|0.5|20|0.6|",
            "  c||1|1.0|20|1.0|",
        )
        assert [a.key for a in parsed.associations] == [("root", None), ("a", None)]
        assert [(r.line, r.field, r.reason) for r in parsed.rejected][1:] == [
            (5, "Account", "its account on line 4 was rejected")
        ]

    def test_the_rows_under_an_account_line_with_too_many_fields(self) -> None:
        parsed = read(
            HEADER_P,
            "root|||0.000000|30|1.000000|",
            " a||1|0.5|10|0.3|",
            " b||1|0.5|20|0.6||x",
            "  c||1|1.0|20|1.0|",
        )
        assert [a.key for a in parsed.associations] == [("root", None), ("a", None)]
        assert [(r.line, r.field, r.reason) for r in parsed.rejected][1:] == [
            (5, "Account", "its account on line 4 was rejected")
        ]

    def test_a_headerless_parsable2_file_of_account_rows_only(self) -> None:
        parsed = read(
            "root|||0.000000|30|1.000000|",
            " a||10|0.333333|10|0.333333|",
            " c||20|0.666667|20|0.666667|",
        )
        assert parsed.rejected == []
        assert parsed.columns == SHORT
        assert [a.key for a in parsed.associations] == [("root", None), ("a", None), ("c", None)]


class TestAlgorithm:
    @pytest.mark.parametrize(
        ("lines", "algorithm", "evidence"),
        [
            (SMALL_LONG_P, Algorithm.FAIR_TREE, "a LevelFS column"),
            (SMALL_CLASSIC_LONG_P, Algorithm.CLASSIC, "the long layout without LevelFS"),
            (
                [HEADER_P, " a||10|0.3|10|0.3|0.488580", "  a|u1|1|0.5|4|0.4|0.1"],
                Algorithm.CLASSIC,
                "a FairShare on account a (line 2)",
            ),
            (
                [HEADER_P, " a||10|0.3|10|0.3|", "  a|u1|1|0.5|4|0.4|0.1"],
                Algorithm.FAIR_TREE,
                "no FairShare on account a (line 2)",
            ),
            (
                [HEADER_P, "root|||1.000000|30|1.000000|0.500000"],
                Algorithm.CLASSIC,
                "the root row's NormShares 1.000000 (line 2)",
            ),
            (
                [HEADER_P, "root|||0.000000|30|1.000000|"],
                Algorithm.FAIR_TREE,
                "the root row's NormShares 0.000000 (line 2)",
            ),
            (SMALL_P, Algorithm.FAIR_TREE, "the root row's NormShares 0.000000 (line 2)"),
            (["Account|User|RawShares|RawUsage", "a||10|10", " a|u1|1|4"], None, ""),
        ],
    )
    def test_what_the_file_shows(
        self, lines: list[str], algorithm: Algorithm | None, evidence: str
    ) -> None:
        parsed = read(*lines)
        assert (parsed.algorithm, parsed.algorithm_evidence) == (algorithm, evidence)

    def test_the_classic_short_layout(self) -> None:
        rows = small_rows(Algorithm.CLASSIC)
        text = format_sshare(rows, columns_for(Algorithm.CLASSIC, long=False), parsable="P")
        parsed = read_sshare(text.encode())
        assert (parsed.algorithm, parsed.associations) == (Algorithm.CLASSIC, SMALL)


class TestStrayRows:
    """Found by the fuzz test: a stray row among an account's users cut the users after it off
    their account (the rows after a rejected account row go with it, a stray row heads none)."""

    HEADER = "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare"

    def users_of_astro(self, stray: str) -> list[str]:
        parsed = read(
            self.HEADER,
            "root||||100|1.000000|",
            " astro||1|1.000000|100|1.000000|",
            "  astro|ana|1|0.500000|60|0.600000|0.5",
            stray,
            "  astro|ben|1|0.500000|40|0.400000|0.6",
        )
        return [a.user or "" for a in parsed.associations if a.parent == "astro"]

    @pytest.mark.parametrize(
        "stray",
        [
            "\x00",  # above the first row's depth
            "\t",  # a TAB, and no User cell
            "junk",
        ],
    )
    def test_a_stray_row_leaves_the_next_users_with_their_account(self, stray: str) -> None:
        assert self.users_of_astro(stray) == ["ana", "ben"]
