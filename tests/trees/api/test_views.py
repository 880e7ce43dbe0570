"""The read API (DESIGN §6): the tree's numbers as pbsfs and sshare print them, its filters and
history, ETags and 304s, a node's path, history and jobs, comparisons, a person's standing, the
audit trail, trends, the scheduler's own listings, JSON errors and throttling.

Expected numbers come from the real programs' captures (pbsfs -g, pbsfs -p, pbsfs -c in
/work/shared/examples) or from `manage.py sshare` on the Slurm sample, whose rows are the
sample's real sshare output.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import accounting.selectors
from accounting.models import Cycle, Job, NodeHistory
from accounting.services.history import history_write
from tests.cast import login, login_made, member_made, node
from tests.conftest import EXAMPLES, examples_or_skip
from tests.trees.views.test_tree import children_made, pbsfs_g_captured
from tests.trees.views.test_trends import many_children_made
from trees.engine.edit import ChildEdit
from trees.engine.pbs import compare as pbs_compare
from trees.engine.pbs import compute as pbs_compute
from trees.explanations import pbs_comparison_explained
from trees.models import ApiToken, Cluster, Node, Role, ShareChange, TokenScope
from trees.quantities import cluster_usage_unit
from trees.selectors.compare import pbs_compare_get
from trees.selectors.pbs import pbs_tree_get, tree_version_get
from trees.services.tokens import api_token_create
from trees.services.tree_edit import tree_edit
from trees.views.parameters import NODE_CHILDREN_PAGE

pytestmark = pytest.mark.django_db

TREE = "/api/clusters/{}/tree/"


def bearer(user: User, scope: str = TokenScope.READ) -> dict[str, str]:
    """The Authorization header of a new token of the user's."""
    made = ApiToken.objects.filter(user=user).count()
    secret = api_token_create(
        user=user, name=f"token {made}", days=1, scope=scope, now=timezone.now()
    )[1]
    return {"Authorization": f"Bearer {secret}"}


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.content
    return response.json()


def tree_nodes(client: Client, cluster: str, **query: str) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = ok(client.get(TREE.format(cluster), query))["nodes"]
    return nodes


def names(nodes: list[dict[str, Any]]) -> list[str]:
    return [doc["name"] for doc in nodes]


def pbs_percent(fraction: float) -> str:
    """The fraction as pbsfs prints the percentage: a float32 times 100.0f, `%f`."""
    return format(float(np.float32(fraction) * np.float32(100)), ".6f") + "%"


def whitepaper_shares_edited(name: str, shares: int, *, reason: str = "more for it") -> None:
    """An admin gives an entry of the white paper's tree new shares (its parent kept)."""
    cluster = Cluster.objects.get(name="whitepaper")
    edited = node("whitepaper", name)
    assert edited.parent is not None
    parent = "root" if edited.parent.parent_id is None else edited.parent.name
    tree_edit(
        cluster=cluster,
        edits=[ChildEdit(original=name, name=name, parent=parent, shares=shares)],
        reason=reason,
        version=tree_version_get(cluster=cluster),
        opened_at=timezone.now(),
        user=User.objects.filter(is_staff=True).first(),
    )


# --- the tree's numbers are the schedulers' -------------------------------------------------


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("cluster", "example"), [("whitepaper", "seed_tree"), ("forum", "forum_example")]
)
def test_the_tree_holds_the_numbers_pbsfs_g_printed(
    client: Client, cluster: str, example: str
) -> None:
    """Every entity of the captures: usage and usage/perc as `%.0f`, fairshare_tree_usage as
    `%f`, the target share a fraction whose float32 percentage is pbsfs's `Percentage`, and the
    factor 2^-(tree usage / perc) of the printed values."""
    examples_or_skip()
    login(client, "ann")
    by_name = {doc["name"]: doc for doc in tree_nodes(client, cluster)}
    captured = pbsfs_g_captured(example)
    assert len(captured) == {"whitepaper": 14, "forum": 8}[cluster]
    for name, printed in captured:
        doc = by_name[name]
        got = {
            "Shares": "-1" if doc["shares"] is None else str(doc["shares"]),
            "Percentage": pbs_percent(doc["fairshare_perc"]),
            "fairshare_tree_usage": format(doc["fairshare_tree_usage"], ".6f"),
            "usage": format(doc["usage"], ".0f"),
            "usage/perc": format(doc["usage_perc"], ".0f"),
        }
        wanted = {key: printed[key].split(" ")[0] for key in got}
        assert got == wanted, name
        perc = float(printed["Percentage"].rstrip("%")) / 100
        tree_usage = float(printed["fairshare_tree_usage"])
        factor = 0.0 if perc == 0 else 2 ** -(tree_usage / perc)
        assert doc["fairshare_factor"] == pytest.approx(factor, rel=1e-4, abs=1e-9), name


@pytest.mark.usefixtures("samples")
def test_the_white_paper_s_factors_are_the_hand_checked_ones(client: Client) -> None:
    """L5: 2^-(0.333750 / 0.100000); L7 (on target and under): 2^-(0.124844 / 0.4)."""
    login(client, "ann")
    by_name = {doc["name"]: doc for doc in tree_nodes(client, "whitepaper")}
    l5, l7 = by_name["L5"], by_name["L7"]
    assert (
        format(l5["fairshare_tree_usage"], ".6f"),
        format(l5["fairshare_factor"], ".6f"),
        l5["usage"],
        format(l5["usage_perc"], ".0f"),
    ) == ("0.333750", "0.098927", 100.0, "1000")
    assert format(l7["fairshare_factor"], ".6f") == "0.805463"
    assert (l5["level_fs"], l5["fairshare_rank"], "slurm" in l5) == (None, None, False)


def sshare_parsed(*args: str) -> list[dict[str, str]]:
    """`manage.py sshare ARGS -P --cluster fairtree`, each line by its header's columns."""
    out = StringIO()
    call_command("sshare", *args, "-P", "--cluster", "fairtree", stdout=out)
    header, *lines = out.getvalue().splitlines()
    return [dict(zip(header.split("|"), line.split("|"), strict=True)) for line in lines]


def sshare_number(text: str) -> str | None:
    """An sshare cell as the API's JSON holds it: blank None, `inf` the string."""
    return None if text == "" else text


