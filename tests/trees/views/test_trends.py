"""Trends: a node's children's usage over time, shares against targets, top consumers, CSV."""

import csv
import html
import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounting.models import Job, NodeHistory
from accounting.selectors import TRENDS_CHILDREN
from tests.cast import login, node
from trees.models import Node
from trees.quantities import percent_text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def carol(client: Client) -> None:
    client.force_login(User.objects.get(username="carol"))


def hand_made(parent: Node) -> tuple[Node, Node]:
    """Two children of `parent` with three points each: usage 10, 20, 30 and 30, 20, 10."""
    first, second = parent.children.order_by("-group_perc", "name")[:2]
    NodeHistory.objects.filter(node__in=[first, second]).delete()
    start = timezone.now() - timedelta(days=3)
    for step, (a, b) in enumerate([(10.0, 30.0), (20.0, 20.0), (30.0, 10.0)]):
        at = start + timedelta(hours=step)
        for child, usage in ((first, a), (second, b)):
            NodeHistory.objects.create(
                node=child, at=at, usage=usage, fairshare_perc=0.1, fairshare_tree_usage=0.1,
                fairshare_factor=0.5,
            )  # fmt: skip
    return first, second


def test_a_manager_sees_the_children_of_what_they_manage_by_default(client: Client) -> None:
    carol(client)
    page = client.get("/clusters/hpc/trends/")
    assert page.status_code == 200
    physics = node("hpc", "physics")
    assert page.context["node"] == physics
    text = page.content.decode()
    assert "Trends of physics" in text
    for child in physics.children.all():
        assert child.name in text


def test_the_csv_holds_the_series_the_shares_and_the_top_consumers(client: Client) -> None:
    physics = node("hpc", "physics")
    first, second = hand_made(physics)
    carol(client)
    response = client.get(
        "/clusters/hpc/trends/", {"node": str(physics.pk), "range": "7d", "format": "csv"}
    )
    assert response["Content-Disposition"] == 'attachment; filename="hpc-physics-trends-7d.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["section", "at", "name", "usage", "target_percent", "usage_percent",
                       "jobs", "core_hours"]  # fmt: skip
    usage = [
        (row[2], float(row[3]))
        for row in rows
        if row[0] == "usage" and row[2] in (first.name, second.name)
    ]
    assert usage == [(first.name, 10.0), (first.name, 20.0), (first.name, 30.0),
                     (second.name, 30.0), (second.name, 20.0), (second.name, 10.0)]  # fmt: skip
    shares = {row[2]: row for row in rows if row[0] == "share"}
    children = list(physics.children.all())
    total = sum(child.usage for child in children)
    assert set(shares) == {child.name for child in children}
    for child in children:
        assert float(shares[child.name][3]) == child.usage
        assert shares[child.name][4] == percent_text(child.group_perc)  # as pbsfs prints it
        assert float(shares[child.name][4]) == pytest.approx(child.group_perc * 100, abs=1e-5)
        assert float(shares[child.name][5]) == pytest.approx(100 * child.usage / total, abs=1e-5)
    top = [row for row in rows if row[0] == "top"]
    week_ago = timezone.now() - timedelta(days=7)
    charged = Job.objects.filter(node__parent=physics, end__gte=week_ago).exclude(state="R")
    assert top, "physics ran jobs in the last week of the demo"
    best = max(
        {job.entity for job in charged},
        key=lambda e: sum(j.usage for j in charged if j.entity == e),
    )
    assert top[0][2] == best
    assert float(top[0][3]) == pytest.approx(sum(j.usage for j in charged if j.entity == best))
    assert sum(int(row[6]) for row in top) <= charged.count()


def test_who_may_open_trends(client: Client) -> None:
    physics, lifesci = node("hpc", "physics"), node("hpc", "lifesci")
    carol(client)
    assert client.get("/clusters/hpc/trends/", {"node": lifesci.pk}).status_code == 403
    client.force_login(User.objects.get(username="bob"))
    assert client.get("/clusters/hpc/trends/", {"node": physics.pk}).status_code == 403
    login(client, "root", staff=True)
    assert client.get("/clusters/hpc/trends/", {"node": lifesci.pk}).status_code == 200
    assert client.get("/clusters/hpc/trends/").context["node"].parent is None


