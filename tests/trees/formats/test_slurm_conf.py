"""trees.formats.slurm_conf: slurm.conf read as Slurm 22.05's parse_config.c reads it, and told
apart from the other files import_slurm_config takes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.formats.slurm_conf import SLURM_CONF_KEYS, looks_like_slurm_conf, read_slurm_conf

CONF = """\
# slurm.conf of a small site
ClusterName=hydra
SlurmctldHost=ctl01
PriorityType=priority/multifactor
PriorityFlags=NO_NORMAL_QOS,SMALL_RELATIVE_TO_TIME  # as configured
PriorityWeightAge = 1000
PriorityWeightTRES="CPU=1000,Mem=0.25G"
PriorityMaxAge=7-0 PriorityWeightQOS=7
NodeName=n[01-16] CPUs=64 RealMemory=256000 PriorityWeightAge=5
PartitionName=batch Nodes=n[01-16] Default=YES MaxTime=INFINITE PriorityJobFactor=10
"""


def test_it_reads_the_top_level_settings_with_their_lines():
    conf = read_slurm_conf(CONF)
    assert conf.settings["ClusterName"] == (2, "hydra")
    assert conf.settings["PriorityFlags"] == (5, "NO_NORMAL_QOS,SMALL_RELATIVE_TO_TIME")
    assert conf.settings["PriorityWeightAge"] == (6, "1000")  # not the NodeName line's
    assert conf.settings["PriorityWeightTRES"] == (7, "CPU=1000,Mem=0.25G")  # quotes off
    assert conf.settings["PriorityMaxAge"] == (8, "7-0")
    assert conf.settings["PriorityWeightQOS"] == (8, "7")  # two pairs on one line
    assert conf.records == {"NodeName": 1, "PartitionName": 1}
    assert (conf.unknown, conf.includes, conf.repeated) == ([], [], [])


def test_keys_are_matched_in_any_case():
    conf = read_slurm_conf("priorityflags=ACCRUE_ALWAYS\nPRIORITYWEIGHTFAIRSHARE=10\n")
    assert conf.settings["PriorityFlags"] == (1, "ACCRUE_ALWAYS")
    assert conf.settings["PriorityWeightFairshare"] == (2, "10")


def test_comments_escapes_and_continuations():
    text = "PriorityFlags=MAX_TRES\\\n,INCR_ONLY\nComment=a\\#b # c\nPriorityWeightQOS=\\\n  9\n"
    conf = read_slurm_conf(text)
    assert conf.settings["PriorityFlags"] == (1, "MAX_TRES,INCR_ONLY")
    assert conf.settings["PriorityWeightQOS"] == (4, "9")
    assert [(item.line, item.key, item.text) for item in conf.unknown] == [(3, "Comment", "a#b")]


def test_unknown_keys_are_kept_and_reported_not_fatal():
    conf = read_slurm_conf("ClusterName=x\nPriorityWieghtAge=100\nPriorityWeightAge=50\n")
    assert [(item.line, item.key, item.text) for item in conf.unknown] == [
        (2, "PriorityWieghtAge", "100")
    ]
    assert conf.settings["PriorityWeightAge"] == (3, "50")


def test_an_include_is_reported_not_followed():
    conf = read_slurm_conf("ClusterName=x\ninclude /etc/slurm/priority.conf\n")
    assert [(item.line, item.text) for item in conf.includes] == [(2, "/etc/slurm/priority.conf")]
    assert "PriorityFlags" not in conf.settings


def test_a_key_set_twice_keeps_the_last():
    conf = read_slurm_conf("PriorityWeightAge=1\nPriorityWeightAge=2\n")
    assert conf.settings["PriorityWeightAge"] == (2, "2")
    assert [(item.line, item.key) for item in conf.repeated] == [(2, "PriorityWeightAge")]


SHOW_CONFIG = "Configuration data as of 2026-12-02T01:23:45\nClusterName             = x\n"
SHOW_PARTITION = (
    "PartitionName=batch\n   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
    "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n   TotalCPUs=48 TotalNodes=4\n"
)
SHOW_PARTITION_ONE_LINE = "PartitionName=batch AllowGroups=ALL Nodes=n[1-4] TotalCPUs=48\n"
QOS = "Name|Priority|GraceTime\nnormal|10|00:00:00\n"
EXCERPT = "PriorityWeightAge       = 1000\nPriorityFlags           = NO_NORMAL_ALL\n"


@pytest.mark.parametrize(
    ("text", "is_conf"),
    [
        (CONF, True),
        ("include /etc/slurm/extra.conf\n", True),
        ("   ClusterName=x\n", False),  # indented: a record's line, not slurm.conf's
        (SHOW_CONFIG, False),
        (EXCERPT, False),
        (SHOW_PARTITION, False),
        (SHOW_PARTITION_ONE_LINE, False),
        (QOS, False),
        ("NodeName=n1 Arch=x86_64 CoresPerSocket=8\n", False),  # scontrol show node
    ],
    ids=["slurm.conf", "include", "indented", "show-config", "grep-prio", "show-partition",
         "show-partition-o", "qos", "show-node"],
)  # fmt: skip
def test_each_file_is_told_by_what_it_holds(text, is_conf):
    assert looks_like_slurm_conf(text) is is_conf


def test_every_key_of_22_05_is_known():
    assert len(SLURM_CONF_KEYS) == 225
    assert {"PriorityFlags", "SlurmctldHost", "NodeName", "PartitionName"} <= set(SLURM_CONF_KEYS)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_text_is_read_without_raising(text):
    conf = read_slurm_conf(text)
    assert all(line >= 1 for line, _ in conf.settings.values())
    looks_like_slurm_conf(text)
