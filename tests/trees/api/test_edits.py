"""Share edits through the API (`POST /api/clusters/{name}/share-edits/`) on the white paper's
tree: the edit page's what-if preview, the version in If-Match, the reason in the audit trail.

B3 (15 % of the machine) has L5 (10 shares, 10 %) and L6 (5 shares, 5 %): giving L5 30 shares
makes them 0.15 × 30/35 = 12.857 % and 0.15 × 5/35 = 2.143 %; no other node moves.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests.cast import login, login_made, member_made, node
from trees.engine.edit import ChildEdit
from trees.models import Cluster, Role, ShareChange, TokenScope
from trees.selectors.edit import tree_edit_preview_get
from trees.selectors.pbs import tree_version_get
from trees.services.tokens import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]

URL = "/api/clusters/whitepaper/share-edits/"
L5_GETS_30 = {"original": "L5", "name": "L5", "parent": "B3", "shares": 30}
REASON = "the 2027 allocation"


def version() -> str:
    return tree_version_get(cluster=Cluster.objects.get(name="whitepaper"))


def post(client: Client, body: Any, query: str = "", **headers: str) -> Any:
    return client.post(URL + query, body, content_type="application/json", headers=headers)


def bearer(user: User, scope: str) -> dict[str, str]:
    secret = api_token_create(user=user, name=scope, days=1, scope=scope, now=timezone.now())[1]
    return {"Authorization": f"Bearer {secret}"}


def nothing_saved(before: str) -> None:
    assert version() == before
    assert node("whitepaper", "L5").shares == 10
    assert node("whitepaper", "L6").shares == 5
    assert not ShareChange.objects.exists()


@pytest.fixture
def admin(client: Client) -> User:
    return login(client, "alice", staff=True)


@pytest.mark.usefixtures("admin")
def test_a_dry_run_lists_the_nodes_whose_target_share_changes_and_saves_nothing(
    client: Client,
) -> None:
    before = version()
    answer = post(client, {"edits": [L5_GETS_30]}, "?dry_run=1")  # no reason, no If-Match
    assert answer.status_code == 200
    body = answer.json()
    preview = tree_edit_preview_get(
        cluster=Cluster.objects.get(name="whitepaper"),
        edits=[ChildEdit(original="L5", name="L5", parent="B3", shares=30)],
    )
    assert body == {
        "dry_run": True,
        "version": before,
        "changes": [dataclasses.asdict(change) for change in preview.changes],
        "memberships_removed": 0,
    }
    moved = {
        change["name"]: (format(change["perc_before"], ".6f"), format(change["perc_after"], ".6f"))
        for change in body["changes"]
    }
    assert moved == {"L5": ("0.100000", "0.128571"), "L6": ("0.050000", "0.021429")}
    l5 = next(change for change in body["changes"] if change["name"] == "L5")
    assert format(l5["factor_before"], ".6f") == "0.098927"  # 2^-(0.333750 / 0.1)
    assert l5["factor_after"] > l5["factor_before"]  # more shares, the same usage
    nothing_saved(before)


@pytest.mark.usefixtures("admin")
def test_a_dry_run_on_a_stale_version_is_a_conflict(client: Client) -> None:
    answer = post(client, {"edits": [L5_GETS_30]}, "?dry_run=1", **{"If-Match": "0" * 32})
    assert answer.status_code == 409
    assert answer.json() == {
        "error": "conflict",
        "detail": "the tree changed since the version in If-Match: nothing was saved; its"
        f" version is now {version()}",
    }


@pytest.mark.usefixtures("admin")
def test_saving_needs_the_version_it_was_made_on(client: Client) -> None:
    before = version()
    answer = post(client, {"edits": [L5_GETS_30], "reason": REASON})
    assert answer.status_code == 428
    assert answer.json() == {
        "error": "a precondition is required",
        "detail": "If-Match: the tree_version the edit was made on",
    }
    nothing_saved(before)


@pytest.mark.usefixtures("admin")
def test_an_edit_made_on_another_version_is_refused_and_nothing_is_saved(
    client: Client,
) -> None:
    before = version()
    stale = post(client, {"edits": [L5_GETS_30], "reason": REASON}, **{"If-Match": "0" * 32})
    assert stale.status_code == 409
    assert stale.json()["detail"].endswith(f"its version is now {before}")
    nothing_saved(before)


@pytest.mark.usefixtures("admin")
@pytest.mark.parametrize("reason", [None, "", "   "])
def test_saving_needs_a_reason(client: Client, reason: str | None) -> None:
    before = version()
    body: dict[str, Any] = {"edits": [L5_GETS_30]}
    if reason is not None:
        body["reason"] = reason
    answer = post(client, body, **{"If-Match": before})
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": {"reason": ["a reason is required"]},
    }
    nothing_saved(before)


def test_a_saved_edit_writes_the_audit_row_with_the_reason_and_who(
    client: Client, admin: User
) -> None:
    before = version()
    preview = post(client, {"edits": [L5_GETS_30]}, "?dry_run=1").json()
    saved = post(client, {"edits": [L5_GETS_30], "reason": REASON}, **{"If-Match": f'"{before}"'})
    assert saved.status_code == 200
    after = version()
    assert after != before
    assert saved.json() == {"dry_run": False, "version": after, "share_changes": 1}
    l5 = node("whitepaper", "L5")
    assert l5.shares == 30
    # The stored metrics are the ones the preview promised.
    promised = {change["name"]: change for change in preview["changes"]}
    assert l5.fairshare_factor == promised["L5"]["factor_after"]
    assert node("whitepaper", "L6").fairshare_perc == promised["L6"]["perc_after"]
    (change,) = ShareChange.objects.all()
    assert (change.node_id, change.node_name, change.old_shares, change.new_shares) == (
        l5.pk, "L5", 10, 30,
    )  # fmt: skip
    assert (change.reason, change.changed_by) == (REASON, admin)
    # The version it was made on is stale now.
    again = post(client, {"edits": [L5_GETS_30], "reason": REASON}, **{"If-Match": before})
    assert again.status_code == 409
    assert ShareChange.objects.count() == 1


def test_a_write_token_of_an_admin_s_saves(client: Client) -> None:
    alice = login_made("alice", admin=True)
    body = {"edits": [L5_GETS_30], "reason": REASON}
    saved = post(client, body, **bearer(alice, TokenScope.WRITE), **{"If-Match": version()})
    assert saved.status_code == 200
    assert ShareChange.objects.get().changed_by == alice


PROBLEMS = {
    "edits": [
        {"original": "L5", "name": "L5", "parent": "nowhere", "shares": 3},
        {"original": "L6", "name": "TREEROOT", "parent": "B3", "shares": 3},
    ],
    "reason": REASON,
}


@pytest.mark.usefixtures("admin")
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry run", "saved"])
def test_an_edit_with_problems_is_a_400_with_each_problem_s_field(
    client: Client, dry_run: bool
) -> None:
    before = version()
    answer = post(client, PROBLEMS, "?dry_run=1" if dry_run else "", **{"If-Match": before})
    assert answer.status_code == 400
    problems = answer.json()["detail"]["edits"]
    assert sorted((p["field"], p["message"]) for p in problems) == [
        ("name", "'TREEROOT' is reserved by PBS"),
        ("parent", "nowhere is not in the tree"),
    ]
    nothing_saved(before)


@pytest.mark.usefixtures("admin")
def test_each_problem_names_its_row_as_a_number(client: Client) -> None:
    problems = post(client, PROBLEMS, "?dry_run=1").json()["detail"]["edits"]
    assert sorted((p["row"], p["field"]) for p in problems) == [(0, "parent"), (1, "name")]
    unchanged = {"edits": [{"original": "L5", "name": "L5", "parent": "B3", "shares": 10}]}
    (whole,) = post(client, unchanged, "?dry_run=1").json()["detail"]["edits"]
    assert whole == {"row": None, "field": "__all__", "message": "nothing is changed"}


@pytest.mark.usefixtures("admin")
def test_negative_shares_are_refused_by_row_and_field(client: Client) -> None:
    before = version()
    body = {"edits": [L5_GETS_30, {**L5_GETS_30, "original": "L6", "name": "L6", "shares": -1}]}
    for query in ("?dry_run=1", ""):
        answer = post(client, {**body, "reason": REASON}, query, **{"If-Match": before})
        assert answer.status_code == 400
        assert answer.json()["detail"] == {
            "edits": {"1": {"shares": ["Ensure this value is greater than or equal to 0."]}}
        }
    nothing_saved(before)


@pytest.mark.usefixtures("admin")
def test_a_slurm_cluster_has_no_share_edits(client: Client) -> None:
    answer = client.post(
        "/api/clusters/fairtree/share-edits/?dry_run=1",
        {"edits": [L5_GETS_30]},
        content_type="application/json",
    )
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "not found",
        "detail": "cluster fairtree is not a pbs cluster",
    }


def test_a_member_may_not_edit_shares(client: Client) -> None:
    before = version()
    bob = login(client, "bob")
    member_made(bob, node("whitepaper", "B3"), Role.MANAGER)  # even the manager of B3
    for query in ("?dry_run=1", ""):
        answer = post(
            client, {"edits": [L5_GETS_30], "reason": REASON}, query, **{"If-Match": before}
        )
        assert answer.status_code == 403
        assert answer.json() == {"error": "not allowed", "detail": "editing shares is for admins"}
    nothing_saved(before)


def test_an_admin_s_read_token_may_not_edit_shares(client: Client) -> None:
    before = version()
    alice = login_made("alice", admin=True)
    headers = {**bearer(alice, TokenScope.READ), "If-Match": before}
    answer = post(client, {"edits": [L5_GETS_30], "reason": REASON}, **headers)
    assert answer.status_code == 403
    assert answer.json() == {
        "error": "not allowed",
        "detail": "writing needs a token of the `read write` scope",
    }
    assert post(client, {"edits": [L5_GETS_30]}, "?dry_run=1", **headers).status_code == 403
    anonymous = post(Client(), {"edits": [L5_GETS_30]}, "?dry_run=1")
    assert anonymous.status_code == 401
    nothing_saved(before)
