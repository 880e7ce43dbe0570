"""The tree pages: login, cluster overview, tree JSON, node page and its history."""

import html
import json
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client
from django.utils import timezone

from accounting.models import Cycle, NodeHistory
from tests.cast import demo_job, login, node
from tests.conftest import EXAMPLES, examples_or_skip
from trees.models import Cluster, Membership, Node, Role
from trees.selectors.pbs import pbs_state_get
from trees.services.pbs import resource_group_import
from trees.views.parameters import CHILDREN_PAGE

pytestmark = pytest.mark.django_db


def test_anonymous_people_see_the_login_page_only(client: Client) -> None:
    assert client.get("/")["Location"] == "/accounts/login/?next=/"
    assert client.get("/clusters/forum/tree.json").status_code == 302
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert 'name="csrfmiddlewaretoken"' in page.content.decode()


def test_logging_in_with_a_password_leads_to_the_clusters(client: Client) -> None:
    User.objects.create_user("ann", password="a long pass phrase")
    response = client.post(
        "/accounts/login/", {"username": "ann", "password": "a long pass phrase", "next": "/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
    bad = client.post("/accounts/login/", {"username": "ann", "password": "wrong"})
    assert "Please enter a correct username and password" in bad.content.decode()


@pytest.mark.usefixtures("samples")
def test_the_index_lists_each_cluster_and_its_policy_in_words(client: Client) -> None:
    login(client, "ann")
    page = client.get("/").content.decode()
    assert '<a href="/clusters/whitepaper/">whitepaper</a>' in page
    assert "decayed by 0.5 every 1 day," in page  # not Python's "1 day, 0:00:00"
    assert "Your standing" not in page  # ann has no entity
    assert "Perc:" not in page  # pbsfs -p has moved to its tab on the cluster page


@pytest.mark.usefixtures("samples")
def test_the_cluster_page_has_a_tab_with_the_listing_as_pbsfs_prints_it(client: Client) -> None:
    login(client, "ann")
    page = client.get("/clusters/whitepaper/").content.decode()
    assert 'role="tab" id="tab-listing"' in page
    assert 'data-url="/clusters/whitepaper/listing.txt"' in page
    listing = client.get("/clusters/whitepaper/listing.txt")
    assert listing["Content-Type"] == "text/plain"
    assert 'filename="whitepaper-pbsfs.txt"' in listing["Content-Disposition"]
    text = listing.content.decode()
    assert "Fairshare usage units are in: cput" in text
    assert "L5        : Grp: 210    cgrp: 211  Shares: 10     Usage: 100    Perc: 10.000%" in text


def test_the_index_without_clusters_says_how_to_load_one(client: Client) -> None:
    Cluster.objects.all().delete()  # the module's sample site, if built, is rolled back after
    login(client, "ann")
    assert "manage.py demo" in client.get("/").content.decode()


@pytest.mark.usefixtures("samples")
def test_the_cluster_page_serves_plotly_from_the_site_and_explains_its_columns(
    client: Client,
) -> None:
    login(client, "ann")
    page = client.get("/clusters/forum/").content.decode()
    assert '<script src="/static/plotly/plotly.min.js" defer></script>' in page
    assert "0.5 is exactly on target, higher is more deserving" in page
    assert client.get("/clusters/nowhere/").status_code == 404
    assert finders.find("plotly/plotly.min.js") is not None  # the plotly package's bundle


@pytest.mark.usefixtures("samples")
def test_the_tree_json_holds_the_top_levels_with_their_stored_metrics(
    client: Client, django_assert_max_num_queries: object
) -> None:
    login(client, "ann")
    # Session, login, cluster, the person's roles and leaves, then one query a level: the same
    # for any size of tree.
    with django_assert_max_num_queries(10):  # type: ignore[operator]
        data = json.loads(client.get("/clusters/forum/tree.json").content)
    by_name = {doc["name"]: doc for doc in data["nodes"]}
    assert data["nodes"][0]["name"] == "TREEROOT"
    assert max(doc["depth"] for doc in data["nodes"]) == 2
    stored = node("forum", "group1")
    assert by_name["group1"]["fairshare_factor"] == stored.fairshare_factor
    assert by_name["group1"]["usage"] == stored.usage
    assert by_name["group1"]["children"] == stored.children.count()
    deeper = json.loads(client.get(f"/clusters/forum/tree.json?node={stored.pk}&levels=1").content)
    assert [doc["parent"] for doc in deeper["nodes"][1:]] == [stored.pk] * stored.children.count()


def _cathy_gets_ten_more_shares() -> None:
    cluster = Cluster.objects.get(name="forum")
    groups = [
        replace(group, shares=group.shares + 10) if group.name == "Cathy" else group
        for group in pbs_state_get(cluster=cluster).groups
    ]
    resource_group_import(cluster_name="forum", groups=groups, pbs_messages=[], source="test")


def _cathy(answer: bytes) -> dict[str, Any]:
    return next(doc for doc in json.loads(answer)["nodes"] if doc["name"] == "Cathy")


@pytest.mark.usefixtures("demo")  # tree.json rows, written once the stores committed
def test_whole_tree_readers_get_the_listing_of_the_tree_as_stored(
    client: Client,
    django_assert_num_queries: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    login(client, "ann")
    # Session, login, cluster, the person's name, roles and leaves; the listing's top and its
    # rows: the same for any size of tree (built from the nodes it takes 10 here).
    with django_assert_num_queries(8):
        first = client.get("/clusters/forum/tree.json?levels=3").content
    assert _cathy(first)["shares"] == 50

    with django_capture_on_commit_callbacks(execute=True) as asked:
        _cathy_gets_ten_more_shares()
    assert len(asked) == 1  # the store asked for its listing once it committed
    with django_assert_num_queries(8):
        again = client.get("/clusters/forum/tree.json?levels=3").content
    assert _cathy(again)["shares"] == node("forum", "Cathy").shares == 60
    cluster = Cluster.objects.get(name="forum")
    assert cluster.tree_json_at == cluster.metrics_updated_at


@pytest.mark.usefixtures("samples")
def test_until_the_listing_is_written_readers_get_the_tree_built_from_the_nodes(
    client: Client, django_assert_num_queries: Any
) -> None:
    login(client, "ann")
    _cathy_gets_ten_more_shares()  # its listing task never runs: the test's transaction stays
    with django_assert_num_queries(10):
        answer = client.get("/clusters/forum/tree.json?levels=3").content
    assert _cathy(answer)["shares"] == 60


@pytest.mark.usefixtures("demo")  # tree.json rows, written once the stores committed
@pytest.mark.parametrize("name", ["forum", "whitepaper", "fairtree", "hpc"])
def test_the_listing_answers_as_the_nodes_would_for_every_node_and_depth(
    client: Client, name: str
) -> None:
    login(client, "ann")
    cluster = Cluster.objects.get(name=name)
    assert cluster.tree_json_at == cluster.metrics_updated_at  # the demo's stores listed it
    questions = ["", *(f"node={pk}&" for pk in cluster.nodes.values_list("pk", flat=True))]
    asked = [f"/clusters/{name}/tree.json?{top}levels={levels}" for top in questions
             for levels in (1, 2, 3)]  # fmt: skip
    listed = [client.get(url).content for url in asked]
    Cluster.objects.filter(name=name).update(tree_json_at=None)  # stored before listings existed
    built = [client.get(url).content for url in asked]

    assert listed == built
    assert len(json.loads(listed[2])["nodes"]) == cluster.nodes.count()


@pytest.mark.usefixtures("samples")
def test_the_listing_is_never_given_to_those_who_read_part_of_the_tree(
    client: Client,
) -> None:
    admin = Client()
    login(admin, "admin", staff=True)
    Cluster.objects.filter(name="forum").update(private_usage=True)
    whole = json.loads(admin.get("/clusters/forum/tree.json?levels=3").content)
    mine = Node.objects.get(cluster__name="forum", name="Bob")
    login(client, "member", scheduler_user=mine.name)
    part = json.loads(client.get("/clusters/forum/tree.json?levels=3").content)
    assert len(part["nodes"]) < len(whole["nodes"])
    assert all(doc["opens"] for doc in whole["nodes"])
    assert not all(doc["opens"] for doc in part["nodes"])


@pytest.mark.usefixtures("samples")
def test_the_tree_json_finds_nodes_by_name_with_their_path(client: Client) -> None:
    login(client, "ann")
    data = json.loads(client.get("/clusters/fairtree/tree.json?q=ANA").content)
    # ana is a user in two accounts: both, with the accounts above them.
    assert [(doc["name"], doc["depth"]) for doc in data["nodes"]] == [
        ("root", 0),
        ("astro", 1),
        ("ana", 2),
        ("cs", 1),
        ("ml", 2),
        ("ana", 3),
    ]
    assert [doc["slurm"]["account"] for doc in data["nodes"] if doc["name"] == "ana"] == [
        "astro",
        "ml",
    ]


LEVELS = {"error": "levels must be a whole number from 1 to 3", "parameter": "levels"}
NODE = {"error": "node must be an id, a whole number from 1", "parameter": "node"}
Q = {"error": "q must be 1 to 255 characters of a name", "parameter": "q"}


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("levels=9", LEVELS),
        ("levels=x", LEVELS),
        ("levels=%C2%B2", LEVELS),  # `²`, which str.isdigit() takes
        ("node=-1", NODE),
        ("node=%C2%B9", NODE),
        ("q=", Q),
        ("q=a%00b", Q),
    ],
)
def test_malformed_tree_queries_are_told_what_is_wrong_in_json(
    client: Client, query: str, message: dict[str, str]
) -> None:
    login(client, "ann")
    response = client.get(f"/clusters/forum/tree.json?{query}")
    assert (response.status_code, response["Content-Type"]) == (400, "application/json")
    assert json.loads(response.content) == message


@pytest.mark.usefixtures("samples")
def test_unknown_nodes_are_not_found(client: Client) -> None:
    login(client, "ann")
    other = node("whitepaper", "L5").pk  # a node of another cluster
    assert client.get(f"/clusters/forum/tree.json?node={other}").status_code == 404
    assert client.get(f"/clusters/forum/nodes/{other}/").status_code == 404
    assert client.get("/clusters/forum/nodes/999999/").status_code == 404
    assert client.get(f"/clusters/forum/nodes/{other}/history.json").status_code == 404


@pytest.mark.usefixtures("samples")
def test_the_node_page_shows_the_path_and_which_level_pulls_it_down(
    client: Client, django_assert_max_num_queries: object
) -> None:
    login(client, "ann")
    leaf = node("whitepaper", "L5")
    # Session, login, cluster, node, one a level of its path (3), roles, person, own leaves,
    # children: none per child or per job.
    with django_assert_max_num_queries(12):  # type: ignore[operator]
        page = client.get(f"/clusters/whitepaper/nodes/{leaf.pk}/").content.decode()
    assert "<h1>L5 <small>" in page
    # pbsfs -g L5: TREEROOT 801 / 1.000, B2 401 / 0.200 = 2005, B3 201 / 0.150 = 1340,
    # L5 100 / 0.100 = 1000. B2 uses half the machine for a fifth of it: it pulls L5 down.
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr")[1:]
    assert [('class="culprit"' in row, ">2,005<" in row or ">1,340<" in row) for row in rows] == [
        (False, False),
        (True, True),
        (False, True),
        (False, False),
    ]
    assert "B2 <span" in rows[1]
    assert 'data-url="/clusters/whitepaper/nodes/' in page


@pytest.mark.usefixtures("samples")
def test_the_history_json_holds_the_cycles_in_range_and_the_events(client: Client) -> None:
    login(client, "ann")
    leaf = node("forum", "Suzy")
    cluster = leaf.cluster
    now = timezone.now()
    for days, usage in ((40, 5.0), (3, 7.0)):
        at = now - timedelta(days=days)
        Cycle.objects.create(
            cluster=cluster, at=at, started_at=at, decays_applied=1, decay_times=[at.isoformat()]
        )
        NodeHistory.objects.create(
            node=leaf,
            at=at,
            usage=usage,
            fairshare_perc=0.25,
            fairshare_tree_usage=0.5,
            fairshare_factor=0.25,
        )
    url = f"/clusters/forum/nodes/{leaf.pk}/history.json"
    month = json.loads(client.get(url).content)
    assert (month["usage"], month["usage_perc"], len(month["events"])) == ([7.0], [28.0], 1)
    everything = json.loads(client.get(url + "?range=all").content)
    assert everything["usage"] == [5.0, 7.0]
    bad = client.get(url + "?range=2w")
    assert (bad.status_code, bad.content.decode()) == (
        400,
        '{"error": "range must be one of 7d, 30d, 1y, all", "parameter": "range"}',
    )


@pytest.fixture
def private_forum(samples: None) -> Cluster:
    cluster = Cluster.objects.get(name="forum")
    cluster.private_usage = True
    cluster.save()
    return cluster


def test_with_private_usage_a_member_sees_their_path_and_its_siblings_only(
    client: Client, private_forum: Cluster
) -> None:
    users = list(Node.objects.filter(cluster=private_forum, kind="user").select_related("parent"))
    mine = users[0]
    login(client, "member", scheduler_user=mine.name)
    data = json.loads(client.get("/clusters/forum/tree.json?levels=3").content)
    shown = {doc["id"]: doc for doc in data["nodes"]}
    assert shown[mine.pk]["opens"]
    assert client.get(f"/clusters/forum/nodes/{mine.pk}/").status_code == 200
    strangers = [u for u in users if u.parent_id != mine.parent_id and u.pk != mine.pk]
    assert strangers
    for stranger in strangers:
        assert client.get(f"/clusters/forum/nodes/{stranger.pk}/").status_code == 404
        assert stranger.pk not in shown or not shown[stranger.pk]["opens"]
    # The whole tree as pbsfs prints it is for those who read every node: not on forum.
    assert 'id="tab-listing"' not in client.get("/clusters/forum/").content.decode()
    assert client.get("/clusters/forum/listing.txt").status_code == 403
    assert client.get("/clusters/whitepaper/listing.txt").status_code == 200


def test_with_private_usage_a_manager_reads_the_subtree_they_manage(
    client: Client, private_forum: Cluster
) -> None:
    group = Node.objects.filter(cluster=private_forum, kind="organization").exclude(parent=None)[0]
    manager = login(client, "manager")
    Membership.objects.create(user=manager, node=group, role=Role.MANAGER)
    for child in group.children.all():
        assert client.get(f"/clusters/forum/nodes/{child.pk}/").status_code == 200
    admin_client = Client()
    login(admin_client, "admin", staff=True)
    for every in Node.objects.filter(cluster=private_forum):
        assert admin_client.get(f"/clusters/forum/nodes/{every.pk}/").status_code == 200


@pytest.mark.usefixtures("samples")
def test_the_recovery_projection_starts_at_the_stored_factor_and_says_when(
    client: Client,
) -> None:
    login(client, "ann")

    def projection(cluster: str, name: str) -> dict[str, Any]:
        response = client.get(f"/clusters/{cluster}/nodes/{node(cluster, name).pk}/recovery.json")
        assert response.status_code == 200
        document: dict[str, Any] = json.loads(response.content)
        return document

    l5 = projection("whitepaper", "L5")
    assert l5["fairshare_factor"][0] == node("whitepaper", "L5").fairshare_factor
    assert l5["reaches"] is None  # B2 (usage/perc 2005) stays over target through L3 and L4
    assert l5["held_by"] == "B2"
    assert l5["sentence"].startswith("Never by decay alone: B2 stays over its target")
    assert len(l5["at"]) == len(l5["fairshare_factor"]) == 8  # 100 halves to 1 in 7 decays
    l7 = projection("whitepaper", "L7")
    assert l7["reaches"] == 0
    assert l7["sentence"] == (
        "Already at or above its target: its factor is 0.805463 (0.5 is on target)."
    )
    assert "its target share is 0" in projection("whitepaper", "L2")["sentence"]
    fairtree = Node.objects.filter(cluster__name="fairtree").first()
    assert fairtree is not None
    assert client.get(f"/clusters/fairtree/nodes/{fairtree.pk}/recovery.json").status_code == 404


def pbsfs_g_captured(example: str) -> list[tuple[str, dict[str, str]]]:
    """Each `pbsfs -g NAME` the real program printed for an example tree: its entity and
    fields (Percentage, fairshare_tree_usage, usage, usage/perc) as printed."""
    found = []
    for path in sorted((EXAMPLES / example).glob("expected_g_*.txt")):
        fields = dict(
            (key.strip(), value.strip())
            for key, value in (line.split(":", 1) for line in path.read_text().splitlines()[1:8])
        )
        found.append((path.stem.removeprefix("expected_g_"), fields))
    return found


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("cluster", "example"), [("whitepaper", "seed_tree"), ("forum", "forum_example")]
)
def test_every_node_page_prints_the_numbers_pbsfs_g_printed(
    client: Client, cluster: str, example: str
) -> None:
    """The last row of the node's path, against the real pbsfs -g of the same tree and usage:
    Target % as Percentage, Usage and usage/perc as "%.0f" (separators aside), Tree usage."""
    examples_or_skip()
    login(client, "ann")
    captured = pbsfs_g_captured(example)
    assert len(captured) >= 6
    for name, printed in captured:
        if name == "TREEROOT":
            continue
        page = client.get(f"/clusters/{cluster}/nodes/{node(cluster, name).pk}/").content.decode()
        path = page.split('<table class="path">')[1].split("</table>")[0]
        last = path.split("<tr")[-1]
        cells = [html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", last)]
        _shares, target, usage, usage_perc, tree_usage = cells[1:6]
        assert (target + "%", usage.replace(",", ""), usage_perc.replace(",", ""), tree_usage) == (
            printed["Percentage"],
            printed["usage"].split(" ")[0],
            printed["usage/perc"],
            printed["fairshare_tree_usage"],
        ), name


@pytest.mark.usefixtures("samples")
def test_a_node_page_reads_targets_as_pbsfs_g_and_usage_with_its_unit(client: Client) -> None:
    """The white paper's L5: pbsfs -g prints `Percentage: 10.000001%`; its usage is cput."""
    login(client, "ann")
    l5 = node("whitepaper", "L5")
    text = client.get(f"/clusters/whitepaper/nodes/{l5.pk}/").content.decode()
    assert "<td>10.000001</td>" in text
    assert "Usage (CPU-seconds)" in text
    assert (
        "Target share 10.000001 % of the machine; usage 100 CPU-seconds (0.028 CPU-hours)" in text
    )
    b3 = node("whitepaper", "B3")
    text = client.get(f"/clusters/whitepaper/nodes/{b3.pk}/").content.decode()
    assert "<td>10.000001</td><td>100</td>" in text  # L5 among B3's children


@pytest.mark.usefixtures("demo")
def test_a_running_job_shows_the_usage_the_cycles_accrued_so_far(client: Client) -> None:
    running = demo_job("running")
    assert running.usage == 0.0  # its final usage is not known before its end
    login(client, "ann")
    assert running.node is not None
    path = f"/clusters/{running.node.cluster.name}/nodes/{running.node_id}/"
    text = client.get(path).content.decode()
    assert f"{running.accrued:,.0f} so far (to the last cycle)" in text


@pytest.mark.usefixtures("samples")
@pytest.mark.parametrize(
    ("cluster", "names"),
    [
        ("whitepaper", ["Shares", "Target %", "Usage (CPU-seconds)", "Share of usage %",
                        "usage/perc", "Tree usage", "Factor"]),
        ("fairtree", ["Shares", "Target %", "Usage (TRES-seconds)", "Share of usage %",
                      "NormShares", "EffectvUsage", "Level FS", "FairShare", "Place"]),
    ],
)  # fmt: skip
def test_what_the_numbers_mean_lists_the_page_s_columns_by_their_names(
    client: Client, cluster: str, names: list[str]
) -> None:
    login(client, "ann")
    text = client.get(f"/clusters/{cluster}/").content.decode()
    legend = text[text.index("What the numbers mean") :]
    assert re.findall(r"<dt>(.*?)</dt>", legend) == names
    assert "import_" not in legend  # the upload page's figures are not this page's


@pytest.mark.usefixtures("samples")
def test_a_slurm_user_s_place_counts_from_1st_as_on_the_standing_pages(client: Client) -> None:
    login(client, "ann")
    ranked = Node.objects.filter(cluster__name="fairtree", fairshare_rank__isnull=False)
    top, last = ranked.order_by("-fairshare_rank")[0], ranked.order_by("fairshare_rank")[0]
    assert top.fairshare_rank == top.fairshare_rank_of  # Fair Tree counts down
    for user, place in ((top, "1st"), (last, f"{last.fairshare_rank_of}th")):
        text = html.unescape(client.get(f"/clusters/fairtree/nodes/{user.pk}/").content.decode())
        assert (
            f"Place {place} of {user.fairshare_rank_of} users (Fair Tree's rank"
            f" {user.fairshare_rank}, counted the other way)"
        ) in text
        legend = text[text.index("What the numbers mean") :]
        assert re.findall(r"<dt>(.*?)</dt>", legend) == [
            "Shares", "Target %", "Usage (TRES-seconds)", "NormShares", "EffectvUsage",
            "Level FS", "FairShare",
        ]  # fmt: skip


def children_made(cluster: str, parent: str, how_many: int) -> list[str]:
    """`how_many` users under the group, named to list after its own children (no target
    share yet, then by name); every child's name in the page's order."""
    group = node(cluster, parent)
    Node.objects.bulk_create(
        Node(
            cluster=group.cluster,
            parent=group,
            name=f"c{number:04d}",
            shares=1,
            position=10_000 + number,
            cgroup_id=10_000 + number,
        )  # defined after the tree's own entries, as resource_group lines would be
        for number in range(how_many)
    )
    ordered = group.children.order_by("-fairshare_perc", "name", "id")
    return list(ordered.values_list("name", flat=True))


def children_listed(page: str) -> list[str]:
    table = page.split('<table class="children">')[1].split("</table>")[0]
    return re.findall(r"<tr><td>(?:<a [^>]*>)?([^<]+)<", table)


@pytest.mark.usefixtures("samples")
def test_a_node_page_lists_its_children_a_page_at_a_time_with_their_count(
    client: Client,
) -> None:
    login(client, "ann", staff=True)
    every = children_made("whitepaper", "B4", CHILDREN_PAGE + 20)
    url = f"/clusters/whitepaper/nodes/{node('whitepaper', 'B4').pk}/"
    first = client.get(url).content.decode()
    assert children_listed(first) == every[:CHILDREN_PAGE]
    count = len(every)
    assert f'<p class="pages">{count} children; page 1 of 2' in first
    assert '<a href="?page=2">next</a>' in first
    assert "previous</a>" not in first
    second = client.get(url, {"page": "2"}).content.decode()
    assert children_listed(second) == every[CHILDREN_PAGE:]
    assert '<a href="?page=1">previous</a>' in second
    assert "next</a>" not in second
    assert client.get(url, {"page": "3"}).status_code == 404
    assert client.get(url, {"page": "0"}).status_code == 400
