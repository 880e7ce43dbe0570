from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run, examples_or_skip, write_file
from trees.models import Cluster, Node, NodeKind, NodeOrigin, ShareChange

pytestmark = pytest.mark.django_db


def write(tmp_path: Path, text: str | bytes, name: str = "resource_group") -> str:
    return write_file(tmp_path, name, text)


def test_it_creates_the_cluster_and_its_tree(run: Run) -> None:
    path = str(examples_or_skip() / "seed_tree" / "resource_group")
    ran = run("import_resource_group", path, "--cluster", "seed")
    assert ran.status == 0
    assert "imported 12 entries into cluster seed (new); rejected 0 lines" in ran.out
    nodes = {n.name: n for n in Node.objects.filter(cluster__name="seed")}
    assert len(nodes) == 14
    assert (nodes["TREEROOT"].shares, nodes["TREEROOT"].parent) == (None, None)
    assert nodes["unknown"].origin == NodeOrigin.SCHEDULER
    assert (nodes["B3"].parent, nodes["B3"].kind, nodes["B3"].cgroup_id) == (
        nodes["B2"],
        NodeKind.PROJECT,
        210,
    )
    assert (nodes["B2"].kind, nodes["L5"].kind, nodes["L7"].kind) == (
        NodeKind.ORGANIZATION,
        NodeKind.USER,
        NodeKind.USER,
    )
    assert ShareChange.objects.count() == 0  # a first tree is not a change


def test_it_reports_every_rejected_line_and_keeps_the_good_ones(run: Run, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# comment\n"
        "g1 10 root 40\n"
        "u1 11 g1 ten\n"
        "u2 12 missing 5\n"
        "g1 13 root 5\n"
        "u3 14 g1 -5\n"
        "u4 15 g1 50\n",
    )
    ran = run("import_resource_group", path, "--cluster", "c1")
    assert ran.status == 0
    assert ran.err.splitlines() == [
        "resgroup: error on line 3.",
        f"{path}:3: shares: shares 'ten' is not a whole number",
        "Parent ginfo of u2 doesnt exist.",
        "resgroup: error on line 4.",
        f"{path}:4: parent: 'missing' is not defined above this line "
        "(a parent must come before its children)",
        "entity g1 is not unique",
        "resgroup: error on line 5.",
        f"{path}:5: name: 'g1' is already defined above",
        f"{path}:6: shares: shares -5 is negative; shares must be 0 or more",
    ]
    assert set(Node.objects.filter(cluster__name="c1").values_list("name", flat=True)) == {
        "TREEROOT",
        "unknown",
        "g1",
        "u4",
    }
    # pbsfs repeats PBS's own complaints about the file on every run, as the real one does.
    assert run("pbsfs", "--cluster", "c1").err.startswith("resgroup: error on line 3.\n")


def test_nothing_is_imported_when_every_line_is_bad(run: Run, tmp_path: Path) -> None:
    path = write(tmp_path, b"g1\t10\troot\t40\r\nu1\t11\tg1\t5\r\n")
    ran = run("import_resource_group", path, "--cluster", "crlf")
    assert ran.status == 1
    assert "CRLF" in ran.err
    assert ran.err.endswith(f"{path}: nothing imported (2 lines rejected)\n")
    assert not Cluster.objects.filter(name="crlf").exists()


def test_strict_imports_nothing_when_a_line_is_rejected(run: Run, tmp_path: Path) -> None:
    path = write(tmp_path, "g1 10 root 40\nu1 11 g1 x\n")
    assert run("import_resource_group", path, "--cluster", "s", "--strict").status == 1
    assert not Cluster.objects.filter(name="s").exists()


def test_a_missing_file_is_named(run: Run, tmp_path: Path) -> None:
    ran = run("import_resource_group", str(tmp_path / "nope"), "--cluster", "x")
    assert ran.status == 1
    assert ran.err == f"{tmp_path / 'nope'}: cannot read: No such file or directory\n"


def test_a_bad_cluster_name_imports_nothing(run: Run, tmp_path: Path) -> None:
    ran = run("import_resource_group", write(tmp_path, "g 1 root 1\n"), "--cluster", "no spaces")
    assert ran.status == 1
    assert "nothing imported" in ran.err
    assert Cluster.objects.count() == 0


def test_reimport_audits_share_changes_and_keeps_usage_by_name(run: Run, tmp_path: Path) -> None:
    run(
        "import_resource_group",
        write(tmp_path, "g 1 root 10\na 2 g 5\nb 3 g 5\n"),
        "--cluster",
        "r",
    )
    run("pbsfs", "--cluster", "r", "-s", "a", "40")
    run("pbsfs", "--cluster", "r", "-s", "b", "20")
    a_id = Node.objects.get(cluster__name="r", name="a").pk
    path = write(tmp_path, "g 1 root 10\na 2 g 7\nc 4 g 1\n", "second")
    assert run("import_resource_group", path, "--cluster", "r").status == 0

    a = Node.objects.get(cluster__name="r", name="a")
    assert (a.pk, a.shares, a.usage_record) == (a_id, 7, 40.0)
    b = Node.objects.get(cluster__name="r", name="b")  # left the tree, kept its usage
    assert b.parent is not None
    assert (b.origin, b.parent.name, b.usage_record) == (NodeOrigin.USAGE, "unknown", 20.0)
    changes = {(c.node_name, c.old_shares, c.new_shares) for c in ShareChange.objects.all()}
    assert changes == {("a", 5, 7), ("b", 5, None), ("c", None, 1)}
    assert all(c.reason == f"imported resource_group {path}" for c in ShareChange.objects.all())
    root = Node.objects.get(cluster__name="r", name="TREEROOT")
    assert root.usage == 61.0


