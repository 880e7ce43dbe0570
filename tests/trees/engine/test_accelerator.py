"""trees.engine.accelerator: Altair Accelerator's FS_* fields of FairShare groups.

Expected values are worked out by hand from Altair's FairShare pages and Altair's 'Preemption
Rules to Speed Up FairShare' page; each comment shows the fractions, the field is ×10,000.
"""

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.accelerator import (
    DEFAULT_WINDOW,
    NO_RANK,
    NO_RANK9,
    ROOT,
    STATUSES,
    FsFields,
    FsGroup,
    FsJob,
    fs_fields,
    parent_of,
)

NOW = 100_000


def running(group, since=NOW, *, fstokens=1):
    """A running job; one started at NOW has no history yet."""
    return FsJob("r", group, "running", since - 10, since, fstokens=fstokens)


def queued(group, submitted=0):
    return FsJob("q", group, "queued", submitted)


def done(group, started, ended, *, fstokens=1):
    return FsJob("d", group, "done", started - 10, started, ended, fstokens=fstokens)


def fields_by_group(
    groups: list[FsGroup], jobs: list[FsJob], **options: Any
) -> dict[str, FsFields]:
    return {f.group: f for f in fs_fields(groups, jobs, NOW, **options)}


@pytest.mark.parametrize(
    ("path", "parent"),
    [
        ("/class/vcs.u1", "/class/vcs"),
        ("/class/vcs", "/class"),
        ("/class", ROOT),
        ("/class.u2", "/class"),  # a user leaf of /class
        ("/time/users.john:sub", "/time/users"),  # a subgroup of john's leaf
        ("/.u1", ROOT),
    ],
)
def test_parent_of(path, parent):
    assert parent_of(path) == parent


def test_the_root_has_no_parent():
    with pytest.raises(ValueError, match="no parent"):
        parent_of(ROOT)


def test_seed_class_vcs_picture():
    """The seed's /class/vcs: u1 runs 3, u5 runs 1, /class/hsim runs 12 of the 16 jobs."""
    groups = [FsGroup("/class"), FsGroup("/class/hsim"), FsGroup("/class/vcs")]
    jobs = [
        *[running("/class/vcs.u1") for _ in range(3)],
        running("/class/vcs.u5"),
        *[running("/class/hsim.u2") for _ in range(12)],
    ]
    fields = fields_by_group(groups, jobs)
    hsim, vcs = fields["/class/hsim"], fields["/class/vcs"]
    u1, u5 = fields["/class/vcs.u1"], fields["/class/vcs.u5"]
    # Targets: hsim and vcs 1/2 each; u1 and u5 1/2 of vcs's, 1/4.
    assert (hsim.target, vcs.target, u1.target, u5.target) == (5000, 5000, 2500, 2500)
    # Running: 12/16, 4/16, 3/16, 1/16.
    assert (hsim.running, vcs.running, u1.running, u5.running) == (7500, 2500, 1875, 625)
    assert (hsim.running_count, vcs.running_count, u1.running_count) == (12, 4, 3)
    # Excess: 3/16 - 1/4 = -1/16 and 1/16 - 1/4 = -3/16: both below target.
    assert (u1.excess_running, u5.excess_running) == (-625, -1875)
    assert (hsim.excess_running, vcs.excess_running) == (2500, -2500)
    # Locally in vcs: 3/4 - 1/2 and 1/4 - 1/2; in /class: 12/16 - 1/2 and 4/16 - 1/2.
    assert (u1.excess_running_local, u5.excess_running_local) == (2500, -2500)
    assert (hsim.excess_running_local, vcs.excess_running_local) == (2500, -2500)
    # The only child of its parent: 12/12 - 1.
    assert fields["/class/hsim.u2"].excess_running_local == 0


def test_groups_come_out_parents_first_with_missing_ancestors_created():
    groups = [FsGroup("/a/b", weight=7), FsGroup(ROOT, window=3600)]
    fields = fs_fields(groups, [queued("/z/y.u"), queued("/a.u")], NOW)
    # Depth first, siblings by path ("/a.u" before "/a/b": "." sorts before "/").
    assert [f.group for f in fields] == ["/", "/a", "/a.u", "/a/b", "/z", "/z/y", "/z/y.u"]
    # Windows inherited from the root's 3600; /a/b is inactive, /a.u and /z share the root.
    assert {f.window for f in fields} == {3600}
    assert [f.target for f in fields] == [10000, 5000, 5000, 0, 5000, 5000, 5000]


