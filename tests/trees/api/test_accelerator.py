"""An Altair Accelerator cluster through the read API: the seed's /class/vcs picture
(tests/accounting/accelerator_site.py) with its FS_* fields in the tree, a node, its history and
the tree at a time; the filters, ETags and the stored listing; who sees what; the endpoints
Accelerator has no answer for (404s that say why); hostile parameters.

By hand (every share ×10,000): /class/vcs.u1's target is 1/2 × 1/2 = 2500 and it runs 3 of 16
jobs, 1875, 625 under; but 3 of /class/vcs's 4 against a local target of 1/2: +2500.
/class/vcs.u5 runs 1 of 16, 625, 1875 under, and 1 of 4 locally: -2500; its queued job ranks
it 0, and every group without a queued job is -1 (FS_RANK9 9999999).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounting.models import NodeHistory
from accounting.services.cycles import cycle_run
from tests.accounting.accelerator_site import NOW, site_made
from tests.accounting.test_metrics import pbs_site
from tests.cast import login, login_made, member_made
from tests.fairshare_site.test_hostile_queries import HOSTILE, RAW
from tests.trees.api.test_views import TREE, bearer, names, ok, tree_nodes
from trees.api.schemas import (
    ACCELERATOR_DETAIL_EXAMPLE,
    ACCELERATOR_HISTORY_EXAMPLE,
    ACCELERATOR_TREE_EXAMPLE,
)
from trees.models import Cluster, Node
from trees.services.tree_json import tree_json_write

pytestmark = pytest.mark.django_db

EVERY_GROUP = ["/", "/class", "/class/hsim", "/class/hsim.u2", "/class/vcs", "/class/vcs.u1",
               "/class/vcs.u5"]  # fmt: skip
NOT_PBS = {"usage_perc": None, "fairshare_tree_usage": None, "fairshare_factor": None,
           "level_fs": None, "fairshare_rank": None}  # fmt: skip
U1 = {
    "FS_TARGET": 2500, "FS_RUNNING": 1875, "FS_RUNNING_COUNT": 3, "FS_EXCESS_RUNNING": -625,
    "FS_EXCESS_RUNNING_LOCAL": 2500, "FS_HISTORY": 1875, "FS_EXCESS_HISTORY": -625,
    "FS_RANK": -1, "FS_RANK9": 9_999_999, "active": True, "window": 7200, "window_set": None,
    "distance": -0.6875,  # fairshare.relative 2, alpha 10: (r - t) + 10 (h - t) = -0.0625 × 11
}  # fmt: skip


@pytest.fixture
def vov(tmp_path: Path) -> Cluster:
    return site_made(tmp_path)


def group(name: str) -> Node:
    return Node.objects.get(cluster__name="vov", name=name)


def by_name(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {doc["name"]: doc for doc in nodes}


def fs(doc: dict[str, Any], *fields: str) -> tuple[Any, ...]:
    return tuple(doc["accelerator"][field] for field in fields)


# --- the tree ---------------------------------------------------------------------------------


def test_the_tree_has_the_seed_s_fs_fields(client: Client, vov: Cluster) -> None:
    login(client, "ann")
    nodes = by_name(tree_nodes(client, "vov"))
    assert list(nodes) == EVERY_GROUP
    u1 = nodes["/class/vcs.u1"]
    assert u1 == {
        "id": group("/class/vcs.u1").pk, "name": "/class/vcs.u1", "kind": "user",
        "parent": group("/class/vcs").pk, "depth": 3, "shares": 100, "fairshare_perc": 0.25,
        "usage": 3.0, **NOT_PBS, "accelerator": U1, "children": 0, "opens": True,
    }  # fmt: skip
    u5 = nodes["/class/vcs.u5"]
    assert fs(u5, "FS_TARGET", "FS_RUNNING", "FS_RUNNING_COUNT", "FS_EXCESS_RUNNING",
              "FS_EXCESS_RUNNING_LOCAL", "FS_RANK", "FS_RANK9") == (
        2500, 625, 1, -1875, -2500, 0, 0,
    )  # fmt: skip
    for name in EVERY_GROUP:
        if name != "/class/vcs.u5":
            assert fs(nodes[name], "FS_RANK", "FS_RANK9") == (-1, 9_999_999), name
        assert "slurm" not in nodes[name]
        assert {key: nodes[name][key] for key in NOT_PBS} == NOT_PBS, name
    assert fs(nodes["/class/hsim"], "FS_TARGET", "FS_RUNNING", "FS_EXCESS_RUNNING") == (
        5000, 7500, 2500,
    )  # fmt: skip
    assert fs(nodes["/"], "FS_TARGET", "FS_RUNNING", "FS_RUNNING_COUNT") == (10_000, 10_000, 16)
    assert (nodes["/"]["shares"], nodes["/"]["parent"]) == (None, None)


def test_the_cluster_carries_its_fairshare_settings(client: Client, vov: Cluster) -> None:
    login(client, "ann")
    cluster = ok(client.get("/api/clusters/vov/"))
    assert cluster["scheduler"] == "accelerator"
    assert (
        cluster["fairshare_relative"], cluster["fairshare_relative_alpha"],
        cluster["scheduler_iteration"],
    ) == (2, 10.0, 600.0)  # fmt: skip
    assert "tree_version" not in cluster  # PBS's share edits only
    assert "fairshare_algorithm" not in cluster  # Slurm's
    assert ok(client.get(TREE.format("vov")))["cluster"] == {
        key: value for key, value in cluster.items() if key != "usage_unit"
    }


def test_the_stored_listing_answers_what_the_nodes_do(client: Client, vov: Cluster) -> None:
    login(client, "ann")
    built = tree_nodes(client, "vov")
    assert tree_json_write(cluster_id=vov.pk)
    vov.refresh_from_db()
    assert vov.tree_json_current
    listed = tree_nodes(client, "vov")
    assert listed == built
    vcs = str(group("/class/vcs").pk)
    assert names(tree_nodes(client, "vov", node=vcs, depth="3")) == [
        "/class/vcs", "/class/vcs.u1", "/class/vcs.u5",
    ]  # fmt: skip


def test_the_tree_filters_by_subtree_depth_and_name(client: Client, vov: Cluster) -> None:
    login(client, "ann")
    vcs = str(group("/class/vcs").pk)
    assert names(tree_nodes(client, "vov", node=vcs)) == [
        "/class/vcs", "/class/vcs.u1", "/class/vcs.u5",
    ]  # fmt: skip
    assert names(tree_nodes(client, "vov", depth="1")) == ["/", "/class"]
    assert names(tree_nodes(client, "vov", node=vcs, depth="2")) == ["/class/vcs"]
    assert names(tree_nodes(client, "vov", q="U5")) == [
        "/", "/class", "/class/vcs", "/class/vcs.u5",
    ]  # fmt: skip
    assert names(tree_nodes(client, "vov", q="nobody")) == []


def test_the_tree_at_a_time_has_the_fs_fields_the_history_keeps(
    client: Client, vov: Cluster
) -> None:
    login(client, "ann")
    before = by_name(tree_nodes(client, "vov", at=(NOW - timedelta(minutes=5)).isoformat()))
    assert list(before) == EVERY_GROUP
    u1 = before["/class/vcs.u1"]
    # Ten minutes before NOW nothing ran yet: u1 waited, second after u2 (whose target is 1/2).
    assert u1["accelerator"] == {
        "FS_TARGET": 2500, "FS_RUNNING": 0, "FS_RUNNING_COUNT": 0, "FS_HISTORY": 0,
        "FS_RANK": 1, "FS_RANK9": 1,
        # Not kept in history: null rather than today's values.
        "FS_EXCESS_RUNNING": None, "FS_EXCESS_RUNNING_LOCAL": None, "FS_EXCESS_HISTORY": None,
        "active": None, "window": None, "window_set": None, "distance": None,
    }  # fmt: skip
    assert (u1["as_of"], u1["usage"], u1["fairshare_perc"], u1["shares"]) == (
        (NOW - timedelta(minutes=10)).isoformat(), 0.0, 0.25, 100,
    )  # fmt: skip
    assert {key: u1[key] for key in NOT_PBS} == NOT_PBS
    assert fs(before["/class/hsim.u2"], "FS_RANK", "FS_RANK9") == (0, 0)
    now = by_name(tree_nodes(client, "vov", at=NOW.isoformat()))
    assert fs(now["/class/vcs.u1"], "FS_TARGET", "FS_RUNNING", "FS_RUNNING_COUNT", "FS_HISTORY",
              "FS_RANK", "FS_RANK9") == (2500, 1875, 3, 1875, -1, 9_999_999)  # fmt: skip
    assert fs(now["/class/vcs.u5"], "FS_RANK", "FS_RANK9") == (0, 0)
    long_before = client.get(TREE.format("vov"), {"at": (NOW - timedelta(hours=1)).isoformat()})
    assert (long_before.status_code, long_before.json()["parameter"]) == (400, "at")


def test_a_tree_answer_gets_a_304_until_a_cycle_or_a_setting_changes_it(
    client: Client, vov: Cluster
) -> None:
    login(client, "ann")
    url = TREE.format("vov")
    tag = client.get(url)["ETag"]
    held = client.get(url, headers={"If-None-Match": tag})
    assert (held.status_code, held.content) == (304, b"")
    cycle_run(cluster=vov, now=NOW + timedelta(minutes=10))
    after_cycle = client.get(url, headers={"If-None-Match": tag})
    assert after_cycle.status_code == 200
    tag = after_cycle["ETag"]
    assert client.get(url, headers={"If-None-Match": tag}).status_code == 304
    Cluster.objects.filter(pk=vov.pk).update(fairshare_relative=1)
    changed = client.get(url, headers={"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed.json()["cluster"]["fairshare_relative"] == 1


# --- a node -----------------------------------------------------------------------------------


def test_a_node_s_detail_has_its_path_and_children_and_no_pbs_projection(
    client: Client, vov: Cluster
) -> None:
    login(client, "ann")
    detail = ok(client.get(f"/api/nodes/{group('/class/vcs.u1').pk}/"))
    assert [doc["name"] for doc in detail["path"]] == ["/", "/class", "/class/vcs", "/class/vcs.u1"]
    assert detail["node"] == detail["path"][-1]
    assert detail["node"]["accelerator"] == U1
    # Accelerator ranks a group by its own distance: no level of its path pulls it down.
    assert (detail["furthest_over_target"], detail["recovery"], detail["children"]) == (
        None, None, [],
    )  # fmt: skip
    vcs = ok(client.get(f"/api/nodes/{group('/class/vcs').pk}/"))
    children = by_name(vcs["children"])
    assert list(children) == ["/class/vcs.u1", "/class/vcs.u5"]
    assert children["/class/vcs.u1"]["accelerator"] == U1
    assert fs(children["/class/vcs.u5"], "FS_EXCESS_RUNNING_LOCAL", "FS_RANK") == (-2500, 0)


def test_a_node_s_history_has_the_fs_fields_kept(client: Client, vov: Cluster) -> None:
    login(client, "ann")
    u1 = group("/class/vcs.u1")
    points = ok(client.get(f"/api/nodes/{u1.pk}/history/"))["results"]
    assert [point["at"] for point in points] == [
        (NOW - timedelta(minutes=10)).isoformat(), NOW.isoformat(),
    ]  # fmt: skip
    assert [point["accelerator"] for point in points] == [
        {"FS_TARGET": 2500, "FS_RUNNING": 0, "FS_RUNNING_COUNT": 0, "FS_HISTORY": 0,
         "FS_RANK": 1, "FS_RANK9": 1},
        {"FS_TARGET": 2500, "FS_RUNNING": 1875, "FS_RUNNING_COUNT": 3, "FS_HISTORY": 1875,
         "FS_RANK": -1, "FS_RANK9": 9_999_999},
    ]  # fmt: skip
    last = points[-1]
    assert (last["usage"], last["fairshare_perc"]) == (3.0, 0.25)
    assert {key: last[key] for key in NOT_PBS} == NOT_PBS
    since = ok(client.get(f"/api/nodes/{u1.pk}/history/", {"since": NOW.isoformat()}))
    assert [point["at"] for point in since["results"]] == [NOW.isoformat()]


def test_other_schedulers_history_has_a_null_accelerator(client: Client) -> None:
    cluster = pbs_site()
    alice = Node.objects.get(cluster=cluster, name="alice")
    NodeHistory.objects.create(
        node=alice, at=NOW, usage=1000.0, fairshare_perc=0.25, fairshare_tree_usage=0.5,
        fairshare_factor=0.25,
    )  # fmt: skip
    login(client, "ann")
    (point,) = ok(client.get(f"/api/nodes/{alice.pk}/history/"))["results"]
    assert (point["accelerator"], point["fairshare_factor"], point["usage_perc"]) == (
        None, 0.25, 4000.0,
    )  # fmt: skip


def test_the_schema_s_examples_are_the_api_s_answers(client: Client, vov: Cluster) -> None:
    """The examples /api/schema/ shows are this picture's answers, ids aside."""
    login(client, "ann")
    example_ids = {1: "/", 2: "/class", 4: "/class/vcs", 6: "/class/vcs.u1", 7: "/class/vcs.u5"}
    ids = {group(name).pk: pk for pk, name in example_ids.items()}

    def renumbered(doc: dict[str, Any]) -> dict[str, Any]:
        return doc | {"id": ids[doc["id"]], "parent": ids.get(doc["parent"])}

    tree = ok(client.get(TREE.format("vov"), {"q": "vcs"}))
    example = ACCELERATOR_TREE_EXAMPLE
    assert [renumbered(doc) for doc in tree["nodes"]] == example["nodes"]
    assert set(tree["cluster"]) == set(example["cluster"])
    detail = ok(client.get(f"/api/nodes/{group('/class/vcs').pk}/"))
    assert {
        "cluster": detail["cluster"],
        "node": renumbered(detail["node"]),
        "path": [renumbered(doc) for doc in detail["path"]],
        "furthest_over_target": detail["furthest_over_target"],
        "children": [renumbered(doc) for doc in detail["children"]],
        **{key: detail[key] for key in ("children_count", "children_next", "children_previous")},
        "recovery": detail["recovery"],
    } == ACCELERATOR_DETAIL_EXAMPLE
    history = ok(client.get(f"/api/nodes/{group('/class/vcs.u1').pk}/history/"))
    assert history == ACCELERATOR_HISTORY_EXAMPLE


