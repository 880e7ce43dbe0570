import json

import pytest

from tests.conftest import Run, examples_or_skip

pytestmark = pytest.mark.django_db

API_FIELDS = {
    "id", "name", "kind", "parent", "depth", "shares", "fairshare_perc", "usage", "usage_perc",
    "fairshare_tree_usage", "fairshare_factor", "level_fs", "fairshare_rank",
}  # fmt: skip


def test_every_node_with_the_api_fields_in_pbs_order(run: Run) -> None:
    folder = examples_or_skip() / "forum_example"
    run("import_resource_group", str(folder / "resource_group"), "--cluster", "forum")
    for line in (folder / "usage.txt").read_text().splitlines():
        run("pbsfs", "--cluster", "forum", "-s", *line.split())
    document = json.loads(run("export_tree", "--cluster", "forum", "--format", "json").out)
    nodes = document["nodes"]
    assert [n["name"] for n in nodes] == [
        "TREEROOT", "group2", "Scott", "Suzy", "group1", "Cathy", "Bob", "unknown",
    ]  # fmt: skip
    assert all(set(n) == API_FIELDS for n in nodes)
    by_name = {n["name"]: n for n in nodes}
    assert by_name["TREEROOT"]["parent"] is None
    assert by_name["TREEROOT"]["shares"] is None
    assert by_name["Scott"]["parent"] == by_name["group2"]["id"]
    assert by_name["Scott"]["depth"] == 2
    assert f"{by_name['Scott']['fairshare_tree_usage']:f}" == "0.832973"
    assert round(by_name["Bob"]["fairshare_factor"], 4) == 0.6477
    assert round(by_name["Suzy"]["fairshare_factor"], 4) == 0.3818  # usage 0: see test_pbs.py
    assert by_name["unknown"]["usage_perc"] == -1
    assert document["cluster"]["name"] == "forum"
