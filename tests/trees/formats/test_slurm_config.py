"""trees.formats.slurm_config: priority settings, partitions and QOS from Slurm's own output.

The fixtures are written here in the layout Slurm 22.05 prints (src/api/config_info.c
`%-23s = %s` in slurm_ctl_conf_2_key_pairs' order, src/api/partition_info.c, sacctmgr's
print_fields), with made-up values for a small cluster.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.multifactor import INFINITE, NO_NORMAL, MultifactorConfig, Partition, Qos
from trees.formats.sched_config import ConfigProblem
from trees.formats.slurm_config import (
    NONE_FOUND,
    SlurmConfigs,
    parse_partition_tres,
    parse_priority_flags,
    parse_slurm_config,
    slurm_configs_combined,
    slurm_seconds,
)

SHOW_CONFIG = """\
Configuration data as of 2024-03-11T09:41:07
AccountingStorageBackupHost = (null)
AccountingStorageEnforce = associations,limits,qos,safe
AccountingStorageHost   = dbd01
AccountingStorageExternalHost = (null)
AccountingStorageParameters = (null)
AccountingStoragePort   = 6819
AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu
AccountingStorageType   = accounting_storage/slurmdbd
AccountingStorageUser   = N/A
ClusterName             = hydra
EnforcePartLimits       = ALL
FairShareDampeningFactor = 1
MaxJobCount             = 10000
PreemptMode             = OFF
PreemptType             = preempt/none
PrEpParameters          = (null)
PrEpPlugins             = prep/script
PriorityParameters      = (null)
PrioritySiteFactorParameters = (null)
PrioritySiteFactorPlugin = (null)
PriorityDecayHalfLife   = 14-00:00:00
PriorityCalcPeriod      = 00:05:00
PriorityFavorSmall      = No
PriorityFlags           = SMALL_RELATIVE_TO_TIME,CALCULATE_RUNNING
PriorityMaxAge          = 7-00:00:00
PriorityUsageResetPeriod = NONE
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightAssoc     = 0
PriorityWeightFairShare = 10000
PriorityWeightJobSize   = 500
PriorityWeightPartition = 2000
PriorityWeightQOS       = 3000
PriorityWeightTRES      = CPU=1000,Mem=0.25G,GRES/gpu=2000
PrivateData             = none
SchedulerParameters     = bf_continue,bf_window=4320,default_queue_depth=500
SchedulerType           = sched/backfill
SLURM_VERSION           = 22.05.11

Cgroup Support Configuration:
AllowedKmemSpace        = (null)
CgroupAutomount         = yes
CgroupMountpoint        = /sys/fs/cgroup
ConstrainCores          = yes

MPI Plugins Configuration:
PMIxCliTmpDirBase       = (null)
PMIxCollFence           = (null)

Slurmctld(primary) at head01 is UP
"""

SHOW_PARTITION = """\
PartitionName=normal
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=7-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=cn[01-08]
   PriorityJobFactor=5 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=256 TotalNodes=8 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=256,mem=1000G,node=8,billing=256

PartitionName=gpu
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=NO QoS=gpuqos
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=gn[01-02]
   PriorityJobFactor=10 PriorityTier=2 RootOnly=NO ReqResv=NO OverSubscribe=NO
   State=UP TotalCPUs=128 TotalNodes=2 SelectTypeParameters=NONE
   TRES=cpu=128,mem=2.50T,node=2,billing=128,gres/gpu=16