# --- what Accelerator has no answer for -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("/api/clusters/vov/jobs/", "cluster vov has no job priorities (PBS and Slurm only)"),
        ("/api/clusters/vov/jobs/?state=queued",
         "cluster vov has no job priorities (PBS and Slurm only)"),
        ("/api/jobs/vov/q7/priority/", "cluster vov has no job priorities (PBS and Slurm only)"),
        ("/api/jobs/vov/13/priority/", "cluster vov has no job priorities (PBS and Slurm only)"),
        ("/api/clusters/vov/compare/?a=/class/vcs.u1&b=/class/vcs.u5",
         "cluster vov compares no two entities (PBS and Slurm only); its groups' FS_RANK, in"
         " its tree, orders them"),
        ("/api/clusters/vov/shares/", "cluster vov keeps no shares listing"),
    ],
)  # fmt: skip
def test_priorities_comparisons_and_listings_are_a_404_saying_why(
    client: Client, vov: Cluster, url: str, detail: str
) -> None:
    login(client, "alice", staff=True)
    response = client.get(url)
    assert (response.status_code, response.json()) == (
        404, {"error": "not found", "detail": detail},
    )  # fmt: skip
    # The same to a member's token: never a 500, nor whether the job exists.
    bea = login_made("bea")
    member_made(bea, group("/class/vcs"))
    assert Client().get(url, headers=bearer(bea)).json() == response.json()