def test_bad_parameters(client: Client) -> None:
    carol(client)
    assert client.get("/clusters/hpc/trends/", {"range": "2w"}).status_code == 400
    assert (
        b"range must be one of 7d, 30d, 1y, all"
        in client.get("/clusters/hpc/trends/", {"range": "2w"}).content
    )
    assert client.get("/clusters/hpc/trends/", {"node": "x"}).status_code == 400
    assert client.get("/clusters/hpc/trends/", {"node": "999999"}).status_code == 404
    assert client.get("/clusters/nowhere/trends/").status_code == 404


def test_a_leaf_shows_its_own_series(client: Client) -> None:
    login(client, "root", staff=True)
    leaf = node("hpc", "cond-matter")
    page = client.get("/clusters/hpc/trends/", {"node": leaf.pk})
    assert "Usage by cond-matter (no children)" in page.content.decode()


def test_trends_read_a_bounded_number_of_queries(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    carol(client)
    with django_assert_max_num_queries(15):
        assert client.get("/clusters/hpc/trends/", {"range": "all"}).status_code == 200


def test_a_period_without_two_cycles_says_so_instead_of_an_empty_chart(client: Client) -> None:
    login(client, "admin", staff=True)
    text = client.get("/clusters/whitepaper/trends/").content.decode()
    assert "No cycle has run in this range yet: the chart starts with the first two." in text
    assert 'id="trends-chart"' not in text


def test_the_share_of_usage_against_target_over_time_calls_out_a_child_far_over(
    client: Client,
) -> None:
    physics = node("hpc", "physics")
    first, second = physics.children.order_by("-group_perc", "name")[:2]
    NodeHistory.objects.filter(node__parent=physics).delete()
    start = timezone.now() - timedelta(days=2)
    # Equal targets (0.1 each: 50 % of the pair); `first` uses 90 % then 80 % of the pair.
    for step, (a, b) in enumerate([(90.0, 10.0), (80.0, 20.0)]):
        for child, usage in ((first, a), (second, b)):
            NodeHistory.objects.create(
                node=child, at=start + timedelta(hours=step), usage=usage, fairshare_perc=0.1,
                fairshare_tree_usage=0.1, fairshare_factor=0.5,
            )  # fmt: skip
    carol(client)
    page = client.get("/clusters/hpc/trends/", {"node": str(physics.pk), "range": "7d"})
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode())))
    assert (
        f"{first.name} ran far over target in this period: on average 85.0 % of physics's"
        " usage for a target of 50.0 %, 1.7 times its target."
    ) in text
    assert f"{second.name} ran far over" not in text
    series = page.context["series"]
    by_name = {entry["name"]: entry for entry in series["series"]}
    assert by_name[first.name]["usage_share"] == [0.9, 0.8]
    assert by_name[second.name]["target_share"] == [0.5, 0.5]
    assert 'id="shares-chart"' in page.content.decode()
    assert "From " in text
    assert "UTC: 2 kept cycles." in text


def test_without_a_child_far_over_target_the_page_says_so(client: Client) -> None:
    physics = node("hpc", "physics")
    first, second = hand_made(physics)  # 10/30, 20/20, 30/10: the pair's means are equal
    NodeHistory.objects.filter(node__parent=physics).exclude(node__in=[first, second]).delete()
    carol(client)
    text = client.get("/clusters/hpc/trends/", {"node": str(physics.pk)}).content.decode()
    assert "No child ran far over its target in this period" in text