def test_inactive_groups_get_no_target():
    groups = [FsGroup("/a"), FsGroup("/b"), FsGroup("/c")]
    jobs = [
        queued("/a.u1"),
        running("/b.u1"),
        done("/c.u1", NOW - 500, NOW - 100),
        FsJob("f", "/c.u1", "failed", 0, NOW - 50, NOW - 40),
    ]
    fields = fields_by_group(groups, jobs)
    # /c only finished: out of the sharing; /a and /b split the root, 1/2 each.
    assert (fields["/c"].active, fields["/c"].target, fields["/c.u1"].target) == (False, 0, 0)
    assert (fields["/a"].target, fields["/b"].target) == (5000, 5000)
    assert fields["/a"].active
    assert fields["/b"].active


def test_the_root_keeps_its_target_with_nothing_active():
    (root,) = fs_fields([], [], NOW)
    assert (root.group, root.active, root.target, root.running, root.history) == (
        "/",
        False,
        10000,
        0,
        0,
    )
    assert (root.excess_running, root.excess_running_local, root.excess_history) == (
        -10000,
        -10000,
        -10000,
    )


def test_nested_weights():
    groups = [
        FsGroup("/projects", weight=133),
        FsGroup("/projects/jolly", weight=100),
        FsGroup("/projects/normal", weight=300),
        FsGroup("/other", weight=100),
        FsGroup("/idle", weight=500),
    ]
    jobs = [queued("/projects/jolly.u1"), queued("/projects/normal.u1"), queued("/other.u1")]
    fields = fields_by_group(groups, jobs)
    # /projects 133/233 = 0.570815, /other 100/233 = 0.429185, /idle inactive.
    assert (fields["/projects"].target, fields["/other"].target) == (5708, 4292)
    assert fields["/idle"].target == 0
    # jolly 100/400 * 0.570815 = 0.142704, normal 300/400 * 0.570815 = 0.428112.
    assert (fields["/projects/jolly"].target, fields["/projects/normal"].target) == (1427, 4281)
    assert fields["/projects/normal.u1"].target == 4281


def test_history_counts_the_overlap_with_the_window():
    jobs = [
        done("/a.u1", NOW - 8000, NOW - 7000),  # 200 s inside [NOW - 7200, NOW]
        done("/a.u1", NOW - 9000, NOW - 8000),  # ended before the window: nothing
        running("/b.u1", NOW - 100),  # 100 s so far
    ]
    fields = fields_by_group([], jobs)
    a, b = fields["/a.u1"], fields["/b.u1"]
    # 200/300 and 100/300; /a ran only finished jobs, so its target is 0.
    assert (a.history, b.history) == (6667, 3333)
    assert (a.excess_history, b.excess_history) == (6667, -6667)
    assert a.window == b.window == DEFAULT_WINDOW


def test_a_ten_minute_window_beside_two_hours():
    groups = [FsGroup("/urgent", window=600), FsGroup("/urgent/h2p", weight=300)]
    jobs = [
        done("/urgent.u1", NOW - 900, NOW - 300),  # 300 s in 10 minutes, 600 s in 2 hours
        queued("/urgent.u1"),
        running("/other.u1", NOW - 1200),  # 600 s in 10 minutes, 1200 s in 2 hours
    ]
    fields = fields_by_group(groups, jobs)
    # /urgent over 10 minutes: 300/900; /other over 2 hours: 1200/1800.
    assert (fields["/urgent"].history, fields["/urgent.u1"].history) == (3333, 3333)
    assert (fields["/other"].history, fields["/"].history) == (6667, 10000)
    # Both active, 1/2 each: 1/3 - 1/2 and 2/3 - 1/2.
    assert (fields["/urgent"].excess_history, fields["/other"].excess_history) == (-1667, 1667)
    windows = {path: fields[path].window for path in ("/", "/urgent", "/urgent/h2p", "/urgent.u1")}
    assert windows == {"/": 7200, "/urgent": 600, "/urgent/h2p": 600, "/urgent.u1": 600}


