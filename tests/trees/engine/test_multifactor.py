"""trees.engine.multifactor: Slurm 22.05's multifactor factors and integer job priority.

Expected values are worked by hand from slurm-multifactor-priority.md §A-§B (§E's example) and
priority_multifactor.c at slurm-22-05-11-1; each test states the arithmetic it checks.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from trees.engine.multifactor import (
    INFINITE,
    UINT32_MAX,
    Factors,
    MultifactorConfig,
    Partition,
    PriorityJob,
    Qos,
    age_factor,
    job_factors,
    job_priority,
    jobsize_factor,
    parse_tres_weights,
    partition_factor_max,
    priority_reachable,
    qos_priority_max,
    sprio_priority,
    sprio_priority_value,
)

NOW = 1_700_000_000
# §E: the weights, the partition `normal` (256 CPUs, PriorityJobFactor 5 of 10), QOS 20 of 100.
CONFIG = MultifactorConfig(
    weight_age=1000,
    weight_fairshare=10000,
    weight_jobsize=500,
    weight_partition=2000,
    weight_qos=3000,
    weight_assoc=0,
    weight_tres="CPU=1000",
)
NORMAL = Partition("normal", priority_job_factor=5, total_cpus=256, tres={"cpu": 256})
QOS = Qos("normal", 20)
JOB = PriorityJob(
    job_id=1234,
    user="alice",
    account="physics",
    partition="normal",
    qos="normal",
    min_nodes=4,
    cpu_cnt=64,
    accrue_time=NOW - 172800,
    submit_time=NOW - 172800,
    nice=100,
    tres={"cpu": 64},
    fs_factor=0.375,
)


def factors(
    job: PriorityJob = JOB,
    config: MultifactorConfig = CONFIG,
    partition: Partition | None = NORMAL,
    qos: Qos | None = QOS,
    *,
    nodes: int = 16,
    cpus: int = 512,
    max_part: int = 10,
    max_qos: int = 100,
) -> Factors:
    return job_factors(
        job,
        config,
        partition,
        qos,
        now=NOW,
        active_nodes=nodes,
        cluster_cpus=cpus,
        max_partition_factor=max_part,
        max_qos_priority=max_qos,
    )


class TestWorkedExample:
    def test_each_weighted_factor_is_the_reference_value(self) -> None:
        got = factors()
        assert got.age == pytest.approx(285.7142857, abs=1e-7)  # 172800/604800 × 1000
        assert got.fairshare == 3750.0  # 0.375 × 10000
        assert got.jobsize == 93.75  # (4/16 + 64/512)/2 × 500
        assert got.partition == 1000.0  # 5/10 × 2000
        assert got.qos == pytest.approx(600.0)  # 20/100 × 3000
        assert got.tres == {"cpu": 250.0}  # 64/256 × 1000
        assert (got.assoc, got.site, got.nice) == (0.0, 0, 100)

    def test_the_priority_is_5879(self) -> None:
        assert job_priority(factors()) == 5879  # 5879.4642857 truncated

    def test_sprio_recomputes_the_same_5879(self) -> None:
        assert sprio_priority_value(factors()) == pytest.approx(5879.4642857, abs=1e-7)
        assert sprio_priority(factors()) == 5879


class TestAge:
    def test_a_job_older_than_max_age_has_age_1(self) -> None:
        job = replace(JOB, accrue_time=NOW - 10 * 86400)
        assert age_factor(job, CONFIG, NOW) == 1.0
        assert factors(job).age == 1000.0

    def test_exactly_max_age_is_1(self) -> None:
        assert age_factor(replace(JOB, accrue_time=NOW - 604800), CONFIG, NOW) == 1.0

    def test_a_job_not_accruing_has_age_0(self) -> None:
        assert factors(replace(JOB, accrue_time=0)).age == 0.0

    def test_an_accrue_time_in_the_future_gives_0(self) -> None:
        assert age_factor(replace(JOB, accrue_time=NOW + 60), CONFIG, NOW) == 0.0

    def test_max_age_0_makes_every_accruing_job_1(self) -> None:
        config = replace(CONFIG, max_age=0)
        assert age_factor(replace(JOB, accrue_time=NOW), config, NOW) == 1.0

    def test_weight_0_leaves_the_factor_0(self) -> None:
        assert factors(config=replace(CONFIG, weight_age=0)).age == 0.0


class TestJobSize:
    def size(self, job: PriorityJob, config: MultifactorConfig, **kw: int) -> float:
        nodes, cpus = kw.get("nodes", 16), kw.get("cpus", 512)
        return jobsize_factor(job, config, NORMAL, active_nodes=nodes, cluster_cpus=cpus)

    def test_favor_large_averages_nodes_and_cpus(self) -> None:
        assert self.size(JOB, CONFIG) == 0.1875  # (4/16 + 64/512)/2

    def test_without_a_cpu_count_only_nodes_count(self) -> None:
        assert self.size(replace(JOB, cpu_cnt=0), CONFIG) == 0.25  # 4/16

    def test_favor_small(self) -> None:
        config = replace(CONFIG, favor_small=True)
        assert self.size(JOB, config) == 0.8125  # ((16-4)/16 + (512-64)/512)/2

    def test_favor_small_with_more_nodes_than_the_cluster_wraps_to_1(self) -> None:
        # 22.05: (uint32)(16 - 20) = 2^32 - 4, over 16 nodes: huge, clamped to 1.0.
        config = replace(CONFIG, favor_small=True)
        assert self.size(replace(JOB, min_nodes=20, cpu_cnt=0), config) == 1.0

    def test_favor_large_past_the_cluster_is_clamped_to_1(self) -> None:
        assert self.size(replace(JOB, min_nodes=40, cpu_cnt=2048), CONFIG) == 1.0

    def test_no_nodes_divides_by_zero_and_clamps(self) -> None:
        assert self.size(JOB, CONFIG, nodes=0) == 1.0  # 4/0 = inf, clamped

    def test_small_relative_to_time_uses_the_job_limit(self) -> None:
        config = replace(CONFIG, flags=frozenset({"SMALL_RELATIVE_TO_TIME"}))
        # max(4 × 512/16, 64) = 128 CPUs, / 60 minutes / 512 CPUs
        assert self.size(replace(JOB, time_limit=60), config) == 128 / 60 / 512

    def test_small_relative_to_time_falls_back_to_the_partition_max_time(self) -> None:
        config = replace(CONFIG, flags=frozenset({"SMALL_RELATIVE_TO_TIME"}))
        part = replace(NORMAL, max_time=1440)
        got = jobsize_factor(JOB, config, part, active_nodes=16, cluster_cpus=512)
        assert got == 128 / 1440 / 512

    def test_small_relative_to_time_with_an_unlimited_partition(self) -> None:
        config = replace(CONFIG, flags=frozenset({"SMALL_RELATIVE_TO_TIME"}))
        assert self.size(JOB, config) == 128 / INFINITE / 512

    def test_small_relative_to_time_favoring_small_jobs(self) -> None:
        config = replace(CONFIG, flags=frozenset({"SMALL_RELATIVE_TO_TIME"}), favor_small=True)
        assert self.size(replace(JOB, time_limit=1), config) == 0.75  # 1 - 128/1/512

    def test_a_short_wide_job_clamps_to_0_when_favoring_small(self) -> None:
        config = replace(CONFIG, flags=frozenset({"SMALL_RELATIVE_TO_TIME"}), favor_small=True)
        job = replace(JOB, cpu_cnt=1024, time_limit=1)  # 1 - 1024/1/512 = -1
        assert self.size(job, config) == 0.0


class TestNormalization:
    def test_the_partition_max_is_at_least_1(self) -> None:
        assert factors(max_part=0).partition == 5 / 1 * 2000
        assert partition_factor_max([]) == 1
        assert partition_factor_max([NORMAL, replace(NORMAL, priority_job_factor=10)]) == 10

    def test_a_partition_factor_of_0_gives_0(self) -> None:
        assert factors(partition=replace(NORMAL, priority_job_factor=0)).partition == 0.0

    def test_no_normal_part_uses_the_raw_factor(self) -> None:
        config = replace(CONFIG, flags=frozenset({"NO_NORMAL_PART"}))
        assert factors(config=config).partition == 5 * 2000

    def test_no_normal_qos_uses_the_raw_priority(self) -> None:
        config = replace(CONFIG, flags=frozenset({"NO_NORMAL_QOS"}))
        assert factors(config=config).qos == 20 * 3000

    def test_a_qos_max_of_0_leaves_the_factor_0(self) -> None:
        assert factors(max_qos=0).qos == 0.0
        assert qos_priority_max([QOS, Qos("high", 100)]) == 100

    def test_the_association_factor_is_priority_norm_or_raw(self) -> None:
        job = replace(JOB, assoc_priority_norm=0.5, assoc_priority=7)
        config = replace(CONFIG, weight_assoc=100)
        assert factors(job, config).assoc == 50.0
        raw = replace(config, flags=frozenset({"NO_NORMAL_ASSOC"}))
        assert factors(job, raw).assoc == 700.0

    def test_no_normal_tres_uses_the_raw_count(self) -> None:
        config = replace(CONFIG, flags=frozenset({"NO_NORMAL_TRES"}))
        assert factors(config=config).tres == {"cpu": 64 * 1000.0}

    def test_no_normal_all_sets_the_four(self) -> None:
        config = MultifactorConfig(flags=frozenset({"NO_NORMAL_ALL"}))
        assert config.flags == {
            "NO_NORMAL_ASSOC",
            "NO_NORMAL_PART",
            "NO_NORMAL_QOS",
            "NO_NORMAL_TRES",
        }

    def test_tres_the_partition_lacks_give_0(self) -> None:
        config = replace(CONFIG, weight_tres="cpu=1000,gres/gpu=500")
        job = replace(JOB, tres={"cpu": 64, "gres/gpu": 2})
        assert factors(job, config).tres == {"cpu": 250.0, "gres/gpu": 0.0}
        part = replace(NORMAL, tres={"cpu": 256, "gres/gpu": 8})
        assert factors(job, config, part).tres == {"cpu": 250.0, "gres/gpu": 125.0}


class TestPriority:
    def test_a_negative_nice_raises_the_priority(self) -> None:
        assert job_priority(factors(replace(JOB, nice=-1000))) == 6979  # 5979.46 + 1000

    def test_the_site_factor_adds_unweighted(self) -> None:
        assert job_priority(factors(replace(JOB, site_factor=121))) == 6000  # 5879.46 + 121

    def test_the_floor_is_1(self) -> None:
        assert job_priority(factors(replace(JOB, nice=100000))) == 1
        assert sprio_priority(factors(replace(JOB, nice=100000))) == 1

    def test_the_priority_is_capped_at_32_bits_but_sprio_is_not(self) -> None:
        config = replace(CONFIG, weight_fairshare=UINT32_MAX, weight_qos=UINT32_MAX)
        got = factors(replace(JOB, fs_factor=1.0), config, max_qos=20)
        assert job_priority(got) == UINT32_MAX
        expected = 285.7142857142857 + UINT32_MAX + 93.75 + 1000 + UINT32_MAX + 250 - 100
        assert sprio_priority(got) == math.trunc(expected)

    def test_just_below_the_cap_truncates(self) -> None:
        assert job_priority(Factors(fairshare=UINT32_MAX + 0.5)) == UINT32_MAX
        assert job_priority(Factors(fairshare=UINT32_MAX - 0.5)) == UINT32_MAX - 1

    def test_nan_takes_the_cap(self) -> None:
        assert job_priority(Factors(jobsize=math.nan)) == UINT32_MAX

    def test_a_direct_priority_replaces_every_factor(self) -> None:
        got = factors(replace(JOB, direct_priority=42))
        assert got == Factors(direct_priority=42)
        assert job_priority(got) == 42
        assert sprio_priority(got) == 42

    def test_a_direct_priority_of_0_is_not_honoured(self) -> None:
        assert job_priority(factors(replace(JOB, direct_priority=0))) == 5879

    def test_tres_enter_before_nice_in_slurmctld_and_last_in_sprio(self) -> None:
        got = Factors(age=3.8, qos=5.42, tres={"cpu": 8.78}, nice=2)
        # slurmctld: 3.8 + 5.42 + 8.78 = 18.0, - 2 = 16; sprio: 3.8 + 5.42 - 2 + 8.78 < 16.
        assert job_priority(got) == 16
        assert sprio_priority_value(got) == 15.999999999999998
        assert sprio_priority(got) == 15


class TestTresWeights:
    def test_types_are_case_insensitive_and_builtins_come_first(self) -> None:
        weights = parse_tres_weights("gres/GPU=3,CPU=2,billing=1e3")
        assert weights == {"cpu": 2.0, "billing": 1000.0, "gres/gpu": 3.0}
        assert list(weights) == ["cpu", "billing", "gres/gpu"]

    def test_a_unit_divides_by_its_multiple_of_the_base(self) -> None:
        assert parse_tres_weights("mem=1G") == {"mem": 1 / 1024}  # memory counts MB
        assert parse_tres_weights("mem=2T") == {"mem": 2 / 1024**2}
        assert parse_tres_weights("mem=5M") == {"mem": 5.0}  # the base unit: no change
        assert parse_tres_weights("cpu=1k") == {"cpu": 1 / 1024}

    def test_the_last_entry_for_a_tres_wins(self) -> None:
        assert parse_tres_weights("cpu=1,CPU=2") == {"cpu": 2.0}

    def test_the_config_keeps_the_string_and_the_weights(self) -> None:
        assert CONFIG.weight_tres == "CPU=1000"
        assert CONFIG.tres_weights == {"cpu": 1000.0}
        assert MultifactorConfig().tres_weights == {}

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("cpu", '"cpu" is an invalid TRES weight entry'),
            ("cpu=", '"cpu=" is an invalid TRES weight entry'),
            ("cpu=5x", "Invalid unit type 'x'. Possible options are 'KMGTP'"),
            ("cpu=abc", "Invalid unit type 'a'. Possible options are 'KMGTP'"),
            ("cpu=1e999", "Unable to convert"),
        ],
    )
    def test_bad_entries_are_refused(self, text: str, message: str) -> None:
        with pytest.raises(ValueError, match=message):
            parse_tres_weights(text)


class TestConfig:
    def test_fair_tree_is_on_unless_turned_off(self) -> None:
        assert MultifactorConfig().fair_tree
        assert not MultifactorConfig(flags=frozenset({"NO_FAIR_TREE"})).fair_tree
        assert not MultifactorConfig(flags=frozenset({"DEPTH_OBLIVIOUS"})).fair_tree

    def test_the_defaults_are_slurms(self) -> None:
        config = MultifactorConfig()
        assert (config.max_age, config.decay_half_life, config.calc_period) == (
            604800,
            604800,
            300,
        )
        assert (config.usage_reset_period, config.fs_dampening_factor) == ("NONE", 1)
        assert not config.favor_small
        assert config.weight_tres is None


class TestPriorityReachable:
    """Whether a reported priority is one the factors give at some moment (age from 0 to its
    weight): §E's job gives 5879 at NOW; with age 0 it is 5879 - 286 = 5593, at its cap 6593."""

    def reachable(self, reported: int, config: MultifactorConfig = CONFIG) -> bool:
        return priority_reachable(
            replace(JOB, reported_priority=reported), config, NORMAL, QOS,
            active_nodes=16, cluster_cpus=512, max_partition_factor=10, max_qos_priority=100,
        )  # fmt: skip

    @pytest.mark.parametrize(("reported", "reachable"), [
        (5879, True), (5593, True), (6593, True), (5592, False), (6594, False), (7777, False),
    ])  # fmt: skip
    def test_only_what_some_age_gives(self, reported, reachable):
        assert self.reachable(reported) is reachable

    def test_incr_only_keeps_a_higher_one_from_before(self):
        incr_only = replace(CONFIG, flags=frozenset({"INCR_ONLY"}))
        assert self.reachable(7777, incr_only)
        assert not self.reachable(5000, incr_only)

    def test_without_a_report_nothing_is_said(self):
        assert priority_reachable(
            JOB, CONFIG, NORMAL, QOS, active_nodes=16, cluster_cpus=512,
            max_partition_factor=10, max_qos_priority=100,
        )  # fmt: skip