def api_number(value: float | str | None) -> str | None:
    return value if value is None or isinstance(value, str) else format(value, ".6f")


def association(doc: dict[str, Any]) -> tuple[str, str]:
    return doc["slurm"]["account"], doc["slurm"]["user"] or ""


@pytest.mark.usefixtures("samples")
def test_every_association_s_level_fs_and_fairshare_are_what_sshare_prints(
    client: Client,
) -> None:
    """The sample's 18 associations; a FairShare=parent user's (dia's) own Level FS, which
    sshare leaves blank, is the test below."""
    login(client, "ann")
    by_association = {association(doc): doc for doc in tree_nodes(client, "fairtree")}
    lines = sshare_parsed("-a", "-l")
    assert len(lines) == len(by_association) == 18
    compared = 0
    for line in lines:
        doc = by_association[(line["Account"].strip(), line["User"])]
        assert str(doc["slurm"]["raw_usage"]) == line["RawUsage"]
        assert api_number(doc["fairshare_factor"]) == sshare_number(line["FairShare"]), line
        assert api_number(doc["slurm"]["level_fs"]) == sshare_number(line["LevelFS"]), line
        if line["RawShares"] == "parent":
            continue
        assert api_number(doc["level_fs"]) == sshare_number(line["LevelFS"]), line
        compared += 1
    assert compared == 17
    # Hand-checked from the sample's sshare.txt: ben's Level FS, gus's infinite one.
    assert by_association[("astro", "ben")]["level_fs"] == 2.65
    assert by_association[("cs", "gus")]["level_fs"] == "inf"


@pytest.mark.usefixtures("samples")
def test_a_fairshare_parent_user_s_sshare_columns_have_sshare_s_blank_level_fs(
    client: Client,
) -> None:
    login(client, "ann")
    (dia,) = [line for line in sshare_parsed("-a", "-l") if line["RawShares"] == "parent"]
    assert (dia["User"], dia["LevelFS"]) == ("dia", "")
    doc = next(doc for doc in tree_nodes(client, "fairtree") if association(doc) == ("bio", "dia"))
    assert doc["slurm"]["level_fs"] is None
    # Fair Tree's own value: a `parent` user ranks first (slurmctld's level_fs is INFINITY).
    assert doc["level_fs"] == "inf"
    assert format(doc["fairshare_factor"], ".6f") == dia["FairShare"] == "0.909091"


# --- filters ----------------------------------------------------------------------------------

# pbsfs -p's order (expected_pbsfs.txt): a parent before its children, newest sibling first.
WHITEPAPER = ["TREEROOT", "B1", "L1", "L2", "B2", "L3", "L4", "B3", "L5", "L6", "L7", "B4", "L8",
              "unknown"]  # fmt: skip


@pytest.mark.usefixtures("samples")
def test_the_tree_built_from_the_nodes_filters_by_subtree_depth_and_name(client: Client) -> None:
    assert not Cluster.objects.get(name="whitepaper").tree_json_current
    filters_checked(client)


@pytest.mark.usefixtures("demo")
def test_the_tree_s_stored_listing_filters_by_subtree_depth_and_name(client: Client) -> None:
    assert Cluster.objects.get(name="whitepaper").tree_json_current  # the demo's stores listed it
    filters_checked(client)


def filters_checked(client: Client) -> None:
    login(client, "ann")
    assert names(tree_nodes(client, "whitepaper")) == WHITEPAPER
    b2 = node("whitepaper", "B2")
    subtree = tree_nodes(client, "whitepaper", node=str(b2.pk))
    assert names(subtree) == ["B2", "L3", "L4", "B3", "L5", "L6"]
    assert [doc["depth"] for doc in subtree] == [1, 2, 2, 2, 3, 3]
    assert names(tree_nodes(client, "whitepaper", depth="1")) == [
        "TREEROOT", "B1", "B2", "L7", "B4", "unknown",
    ]  # fmt: skip
    assert names(tree_nodes(client, "whitepaper", depth="0")) == ["TREEROOT"]
    assert names(tree_nodes(client, "whitepaper", node=str(b2.pk), depth="2")) == [
        "B2", "L3", "L4", "B3",
    ]  # fmt: skip
    assert names(tree_nodes(client, "whitepaper", q="l5")) == ["TREEROOT", "B2", "B3", "L5"]
    assert names(tree_nodes(client, "whitepaper", q="B3")) == ["TREEROOT", "B2", "B3"]
    assert names(tree_nodes(client, "whitepaper", q="nobody")) == []


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("depth=-1", "depth must be a whole number from 0 to 1000"),
        ("depth=1001", "depth must be a whole number from 0 to 1000"),
        ("node=abc", "node must be an id, a whole number from 1"),
        ("at=yesterday", "at must be an ISO 8601 time, such as 2026-11-26T12:00:00Z"),
        ("q=", "q must be 1 to 255 characters of a name"),
    ],
)
def test_bad_tree_parameters_are_a_400_naming_the_parameter(
    client: Client, query: str, detail: str
) -> None:
    login(client, "ann")
    response = client.get(f"{TREE.format('whitepaper')}?{query}")
    assert (response.status_code, response["Content-Type"]) == (400, "application/json")
    assert response.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": detail,
        "parameter": query.split("=")[0],
    }


@pytest.mark.usefixtures("samples")
def test_unknown_clusters_and_nodes_are_a_404_in_json(client: Client) -> None:
    login(client, "ann")
    missing = client.get(TREE.format("nowhere"))
    assert (missing.status_code, missing.json()) == (
        404,
        {"error": "not found", "detail": "no such cluster"},
    )
    other = node("forum", "Bob").pk  # a node, of another cluster
    for query in (f"node={other}", "node=999999", "node=99999999999999999999"):
        answer = client.get(f"{TREE.format('whitepaper')}?{query}")
        assert answer.status_code == 404, query
        assert answer.json()["error"] == "not found"
    assert client.get("/api/nodes/999999/").json() == {
        "error": "not found",
        "detail": "no such node",
    }


