"""The pbsfs command on a stored tree: the real program's bytes, and what its writes store."""

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import EXAMPLES, Run, examples_or_skip
from trees.models import Cluster, Node, NodeOrigin


def load_example(run: Run, folder: Path, cluster: str) -> None:
    assert (
        run("import_sched_config", str(folder / "sched_config"), "--cluster", cluster).status == 0
    )
    assert (
        run("import_resource_group", str(folder / "resource_group"), "--cluster", cluster).status
        == 0
    )
    for line in (folder / "usage.txt").read_text().splitlines():
        entity, value = line.split()
        ran = run("pbsfs", "--cluster", cluster, "-s", entity, value)
        assert (ran.status, ran.out) == (0, ""), ran.err


def example_cases() -> list[tuple[str, str]]:
    if not EXAMPLES.is_dir():
        return [("missing", "missing")]
    return [
        (d.name, f.name) for d in sorted(EXAMPLES.iterdir()) for f in sorted(d.glob("expected_*"))
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "expected"), example_cases())
def test_it_prints_what_the_real_pbsfs_printed(run: Run, case: str, expected: str) -> None:
    folder = examples_or_skip() / case
    load_example(run, folder, case.replace("_", "-"))
    cluster = ["--cluster", case.replace("_", "-")]
    want = (folder / expected).read_text()
    if expected == "expected_pbsfs.txt":
        got = run("pbsfs", *cluster).out
    elif expected == "expected_t.txt":
        got = run("pbsfs", *cluster, "-t").out
    elif expected == "expected_c.txt":
        pairs = [line.split() for line in (folder / "c_pairs.txt").read_text().splitlines()]
        got = "".join(f"{a}\t{b}\t{run('pbsfs', *cluster, '-c', a, b).out}" for a, b in pairs)
    else:
        got = run("pbsfs", *cluster, "-g", expected.removeprefix("expected_g_")[:-4]).out
    assert got == want


@pytest.fixture
def forum(run: Run) -> str:
    load_example(run, examples_or_skip() / "forum_example", "forum")
    return "forum"


@pytest.mark.django_db
def test_it_stores_the_metrics_pbsfs_computes(forum: str) -> None:
    scott = Node.objects.get(cluster__name=forum, name="Scott")
    assert f"{scott.fairshare_tree_usage:f}" == "0.832973"
    assert round(scott.fairshare_factor, 4) == 0.0902
    assert scott.usage_record == 1000.0
    group2 = Node.objects.get(cluster__name=forum, name="group2")
    assert (group2.usage, group2.usage_record) == (1001.0, None)
    # pbsfs multiplies in float32: the stored value is PBS's float, exactly.
    assert f"{float(np.float32(group2.fairshare_perc) * np.float32(100)):f}" == "60.000004"
    assert group2.fairshare_perc == float(np.float32(0.6))


@pytest.mark.django_db
def test_decay_halves_every_entity_and_stamps_last_decay(run: Run, forum: str) -> None:
    assert Cluster.objects.get(name=forum).last_decay is None
    ran = run("pbsfs", "--cluster", forum, "-d")
    assert (ran.status, ran.out, ran.err) == (0, "", "")
    usage = dict(Node.objects.filter(cluster__name=forum).values_list("name", "usage"))
    # Suzy's 0 becomes the floor 1; the groups are 1 + the decayed leaves.
    assert (usage["Bob"], usage["Scott"], usage["Suzy"]) == (50.0, 500.0, 1.0)
    assert usage["group2"] == 501.0
    assert usage["TREEROOT"] == 1 + 50 + 50 + 500
    assert Cluster.objects.get(name=forum).last_decay is not None
    assert Node.objects.get(cluster__name=forum, name="Suzy").usage_record is None


@pytest.mark.django_db
def test_a_fresh_cluster_says_it_creates_the_usage_database(run: Run) -> None:
    folder = examples_or_skip() / "forum_example"
    run("import_resource_group", str(folder / "resource_group"), "--cluster", "fresh")
    assert run("pbsfs", "--cluster", "fresh").err == "Creating usage database for fairshare.\n"
    ran = run("pbsfs", "--cluster", "fresh", "-s", "Bob", "5")
    assert ran.err == (
        "Creating usage database for fairshare.\n"
        "Could not backup usage database.: No such file or directory\n"
    )
    assert run("pbsfs", "--cluster", "fresh").err == ""


@pytest.mark.django_db
def test_refused_set_changes_nothing(run: Run, forum: str) -> None:
    ran = run("pbsfs", "--cluster", forum, "-s", "group1", "5")
    assert ran.status == 1
    assert ran.err.startswith("pbsfs: group1 is a group")
    ran = run("pbsfs", "--cluster", forum, "-s", "Bob", "12x")
    assert (ran.status, ran.err) == (1, "pbsfs: usage value '12x' for Bob is not a number\n")
    assert Node.objects.get(cluster__name=forum, name="Bob").usage_record == 100.0


@pytest.mark.django_db
def test_set_negative_after_double_dash_is_refused(run: Run, forum: str) -> None:
    ran = run("pbsfs", "--cluster", forum, "-s", "--", "Bob", "-5")
    assert ran.status == 1
    assert "must be a finite number >= 0" in ran.err


@pytest.mark.django_db
def test_trim_drops_unknown_entities(run: Run, forum: str, tmp_path: Path) -> None:
    usage = tmp_path / "usage"
    assert run("export_pbs_usage", "--cluster", forum, "-o", str(usage)).status == 0
    smaller = tmp_path / "resource_group"
    smaller.write_text("group1\t10\troot\t40\nBob\t11\tgroup1\t50\n")
    run("import_resource_group", str(smaller), "--cluster", forum)
    moved = Node.objects.get(cluster__name=forum, name="Scott")
    assert moved.parent is not None
    assert (moved.origin, moved.parent.name, moved.shares) == (NodeOrigin.USAGE, "unknown", 1)
    assert run("pbsfs", "--cluster", forum, "-e").status == 0
    names = set(Node.objects.filter(cluster__name=forum).values_list("name", flat=True))
    assert names == {"TREEROOT", "unknown", "group1", "Bob"}


@pytest.mark.django_db
def test_it_refuses_an_unknown_cluster(run: Run) -> None:
    ran = run("pbsfs", "--cluster", "nowhere")
    assert (ran.status, ran.err) == (1, "cluster 'nowhere' does not exist\n")
