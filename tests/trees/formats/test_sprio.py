"""trees.formats.sprio: the text Slurm 22.05's sprio prints.

§E of slurm-multifactor-priority.md gives the default row, the `-w` line and the `-n` row, which
22.05 prints the same. Its `-l` row is master's; 22.05's `-l` format (src/sprio/sprio.c:163 at
slurm-22-05-11-1) is `%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N
%.20T`: no ACCOUNT (`%.8o`) after USER and no QOSNAME (`%.10n`) before QOS, so the row loses
`  physics` and `     normal` and keeps every other cell.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from trees.engine.multifactor import (
    Factors,
    MultifactorConfig,
    Partition,
    PriorityJob,
    Qos,
    job_factors,
)
from trees.formats.sprio import (
    LONG_FORMAT,
    LONG_NORMALIZED_FORMAT,
    UNABLE,
    Field,
    SprioError,
    SprioRow,
    cell,
    default_format,
    format_sprio,
    packed,
    parse_format,
    parse_job_ids,
    received,
    sprio_row,
)

NOW = 1_700_000_000
CONFIG = MultifactorConfig(
    weight_age=1000,
    weight_fairshare=10000,
    weight_jobsize=500,
    weight_partition=2000,
    weight_qos=3000,
    weight_tres="CPU=1000",
)
NORMAL = Partition("normal", priority_job_factor=5, total_cpus=256, tres={"cpu": 256})
JOB = PriorityJob(
    job_id=1234,
    user="alice",
    account="physics",
    partition="normal",
    qos="normal",
    min_nodes=4,
    cpu_cnt=64,
    accrue_time=NOW - 172800,
    nice=100,
    tres={"cpu": 64},
    fs_factor=0.375,
)

HEADER = (
    "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION"
    "        QOS                 TRES\n"
)
ROW = (
    "           1234 normal          5879          0        286       3750         94       1000"
    "        600              cpu=250\n"
)
WEIGHTS = (
    "        Weights                               1       1000      10000        500       2000"
    "       3000             CPU=1000\n"
)
NORM_HEADER = (
    "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  QOS       "
    " TRES                \n"
)
NORM_ROW = (
    "           1234 normal    0.00000136 0.2857143  0.3750000  0.1875000  0.5000000  0.2000000 "
    " cpu=0.25            \n"
)
LONG_HEADER = (
    "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE"
    "    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
)
LONG_ROW = (
    "           1234 normal       alice       5879          0        286          0       3750"
    "         94       1000        600         100              cpu=250\n"
)


def factors_for(job: PriorityJob, config: MultifactorConfig = CONFIG) -> Factors:
    return job_factors(
        job,
        config,
        NORMAL,
        Qos("normal", 20),
        now=NOW,
        active_nodes=16,
        cluster_cpus=512,
        max_partition_factor=10,
        max_qos_priority=100,
    )


def row_for(job: PriorityJob = JOB, config: MultifactorConfig = CONFIG) -> SprioRow:
    return sprio_row(job, factors_for(job, config))


class TestWorkedExample:
    def test_the_default_output(self) -> None:
        assert format_sprio([row_for()], CONFIG) == HEADER + ROW

    def test_the_weights_line(self) -> None:
        assert format_sprio([row_for()], CONFIG, weights=True) == HEADER + WEIGHTS

    def test_the_normalized_row(self) -> None:
        assert format_sprio([row_for()], CONFIG, normalized=True) == NORM_HEADER + NORM_ROW

    def test_the_long_row_has_22_05s_columns(self) -> None:
        assert format_sprio([row_for()], CONFIG, long=True) == LONG_HEADER + LONG_ROW

    def test_the_long_normalized_row(self) -> None:
        assert format_sprio([row_for()], CONFIG, long=True, normalized=True, header=False) == (
            "           1234 normal       alice 0.00000136 0.2857143  0.0000000  0.3750000 "
            " 0.1875000  0.5000000  0.2000000  cpu=0.25            \n"
        )


class TestFormats:
    def test_the_long_formats_are_22_05s(self) -> None:
        assert default_format(CONFIG, long=True) == LONG_FORMAT
        assert LONG_FORMAT == (
            "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
        )
        assert default_format(CONFIG, long=True, normalized=True) == LONG_NORMALIZED_FORMAT
        assert LONG_NORMALIZED_FORMAT == ("%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t")

    def test_columns_with_weight_0_are_left_out(self) -> None:
        config = MultifactorConfig(weight_fairshare=100)
        assert default_format(config) == "%.15i %9r %.10Y %.10S %.10F"
        assert default_format(config, normalized=True) == "%.15i %9r %10y %10f"

    def test_every_weight_gives_every_column(self) -> None:
        config = replace(CONFIG, weight_assoc=1)
        assert default_format(config, user=True) == (
            "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.20T"
        )

    def test_only_weight_0_columns_print_the_header_and_sums(self) -> None:
        config = MultifactorConfig(weight_fairshare=100)
        job = replace(JOB, nice=0)
        out = format_sprio([row_for(job, config)], config)
        assert out == (
            "          JOBID PARTITION   PRIORITY       SITE  FAIRSHARE\n"
            "           1234 normal            37          0         38\n"
        )  # 0.375 × 100 = 37.5: %.0f rounds the tie to even, the sum truncates

    def test_a_long_weights_line_without_tres_weights_prints_null(self) -> None:
        config = replace(CONFIG, weight_tres=None)
        out = format_sprio([], config, long=True, weights=True, header=False)
        assert out == (
            "        Weights                                        1       1000          0"
            "      10000        500       2000       3000                           (null)\n"
        )

    def test_normalized_weights_print_weights_and_a_blank_tres(self) -> None:
        out = format_sprio([], CONFIG, normalized=True, weights=True, header=False)
        assert out == (
            "        Weights                      1000       10000      500        2000      "
            " 3000                           \n"
        )

    def test_no_header(self) -> None:
        assert format_sprio([row_for()], CONFIG, header=False) == ROW


class TestRows:
    def test_rows_are_sorted_by_job_id_as_numbers(self) -> None:
        rows = [row_for(replace(JOB, job_id=job_id)) for job_id in (1000, 99, 250)]
        out = format_sprio(rows, CONFIG, header=False)
        assert [line.split()[0] for line in out.splitlines()] == ["99", "250", "1000"]

    def test_a_job_in_two_partitions_keeps_the_controllers_order(self) -> None:
        second = SprioRow(1234, "bigmem", "alice", row_for().factors)
        out = format_sprio([row_for(), second], CONFIG, header=False)
        assert [line.split()[1] for line in out.splitlines()] == ["normal", "bigmem"]

    def test_a_directly_set_priority(self) -> None:
        row = row_for(replace(JOB, direct_priority=1000))
        assert format_sprio([row], CONFIG, header=False) == (
            "           1234 normal          1000          0          0          0          0"
            "          0          0                     \n"
        )

    def test_a_directly_set_priority_normalized_prints_zeros_with_seven_places(self) -> None:
        row = row_for(replace(JOB, direct_priority=1000))
        assert format_sprio([row], CONFIG, normalized=True, header=False) == (
            "           1234 normal    1000.00000 0.0000000  0.0000000  0.0000000  0.0000000 "
            " 0.0000000                      \n"
        )

    def test_a_directly_set_priority_long_prints_nice_0(self) -> None:
        row = row_for(replace(JOB, direct_priority=1000))
        out = format_sprio([row], CONFIG, long=True, header=False)
        assert out.split() == ["1234", "normal", "alice", "1000", *["0"] * 8]

    def test_negative_nice_and_site(self) -> None:
        row = row_for(replace(JOB, nice=-50, site_factor=-7))
        assert format_sprio([row], CONFIG, long=True, header=False).split()[4::7] == [
            "-7",
            "-50",
        ]

    def test_the_priority_column_is_sprios_sum_without_the_cap(self) -> None:
        row = SprioRow(1, "p", "u", Factors(fairshare=5e9))
        assert format_sprio([row], CONFIG, header=False).split()[2] == "5000000000"

    def test_several_tres_in_controller_order(self) -> None:
        config = replace(CONFIG, weight_tres="gres/gpu=100,mem=1G,cpu=1000")
        part = replace(NORMAL, tres={"cpu": 256, "mem": 1024000, "gres/gpu": 8})
        job = replace(JOB, tres={"cpu": 64, "mem": 256000, "gres/gpu": 2})
        got = job_factors(
            job,
            config,
            part,
            None,
            now=NOW,
            active_nodes=16,
            cluster_cpus=512,
            max_partition_factor=10,
            max_qos_priority=100,
        )
        row = sprio_row(job, got)
        # mem: 0.25 × 1/1024 is not 0, so it is listed, as 0; the cell is cut at 20.
        assert format_sprio([row], config, header=False).endswith(" cpu=250,mem=0,gres/g\n")
        assert format_sprio([row], config, fmt="%T", header=False) == "cpu=250,mem=0,gres/gpu=25\n"
        assert format_sprio([row], config, fmt="%t", header=False) == (
            "cpu=0.25,mem=0.25,gres/gpu=0.25\n"
        )


class TestFilters:
    def rows(self) -> list[SprioRow]:
        bob = replace(JOB, job_id=77, user="bob")
        return [row_for(), row_for(bob), row_for(replace(JOB, job_id=5, partition="debug"))]

    def test_jobs(self) -> None:
        out = format_sprio(self.rows(), CONFIG, jobs="77,1234", header=False)
        assert [line.split()[0] for line in out.splitlines()] == ["77", "1234"]

    def test_no_matching_job_prints_only_a_message(self) -> None:
        assert format_sprio(self.rows(), CONFIG, jobs="9") == UNABLE
        assert format_sprio(self.rows(), CONFIG, jobs="") == UNABLE

    def test_users_add_the_user_column(self) -> None:
        out = format_sprio(self.rows(), CONFIG, users="bob,carol")
        assert out.splitlines()[0].startswith("          JOBID PARTITION     USER   PRIORITY")
        assert out.splitlines()[1].startswith("             77 normal         bob ")
        assert len(out.splitlines()) == 2

    def test_no_matching_user_prints_the_header(self) -> None:
        out = format_sprio(self.rows(), CONFIG, users="carol")
        assert out.count("\n") == 1
        assert "USER" in out

    def test_partitions(self) -> None:
        out = format_sprio(self.rows(), CONFIG, partitions="debug", header=False)
        assert out.split()[:2] == ["5", "debug"]

    def test_job_ids(self) -> None:
        assert parse_job_ids("12,,34") == [12, 34]
        assert parse_job_ids("100+2") == [102]  # a HetJob component
        assert parse_job_ids(" +7") == [7]  # strtol takes blanks and a sign
        assert parse_job_ids("0000000000000000000000042") == [42]

    @pytest.mark.parametrize(
        "text", ["abc", "0", "-5", "12x", "123_4", "2147483648", "1+x", "9" * 5000]
    )
    def test_bad_job_ids_stop_sprio(self, text: str) -> None:
        with pytest.raises(SprioError, match=re.escape(f"Invalid job id: {text}")):
            parse_job_ids(text)


class TestErrors:
    def test_priority_basic_is_refused(self) -> None:
        config = replace(CONFIG, priority_type="priority/basic")
        with pytest.raises(SprioError, match=r"\(priority/basic\)"):
            format_sprio([], config)

    def test_long_and_a_format_are_exclusive(self) -> None:
        with pytest.raises(SprioError, match="mutually exclusive"):
            format_sprio([], CONFIG, long=True, fmt="%i")


class TestFieldPrinter:
    def test_right_justified_text_is_cut_from_the_left_end(self) -> None:
        assert cell("verylongname", 8, True) == "verylong"
        assert cell("bob", 8, True) == "     bob"

    def test_left_justified_text_is_cut_and_padded(self) -> None:
        assert cell("partition_one", 9, False) == "partition"
        assert cell("p", 9, False) == "p        "

    def test_width_0_prints_it_whole(self) -> None:
        assert cell("anything", 0, True) == "anything"

    def test_a_format_with_a_prefix_and_suffixes(self) -> None:
        assert parse_format("<%.5i|%r%%y>") == (
            "<",
            [Field("i", 5, True, "|"), Field("r", 0, False, ""), Field("y", 0, False, ">")],
        )
        out = format_sprio([row_for()], CONFIG, fmt="<%.5i|%r%Z %Y>", header=False)
        assert out == "< 1234|normal5879>\n"  # %Z is unknown: dropped with its text

    def test_a_format_without_fields_prints_its_text(self) -> None:
        assert format_sprio([row_for()], CONFIG, fmt="text") == "text\ntext\n"


class TestTransport:
    def test_doubles_go_through_packdouble(self) -> None:
        assert packed(0.1) == (0.1 * 1e6) / 1e6
        got = received(Factors(age=285.7142857142857, tres={"cpu": 250.0}))
        assert got.age == packed(285.7142857142857)
        assert got.tres == {"cpu": 250.0}