def history_written(name: str, at: datetime, usage: float, factor: float) -> None:
    """A node's point at a kept cycle of the white paper's tree (its ledger row made once)."""
    entry = node("whitepaper", name)
    Cycle.objects.get_or_create(cluster=entry.cluster, at=at, defaults={"started_at": at})
    NodeHistory.objects.create(
        node=entry,
        at=at,
        usage=usage,
        fairshare_perc=0.125,  # a float32 exactly, as the history keeps it
        fairshare_tree_usage=0.25,
        fairshare_factor=factor,
    )


@pytest.mark.usefixtures("samples")
def test_the_tree_at_a_time_is_each_node_s_last_cycle_then_with_its_shares_then(
    client: Client,
) -> None:
    login(client, "ann", staff=True)
    now = timezone.now()
    first, second = now - timedelta(hours=3), now - timedelta(hours=1)
    for at, usage, factor in ((first, 50.0, 0.7), (second, 80.0, 0.6)):
        history_written("L5", at, usage, factor)
        history_written("B3", at, usage * 2, factor)
    whitepaper_shares_edited("L5", 30)  # after both cycles: `at` reads the 10 shares before
    assert node("whitepaper", "L5").shares == 30

    between = tree_nodes(client, "whitepaper", at=(first + timedelta(hours=1)).isoformat())
    assert names(between) == ["B3", "L5"]  # the others have no history
    l5 = between[1]
    assert (l5["as_of"], l5["shares"], l5["usage"], l5["fairshare_factor"]) == (
        first.isoformat(), 10, 50.0, 0.7,
    )  # fmt: skip
    assert (l5["usage_perc"], l5["fairshare_perc"], l5["fairshare_tree_usage"]) == (
        400.0, 0.125, 0.25,
    )  # fmt: skip
    later = tree_nodes(client, "whitepaper", at=(second + timedelta(minutes=1)).isoformat())
    assert [(doc["as_of"], doc["usage"], doc["shares"]) for doc in later] == [
        (second.isoformat(), 160.0, 75), (second.isoformat(), 80.0, 10),
    ]  # fmt: skip
    after_edit = tree_nodes(client, "whitepaper", at=timezone.now().isoformat())
    assert after_edit[1]["shares"] == 30


@pytest.mark.usefixtures("samples")
def test_the_tree_at_a_time_outside_the_history_kept_is_a_400_saying_what_is_kept(
    client: Client,
) -> None:
    login(client, "ann", staff=True)
    url = TREE.format("whitepaper")
    assert client.get(url, {"at": timezone.now().isoformat()}).json()["detail"] == (
        "at must be a time the history holds: whitepaper has no cycle kept yet"
    )
    first = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    history_written("L5", first, 50.0, 0.7)
    history_written("L5", first + timedelta(days=1), 60.0, 0.6)
    for at, detail in (
        (first - timedelta(seconds=1), "at must be a time the history holds: from"
         " 2026-11-20T12:00:00+00:00 (its oldest cycle kept) until now"),
        (datetime(9999, 12, 31, 9, 59, 59, tzinfo=UTC), "at must be a time the history holds:"
         " from 2026-11-20T12:00:00+00:00 (its oldest cycle kept) until now"),
    ):  # fmt: skip
        response = client.get(url, {"at": at.isoformat()})
        assert (response.status_code, response.json()) == (
            400,
            {"error": "the request is not one this endpoint reads", "detail": detail,
             "parameter": "at"},
        )  # fmt: skip
    assert [doc["as_of"] for doc in tree_nodes(client, "whitepaper", at=first.isoformat())] == [
        first.isoformat()
    ]


def history_cycles_written(cluster: Cluster, first: datetime, cycles: int) -> None:
    """`cycles` kept cycles of the whole tree, an hour apart from `first`, as cycles write them."""
    for number in range(cycles):
        at = first + timedelta(hours=number)
        Cycle.objects.create(cluster=cluster, at=at, started_at=at)
        history_write(cluster, at)


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize("listed", [1000, 0])  # the nodes' ids in the query, or a join
def test_the_tree_at_a_time_reads_one_kept_cycle_in_queries_the_history_s_size_does_not_move(
    client: Client, monkeypatch: pytest.MonkeyPatch, listed: int
) -> None:
    monkeypatch.setattr(accounting.selectors, "IDS_LISTED", listed)
    login(client, "ann", staff=True)
    cluster = Cluster.objects.get(name="whitepaper")
    first = timezone.now() - timedelta(days=30)
    history_cycles_written(cluster, first, 3)
    at = (first + timedelta(hours=1, minutes=30)).isoformat()

    def asked() -> tuple[int, list[str]]:
        with CaptureQueriesContext(connection) as queries:
            nodes = tree_nodes(client, "whitepaper", at=at)
        assert {doc["as_of"] for doc in nodes} == {(first + timedelta(hours=1)).isoformat()}
        assert len(nodes) == Node.objects.filter(cluster=cluster).count()
        history = NodeHistory._meta.db_table
        # The throttle's counters in the cache table are the throttle's, not the tree's.
        read = [q["sql"] for q in queries if not re.search("django_cache|SAVEPOINT", q["sql"])]
        return len(read), [sql for sql in read if history in sql]

    few, read = asked()
    # One read of the history, of one cycle's rows: not each node's last row found by a
    # subquery over all of its rows (the table read again inside).
    assert len(read) == 1
    assert read[0].count(f'FROM "{NodeHistory._meta.db_table}"') == 1
    history_cycles_written(cluster, first + timedelta(hours=3), 40)
    assert asked()[0] == few


# --- ETags ------------------------------------------------------------------------------------