# --- who sees what ----------------------------------------------------------------------------


@pytest.fixture
def bea(vov: Cluster) -> User:
    """A member of /class/vcs."""
    user = login_made("bea")
    member_made(user, group("/class/vcs"))
    return user


def test_with_private_usage_a_member_sees_her_subtree_and_her_path_s_siblings(
    vov: Cluster, bea: User
) -> None:
    Cluster.objects.filter(pk=vov.pk).update(private_usage=True)
    client = Client()
    client.force_login(bea)
    nodes = by_name(tree_nodes(client, "vov"))
    assert list(nodes) == ["/", "/class", "/class/hsim", "/class/vcs", "/class/vcs.u1",
                           "/class/vcs.u5"]  # fmt: skip
    # A sibling along her path: its totals, as on PBS and Slurm, without its members.
    hsim = nodes["/class/hsim"]
    assert (hsim["opens"], hsim["children"]) == (False, 0)
    assert fs(hsim, "FS_TARGET", "FS_RUNNING_COUNT") == (5000, 12)
    assert nodes["/class/vcs.u1"]["accelerator"] == U1
    assert names(tree_nodes(client, "vov", q="u2")) == []
    hidden = {"hsim": group("/class/hsim").pk, "u2": group("/class/hsim.u2").pk}
    for url in (f"/api/nodes/{hidden['hsim']}/", f"/api/nodes/{hidden['u2']}/",
                f"/api/nodes/{hidden['hsim']}/history/", f"/api/nodes/{hidden['u2']}/jobs/",
                f"{TREE.format('vov')}?node={hidden['u2']}"):  # fmt: skip
        assert client.get(url).status_code == 404, url
    assert names(tree_nodes(client, "vov", node=str(hidden["hsim"]))) == ["/class/hsim"]
    u1 = group("/class/vcs.u1").pk
    for url in (f"/api/nodes/{u1}/", f"/api/nodes/{u1}/history/", f"/api/nodes/{u1}/jobs/"):
        assert client.get(url).status_code == 200, url
    jobs = ok(client.get(f"/api/nodes/{u1}/jobs/"))["results"]
    assert sorted(job["job_id"] for job in jobs) == ["13", "14", "15"]


