"""trees.downloads: CSV cells a spreadsheet shows and never runs; a download's file name that
cannot add to its Content-Disposition header."""

import csv
import io
from email.message import Message

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.downloads import CsvWriter, csv_cell, download_header

HYPERLINK = '=HYPERLINK("http://evil.example","x")'


def filename_of(header: str) -> str:
    """The file name a mail-style parser (as a browser's) reads from the header."""
    message = Message()
    message["Content-Disposition"] = header
    name = message.get_filename()
    assert name is not None, header
    return name


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_text_that_starts_like_a_formula_gets_a_leading_quote(start: str) -> None:
    assert csv_cell(f"{start}1+1") == f"'{start}1+1"


def test_other_text_and_every_number_stay_as_they_are() -> None:
    assert csv_cell("physics") == "physics"
    assert csv_cell("a=b") == "a=b"  # only the first character makes a formula
    assert csv_cell("") == ""
    assert csv_cell(" =1") == " =1"
    assert csv_cell(-0.5) == -0.5  # a negative number is a number
    assert csv_cell(-3) == -3
    assert csv_cell(None) is None


def test_a_number_written_as_text_is_text() -> None:
    # The writer cannot tell "-0.5" a caller formatted from a name: numbers go in as numbers.
    assert csv_cell("-0.5") == "'-0.5"


def test_the_writer_writes_what_a_spreadsheet_reads_as_text() -> None:
    out = io.StringIO()
    writer = CsvWriter(out, lineterminator="\n")
    written = writer.writerow(["top", HYPERLINK, -0.5, 3, "@SUM(A1:A9)", "cond-matter"])
    assert written == len(out.getvalue())  # the stream's answer, for streamed responses
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["top", "'" + HYPERLINK, "-0.5", "3", "'@SUM(A1:A9)", "cond-matter"]
    ]


def test_a_name_that_closes_the_quotes_stays_inside_the_file_name() -> None:
    header = download_header("hpc", 'x";filename=evil.bat;x="', "trends-7d", extension="csv")
    assert header == 'attachment; filename="hpc-x_filename_evil.bat_x-trends-7d.csv"'
    assert filename_of(header) == "hpc-x_filename_evil.bat_x-trends-7d.csv"


def test_letters_of_any_script_are_kept_with_rfc_6266_s_filename_star() -> None:
    header = download_header("hpc", "Müller", extension="csv")
    assert header == "attachment; filename*=utf-8''hpc-M%C3%BCller.csv"
    assert filename_of(header) == "hpc-Müller.csv"


def test_inline_files_and_names_with_nothing_safe_left() -> None:
    assert download_header("whitepaper", "pbsfs", extension="txt", inline=True) == (
        'inline; filename="whitepaper-pbsfs.txt"'
    )
    assert download_header("resource_group") == 'attachment; filename="resource_group"'
    assert download_header('";', "..", extension="csv") == 'attachment; filename="download.csv"'
    assert download_header("../../etc/passwd") == 'attachment; filename="etc_passwd"'


def test_a_long_name_is_cut_and_keeps_its_extension() -> None:
    name = filename_of(download_header("a" * 1000, extension="csv"))
    assert name == "a" * 120 + ".csv"


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_no_name_adds_a_parameter_or_a_line(parts: list[str]) -> None:
    header = download_header(*parts, extension="csv")
    assert not set(header) & {"\r", "\n"}
    disposition, parameter = header.split("; ")  # one parameter, whatever the name
    assert disposition == "attachment"
    assert parameter.startswith(('filename="', "filename*=utf-8''"))
    name = filename_of(header)
    assert name.endswith(".csv")
    assert not set(name) & set('"\\/;:%*?<>|\x00')