@pytest.mark.usefixtures("samples")
def test_a_tree_answer_is_tagged_and_a_client_holding_it_gets_a_304(client: Client) -> None:
    login(client, "ann", staff=True)
    url = TREE.format("whitepaper")
    first = client.get(url)
    tag = first["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{64}"', tag)  # strong: no W/
    # Kept by the client (never by a shared cache) and revalidated with the tag.
    assert first["Cache-Control"] == "private, no-cache"
    assert "Authorization" in first["Vary"]

    again = client.get(url, headers={"If-None-Match": tag})
    assert (again.status_code, again.content, again["ETag"]) == (304, b"", tag)
    assert again["Cache-Control"] == "private, no-cache"
    other_tags = client.get(url, headers={"If-None-Match": '"something-else", ' + tag})
    assert other_tags.status_code == 304
    assert client.get(url, headers={"If-None-Match": '"something-else"'}).status_code == 200
    # Another query is another answer.
    assert client.get(url + "?depth=1", headers={"If-None-Match": tag}).status_code == 200

    whitepaper_shares_edited("L5", 30)
    changed = client.get(url, headers={"If-None-Match": tag})
    assert changed.status_code == 200
    assert changed["ETag"] != tag
    assert next(doc for doc in changed.json()["nodes"] if doc["name"] == "L5")["shares"] == 30


@pytest.mark.usefixtures("samples")
def test_a_cycle_changes_the_tree_s_tag(client: Client) -> None:
    from accounting.services.cycles import cycle_run

    login(client, "ann")
    url = TREE.format("whitepaper")
    tag = client.get(url)["ETag"]
    assert client.get(url, headers={"If-None-Match": tag}).status_code == 304
    cycle_run(cluster=Cluster.objects.get(name="whitepaper"), now=timezone.now())
    assert client.get(url, headers={"If-None-Match": tag}).status_code == 200


@pytest.mark.usefixtures("samples")
def test_different_people_get_different_tags_for_the_same_tree() -> None:
    ann, ben = Client(), Client()
    login(ann, "ann")
    ben_user = login(ben, "ben")
    url = TREE.format("whitepaper")
    ann_answer, ben_answer = ann.get(url), ben.get(url)
    assert ann_answer.content == ben_answer.content  # both read the whole tree
    assert ann_answer["ETag"] != ben_answer["ETag"]
    assert ben.get(url, headers={"If-None-Match": ann_answer["ETag"]}).status_code == 200
    # The same person with a token is another caller too.
    token = Client().get(url, headers=bearer(ben_user))
    assert token["ETag"] not in (ann_answer["ETag"], ben_answer["ETag"])


@pytest.mark.usefixtures("samples")
def test_a_content_tagged_answer_is_tagged_with_its_content_s_hash(client: Client) -> None:
    login(client, "ann")
    first = client.get("/api/clusters/")
    tag = first["ETag"]
    assert tag == '"' + hashlib.sha256(first.content).hexdigest() + '"'
    assert "private" in first["Cache-Control"]
    held = client.get("/api/clusters/", headers={"If-None-Match": tag})
    assert (held.status_code, held.content, held["ETag"]) == (304, b"", tag)
    Cluster.objects.filter(name="forum").update(decay_factor=0.25)
    changed = client.get("/api/clusters/", headers={"If-None-Match": tag})
    assert changed.status_code == 200
    forum = next(c for c in changed.json()["results"] if c["name"] == "forum")
    assert forum["decay_factor"] == 0.25


@pytest.mark.usefixtures("samples")
def test_if_none_match_uses_the_weak_comparison(client: Client) -> None:
    login(client, "ann")
    tag = client.get("/api/clusters/")["ETag"]
    assert client.get("/api/clusters/", headers={"If-None-Match": "W/" + tag}).status_code == 304
    tree_tag = client.get(TREE.format("forum"))["ETag"]  # tagged by what it depends on
    weak = client.get(TREE.format("forum"), headers={"If-None-Match": "W/" + tree_tag})
    assert (weak.status_code, weak["ETag"]) == (304, tree_tag)


def tree_pages(client: Client, url: str) -> Iterator[dict[str, Any]]:
    """Every page of a tree answer, following `next`; each page's `previous` checked."""
    previous = None
    while url:
        page = ok(client.get(url))
        assert page["previous"] == previous
        yield page
        previous, url = url, page["next"]


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize("listing", [True, False])
def test_a_tree_answers_a_page_of_nodes_at_most_and_the_pages_give_every_node_once(
    client: Client, listing: bool
) -> None:
    login(client, "ann", staff=True)
    if not listing:  # the answer built from the nodes, as until the listing's task has run
        Cluster.objects.filter(name="whitepaper").update(tree_json_at=None)
    whole = ok(client.get(TREE.format("whitepaper")))
    assert (names(whole["nodes"]), whole["next"], whole["previous"]) == (WHITEPAPER, None, None)
    base = f"http://testserver{TREE.format('whitepaper')}"
    pages = list(tree_pages(client, f"{base}?depth=2&page_size=5"))
    assert [len(page["nodes"]) for page in pages] == [5, 5, 2]
    every = [doc for page in pages for doc in page["nodes"]]
    assert every == tree_nodes(client, "whitepaper", depth="2")
    assert pages[1]["next"] == f"{base}?depth=2&page=3&page_size=5"
    at = timezone.now()
    history_cycles_written(Cluster.objects.get(name="whitepaper"), at - timedelta(hours=1), 1)
    then = ok(client.get(TREE.format("whitepaper"), {"at": at.isoformat(), "page_size": "3"}))
    assert names(then["nodes"]) == WHITEPAPER[:3]
    assert then["next"] is not None
    for query in ("page_size=0", "page_size=10001", "page=0"):
        response = client.get(f"{TREE.format('whitepaper')}?{query}")
        assert (response.status_code, response.json()["parameter"]) == (400, query.split("=")[0])


@pytest.mark.usefixtures("samples")
def test_a_node_s_children_come_a_page_at_a_time_with_their_count(client: Client) -> None:
    login(client, "ann", staff=True)
    every = children_made("whitepaper", "B4", NODE_CHILDREN_PAGE + 5)
    url = f"/api/nodes/{node('whitepaper', 'B4').pk}/"
    first = ok(client.get(url))
    assert [doc["name"] for doc in first["children"]] == every[:NODE_CHILDREN_PAGE]
    assert (first["children_count"], first["children_previous"]) == (len(every), None)
    assert first["children_next"] == f"http://testserver{url}?page=2"
    second = ok(client.get(first["children_next"]))
    assert [doc["name"] for doc in second["children"]] == every[NODE_CHILDREN_PAGE:]
    assert (second["children_next"], second["children_previous"]) == (
        None, f"http://testserver{url}",
    )  # fmt: skip
    small = ok(client.get(url, {"page_size": "2", "page": "3"}))
    assert [doc["name"] for doc in small["children"]] == every[4:6]
    assert client.get(url, {"page": "99"}).status_code == 404
    assert client.get(url, {"page_size": "1001"}).status_code == 400


# --- a node -----------------------------------------------------------------------------------

PATH_LINE = re.compile(r"(\S+)\s*:\s*-?\d+\s+(\d+) / ([\d.]+) = (-?\d+)")


def path_captured(example: str, name: str) -> list[tuple[str, str, str, str]]:
    """The `Path from root` of pbsfs -g NAME: each level's name, usage, perc and usage/perc."""
    text = (EXAMPLES / example / f"expected_g_{name}.txt").read_text()
    found = []
    for line in text.split("Path from root:")[1].strip().splitlines():
        match = PATH_LINE.fullmatch(line)
        assert match is not None, line
        level, usage, perc, usage_perc = match.groups()
        found.append((level, usage, perc, usage_perc))
    return found


@pytest.mark.usefixtures("samples")
def test_a_node_s_detail_has_its_path_with_pbsfs_g_s_values_and_what_pulls_it_down(
    client: Client,
) -> None:
    examples_or_skip()
    login(client, "ann")
    l5 = node("whitepaper", "L5")
    detail = ok(client.get(f"/api/nodes/{l5.pk}/"))
    path = [
        (doc["name"], format(doc["usage"], ".0f"), format(doc["fairshare_perc"], ".3f"),
         format(doc["usage_perc"], ".0f"))
        for doc in detail["path"]
    ]  # fmt: skip
    # TREEROOT 801 / 1.000 = 801, B2 401 / 0.200 = 2005, B3 201 / 0.150 = 1340, L5 ... = 1000
    assert path == path_captured("seed_tree", "L5")
    assert len(path) == 4
    assert detail["cluster"] == "whitepaper"
    assert detail["node"] == detail["path"][-1]
    assert detail["node"]["id"] == l5.pk
    # B2 uses half the machine for a fifth of it (usage/perc 2005, the path's highest).
    assert detail["furthest_over_target"] == node("whitepaper", "B2").pk
    assert detail["children"] == []
    recovery = detail["recovery"]
    assert recovery["sentence"].startswith("Never by decay alone: B2 stays over its target")
    assert (recovery["reaches"], recovery["held_by"]) == (None, "B2")
    assert len(recovery["at"]) == len(recovery["fairshare_factor"]) == 8  # 100 halves to 1
    assert recovery["fairshare_factor"][0] == detail["node"]["fairshare_factor"]

    b3 = ok(client.get(f"/api/nodes/{node('whitepaper', 'B3').pk}/"))
    children = {doc["name"]: doc for doc in b3["children"]}
    assert list(children) == ["L5", "L6"]  # as pbsfs -p lists them
    assert pbs_percent(children["L6"]["fairshare_perc"]) == "5.000000%"  # pbsfs -p: 5.000%
    assert children["L5"]["fairshare_tree_usage"] == detail["node"]["fairshare_tree_usage"]
    assert [doc["depth"] for doc in b3["children"]] == [3, 3]


@pytest.mark.usefixtures("samples")
def test_a_slurm_node_s_detail_has_no_recovery(client: Client) -> None:
    login(client, "ann")
    hal = Node.objects.get(cluster__name="fairtree", name="hal")
    detail = ok(client.get(f"/api/nodes/{hal.pk}/"))
    assert detail["recovery"] is None
    assert [doc["name"] for doc in detail["path"]] == ["root", "cs", "ml", "hal"]
    assert format(detail["node"]["level_fs"], ".6f") == "0.666667"  # sshare's LevelFS
    # cs's Level FS 0.594747 is the path's lowest under the root: it holds hal back.
    assert detail["furthest_over_target"] == node("fairtree", "cs").pk


def pages(client: Client, url: str, **headers: str) -> Iterator[dict[str, Any]]:
    """Each page of a listing, following `next` to the end."""
    next_url: str | None = url
    while next_url:
        page = ok(client.get(next_url, headers=headers))
        yield page
        next_url = page["next"]


@pytest.mark.usefixtures("demo")
def test_a_node_s_history_pages_give_every_point_once_in_time_order(client: Client) -> None:
    client.force_login(User.objects.get(username="bob"))
    cond_matter = node("hpc", "cond-matter")
    stored = list(
        NodeHistory.objects.filter(node=cond_matter).order_by("at").values_list("at", "usage")
    )
    assert len(stored) > 100  # the demo's month of cycles, rolled up
    url = f"/api/nodes/{cond_matter.pk}/history/"
    listed = [page["results"] for page in pages(client, url + "?page_size=40")]
    assert len(listed) == -(-len(stored) // 40)
    points = [(datetime.fromisoformat(p["at"]), p["usage"]) for page in listed for p in page]
    assert points == stored
    assert (
        listed[0][0]["fairshare_factor"]
        == NodeHistory.objects.filter(node=cond_matter, at=stored[0][0]).get().fairshare_factor
    )

    since, until = stored[10][0], stored[20][0]
    bounded = ok(client.get(url, {"since": since.isoformat(), "until": until.isoformat()}))
    assert [datetime.fromisoformat(p["at"]) for p in bounded["results"]] == [
        at for at, _ in stored[10:20]
    ]
    assert bounded["next"] is None
    bad = client.get(url, {"since": "last week"})
    assert (bad.status_code, bad.json()["parameter"]) == (400, "since")


@pytest.mark.usefixtures("demo")
def test_a_group_s_jobs_are_its_leaves_a_page_at_a_time_newest_first(client: Client) -> None:
    client.force_login(User.objects.get(username="carol"))  # physics' manager
    physics = node("hpc", "physics")
    leaves = list(physics.children.values_list("pk", flat=True))
    stored = list(Job.objects.filter(node_id__in=leaves).order_by("-id").values_list("pk", "node"))
    assert len(stored) > 250  # gravwaves alone ran hundreds
    url = f"/api/nodes/{physics.pk}/jobs/?page_size=100"
    listed = [job for page in pages(client, url) for job in page["results"]]
    assert [(job["id"], job["node"]) for job in listed] == stored

    running = Job.objects.filter(node_id__in=leaves, state="running")
    by_state = ok(client.get(f"/api/nodes/{physics.pk}/jobs/", {"state": "ended"}))["results"]
    assert {job["state"] for job in by_state} == {"ended"}
    assert len(by_state) == 100  # the first page of many
    runs = ok(client.get(f"/api/nodes/{physics.pk}/jobs/", {"state": "running"}))["results"]
    assert sorted(job["id"] for job in runs) == sorted(running.values_list("pk", flat=True))

    gravwaves = node("hpc", "gravwaves")
    own = ok(client.get(f"/api/nodes/{gravwaves.pk}/jobs/?page_size=1000"))["results"]
    assert len(own) == Job.objects.filter(node=gravwaves).count()
    newest = Job.objects.filter(node=gravwaves).order_by("-id")[0]
    assert (own[0]["id"], own[0]["job_id"], own[0]["usage"]) == (
        newest.pk, newest.job_id, newest.usage,
    )  # fmt: skip

    bad = client.get(f"/api/nodes/{physics.pk}/jobs/", {"state": "finished"})
    assert bad.status_code == 400
    assert bad.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": "state must be one of ended, requeued, running, queued",
        "parameter": "state",
    }


# --- compare, standing, audit, trends ---------------------------------------------------------


def c_captured(example: str) -> list[tuple[str, str, str | None]]:
    """pbsfs -c A B as the real program answered: each pair and the more deserving (None:
    `A == B`, a tie)."""
    pairs = []
    for line in (EXAMPLES / example / "expected_c.txt").read_text().splitlines():
        a, b, said = line.split("\t")
        pairs.append((a, b, None if "==" in said else said))
    return pairs


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("cluster", "example"), [("whitepaper", "seed_tree"), ("forum", "forum_example")]
)
def test_a_pbs_comparison_is_pbsfs_c_s_with_the_compare_page_s_explanation(
    client: Client, cluster: str, example: str
) -> None:
    examples_or_skip()
    login(client, "ann")
    stored = Cluster.objects.get(name=cluster)
    captured = c_captured(example)
    assert len(captured) >= 3
    for a, b, winner in captured:
        answer = ok(client.get(f"/api/clusters/{cluster}/compare/", {"a": a, "b": b}))
        page = pbs_compare_get(cluster=stored, a=a, b=b)
        assert (answer["a"], answer["b"], answer["winner"]) == (a, b, winner)
        assert answer["winner"] == page.winner
        assert answer["explanation"] == pbs_comparison_explained(page, cluster_usage_unit(stored))