def test_a_window_of_zero_turns_fairshare_off_below_it():
    groups = [FsGroup("/sim", window=0), FsGroup("/sim/cronos", window=10800), FsGroup("/fs")]
    jobs = [
        queued("/sim.u1", submitted=10),
        running("/sim.u1", NOW - 100),
        queued("/sim/cronos.u2", submitted=5),
        queued("/fs.u3", submitted=50),
        running("/fs.u3", NOW - 100),
    ]
    fields = fields_by_group(groups, jobs)
    off = ["/sim", "/sim.u1", "/sim/cronos", "/sim/cronos.u2"]
    assert [fields[path].window for path in off] == [0, 0, 0, 0]
    assert [fields[path].history for path in off] == [0, 0, 0, 0]
    assert [fields[path].distance for path in off] == [None, None, None, None]
    # Targets and running shares still come from the weights: /sim 1/2, its two children 1/4.
    assert [fields[path].target for path in off] == [5000, 2500, 2500, 2500]
    assert fields["/sim.u1"].running == 5000
    # /fs under FairShare: 100 of the 200 s that ran; d = 0 + 10 * 0 = 0.
    fs = fields["/fs.u3"]
    assert (fs.history, fs.distance, fs.rank) == (5000, 0.0, 0)
    # Then the groups without FairShare, oldest queued job first.
    assert (fields["/sim/cronos.u2"].rank, fields["/sim.u1"].rank) == (1, 2)


def rank_jobs():
    """/a (t 1/2) runs 1 of 5 and ran 1200 of 2000 s; /b (t 1/4) runs 4, ran 100 s; /c (t 1/4)
    runs nothing, ran 700 s. Running jobs start at NOW, so they have no history yet."""
    return [
        running("/a.u1"),
        queued("/a.u1", 1),
        done("/a.u1", NOW - 1300, NOW - 100),
        *[running("/b.u1") for _ in range(4)],
        queued("/b.u1", 2),
        done("/b.u1", NOW - 200, NOW - 100),
        queued("/c.u1", 3),
        done("/c.u1", NOW - 800, NOW - 100),
    ]


RANK_GROUPS = [FsGroup("/a", weight=200), FsGroup("/b"), FsGroup("/c")]


def test_shares_of_the_rank_example():
    fields = fields_by_group(RANK_GROUPS, rank_jobs())
    a, b, c = fields["/a.u1"], fields["/b.u1"], fields["/c.u1"]
    assert (a.target, a.running, a.excess_running, a.history, a.excess_history) == (
        5000, 2000, -3000, 6000, 1000,
    )  # fmt: skip
    assert (b.target, b.running, b.excess_running, b.history, b.excess_history) == (
        2500, 8000, 5500, 500, -2000,
    )  # fmt: skip
    assert (c.target, c.running, c.excess_running, c.history, c.excess_history) == (
        2500, 0, -2500, 3500, 1000,
    )  # fmt: skip
    # /a runs 1 of the root's 5 against 200/400; alone under /a, /a.u1 is at its share.
    assert (fields["/a"].excess_running_local, a.excess_running_local) == (-3000, 0)


@pytest.mark.parametrize(
    ("relative", "alpha", "distances", "ranks"),
    [
        # (r - t) + (h - t): a -0.3 + 0.1, b 0.55 - 0.2, c -0.25 + 0.1
        (0, 10.0, (-0.2, 0.35, -0.15), (0, 2, 1)),
        # the same over t: -0.2/0.5, 0.35/0.25, -0.15/0.25
        (1, 10.0, (-0.4, 1.4, -0.6), (1, 2, 0)),
        # (r - t) + 10 (h - t): -0.3 + 1, 0.55 - 2, -0.25 + 1
        (2, 10.0, (0.7, -1.45, 0.75), (1, 0, 2)),
        # alpha 0: running alone, -0.3, 0.55, -0.25
        (2, 0.0, (-0.3, 0.55, -0.25), (0, 2, 1)),
    ],
)
def test_each_relative_mode(relative, alpha, distances, ranks):
    fields = fields_by_group(RANK_GROUPS, rank_jobs(), relative=relative, alpha=alpha)
    leaves = [fields[path] for path in ("/a.u1", "/b.u1", "/c.u1")]
    assert [f.distance for f in leaves] == pytest.approx(distances)
    assert tuple(f.rank for f in leaves) == ranks