"""

QOS_P = """\
Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|
normal|20|00:00:00|||cluster|||1.000000|
high|100|00:00:00|normal||cluster|||1.000000|
scavenger||00:00:00|||cluster|||0.500000|
"""


class TestShowConfig:
    def test_it_reads_the_priority_keys(self) -> None:
        got = parse_slurm_config(SHOW_CONFIG)
        assert got.config == MultifactorConfig(
            priority_type="priority/multifactor",
            weight_age=1000,
            weight_assoc=0,
            weight_fairshare=10000,
            weight_jobsize=500,
            weight_partition=2000,
            weight_qos=3000,
            weight_tres="CPU=1000,Mem=0.25G,GRES/gpu=2000",
            max_age=604800,
            favor_small=False,
            flags=frozenset({"SMALL_RELATIVE_TO_TIME", "CALCULATE_RUNNING"}),
            decay_half_life=14 * 86400,
            calc_period=300,
            usage_reset_period="NONE",
            fs_dampening_factor=1,
            enforce_limits=True,
        )
        assert got.config.tres_weights == {"cpu": 1000.0, "mem": 0.25 / 1024, "gres/gpu": 2000.0}
        assert got.problems == []
        assert got.warnings == []

    def test_it_counts_the_lines_and_lists_the_other_keys(self) -> None:
        got = parse_slurm_config(SHOW_CONFIG)
        assert got.lines == 51
        assert got.kinds == ["config"]
        assert len(got.ignored) == 28  # 22 of the main section, 4 cgroup, 2 MPI
        assert got.ignored[:2] == ["AccountingStorageBackupHost", "AccountingStorageHost"]
        assert "PriorityParameters" in got.ignored
        assert "CgroupMountpoint" in got.ignored
        assert got.found["PriorityWeightAge"] == 29
        assert got.found["AccountingStorageEnforce"] == 3

    def test_a_grep_excerpt_without_the_header(self) -> None:
        text = "PriorityWeightAge       = 5\nPriorityFavorSmall      = Yes\n"
        got = parse_slurm_config(text)
        assert (got.config.weight_age, got.config.favor_small) == (5, True)
        assert got.problems == []

    def test_missing_keys_keep_slurms_defaults(self) -> None:
        got = parse_slurm_config("ClusterName             = hydra\n")
        assert got.config == MultifactorConfig()
        assert got.ignored == ["ClusterName"]

    def test_the_default_flags_print_empty_and_a_null_tres_weight(self) -> None:
        text = "PriorityFlags           = \nPriorityWeightTRES      = (null)\n"
        got = parse_slurm_config(text)
        assert got.config.flags == frozenset()
        assert got.config.weight_tres is None
        assert got.config.fair_tree
        assert got.problems == []

    def test_depth_oblivious_turns_fair_tree_off(self) -> None:
        got = parse_slurm_config("PriorityFlags           = DEPTH_OBLIVIOUS,NO_FAIR_TREE\n")
        assert not got.config.fair_tree

    def test_no_normal_all_is_read_as_all_four_with_a_warning(self) -> None:
        got = parse_slurm_config("PriorityFlags           = INCR_ONLY,NO_NORMAL_ALL\n")
        assert {"INCR_ONLY", "NO_NORMAL_QOS", "NO_NORMAL_TRES"} <= got.config.flags
        assert [(w.line, w.key) for w in got.warnings] == [(1, "PriorityFlags")]
        assert "any one NO_NORMAL_* flag" in got.warnings[0].reason

    def test_enforce_without_limits(self) -> None:
        got = parse_slurm_config("AccountingStorageEnforce = associations,qos\n")
        assert not got.config.enforce_limits

    def test_a_basic_plugin_is_kept_for_sprio_to_refuse(self) -> None:
        got = parse_slurm_config("PriorityType            = priority/basic\n")
        assert got.config.priority_type == "priority/basic"


class TestBadValues:
    BAD = (
        "PriorityWeightAge       = lots\n"  # 1
        "PriorityWeightQOS       = 4294967296\n"  # 2
        "PriorityMaxAge          = soon\n"  # 3
        "PriorityFavorSmall      = maybe\n"  # 4
        "PriorityWeightTRES      = cpu=5x\n"  # 5
        "PriorityFlags           = BOGUS,NO_FAIR_TREE\n"  # 6
        "PriorityUsageResetPeriod = UNKNOWN\n"  # 7
        "PriorityCalcPeriod      = 00:00:30\n"  # 8
        "FairShareDampeningFactor = 70000\n"  # 9
        "PriorityWeightFairShare = 10\n"  # 10
    )

    def test_each_bad_value_is_a_problem_on_its_line(self) -> None:
        got = parse_slurm_config(self.BAD)
        assert [(p.line, p.key) for p in got.problems] == [
            (1, "PriorityWeightAge"),
            (2, "PriorityWeightQOS"),
            (3, "PriorityMaxAge"),
            (4, "PriorityFavorSmall"),
            (5, "PriorityWeightTRES"),
            (6, "PriorityFlags"),
            (7, "PriorityUsageResetPeriod"),
            (8, "PriorityCalcPeriod"),
            (9, "FairShareDampeningFactor"),
        ]
        assert "Invalid unit type 'x'" in got.problems[4].reason
        assert "BOGUS" in got.problems[5].reason

    def test_the_good_values_and_the_known_flags_are_kept(self) -> None:
        got = parse_slurm_config(self.BAD)
        assert got.config.weight_fairshare == 10
        assert got.config.flags == {"NO_FAIR_TREE"}
        assert (got.config.weight_age, got.config.max_age, got.config.weight_tres) == (
            0,
            604800,
            None,
        )

    def test_an_empty_file_holds_none_of_them(self) -> None:
        got = parse_slurm_config("")
        assert got.problems == [ConfigProblem(0, "", NONE_FOUND)]
        assert got.lines == 0
        assert got.config == MultifactorConfig()

    def test_another_file_holds_none_of_them(self) -> None:
        got = parse_slurm_config("#!/bin/bash\necho hello\n\n")
        assert got.problems == [ConfigProblem(0, "", NONE_FOUND)]
        assert got.lines == 3


class TestPartitions:
    def test_it_reads_each_record(self) -> None:
        got = parse_slurm_config(SHOW_PARTITION)
        assert got.partitions == [
            Partition(
                "normal",
                priority_job_factor=5,
                priority_tier=1,
                total_cpus=256,
                total_nodes=8,
                tres={"cpu": 256, "mem": 1024000, "node": 8, "billing": 256},
                max_time=7 * 1440,
                qos=None,
                state="UP",
            ),
            Partition(
                "gpu",
                priority_job_factor=10,
                priority_tier=2,
                total_cpus=128,
                total_nodes=2,
                tres={"cpu": 128, "mem": 2621440, "node": 2, "billing": 128, "gres/gpu": 16},
                max_time=None,
                qos="gpuqos",
            ),
        ]
        assert got.kinds == ["partition"]
        assert got.problems == []

    def test_one_line_records(self) -> None:
        text = (
            "PartitionName=a PriorityJobFactor=3 MaxTime=01:00:00 State=UP TotalCPUs=4\n"
            "PartitionName=b PriorityJobFactor=1 MaxTime=2-00:00:00 State=DOWN\n"
        )
        got = parse_slurm_config(text)
        assert [(p.name, p.priority_job_factor, p.max_time) for p in got.partitions] == [
            ("a", 3, 60),
            ("b", 1, 2880),
        ]
        assert got.partitions[1].state == "DOWN"

    def test_bad_partition_values(self) -> None:
        text = (
            "PartitionName=a\n"
            "   PriorityJobFactor=high PriorityTier=70000\n"
            "   MaxTime=forever TotalCPUs=-1\n"
            "   TRES=cpu=lots\n"
            "PartitionName=\n"
            "   TotalCPUs=4\n"
        )
        got = parse_slurm_config(text)
        assert [(p.line, p.key) for p in got.problems] == [
            (2, "PriorityJobFactor"),
            (2, "PriorityTier"),
            (3, "MaxTime"),
            (3, "TotalCPUs"),
            (4, "TRES"),
            (5, "PartitionName"),
        ]
        assert got.partitions == [Partition("a")]

    def test_a_repeated_partition_replaces_the_first(self) -> None:
        text = "PartitionName=a PriorityJobFactor=3\nPartitionName=a PriorityJobFactor=4\n"
        assert parse_slurm_config(text).partitions == [Partition("a", priority_job_factor=4)]

    def test_tres_counts(self) -> None:
        assert parse_partition_tres("cpu=4,mem=512M,bb/cray=1G,fs/disk=2K") == (
            {"cpu": 4, "mem": 512, "bb/cray": 1024, "fs/disk": 2048},
            None,
        )
        assert parse_partition_tres("(null)") == ({}, None)
        assert parse_partition_tres("cpu")[1] == "'cpu' is not name=count"


class TestQos:
    def test_parsable_with_a_trailing_bar(self) -> None:
        got = parse_slurm_config(QOS_P)
        assert got.qos == [Qos("normal", 20), Qos("high", 100), Qos("scavenger", 0)]
        assert got.kinds == ["qos"]
        assert got.problems == []

    def test_parsable_without_a_trailing_bar(self) -> None:
        text = "Priority|Name\n5|low\n"
        assert parse_slurm_config(text).qos == [Qos("low", 5)]

    def test_bad_rows(self) -> None:
        text = "Name|Priority|GraceTime\nnormal|x|00:00:00\n|3|0\nshort|4\nlow|5|0\n"
        got = parse_slurm_config(text)
        assert [(p.line, p.key) for p in got.problems] == [
            (2, "Priority"),
            (3, "Name"),
            (4, "qos"),
        ]
        assert got.problems[2].reason == "2 fields where the header has 3"
        assert got.qos == [Qos("low", 5)]

    def test_a_line_without_bars_ends_the_table(self) -> None:
        got = parse_slurm_config("Name|Priority\nlow|5\n\nother|7\n")
        assert got.qos == [Qos("low", 5)]


class TestPastedTogether:
    def test_all_three_in_one_file(self) -> None:
        got = parse_slurm_config(SHOW_CONFIG + "\n" + SHOW_PARTITION + QOS_P)
        assert got.kinds == ["config", "partition", "qos"]
        assert got.config.weight_qos == 3000
        assert [p.name for p in got.partitions] == ["normal", "gpu"]
        assert [q.name for q in got.qos] == ["normal", "high", "scavenger"]
        assert got.problems == []
        assert got.lines == 51 + 1 + 22 + 4


class TestTimes:
    @pytest.mark.parametrize(
        ("text", "seconds"),
        [
            ("7-00:00:00", 604800),
            ("00:05:00", 300),
            ("1-02:03:04", 93784),
            ("1-2", 93600),
            ("10", 600),
            ("10:30", 630),
            ("UNLIMITED", INFINITE),
            ("soon", None),
            ("", None),
        ],
    )
    def test_slurm_times(self, text: str, seconds: int | None) -> None:
        assert slurm_seconds(text) == seconds

    def test_flags(self) -> None:
        assert parse_priority_flags("FAIR_TREE") == (frozenset(), [])
        assert parse_priority_flags("incr_only, max_tres") == (
            frozenset({"INCR_ONLY", "MAX_TRES"}),
            [],
        )


class TestNeverRaises:
    def test_huge_numbers_are_problems(self) -> None:
        nines = "9" * 5000
        text = (
            f"PriorityWeightAge       = {nines}\n"
            f"PriorityMaxAge          = {nines}\n"
            f"PartitionName=a TotalCPUs={nines} MaxTime={nines} TRES=cpu={nines}\n"
        )
        got = parse_slurm_config(text)
        assert [(p.line, p.key) for p in got.problems] == [
            (1, "PriorityWeightAge"),
            (2, "PriorityMaxAge"),
            (3, "TotalCPUs"),
            (3, "MaxTime"),
            (3, "TRES"),
        ]

    def test_a_time_past_a_uint32_is_a_problem(self) -> None:
        got = parse_slurm_config("PriorityDecayHalfLife   = 999999-00:00:00\n")
        assert got.problems[0].reason.endswith("(4294967295 seconds)")

    @settings(max_examples=300, deadline=None)
    @given(st.text())
    def test_any_text(self, text: str) -> None:
        got = parse_slurm_config(text)
        assert got.lines == text.count("\n") + (0 if text.endswith("\n") or not text else 1)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 80), st.text(max_size=30)), max_size=8))
    def test_the_samples_with_lines_replaced(self, edits: list[tuple[int, str]]) -> None:
        lines = (SHOW_CONFIG + SHOW_PARTITION + QOS_P).splitlines()
        for at, junk in edits:
            lines[at % len(lines)] = junk
        text = "\n".join(lines)
        got = parse_slurm_config(text)
        assert got.lines == text.count("\n") + (0 if text.endswith("\n") else 1)


class TestWithSlurmConf:
    """slurm.conf beside scontrol's output: its PriorityFlags, nothing else (22.05 prints
    NO_NORMAL_ALL for NO_NORMAL_QOS alone, a capture of a real 22.05.8)."""

    SHOWN = "Configuration data as of 2026-12-02T01:23:45\n" + (
        "PriorityFlags           = NO_NORMAL_ALL\nPriorityWeightAge       = 1000\n"
        "PriorityWeightQOS       = 7\nPriorityType            = priority/multifactor\n"
    )
    PARTITIONS = "PartitionName=batch\n   PriorityJobFactor=10 PriorityTier=1\n   TotalCPUs=48\n"
    CONF = (
        "ClusterName=oracle\nPriorityFlags=NO_NORMAL_QOS\nPriorityWeightAge=1000\n"
        "PriorityWeightQOS=7\nPartitionName=batch Nodes=n[1-4] PriorityJobFactor=99\n"
    )

    def combined(self, *files: tuple[str, str]) -> SlurmConfigs:
        return slurm_configs_combined([(name, parse_slurm_config(text)) for name, text in files])

    def test_slurm_conf_is_its_own_kind_and_gives_no_partition(self):
        parsed = parse_slurm_config(self.CONF)
        assert parsed.kinds == ["slurm.conf"]
        assert parsed.partitions == []
        assert parsed.config.flags == frozenset({"NO_NORMAL_QOS"})
        assert parsed.found["PriorityFlags"] == 2

    @pytest.mark.parametrize("conf_first", [True, False])
    def test_its_flags_replace_no_normal_all_in_any_order(self, conf_first):
        files = [("show", self.SHOWN), ("part", self.PARTITIONS), ("slurm.conf", self.CONF)]
        if conf_first:
            files.reverse()
        combined = self.combined(*files)
        assert combined.parsed.config.flags == frozenset({"NO_NORMAL_QOS"})
        assert combined.parsed.config.weight_age == 1000
        assert [p.name for p in combined.parsed.partitions] == ["batch"]
        assert combined.parsed.partitions[0].priority_job_factor == 10  # scontrol's, not 99
        assert combined.parsed.partitions[0].total_cpus == 48
        assert combined.notes == []  # NO_NORMAL_ALL is what 22.05 prints for it

    def test_flags_that_disagree_are_noted_and_slurm_conf_s_taken(self):
        conf = self.CONF.replace("NO_NORMAL_QOS", "ACCRUE_ALWAYS")
        combined = self.combined(("show", self.SHOWN), ("slurm.conf", conf))
        assert combined.parsed.config.flags == frozenset({"ACCRUE_ALWAYS"})
        assert combined.notes == [
            "slurm.conf:2: PriorityFlags: slurm.conf says ACCRUE_ALWAYS, show says"
            " NO_NORMAL_ASSOC,NO_NORMAL_PART,NO_NORMAL_QOS,NO_NORMAL_TRES: slurm.conf's are taken"
        ]

    def test_other_values_that_disagree_keep_scontrol_s(self):
        conf = self.CONF.replace("PriorityWeightAge=1000", "PriorityWeightAge=5")
        combined = self.combined(("show", self.SHOWN), ("slurm.conf", conf))
        assert combined.parsed.config.weight_age == 1000
        assert combined.notes == [
            "slurm.conf:3: PriorityWeightAge: slurm.conf says 5, show says 1000: scontrol show"
            " config's (what slurmctld runs with) is kept"
        ]

    def test_alone_it_gives_only_its_flags(self):
        combined = self.combined(("slurm.conf", self.CONF))
        assert combined.conf_flags == frozenset({"NO_NORMAL_QOS"})
        assert "config" not in combined.parsed.kinds

    def test_an_include_without_the_flags_is_noted(self):
        conf = "ClusterName=x\nInclude /etc/slurm/prio.conf\n"
        combined = self.combined(("show", self.SHOWN), ("slurm.conf", conf))
        assert combined.parsed.config.flags == frozenset(NO_NORMAL)  # scontrol's kept
        assert combined.notes == [
            "slurm.conf:2: PriorityFlags: not in this file, and its Include lines are not"
            " followed: scontrol show config's are kept"
        ]

    def test_unknown_keys_and_includes_are_warnings(self):
        parsed = parse_slurm_config("ClusterName=x\nFrobnicate=yes\ninclude a.conf\n")
        assert [(w.line, w.key) for w in parsed.warnings] == [(2, "Frobnicate"), (3, "Include")]
        assert parsed.problems == []
