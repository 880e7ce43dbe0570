"""Compare: the answer of pbsfs -c (Fair Tree on Slurm) in words, for what the person reads."""

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.cast import login
from tests.conftest import EXAMPLES
from trees.models import Cluster, Membership, Role

pytestmark = pytest.mark.django_db


def answer(client: Client, cluster: str, a: str, b: str, status: int = 200) -> str:
    page = client.get(f"/clusters/{cluster}/compare/", {"a": a, "b": b})
    assert page.status_code == status
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode())))


@pytest.mark.parametrize(
    ("cluster", "example"), [("whitepaper", "seed_tree"), ("forum", "forum_example")]
)
@pytest.mark.usefixtures("samples")
def test_the_answer_is_what_the_real_pbsfs_c_printed(
    client: Client, cluster: str, example: str
) -> None:
    expected = EXAMPLES / example / "expected_c.txt"
    if not expected.is_file():
        pytest.skip(f"the shared examples are not at {EXAMPLES}")
    login(client, "ann")
    for line in expected.read_text().splitlines():
        a, b, said = line.split("\t")
        text = answer(client, cluster, a, b)
        if said == f"{a} == {b}":
            assert "Neither is more deserving" in text, line
        else:
            assert f" {said} is more deserving " in text, line


@pytest.mark.usefixtures("samples")
def test_the_deciding_level_and_what_would_change_it_by_hand(client: Client) -> None:
    """White paper, L5 against L1: decided at the root between B2 (401 / 0.2 = 2005) and B1
    (201 / 0.1 = 2010). B1 would win below 2005 × 0.1 = 200.5, or with B2 above 2010 × 0.2 =
    402, one more; or with a target above 201 / 2005 = 10.024938 %."""
    login(client, "ann")
    text = answer(client, "whitepaper", "L5", "L1")
    assert (
        "At the root, their first common ancestor, pbsfs compares B2 with B1."
        " B2: usage 401 CPU-seconds (0.1 CPU-hours), target 20.000000 %, usage/perc 2,005."
        " B1: usage 201 CPU-seconds (0.1 CPU-hours), target 10.000000 %, usage/perc 2,010."
    ) in text
    assert "L5 is more deserving than L1" in text
    assert "decay bringing B1's usage below 200.5 CPU-seconds (0.1 CPU-hours)" in text
    assert "B2 using 1.0 CPU-seconds (0.00028 CPU-hours) more" in text
    assert "target share rising above 10.024938 %" in text  # 201 / 2005, as pbsfs prints it


@pytest.mark.usefixtures("samples")
def test_a_node_without_target_share_loses_and_a_node_ties_with_its_ancestor(
    client: Client,
) -> None:
    login(client, "ann")
    text = answer(client, "whitepaper", "L2", "L1")
    assert "L2 has no target share there, so it loses to any node with one" in text
    assert "L1 is more deserving " in text
    text = answer(client, "whitepaper", "B2", "L5")
    assert "Neither is more deserving" in text
    assert "pbsfs ties a node with its ancestors" in text


@pytest.mark.usefixtures("samples")
def test_slurm_compares_by_level_fs(client: Client) -> None:
    login(client, "ann")
    cluster = Cluster.objects.get(name="fairtree")
    users = list(cluster.nodes.filter(kind="user").select_related("parent")[:2])
    a, b = (f"{user.parent.name if user.parent else ''}:{user.name}" for user in users)
    text = answer(client, "fairtree", a, b)
    assert "their first common ancestor, Fair Tree compares" in text
    assert "Level FS" in text


@pytest.mark.usefixtures("demo")  # hpc made private, a member of genomics
def test_unknown_names_and_names_not_readable_are_the_same_400(client: Client) -> None:
    user = login(client, "ann", scheduler_user="nobody")
    assert "a: no entity or group 'nowhere'" in answer(client, "whitepaper", "nowhere", "L1", 400)
    assert "b: no entity or group ''" in answer(client, "whitepaper", "L1", "", 400)
    hpc = Cluster.objects.get(name="hpc")
    hpc.private_usage = True
    hpc.save()
    Membership.objects.create(user=user, node=hpc.nodes.get(name="genomics"), role=Role.MEMBER)
    assert "b: no entity or group 'cond-matter'" in answer(
        client, "hpc", "genomics", "cond-matter", 400
    )
    assert client.get("/clusters/nowhere/compare/").status_code == 404
    assert client.get("/clusters/hpc/compare/").status_code == 200


@pytest.mark.usefixtures("demo")
def test_the_form_suggests_the_names_a_person_may_read_as_they_type(client: Client) -> None:
    client.force_login(User.objects.get(username="alice"))
    names = client.get("/clusters/hpc/compare/names.json", {"q": "MATTER"}).json()["names"]
    assert "cond-matter" in names  # case aside, a part of the name
    assert all("matter" in name.lower() for name in names)
    slurm = client.get("/clusters/fairtree/compare/names.json", {"q": "an"}).json()["names"]
    assert "astro:ana" in slurm  # Slurm's users as ACCOUNT:USER, as the form takes them
    assert "ml:ana" in slurm
    assert client.get("/clusters/hpc/compare/names.json").status_code == 400
    assert client.get("/clusters/hpc/compare/names.json", {"q": "x" * 300}).status_code == 400
    page = client.get("/clusters/hpc/compare/").content.decode()
    assert 'list="names-a"' in page
    assert 'data-names-url="/clusters/hpc/compare/names.json"' in page


@pytest.mark.usefixtures("demo")
def test_suggestions_leave_out_what_the_person_may_not_read(client: Client) -> None:
    hpc = Cluster.objects.get(name="hpc")
    hpc.private_usage = True
    hpc.save()
    client.force_login(User.objects.get(username="bob"))  # cond-matter and genomics
    names = client.get("/clusters/hpc/compare/names.json", {"q": "e"}).json()["names"]
    assert "cond-matter" in names
    assert "genomics" in names
    assert "gravwaves" not in names  # cond-matter's sibling: seen as a total, not read
    assert "physics" not in names