def test_export_then_import_gives_the_same_pbsfs_listing(run: Run, tmp_path: Path) -> None:
    folder = examples_or_skip() / "seed_tree"
    run("import_sched_config", str(folder / "sched_config"), "--cluster", "a")
    run("import_resource_group", str(folder / "resource_group"), "--cluster", "a")
    exported = tmp_path / "exported"
    assert run("export_resource_group", "--cluster", "a", "-o", str(exported)).status == 0
    run("import_sched_config", str(folder / "sched_config"), "--cluster", "b")
    assert run("import_resource_group", str(exported), "--cluster", "b").err == ""
    assert run("pbsfs", "--cluster", "a", "-t").out == run("pbsfs", "--cluster", "b", "-t").out
    assert (
        run("export_resource_group", "--cluster", "b").out.splitlines()[1:]
        == (exported.read_text().splitlines()[1:])
    )


def test_a_binary_file_is_refused_whole_and_makes_no_cluster(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "resource_group"
    path.write_bytes(b"grp 10 root 5\n" + bytes(range(1, 256)) * 10)
    ran = run("import_resource_group", str(path), "--cluster", "typo")
    assert ran.status == 1
    assert ran.err == (
        f"{path}: nothing imported: line 2 holds control bytes: not a resource_group,"
        " which is text\n"
    )
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_text_file_of_another_kind_is_refused_with_each_line_and_makes_no_cluster(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "resource_group"
    path.write_text("fairshare_usage_res: cput\nunknown_shares: 10\n")
    ran = run("import_resource_group", str(path), "--cluster", "typo")
    assert ran.status == 1
    assert ran.err.splitlines() == [
        "resgroup: error on line 1.",
        f"{path}:1: line: needs 4 fields (name cgroup parent shares); parent, shares missing",
        "resgroup: error on line 2.",
        f"{path}:2: line: needs 4 fields (name cgroup parent shares); parent, shares missing",
        f"{path}: nothing imported: none of its 2 lines is `name cgroup parent shares`:"
        " not a resource_group",
    ]
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_file_of_comments_makes_no_cluster(run: Run, tmp_path: Path) -> None:
    """A comment-only resource_group (OpenPBS ships one) is a tree, but imports nothing."""
    path = tmp_path / "resource_group"
    path.write_text("# name cgroup parent shares\n")
    ran = run("import_resource_group", str(path), "--cluster", "typo")
    assert (ran.status, ran.err) == (
        1,
        f"{path}: nothing imported: the file holds no entry to import: cluster typo is not"
        " created\n",
    )
    assert not Cluster.objects.filter(name="typo").exists()


def test_a_file_of_nuls_is_refused(run: Run, tmp_path: Path) -> None:
    """A file zeroed by a crash reads as blank lines, which would be a tree with no node."""
    path = tmp_path / "resource_group"
    path.write_bytes(b"\0" * 5000)
    ran = run("import_resource_group", str(path), "--cluster", "typo")
    assert ran.err == f"{path}: nothing imported: holds only blank lines: not a resource_group\n"
    assert ran.status == 1


def chain(levels: int) -> str:
    """A resource_group of `levels` groups, each the only child of the one before."""
    lines = [f"g{n} {n + 10} {f'g{n - 1}' if n else 'root'} 10" for n in range(levels)]
    return "\n".join(lines) + "\n"


def test_a_tree_deeper_than_max_tree_depth_is_refused_naming_the_entry(
    run: Run, tmp_path: Path, settings: Any
) -> None:
    settings.MAX_TREE_DEPTH = 100
    path = write(tmp_path, chain(101))
    ran = run("import_resource_group", path, "--cluster", "deep")
    assert ran.status == 1
    assert (
        f"{path}: nothing imported: entry g100 is 101 levels below the root, deeper than"
        " MAX_TREE_DEPTH (100)"
    ) in ran.err
    assert not Cluster.objects.filter(name="deep").exists()
    assert (
        run("import_resource_group", write(tmp_path, chain(100)), "--cluster", "deep").status == 0
    )
    assert Node.objects.filter(cluster__name="deep").count() == 102  # TREEROOT and unknown


def test_a_3000_level_tree_is_stored_cycled_and_listed_without_recursion(
    run: Run, tmp_path: Path, settings: Any
) -> None:
    """Every walk of the tree is a loop: 3,000 levels are three times the interpreter's
    recursion limit, which any recursive walk (store, metrics, ranks, cycle, listing) hits."""
    import sys

    assert sys.getrecursionlimit() < 3000
    settings.MAX_TREE_DEPTH = 3000
    path = write(tmp_path, chain(3000))
    assert run("import_resource_group", path, "--cluster", "deep").status == 0
    cycle = run("run_cycle", "--cluster", "deep", "--now", "2026-01-01T00:00:00Z")
    assert cycle.status == 0, cycle.err
    listed = run("export_tree", "--cluster", "deep", "--format", "json")
    assert listed.status == 0, listed.err
    deepest = Node.objects.get(cluster__name="deep", name="g2999")
    assert deepest.kind == NodeKind.USER
    assert deepest.fairshare_perc == pytest.approx(1.0)
    assert '"depth": 3000' in listed.out