def test_without_private_usage_a_member_reads_every_group(vov: Cluster, bea: User) -> None:
    assert Client().get(TREE.format("vov")).status_code == 401  # anonymous
    client = Client()
    client.force_login(bea)
    nodes = tree_nodes(client, "vov")
    assert names(nodes) == EVERY_GROUP
    assert all(doc["opens"] for doc in nodes)
    u2 = group("/class/hsim.u2").pk
    assert ok(client.get(f"/api/nodes/{u2}/"))["node"]["accelerator"]["FS_RUNNING"] == 7500


# --- hostile parameters -----------------------------------------------------------------------

ENDPOINTS = (
    ("/api/clusters/vov/tree/", ("node", "depth", "q", "at")),
    ("/api/nodes/{u1}/", ("node", "at")),
    ("/api/nodes/{u1}/history/", ("since", "until", "page_size", "cursor")),
    ("/api/nodes/{u1}/jobs/", ("state", "since", "until", "page_size", "cursor")),
    ("/api/clusters/vov/compare/", ("a", "b")),
    ("/api/clusters/vov/jobs/", ("state",)),
    ("/api/jobs/vov/q7/priority/", ("state",)),
)


@pytest.mark.parametrize(("path", "parameters"), ENDPOINTS)
def test_no_hostile_value_gives_a_500(
    client: Client, vov: Cluster, path: str, parameters: tuple[str, ...]
) -> None:
    login(client, "alice", staff=True)
    url = path.format(u1=group("/class/vcs.u1").pk)
    for parameter in parameters:
        for value in HOSTILE:
            status = client.get(url, {parameter: value}).status_code
            assert status < 500, (url, parameter, value)
        assert client.get(f"{url}?{parameter}={RAW}").status_code < 500, (url, parameter)