@pytest.mark.parametrize(("relative", "rank"), [(0, 2), (1, 3), (2, 1)])
def test_a_target_of_zero(relative, rank):
    """/d weighs 0: t = 0, r = 0, h = 0. Mode 0 and 2 give d = 0 (between the others); mode 1
    cannot divide and puts it after every group with a target, though it queued first."""
    groups = [*RANK_GROUPS, FsGroup("/d", weight=0)]
    fields = fields_by_group(groups, [*rank_jobs(), queued("/d.u1", 0)], relative=relative)
    d = fields["/d.u1"]
    assert (d.active, d.target, d.rank) == (True, 0, rank)
    assert d.distance == (math.inf if relative == 1 else 0.0)


@pytest.mark.parametrize(
    ("u1_submitted", "u2_submitted", "first"),
    [
        ((20,), (10,), "/x.u2"),  # equal distance: the oldest queued job first
        ((30, 5), (10,), "/x.u1"),  # a group's oldest queued job is what counts
        ((10,), (10,), "/x.u1"),  # then the path
    ],
)
def test_equal_distances_tie_on_the_oldest_queued_job_then_the_path(
    u1_submitted, u2_submitted, first
):
    jobs = [queued("/x.u1", s) for s in u1_submitted] + [queued("/x.u2", s) for s in u2_submitted]
    fields = fields_by_group([], jobs)
    # Both t = 1/2, r = h = 0: d = -0.5 + 10 * -0.5.
    assert fields["/x.u1"].distance == fields["/x.u2"].distance == -5.5
    assert fields[first].rank == 0


def test_groups_without_queued_jobs_have_no_rank():
    fields = fields_by_group([], [running("/a.u1"), queued("/b.u1")])
    assert (fields["/a.u1"].rank, fields["/a.u1"].rank9) == (NO_RANK, NO_RANK9)
    assert (fields["/b.u1"].rank, fields["/b.u1"].rank9) == (0, 0)
    # Only the groups holding queued jobs are ranked, not their parents.
    assert [(fields[p].rank, fields[p].rank9) for p in ("/", "/b")] == [(-1, 9_999_999)] * 2


def test_suspended_jobs_keep_a_group_active_but_do_not_run():
    suspended = FsJob("s", "/a.u1", "suspended", 0, NOW - 600)
    fields = fields_by_group([], [suspended, running("/b.u1", NOW - 600)])
    a = fields["/a.u1"]
    assert (a.active, a.target, a.running, a.running_count) == (True, 5000, 0, 0)
    # No end: its run before the suspension is not known and counts nothing.
    assert (a.history, fields["/b.u1"].history) == (0, 10000)
    # With an end it counts as a finished job: 300 of 900 s.
    ended = FsJob("s", "/a.u1", "suspended", 0, NOW - 600, NOW - 300)
    fields = fields_by_group([], [ended, running("/b.u1", NOW - 600)])
    assert fields["/a.u1"].history == 3333


def test_fstokens_weigh_running_and_history():
    jobs = [
        running("/a.u1", NOW - 100, fstokens=3),
        running("/b.u1", NOW - 100),
        running("/c.u1", NOW - 100, fstokens=0),
    ]
    fields = fields_by_group([], jobs)
    a, b, c = fields["/a.u1"], fields["/b.u1"], fields["/c.u1"]
    # 3 of 4 tokens, 1 of 4, none; each runs one job; the same for 100 s of history.
    assert (a.running, b.running, c.running) == (7500, 2500, 0)
    assert (a.running_count, b.running_count, c.running_count) == (1, 1, 1)
    assert (a.history, b.history, c.history) == (7500, 2500, 0)
    # All three active, 1/3 each: 3/4 - 1/3 = 0.416667, 1/4 - 1/3 = -0.083333.
    assert (a.target, a.excess_running, b.excess_running, c.excess_running) == (
        3333, 4167, -833, -3333,
    )  # fmt: skip


def test_shares_round_once_halves_away_from_zero():
    """/a runs 1 of 20000 tokens: 0.5 rounds to 1, and its excess 0.00005 - 0.5 = -0.49995 to
    -5000, not FS_RUNNING - FS_TARGET = -4999."""
    jobs = [running("/a.u"), running("/b.u", fstokens=19999)]
    fields = fields_by_group([], jobs)
    assert (fields["/a"].running, fields["/a"].excess_running) == (1, -5000)
    assert (fields["/b"].running, fields["/b"].excess_running) == (10000, 5000)