@pytest.mark.usefixtures("samples")
def test_a_pbs_comparison_names_the_level_that_decides_it(client: Client) -> None:
    """pbsfs -g: B2 401 / 0.200 = 2005 against B1 201 / 0.100 = 2010, under TREEROOT."""
    login(client, "ann")
    answer = ok(client.get("/api/clusters/whitepaper/compare/", {"a": "L5", "b": "L1"}))
    assert (answer["answer"], answer["ancestor"], answer["child_a"], answer["child_b"]) == (
        -1, "TREEROOT", "B2", "B1",
    )  # fmt: skip
    assert (answer["usage_a"], answer["usage_b"]) == (401.0, 201.0)
    assert "usage/perc 2,005" in answer["explanation"][0]
    assert "usage/perc 2,010" in answer["explanation"][0]
    unknown = client.get("/api/clusters/whitepaper/compare/", {"a": "nobody", "b": "L1"})
    assert (unknown.status_code, unknown.json()["parameter"]) == (400, "a")
    missing = client.get("/api/clusters/whitepaper/compare/", {"a": "L5"})
    assert (missing.status_code, missing.json()["parameter"]) == (400, "b")


@pytest.mark.usefixtures("samples")
def test_a_slurm_comparison_is_fair_tree_s_with_sshare_s_level_fs(client: Client) -> None:
    login(client, "ann")
    lines = {(line["Account"].strip(), line["User"]): line for line in sshare_parsed("-a", "-l")}
    accounts = ok(client.get("/api/clusters/fairtree/compare/", {"a": "astro", "b": "bio"}))
    assert (accounts["winner"], accounts["ancestor"]) == ("bio", "root")
    assert format(accounts["level_fs_a"], ".6f") == lines[("astro", "")]["LevelFS"]
    assert format(accounts["level_fs_b"], ".6f") == lines[("bio", "")]["LevelFS"]
    # ana in two accounts: decided at the root, cs (0.594747) against astro (1.009948).
    users = ok(client.get("/api/clusters/fairtree/compare/", {"a": "ml:ana", "b": "astro:ana"}))
    assert (users["winner"], users["child_a"], users["child_b"]) == ("astro:ana", "cs", "astro")
    assert format(users["fairshare_a"], ".6f") == lines[("ml", "ana")]["FairShare"]
    assert format(users["fairshare_b"], ".6f") == lines[("astro", "ana")]["FairShare"]
    assert "astro:ana is more deserving than ml:ana" in users["explanation"][0]