def test_names_that_start_like_formulas_are_text_in_the_csv(client: Client) -> None:
    physics = node("hpc", "physics")
    first, second = hand_made(physics)
    Node.objects.filter(pk=first.pk).update(name='=HYPERLINK("http://evil.example","x")')
    Node.objects.filter(pk=second.pk).update(name="@SUM(1+1)")
    charged = Job.objects.filter(node__parent=physics).exclude(state="R")
    best = charged.order_by("-usage").first()
    assert best is not None, "physics ran jobs in the demo"
    charged.filter(entity=best.entity).update(entity="-2+3")
    carol(client)
    response = client.get(
        "/clusters/hpc/trends/", {"node": str(physics.pk), "range": "all", "format": "csv"}
    )
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    names = {(row[0], row[2]) for row in rows}
    for section in ("usage", "share"):
        assert (section, '\'=HYPERLINK("http://evil.example","x")') in names
        assert (section, "'@SUM(1+1)") in names
    assert ("top", "'-2+3") in names
    assert not [row for row in rows if any(cell[:1] in "=+-@\t\r" for cell in row if cell)]


def test_a_node_s_name_cannot_add_to_the_csv_s_file_name(client: Client) -> None:
    physics = node("hpc", "physics")
    Node.objects.filter(pk=physics.pk).update(name='x";filename=evil.bat;x="')
    carol(client)
    response = client.get(
        "/clusters/hpc/trends/", {"node": str(physics.pk), "range": "7d", "format": "csv"}
    )
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        'attachment; filename="hpc-x_filename_evil.bat_x-trends-7d.csv"'
    )


def many_children_made(parent: Node, how_many: int) -> list[Node]:
    """`how_many` users under `parent`, the n-th (from 1) with usage n × 10¹² (more than the
    demo's children), each with the three points 1u, 2u and 3u an hour apart; the rest of
    `parent`'s children's history deleted."""
    NodeHistory.objects.filter(node__parent=parent).delete()
    made = Node.objects.bulk_create(
        Node(
            cluster=parent.cluster,
            parent=parent,
            name=f"many{number:03d}",
            kind="user",
            shares=1,
            usage=1e12 * number,
            position=10_000 + number,
            cgroup_id=10_000 + number,
        )
        for number in range(1, how_many + 1)
    )
    start = timezone.now() - timedelta(days=3)
    NodeHistory.objects.bulk_create(
        NodeHistory(
            node=child,
            at=start + timedelta(hours=step),
            usage=(step + 1) * child.usage,
            fairshare_perc=0.001,
            fairshare_tree_usage=0.1,
            fairshare_factor=0.5,
        )
        for child in made
        for step in range(3)
    )
    return made


def test_a_group_of_many_children_shows_those_that_used_most_and_sums_the_others(
    client: Client,
) -> None:
    physics = node("hpc", "physics")
    before = list(physics.children.all())
    made = many_children_made(physics, TRENDS_CHILDREN + 30)
    carol(client)
    page = client.get("/clusters/hpc/trends/", {"node": str(physics.pk), "range": "7d"})
    shown = {child.name for child in made[-TRENDS_CHILDREN:]}  # the most usage
    others = [*before, *made[:-TRENDS_CHILDREN]]
    table = page.content.decode().split('<table class="shares">')[1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*><td>(.*?)</td>", table)
    names = {re.sub(r"<[^>]+>", "", row) for row in rows}
    assert names == {*shown, f"{len(others)} others"}
    series = {entry["name"]: entry for entry in page.context["series"]["series"]}
    assert set(series) == {*shown, f"{len(others)} others"}
    summed = sum(child.usage for child in made[:-TRENDS_CHILDREN])  # the others' history
    assert series[f"{len(others)} others"]["usage"] == [summed, 2 * summed, 3 * summed]
    total = 3 * sum(child.usage for child in made)
    assert series[f"{len(others)} others"]["usage_share"][2] == pytest.approx(3 * summed / total)
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode())))
    assert f"The {TRENDS_CHILDREN} children of physics that use the most are shown" in text
    response = client.get(
        "/clusters/hpc/trends/", {"node": str(physics.pk), "range": "7d", "format": "csv"}
    )
    listed = list(csv.reader(io.StringIO(response.content.decode())))
    assert {row[2] for row in listed if row[0] == "share"} == {
        child.name for child in [*before, *made]
    }  # the file holds every child