def test_local_excess_when_the_parent_runs_nothing():
    fields = fields_by_group([], [queued("/a.u1"), queued("/a.u2")])
    # No running part; the target part 1/2.
    assert fields["/a.u1"].excess_running_local == -5000


@pytest.mark.parametrize(
    ("groups", "jobs", "options", "message"),
    [
        ([], [FsJob("1", "/a.u", "Running", 0)], {}, "status"),
        ([], [FsJob("1", "/a.u", "held", 0)], {}, "status"),
        ([FsGroup("/a", weight=-1)], [], {}, "weight"),
        ([FsGroup("/a", weight=100_001)], [], {}, "weight"),
        ([FsGroup("/a", window=-1)], [], {}, "window"),
        ([FsGroup("class/vcs")], [], {}, "path"),
        ([], [queued("class")], {}, "path"),
        ([FsGroup("/a//b")], [], {}, "path"),
        ([FsGroup("/a/")], [], {}, "path"),
        ([FsGroup("/a"), FsGroup("/a")], [], {}, "twice"),
        ([], [running("/a.u", fstokens=-1)], {}, "fstokens"),
        ([], [], {"relative": 3}, "relative"),
        ([], [], {"alpha": math.nan}, "alpha"),
    ],
)
def test_it_rejects_bad_input(groups, jobs, options, message):
    with pytest.raises(ValueError, match=message):
        fs_fields(groups, jobs, NOW, **options)


PATHS = ["/", "/a", "/a/b", "/a/b.u1", "/a/b.u2", "/a.u3", "/c", "/c/d.u4", "/e.u5"]
random_groups = st.dictionaries(
    st.sampled_from(PATHS[1:]),
    st.tuples(st.integers(0, 1000), st.sampled_from([None, None, 0, 600, 7200])),
    max_size=6,
)
random_jobs = st.lists(
    st.tuples(
        st.sampled_from(PATHS),
        st.sampled_from(STATUSES),
        st.integers(0, 50),  # submitted
        st.integers(0, 9000),  # started this long before NOW
        st.integers(0, 9000),  # ran this long
        st.integers(0, 3),  # fstokens
    ),
    max_size=25,
)


def build(groups, rows):
    declared = [FsGroup(path, weight, window) for path, (weight, window) in groups.items()]
    jobs = [
        FsJob(str(n), path, status, submitted, NOW - ago, NOW - ago + ran, fstokens=tokens)
        if status in ("done", "failed")
        else FsJob(str(n), path, status, submitted, NOW - ago, fstokens=tokens)
        for n, (path, status, submitted, ago, ran, tokens) in enumerate(rows)
    ]
    return declared, jobs


@settings(max_examples=200, deadline=None)
@given(random_groups, random_jobs, st.sampled_from([0, 1, 2]), st.floats(0, 20))
def test_active_children_share_their_parents_target(groups, rows, relative, alpha):
    declared, jobs = build(groups, rows)
    fields = fs_fields(declared, jobs, NOW, relative=relative, alpha=alpha)
    weights = {path: weight for path, (weight, _) in groups.items()}
    children: dict[str, list[FsFields]] = {}
    for f in fields[1:]:
        children.setdefault(parent_of(f.group), []).append(f)
    for parent in fields:
        active = [f for f in children.get(parent.group, []) if f.active]
        if any(weights.get(f.group, 100) for f in active):
            # Each rounded target is within 1/2 of its fraction, which add up exactly.
            assert abs(sum(f.target for f in active) - parent.target) <= (len(active) + 1) / 2
        inactive = [f for f in children.get(parent.group, []) if not f.active]
        assert all(f.target == 0 for f in inactive)


@settings(max_examples=200, deadline=None)
@given(random_groups, random_jobs, st.sampled_from([0, 1, 2]), st.floats(0, 20))
def test_ranks_of_groups_with_queued_jobs_are_0_to_n(groups, rows, relative, alpha):
    declared, jobs = build(groups, rows)
    fields = fs_fields(declared, jobs, NOW, relative=relative, alpha=alpha)
    holding = {job.group for job in jobs if job.status == "queued"}
    ranked = sorted(f.rank for f in fields if f.group in holding)
    assert ranked == list(range(len(holding)))
    for f in fields:
        if f.group not in holding:
            assert (f.rank, f.rank9) == (NO_RANK, NO_RANK9)
        else:
            assert f.rank9 == f.rank
