"""trees.services.accelerator: FairShare groups stored as nodes with their FS_* fields,
configurations replacing the groups they define, groups made for jobs, preemption rules."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from trees.engine.accelerator import FsJob
from trees.formats.fsgroups import parse_fsgroups
from trees.formats.preempt_rules import parse_preempt_rules
from trees.models import (
    Cluster,
    Node,
    NodeKind,
    NodeOrigin,
    PreemptRule,
    Scheduler,
    SettingChange,
    ShareChange,
)
from trees.selectors.accelerator import GroupDefinition, preempt_rules_get
from trees.services.accelerator import (
    accelerator_tree_held,
    fsgroups_definitions,
    preempt_rules_import,
)

pytestmark = pytest.mark.django_db

NOW = 1_800_000_000
CONFIGURATION = parse_fsgroups(
    "FSGROUP class {\n FSGROUP hsim -w 300 -t 10m {}\n FSGROUP vcs -u {u1 u5} -user {}\n}\n"
).groups
JOBS = [
    FsJob("1", "/class/hsim.u2", "running", NOW - 600, NOW - 500),
    FsJob("2", "/class/vcs.u1", "running", NOW - 600, NOW - 500),
    FsJob("3", "/class/vcs.u5", "queued", NOW - 60),
]


@pytest.fixture
def cluster() -> Cluster:
    return Cluster.objects.create(name="vov", scheduler=Scheduler.ACCELERATOR)


def stored(cluster: Cluster, groups: list[GroupDefinition], jobs: list[FsJob]) -> None:
    with accelerator_tree_held(cluster) as held:
        held.store(jobs=jobs, now=NOW, reason="test", groups=groups)


def nodes(cluster: Cluster) -> dict[str, Node]:
    return {node.name: node for node in Node.objects.filter(cluster=cluster)}


def test_groups_are_nodes_by_path_with_their_settings_and_fields(cluster: Cluster) -> None:
    stored(cluster, fsgroups_definitions(CONFIGURATION, []), JOBS)
    found = nodes(cluster)
    assert sorted(found) == [
        "/", "/class", "/class/hsim", "/class/hsim.u2", "/class/vcs", "/class/vcs.u1",
        "/class/vcs.u5",
    ]  # fmt: skip
    root, vcs, u5 = found["/"], found["/class/vcs"], found["/class/vcs.u5"]
    assert (root.kind, root.origin, root.shares, root.parent_id) == (
        NodeKind.ORGANIZATION, NodeOrigin.SCHEDULER, None, None,
    )  # fmt: skip
    assert (found["/class"].kind, vcs.kind, u5.kind) == (
        NodeKind.ORGANIZATION, NodeKind.PROJECT, NodeKind.USER,
    )  # fmt: skip
    assert (vcs.origin, u5.origin, u5.parent_id) == (NodeOrigin.DEFINED, NodeOrigin.USAGE, vcs.pk)
    hsim = found["/class/hsim"]
    # hsim weighs 300 against vcs's 100: 3/4 of the machine, its window 10 minutes.
    assert (hsim.shares, hsim.fs_window, hsim.fs_window_effective, hsim.fs_target) == (
        300, 600, 600, 7500,
    )  # fmt: skip
    assert (vcs.fs_users, vcs.fs_user_level, vcs.fs_window, vcs.fs_window_effective) == (
        "u1 u5", True, None, 7200,
    )  # fmt: skip
    # vcs's two users share its quarter; u1 runs 1 of the 2 running jobs, and vcs's only
    # one: locally all of vcs's jobs against half of them, +5000.
    u1 = found["/class/vcs.u1"]
    assert (u1.fs_target, u1.fs_running, u1.fs_excess_running_local) == (1250, 5000, 5000)
    assert (u1.fairshare_perc, u1.group_perc, u1.usage) == (0.125, 0.5, 1.0)
    assert (u5.fs_rank, u5.fs_rank9, u1.fs_rank, u1.fs_rank9) == (0, 0, -1, 9_999_999)
    assert (root.fs_target, root.fairshare_perc, root.group_perc) == (10_000, 1.0, 1.0)


def test_a_configuration_replaces_the_defined_groups_and_keeps_those_jobs_made(
    cluster: Cluster,
) -> None:
    stored(cluster, fsgroups_definitions(CONFIGURATION, []), JOBS)
    with accelerator_tree_held(cluster) as held:
        before = held.groups
    again = fsgroups_definitions(
        parse_fsgroups("FSGROUP class {FSGROUP vcs -w 50 {}}").groups, before
    )
    assert [(g.path, g.weight, g.defined) for g in again] == [
        ("/class", 100, True),
        ("/class/vcs", 50, True),
        ("/class/hsim.u2", 100, False),
        ("/class/vcs.u1", 100, False),
        ("/class/vcs.u5", 100, False),
    ]
    stored(cluster, again, JOBS)
    hsim = nodes(cluster)["/class/hsim"]  # made again, as u2's job's ancestor, by default
    assert (hsim.origin, hsim.shares, hsim.fs_window) == (NodeOrigin.USAGE, 100, None)


def test_weight_changes_are_audited_once_the_cluster_has_a_configuration(
    cluster: Cluster,
) -> None:
    stored(cluster, fsgroups_definitions(CONFIGURATION, []), JOBS)
    assert not ShareChange.objects.filter(cluster=cluster).exists()  # the start, no change
    with accelerator_tree_held(cluster) as held:
        groups = fsgroups_definitions(
            parse_fsgroups("FSGROUP class {FSGROUP hsim -w 200 {}; FSGROUP vcs {}}").groups,
            held.groups,
        )
        held.store(jobs=JOBS, now=NOW, reason="imported new.tcl", groups=groups)
    changes = ShareChange.objects.filter(cluster=cluster)
    assert [(c.node_name, c.old_shares, c.new_shares, c.reason) for c in changes] == [
        ("/class/hsim", 300, 200, "imported new.tcl"),
    ]


def test_a_group_the_engine_refuses_is_a_validation_error(cluster: Cluster) -> None:
    with pytest.raises(ValidationError, match=r"weight 100001 is not in 0\.\.100000"):
        stored(cluster, [GroupDefinition("/big", weight=100_001)], [])


RULES = parse_preempt_rules(
    'VovPreemptRule -rulename A -preempting "PRIORITY>5" -preemptable "PRIORITY<5" -order 2\n'
    'VovPreemptRule -rulename B -preemptable "USER==x" -bucketage 2m -killage 1h -pool p\n'
).rules


def test_rules_replace_the_clusters_and_the_change_is_audited(cluster: Cluster) -> None:
    done = preempt_rules_import(cluster_name="vov", rules=RULES, source="rules.tcl")
    assert (done.rules, done.replaced, done.cluster_created) == (2, 0, False)
    assert preempt_rules_get(cluster=cluster) == list(RULES)
    again = preempt_rules_import(cluster_name="vov", rules=RULES[1:], source="b.tcl")
    assert (again.rules, again.replaced) == (1, 2)
    assert [rule.name for rule in PreemptRule.objects.filter(cluster=cluster)] == ["B"]
    audits = SettingChange.objects.filter(cluster=cluster, setting="preempt_rules")
    assert [(a.old_value, a.new_value, a.reason) for a in audits.order_by("id")] == [
        ("none", "A, B", "imported rules.tcl"),
        ("A, B", "B", "imported b.tcl"),
    ]
    preempt_rules_import(cluster_name="vov", rules=RULES[1:], source="b.tcl")
    assert audits.count() == 2  # the same rules again change nothing


def test_rules_go_to_an_accelerator_cluster_only() -> None:
    Cluster.objects.create(name="hpc", scheduler=Scheduler.PBS)
    with pytest.raises(ValidationError, match="hpc is a PBS Professional / OpenPBS cluster"):
        preempt_rules_import(cluster_name="hpc", rules=RULES, source="rules.tcl")
    made = preempt_rules_import(cluster_name="new", rules=RULES, source="rules.tcl")
    assert made.cluster_created
    assert Cluster.objects.get(name="new").scheduler == Scheduler.ACCELERATOR
