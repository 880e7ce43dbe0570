"""With private_usage on, a node the person may not see answers every lookup exactly as a name
or id that does not exist: search, compare, history events, trends, node pages.

On the white paper's tree a person whose jobs run as L1 sees their path (TREEROOT, B1), its
children (B4, L7, B2, B1's L1 and L2) and nothing under B2 or B4 (B3, L3-L6, L8)."""

import json
import re

import pytest
from django.test import Client
from django.utils import timezone

from tests.cast import login, node
from trees.models import Cluster, Membership, Node, Role, ShareChange

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]

HIDDEN = ("B3", "L3", "L4", "L5", "L6", "L8")
SEEN = {"TREEROOT", "B1", "B2", "B4", "L7", "L1", "L2", "unknown"}
NOWHERE = "Q9"  # no node has this name


@pytest.fixture
def l1(client: Client) -> Client:
    Cluster.objects.filter(name="whitepaper").update(private_usage=True)
    login(client, "member", scheduler_user="L1")
    return client


def unmasked(body: bytes) -> bytes:
    """The page without its CSRF token, which Django masks afresh each time."""
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", body)


def search(client: Client, text: str) -> bytes:
    answer = client.get("/clusters/whitepaper/tree.json", {"q": text})
    assert answer.status_code == 200
    return answer.content


@pytest.mark.parametrize("hidden", HIDDEN)
def test_searching_a_hidden_name_answers_as_a_name_that_does_not_exist(
    l1: Client, hidden: str
) -> None:
    assert search(l1, hidden) == search(l1, NOWHERE)
    assert json.loads(search(l1, NOWHERE))["nodes"] == []


@pytest.mark.parametrize("text", ["L", "B", "3", "5", "8", "TREE", "l"])
def test_a_search_answers_only_nodes_the_person_sees(l1: Client, text: str) -> None:
    """Letter by letter, no hidden name can be rebuilt: not even through its ancestors."""
    names = {doc["name"] for doc in json.loads(search(l1, text))["nodes"]}
    assert names <= SEEN


def test_a_whole_tree_reader_still_finds_every_match_with_its_ancestors(client: Client) -> None:
    Cluster.objects.filter(name="whitepaper").update(private_usage=True)
    login(client, "admin", staff=True)
    names = [doc["name"] for doc in json.loads(search(client, "L5"))["nodes"]]
    assert sorted(names) == ["B2", "B3", "L5", "TREEROOT"]


def test_comparing_with_a_hidden_name_answers_as_a_name_that_does_not_exist(l1: Client) -> None:
    def compare(b: str) -> tuple[int, str]:
        answer = l1.get("/clusters/whitepaper/compare/", {"a": "L1", "b": b})
        return answer.status_code, unmasked(answer.content).decode().replace(b, "NAME")

    assert compare("L5") == compare(NOWHERE)
    assert compare("L5")[0] == 400


def test_a_hidden_node_id_answers_as_one_that_does_not_exist(l1: Client) -> None:
    hidden, missing = node("whitepaper", "L5").pk, 9_000_000
    for path in (
        "/clusters/whitepaper/nodes/{}/",
        "/clusters/whitepaper/nodes/{}/history.json",
        "/clusters/whitepaper/nodes/{}/recovery.json",
        "/clusters/whitepaper/tree.json?node={}",
        "/clusters/whitepaper/trends/?node={}",
    ):
        seen, unseen = l1.get(path.format(hidden)), l1.get(path.format(missing))
        assert (seen.status_code, unmasked(seen.content)) == (
            unseen.status_code,
            unmasked(unseen.content),
        ), path
        assert seen.status_code == 404


def slurm_node(account: str, user: str = "") -> Node:
    if not user:
        return Node.objects.get(cluster__name="fairtree", name=account, kind="organization")
    return Node.objects.get(cluster__name="fairtree", name=user, parent__name=account)


def events(client: Client, leaf_id: int, cluster: str) -> list[str]:
    answer = client.get(f"/clusters/{cluster}/nodes/{leaf_id}/history.json", {"range": "all"})
    assert answer.status_code == 200
    return [event["text"] for event in json.loads(answer.content)["events"]]


def test_history_shows_no_change_of_a_hidden_node_that_shares_a_name(client: Client) -> None:
    """Slurm: ana is a user of astro and of ml; a member of astro does not see ml's ana."""
    Cluster.objects.filter(name="fairtree").update(private_usage=True)
    member = login(client, "astronomer")
    Membership.objects.create(user=member, node=slurm_node("astro"), role=Role.MEMBER)
    ShareChange.objects.create(
        cluster=slurm_node("astro").cluster, node=slurm_node("ml", "ana"), node_name="ana",
        changed_at=timezone.now(), old_shares=1, new_shares=5, reason="ml's own business",
    )  # fmt: skip
    ShareChange.objects.create(
        cluster=slurm_node("astro").cluster, node=slurm_node("astro", "ben"), node_name="ben",
        changed_at=timezone.now(), old_shares=1, new_shares=2, reason="astro's",
    )  # fmt: skip
    texts = events(client, slurm_node("astro", "ana").pk, "fairtree")
    assert [text for text in texts if "→" in text] == ["ben: 1 → 2 shares (astro's)"]


def test_history_shows_no_move_from_a_hidden_group(l1: Client) -> None:
    """L2, beside L1, once came from B3, which L1's person does not see, and once from B4,
    which they see: only the second move is marked on L1's chart."""
    cluster = node("whitepaper", "L2").cluster
    for old_parent in ("B3", "B4"):
        ShareChange.objects.create(
            cluster=cluster, node=node("whitepaper", "L2"), node_name="L2", reason="tidy",
            changed_at=timezone.now(), old_shares=0, new_shares=0, old_parent=old_parent,
            new_parent="B1",
        )  # fmt: skip
    texts = events(l1, node("whitepaper", "L1").pk, "whitepaper")
    assert [text for text in texts if "moved" in text] == ["L2: moved from B4 to B1 (tidy)"]
