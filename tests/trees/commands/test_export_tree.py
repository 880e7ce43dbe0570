import json
from pathlib import Path

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


SLURM_P = """\
Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|400|1.000000|
 root|root|1|0.090909|0|0.000000|1.000000
 a||6|0.545455|100|0.250000|
  a|x|parent|0.545455|100|1.000000|0.750000
 b||4|0.363636|300|0.750000|
  b|y|3|0.750000|300|1.000000|0.250000
  b|z|1|0.250000|0|0.000000|0.500000
"""


def test_slurm_nodes_carry_level_fs_rank_and_the_sshare_columns(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sshare.txt"
    path.write_text(SLURM_P)
    assert run("import_sshare", "--cluster", "s", str(path)).status == 0
    document = json.loads(run("export_tree", "--cluster", "s", "--format", "json").out)
    assert document["cluster"]["fairshare_algorithm"] == "fair_tree"
    nodes = {(n["slurm"]["account"], n["slurm"]["user"]): n for n in document["nodes"]}
    assert all(set(n) >= API_FIELDS for n in nodes.values())
    root, x, z = nodes[("root", None)], nodes[("a", "x")], nodes[("b", "z")]
    # Level FS: a = (6/11)/(100/400) = 2.1818..., b = (4/11)/(300/400); x (`parent`) is inf.
    assert nodes[("a", None)]["level_fs"] == pytest.approx(24 / 11)
    assert nodes[("b", None)]["level_fs"] == pytest.approx(16 / 33)
    assert x["level_fs"] == "inf"
    assert x["slurm"]["raw_shares"] == "parent"
    assert z["level_fs"] == "inf"
    assert z["slurm"]["raw_usage"] == 0
    # 4 users: the root user (inf), then a (higher Level FS): x; then b: z (inf), y.
    ranks = {key: n["fairshare_rank"] for key, n in nodes.items() if n["fairshare_rank"]}
    assert ranks == {
        ("root", "root"): {"rank": 4, "of": 4},
        ("a", "x"): {"rank": 3, "of": 4},
        ("b", "z"): {"rank": 2, "of": 4},
        ("b", "y"): {"rank": 1, "of": 4},
    }
    assert nodes[("b", "y")]["fairshare_factor"] == 0.25
    assert nodes[("a", None)]["fairshare_factor"] is None  # Fair Tree accounts have none
    assert root["slurm"]["raw_shares"] is None
    assert root["slurm"]["norm_usage"] is None
    assert root["usage_perc"] is None
    assert root["fairshare_tree_usage"] is None
    assert nodes[("b", "y")]["fairshare_perc"] == pytest.approx(4 / 11 * 3 / 4)