def pbs_place(cluster: str, name: str) -> tuple[int, int]:
    """The entity's place among the cluster's entities (leaves) by pbsfs -c, and how many."""
    pbs = pbs_tree_get(cluster=Cluster.objects.get(name=cluster))
    metrics = pbs_compute(pbs)
    leaves = [n for n in range(len(pbs)) if pbs.is_leaf(n) and pbs.name(n) != "unknown"]
    mine = pbs.find(name)
    assert mine is not None
    ahead = sum(1 for other in leaves if pbs_compare(pbs, metrics, other, mine) < 0)
    return ahead + 1, len(leaves)


@pytest.mark.usefixtures("demo")
def test_bob_s_standing_lists_his_entities_with_their_places(client: Client) -> None:
    bob = User.objects.get(username="bob")
    me = ok(client.get("/api/me/", headers=bearer(bob)))
    hpc = next(c for c in me["clusters"] if c["cluster"] == "hpc")
    mine = {standing["name"]: standing for standing in hpc["mine"]}
    assert sorted(mine) == ["cond-matter", "genomics"]  # his memberships on hpc
    assert (hpc["scheduler"], hpc["usage_unit"], hpc["members"]) == ("pbs", "core-seconds", [])
    for name, standing in mine.items():
        stored = node("hpc", name)
        assert standing["node"] == stored.pk
        assert standing["fairshare_factor"] == stored.fairshare_factor
        assert (standing["place"], standing["of"]) == pbs_place("hpc", name), name
        running = Job.objects.filter(node=stored, state="running").values_list("pk", flat=True)
        assert sorted(job["id"] for job in standing["running"]) == sorted(running)
    assert hpc["best"] == min(mine.values(), key=lambda s: s["place"])["node"]
    assert mine["cond-matter"]["path"] == "physics / cond-matter"
    # where he has entities, and the Accelerator cluster where his jobs run in groups
    assert {c["cluster"] for c in me["clusters"]} == {"hpc", "gpu", "vnc"}
    vnc = next(c for c in me["clusters"] if c["cluster"] == "vnc")
    assert (vnc["scheduler"], vnc["mine"], vnc["members"]) == ("accelerator", [], [])
    groups = {group["name"]: group for group in vnc["groups"]}
    assert sorted(groups) == ["/class/hsim.dkaya", "/class/vcs.dkaya", "/time/users.dkaya"]
    for name, group in groups.items():
        stored = node("vnc", name)
        assert (group["node"], group["accelerator"]["FS_TARGET"]) == (stored.pk, stored.fs_target)
        assert group["accelerator"]["FS_RANK"] == stored.fs_rank
    assert vnc["groups_best"] == vnc["groups"][0]["node"]
    assert all(hpc[key] in ([], None) for key in ("groups", "groups_best", "group_members"))


