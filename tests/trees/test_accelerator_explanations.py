"""trees.explanations for Altair Accelerator: each FS_* field of a group in one sentence, with
the cases the seed's picture does not reach (an idle group, nothing running, FairShare off),
from hand-made groups (no database)."""

from __future__ import annotations

import pytest

from trees.explanations import (
    fs_history_sentence,
    fs_local_sentence,
    fs_rank_sentence,
    fs_running_sentence,
    fs_summary_sentence,
    fs_target_sentence,
)
from trees.models import Node, NodeKind
from trees.quantities import fs_percent_text, fs_points_text
from trees.selectors.accelerator_standing import GroupStanding, leaf_user

ROOT = Node(pk=1, name="/", kind=NodeKind.ORGANIZATION, fs_target=10_000, fs_running_count=16)
CLASS = Node(pk=2, parent_id=1, name="/class", shares=100, fs_target=10_000, fs_running_count=16)
VCS = Node(pk=3, parent_id=2, name="/class/vcs", shares=100, fs_target=5000, fs_running_count=4)


def leaf(**fields: object) -> Node:
    """/class/vcs.u1 as the seed has it, with `fields` changed."""
    values: dict[str, object] = {
        "pk": 4, "parent_id": 3, "name": "/class/vcs.u1", "kind": NodeKind.USER, "shares": 100,
        "fs_active": True, "fs_target": 2500, "fs_running": 1875, "fs_running_count": 3,
        "fs_excess_running": -625, "fs_excess_running_local": 2500, "fs_history": 2427,
        "fs_excess_history": -73, "fs_rank": -1, "fs_window_effective": 7200,
    }  # fmt: skip
    values.update(fields)
    return Node(**values)


def standing(
    node: Node, parent: Node | None = VCS, *, weight: int = 200, machine: int = 16, ranked: int = 1
) -> GroupStanding:
    return GroupStanding(node, parent, weight, machine, ranked)


@pytest.mark.parametrize(
    ("scaled", "percent", "points"),
    [(2500, "25.00 %", "+25.00 points"), (-625, "-6.25 %", "-6.25 points"),
     (0, "0.00 %", "0.00 points"), (10_000, "100.00 %", "+100.00 points"), (None, "", "")],
)  # fmt: skip
def test_fs_shares_read_as_percents_and_their_differences_as_points(
    scaled: int | None, percent: str, points: str
) -> None:
    assert fs_percent_text(scaled) == percent
    assert fs_points_text(scaled) == points


@pytest.mark.parametrize(
    ("path", "user"),
    [("/class/vcs.u5", "u5"), ("/class/vcs", ""), ("/", ""), ("/a.b/c", ""), ("/a/.x", "")],
)
def test_a_leaf_s_user_follows_the_last_dot_of_its_last_name(path: str, user: str) -> None:
    assert leaf_user(path) == user


def test_the_target_says_its_weight_its_siblings_and_its_parent_s_target() -> None:
    assert fs_target_sentence(standing(leaf())) == (
        "Its target is 25.00 % of the machine: its weight 100 of its active siblings' 200,"
        " times /class/vcs's 50.00 %."
    )
    top = Node(pk=2, parent_id=1, name="/class", shares=100, fs_active=True, fs_target=10_000)
    assert fs_target_sentence(standing(top, ROOT, weight=100)) == (
        "Its target is 100.00 % of the machine: its weight 100 of its active siblings' 100."
    )
    assert fs_target_sentence(standing(ROOT, None, weight=0)) == (
        "The root is the whole machine: its target is 100.00 %."
    )


def test_an_idle_group_or_one_among_weightless_siblings_has_no_target() -> None:
    idle = leaf(fs_active=False, fs_target=0)
    assert fs_target_sentence(standing(idle, weight=100)) == (
        "Its target is 0.00 %: it has no queued, running or suspended job, so its weight 100"
        " takes no part of /class/vcs's share until it has one."
    )
    weightless = leaf(shares=0, fs_target=0)
    assert fs_target_sentence(standing(weightless, weight=0)) == (
        "Its target is 0.00 %: it and its active siblings all weigh 0, so none of them has a"
        " part of /class/vcs's share."
    )


