"""The two trees of the seeds, as PbsTree builders, for the engine tests."""

import pytest

from trees.engine.pbs import GroupDef, PbsTree, UsageRecord

# Seed 000: the PBS usage white paper's figure 3, in the order of its resource_group file.
SEED_GROUPS = (
    GroupDef("B4", 300, "root", 20),
    GroupDef("L8", 301, "B4", 5),
    GroupDef("L7", 400, "root", 40),
    GroupDef("B2", 200, "root", 20),
    GroupDef("B3", 210, "B2", 75),
    GroupDef("L6", 212, "B3", 5),
    GroupDef("L5", 211, "B3", 10),
    GroupDef("L4", 202, "B2", 15),
    GroupDef("L3", 201, "B2", 10),
    GroupDef("B1", 100, "root", 10),
    GroupDef("L2", 102, "B1", 0),
    GroupDef("L1", 101, "B1", 10),
)
SEED_RECORDS = tuple(UsageRecord(f"L{i}", 100.0) for i in range(1, 9))

# Seed 001: the PBS forum post's tree.
FORUM_GROUPS = (
    GroupDef("group1", 10, "root", 40),
    GroupDef("Bob", 11, "group1", 50),
    GroupDef("Cathy", 12, "group1", 50),
    GroupDef("group2", 20, "root", 60),
    GroupDef("Suzy", 21, "group2", 60),
    GroupDef("Scott", 22, "group2", 40),
)
FORUM_RECORDS = (
    UsageRecord("Bob", 100.0),
    UsageRecord("Cathy", 100.0),
    UsageRecord("Suzy", 0.0),
    UsageRecord("Scott", 1000.0),
)


@pytest.fixture
def seed_tree():
    """Every leaf at 100 and unknown_shares 10, as in examples/pbs/seed_tree."""
    return PbsTree.build(SEED_GROUPS, SEED_RECORDS, unknown_shares=10)


@pytest.fixture
def forum_tree():
    return PbsTree.build(FORUM_GROUPS, FORUM_RECORDS)