@pytest.mark.usefixtures("demo")
def test_the_audit_trail_is_for_admins_newest_first(client: Client) -> None:
    alice = User.objects.get(username="alice")
    whitepaper_shares_edited("L5", 30, reason="first")
    whitepaper_shares_edited("L7", 45, reason="second")
    audit = ok(client.get("/api/clusters/whitepaper/audit/", headers=bearer(alice)))
    trail = [
        (c["node_name"], c["old_shares"], c["new_shares"], c["reason"], c["changed_by"])
        for c in audit["results"]
    ]
    assert trail == [("L7", 40, 45, "second", "alice"), ("L5", 10, 30, "first", "alice")]
    found = ok(client.get("/api/clusters/whitepaper/audit/?q=L5", headers=bearer(alice)))
    assert [c["node_name"] for c in found["results"]] == ["L5"]
    assert ShareChange.objects.filter(cluster__name="whitepaper").count() == 2
    bob = User.objects.get(username="bob")
    refused = client.get("/api/clusters/whitepaper/audit/", headers=bearer(bob))
    assert refused.status_code == 403
    assert refused.json() == {"error": "not allowed", "detail": "the audit trail is for admins"}


@pytest.mark.usefixtures("demo")
def test_a_manager_reads_the_trends_of_what_they_manage(client: Client) -> None:
    carol = User.objects.get(username="carol")
    trends = ok(client.get("/api/clusters/hpc/trends/", headers=bearer(carol)))
    physics = node("hpc", "physics")
    assert (trends["node"], trends["range"]) == (physics.pk, "30d")
    children = {child["name"]: child for child in trends["children"]}
    stored = {child.name: child for child in physics.children.all()}
    assert set(children) == set(stored)
    total = sum(child.shares or 0 for child in stored.values())
    for name, child in children.items():
        assert child["target_share"] == pytest.approx((stored[name].shares or 0) / total)
        assert child["usage"] == stored[name].usage
        assert len(child["series"]["usage"]) == len(trends["at"])
    assert sum(child["usage_share"] for child in children.values()) == pytest.approx(1)
    cutoff = timezone.now() - timedelta(days=30)
    kept = NodeHistory.objects.filter(node__in=stored.values(), at__gte=cutoff)
    assert len(trends["at"]) == kept.values("at").distinct().count()
    bob = User.objects.get(username="bob")
    assert client.get("/api/clusters/hpc/trends/", headers=bearer(bob)).status_code == 403
    everything = ok(client.get("/api/clusters/hpc/trends/?range=all", headers=bearer(carol)))
    assert (
        len(everything["at"])
        == NodeHistory.objects.filter(node__in=stored.values()).values("at").distinct().count()
    )
    bad = client.get("/api/clusters/hpc/trends/?range=2w", headers=bearer(carol))
    assert (bad.status_code, bad.json()["parameter"]) == (400, "range")


@pytest.mark.usefixtures("demo")
def test_trends_list_the_children_of_most_usage_and_sum_the_others(client: Client) -> None:
    carol = User.objects.get(username="carol")
    physics = node("hpc", "physics")
    before = list(physics.children.all())
    made = many_children_made(physics, 12)
    answer = ok(
        client.get(
            "/api/clusters/hpc/trends/",
            {"node": str(physics.pk), "range": "7d", "children": "5"},
            headers=bearer(carol),
        )
    )
    assert [child["name"] for child in answer["children"]] == [c.name for c in made[-5:]]
    left = made[:-5]
    summed = sum(child.usage for child in left)
    others = answer["others"]
    assert others["count"] == len(before) + len(left)
    assert others["usage"] == pytest.approx(summed + sum(child.usage for child in before))
    assert others["series"]["usage"] == [summed, 2 * summed, 3 * summed]
    total = 3 * sum(child.usage for child in made)
    assert others["series"]["usage_share"][2] == pytest.approx(3 * summed / total)
    shares = [child["usage_share"] for child in answer["children"]] + [others["usage_share"]]
    assert sum(shares) == pytest.approx(1)
    assert all(over["id"] != 0 for over in answer["far_over_target"])
    every = ok(client.get("/api/clusters/hpc/trends/", {"node": str(physics.pk)},
                          headers=bearer(carol)))  # fmt: skip
    assert (len(every["children"]), every["others"]) == (len(before) + len(made), None)
    for bad in ("0", "1001", "x"):
        refused = client.get("/api/clusters/hpc/trends/", {"children": bad}, headers=bearer(carol))
        assert (refused.status_code, refused.json()["parameter"]) == (400, "children")


# --- the scheduler's own listings ------------------------------------------------------------