def test_running_says_how_many_jobs_of_how_many_and_which_side_of_the_target() -> None:
    assert fs_running_sentence(standing(leaf())) == (
        "It runs 3 of the 16 running jobs (18.75 %): 6.25 points under its target."
    )
    over = leaf(fs_running=7500, fs_running_count=12, fs_excess_running=5000)
    assert fs_running_sentence(standing(over)) == (
        "It runs 12 of the 16 running jobs (75.00 %): 50.00 points over its target."
    )
    on = leaf(fs_running=2500, fs_running_count=1, fs_excess_running=0)
    assert fs_running_sentence(standing(on, machine=4)) == (
        "It runs 1 of the 4 running jobs (25.00 %): exactly on its target."
    )
    idle = leaf(fs_running=0, fs_running_count=0, fs_excess_running=-2500)
    assert fs_running_sentence(standing(idle, machine=0)) == (
        "No job runs on the machine now, so it runs 0.00 %: 25.00 points under its target."
    )


def test_the_local_excess_is_among_its_siblings_and_the_root_has_none() -> None:
    assert fs_local_sentence(standing(leaf())) == (
        "Among its siblings it runs 75.00 % of /class/vcs's running jobs (3 of 4) against a"
        " local target of 50.00 %: +25.00 points."
    )
    still = Node(pk=3, parent_id=2, name="/class/vcs", fs_running_count=0)
    idle = leaf(fs_running_count=0, fs_excess_running_local=-5000)
    assert fs_local_sentence(standing(idle, still)) == (
        "/class/vcs runs no job, so among its siblings it runs 0.00 % against a local target of"
        " 50.00 %: -50.00 points."
    )
    root = Node(pk=1, name="/", fs_excess_running_local=0)
    assert fs_local_sentence(standing(root, None)) == (
        "The root has no siblings: its local excess is its excess, 0.00 points."
    )


def test_history_is_over_the_group_s_window_unless_fairshare_is_off() -> None:
    assert fs_history_sentence(standing(leaf())) == (
        "Over the last 2 hours it ran 24.27 % of the machine's job time against its target of"
        " 25.00 %: 0.73 points under it."
    )
    hour = leaf(fs_window_effective=3600, fs_history=4000, fs_excess_history=1500)
    assert fs_history_sentence(standing(hour)).startswith(
        "Over the last 1 hour it ran 40.00 % of the machine's job time"
    )
    assert "15.00 points over it." in fs_history_sentence(standing(hour))
    off = leaf(fs_window_effective=0)
    assert fs_history_sentence(standing(off)).startswith("FairShare is off for it")


@pytest.mark.parametrize(
    ("fields", "ranked", "said"),
    [
        ({"fs_rank": 0}, 1, "FS_RANK 0: dispatched first among the 1 group with queued jobs"
         " (the furthest under its target first)."),
        ({"fs_rank": 2}, 5, "FS_RANK 2: dispatched 3rd among the 5 groups with queued jobs"
         " (the furthest under its target first)."),
        ({"fs_rank": 3, "fs_window_effective": 0}, 4, "FS_RANK 3: dispatched 4th among the 4"
         " groups with queued jobs (its window is 0: after every fairshare group, first come"
         " first served)."),
        ({"fs_rank": -1}, 1, "No job queued: FS_RANK -1 (FS_RANK9 9,999,999), so it is not"
         " ranked for dispatch."),
        ({"fs_rank": -1, "kind": NodeKind.PROJECT}, 1, "No job is queued in the group itself:"
         " FS_RANK -1 (FS_RANK9 9,999,999); the groups holding queued jobs, usually its users'"
         " leaves, carry the ranks."),
        ({"fs_rank": None}, 0, "Not ranked yet: no cycle has computed its fields."),
    ],
)  # fmt: skip
def test_the_rank_says_when_the_group_is_dispatched(
    fields: dict[str, object], ranked: int, said: str
) -> None:
    assert fs_rank_sentence(standing(leaf(**fields), ranked=ranked)) == said


def test_a_person_s_leaf_in_one_sentence() -> None:
    u5 = leaf(name="/class/vcs.u5", fs_running=625, fs_running_count=1, fs_excess_running=-1875,
              fs_rank=0)  # fmt: skip
    assert fs_summary_sentence(standing(u5)) == (
        "It runs 1 of the 16 running jobs (6.25 %) against a target of 25.00 %: 18.75 points"
        " under it; its queued jobs are dispatched first of the 1 group with queued jobs."
    )
    assert fs_summary_sentence(standing(leaf(), machine=16)).endswith("no job of it is queued.")
    assert standing(u5).user == "u5"