@pytest.mark.usefixtures("samples")
def test_the_shares_are_slurmrestd_s_json_one_entry_per_sshare_line(client: Client) -> None:
    login(client, "ann")
    shares = ok(client.get("/api/clusters/fairtree/shares/"))["shares"]["shares"]
    lines = sshare_parsed("-a", "-l")
    assert len(shares) == len(lines) == 18
    for entry, line in zip(shares, lines, strict=True):
        assert entry["name"] == (line["User"] or line["Account"].strip())
        assert entry["usage"] == int(line["RawUsage"])
        assert entry["type"] == (["USER"] if line["User"] else ["ASSOCIATION"])
        if line["RawShares"].isdigit():
            shares_set = {"set": True, "infinite": False, "number": int(line["RawShares"])}
            assert entry["shares"] == shares_set
        if line["User"]:  # Fair Tree's factor is a user's; an account's is 0
            assert format(entry["fairshare"]["factor"], ".6f") == line["FairShare"]
        assert entry["cluster"] == "fairtree"
    assert [entry["id"] for entry in shares] == list(range(1, 19))
    by_name = {(entry["parent"], entry["name"]): entry for entry in shares}
    assert by_name[("", "root")]["shares"] == {"set": False, "infinite": False, "number": 0}
    # FairShare=parent is sent as SLURMDB_FS_USE_PARENT (0x7fffffff); its user's level is
    # INFINITY, which slurmrestd 25.05 writes as the double INFINITE64 (no Infinity in JSON).
    dia = by_name[("bio", "dia")]
    assert dia["shares"] == {"set": True, "infinite": False, "number": 0x7FFFFFFF}
    assert dia["fairshare"]["level"] == float(2**64 - 1)
    assert by_name[("astro", "ben")]["fairshare"]["level"] == 2.65


@pytest.mark.usefixtures("samples")
def test_the_shares_as_text_are_sshare_s_and_pbsfs_s_byte_for_byte(client: Client) -> None:
    examples_or_skip()
    login(client, "ann")
    sshare = StringIO()
    call_command("sshare", "-a", "-l", "--cluster", "fairtree", stdout=sshare)
    text = client.get("/api/clusters/fairtree/shares/?format=sshare")
    assert (text.status_code, text["Content-Type"]) == (200, "text/plain; charset=utf-8")
    assert text.content == sshare.getvalue().encode()
    assert text.content.count(b"\n") == 20  # the header, its rule and 18 associations

    pbsfs = StringIO()
    call_command("pbsfs", "--cluster", "whitepaper", stdout=pbsfs)
    listing = client.get("/api/clusters/whitepaper/shares/?format=pbsfs")
    assert listing.content == pbsfs.getvalue().encode()
    # ... which is the real pbsfs's (-p) on the same tree and usage.
    assert listing.content == (EXAMPLES / "seed_tree" / "expected_pbsfs.txt").read_bytes()
    assert client.get("/api/clusters/whitepaper/shares/").content == listing.content

    wrong = client.get("/api/clusters/fairtree/shares/?format=pbsfs")
    assert wrong.status_code == 400
    assert wrong.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": "format must be one of json, sshare",
        "parameter": "format",
    }
    assert client.get("/api/clusters/whitepaper/shares/?format=json").status_code == 400


@pytest.mark.usefixtures("samples")
def test_the_listing_texts_are_for_whole_tree_readers(client: Client) -> None:
    Cluster.objects.filter(name="fairtree").update(private_usage=True)
    user = login(client, "ivy", scheduler_user="ivy")
    member_made(user, node("fairtree", "hpc"), Role.MEMBER)
    refused = client.get("/api/clusters/fairtree/shares/?format=sshare")
    assert refused.status_code == 403
    shares = ok(client.get("/api/clusters/fairtree/shares/"))["shares"]["shares"]
    # hpc's subtree, and the accounts along the path to it with their siblings' totals.
    assert ("hpc", "ivy") in {(entry["parent"], entry["name"]) for entry in shares}
    assert "hal" not in {entry["name"] for entry in shares}


# --- errors and throttling ------------------------------------------------------------------


@pytest.mark.usefixtures("samples")
def test_an_anonymous_caller_is_told_to_authenticate_in_json(client: Client) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Bearer"}):
        response = client.get("/api/clusters/", headers=headers)
        assert response.status_code == 401, headers
        body = response.json()
        assert set(body) == {"error", "detail"}
        assert body["error"].startswith("authentication is needed")
        assert response["WWW-Authenticate"].startswith("Bearer")
    unknown = client.get("/api/clusters/", headers={"Authorization": "Bearer x"})
    assert unknown.json()["detail"] == "the token is not valid: unknown, revoked or expired"
    assert unknown["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.usefixtures("samples")
def test_writing_to_a_read_endpoint_is_a_405_in_json(client: Client) -> None:
    """With the session, or a token that may write (a read token is refused first: 403)."""
    admin = login(client, "admin", staff=True)
    token = bearer(admin, TokenScope.WRITE)
    for url, headers in itertools.product(
        ("/api/clusters/", TREE.format("whitepaper"), "/api/me/"), ({}, token)
    ):
        response = client.post(url, {}, content_type="application/json", headers=headers)
        assert response.status_code == 405, url
        assert response.json() == {
            "error": "method not allowed",
            "detail": 'Method "POST" not allowed.',
        }


@pytest.fixture
def three_a_minute(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """DRF reads the rates once, when the throttle class is defined: the setting for the
    record, the class's copy for the effect."""
    from trees.api.throttles import PersonRateThrottle

    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "api": "3/min"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    monkeypatch.setattr(PersonRateThrottle, "THROTTLE_RATES", rates)
    # In the middle of a minute: the four requests fall in one of the throttle's windows.
    monkeypatch.setattr(PersonRateThrottle, "timer", lambda self: 1_800_000_030.0)
    cache.clear()
    yield
    cache.clear()


@pytest.mark.usefixtures("samples", "three_a_minute")
def test_a_person_past_their_rate_waits_while_another_goes_on(client: Client) -> None:
    """Per person, whichever token (tests/trees/api/test_throttles.py: tokens share one)."""
    first, second = bearer(login_made("ann")), bearer(login_made("ben"))
    statuses = [client.get("/api/clusters/", headers=first).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = client.get("/api/clusters/", headers=first)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["error"] == "too many requests"
    assert client.get("/api/clusters/", headers=second).status_code == 200
