"""Share editing on the demo's `whitepaper` (seed 000's tree and usage): the form as rendered,
the preview's numbers, the save and its audit rows, the refusals that save nothing, two admins
at once, the audit page and the resource_group download."""

import re
from typing import Any

import pytest
from django.test import Client

from tests.cast import login, node
from trees.formats.resource_group import parse_resource_group
from trees.models import Node, ShareChange
from trees.selectors.pbs import pbs_state_get
from trees.views.parameters import MAX_EDIT_CHILDREN

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]

_INPUT = re.compile(r"<input[^>]*>")
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def form_of(html: str) -> dict[str, str]:
    """The values the page's edit form posts as rendered (checked boxes only, no buttons);
    the <template> row for "Add a row" is not part of the form."""
    form = html[html.index('<form method="post" class="edit"') :]
    form = re.sub(r"<template.*?</template>", "", form[: form.index("</form>")], flags=re.S)
    data = {}
    for tag in _INPUT.findall(form):
        attributes = dict(_ATTRIBUTE.findall(tag))
        if "name" not in attributes or (
            attributes.get("type") == "checkbox" and "checked" not in tag
        ):
            continue
        default = "on" if attributes.get("type") == "checkbox" else ""
        data[attributes["name"]] = attributes.get("value", default)
    for name, text in re.findall(r'<textarea name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.S):
        data[name] = text.strip()
    return data


def rows(data: dict[str, str]) -> dict[str, int]:
    """The rows of existing children: name -> row index."""
    return {
        value: int(key.split("-")[1])
        for key, value in data.items()
        if key.endswith("-original") and value
    }


def text(response: Any) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


@pytest.fixture
def alice(client: Client) -> Client:
    login(client, "admin", staff=True)
    return client


def edit_url(name: str) -> str:
    return f"/clusters/whitepaper/nodes/{node('whitepaper', name).pk}/edit/"


def opened(client: Client, name: str) -> dict[str, str]:
    response = client.get(edit_url(name))
    assert response.status_code == 200
    return form_of(response.content.decode())


def post(client: Client, name: str, data: dict[str, str], action: str) -> Any:
    return client.post(edit_url(name), {**data, "action": action})


def test_the_form_has_a_row_per_child_in_resource_group_order_and_blank_rows(alice: Client) -> None:
    data = opened(alice, "B2")
    assert rows(data) == {"B3": 0, "L4": 1, "L3": 2}
    assert (data["child-0-shares"], data["child-0-parent"]) == ("75", "B2")
    assert data["child-TOTAL_FORMS"] == "6"  # 3 children, 3 new rows
    assert data.get("child-3-name", "") == ""
    assert data["child-3-parent"] == "B2"
    root = opened(alice, "TREEROOT")
    assert set(rows(root)) == {"B4", "L7", "B2", "B1"}  # not `unknown`: PBS's own
    assert root[f"child-{rows(root)['B1']}-parent"] == "root"


def test_preview_shows_every_changed_standing_and_saves_nothing(alice: Client) -> None:
    data = opened(alice, "B1")
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    response = post(alice, "B1", data, "preview")
    assert response.status_code == 200
    page = text(response)
    assert "1 entity and 0 groups change" not in page
    assert "2 entities and 0 groups change" in page
    # pbsfs -g's percentages: L1 10.000000 % -> 5.000000 %, L2 0 -> 5; factors from the engine.
    assert re.search(r"L1 B1 10\.000000 % 5\.000000 % 0\.\d{6} 0\.\d{6} ↓ less deserving", page)
    assert re.search(r"L2 B1 0\.000000 % 5\.000000 % 0\.000000 0\.\d{6} ↑ more deserving", page)
    assert "Save this edit" in page
    assert node("whitepaper", "L2").shares == 0
    assert not ShareChange.objects.filter(reason__startswith="policy").exists()


def test_the_preview_offers_to_simulate_its_share_changes(alice: Client) -> None:
    data = opened(alice, "B1")
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    page = post(alice, "B1", data, "preview").content.decode()
    link = '<a href="/clusters/whitepaper/whatif/?set=shares%3AL2%3D10">Simulate this</a>'
    assert link in page
    assert "not replayed" not in page
    # A rename is no setting of a what-if: left out, and said so.
    data[f"child-{rows(data)['L1']}-name"] = "L1b"
    page = post(alice, "B1", data, "preview").content.decode()
    assert link in page
    assert "The edit's other changes (renames, moves, additions, removals) are not" in page
    # A rename alone changes no share: nothing to simulate.
    data[f"child-{rows(data)['L2']}-shares"] = "0"
    assert "Simulate this" not in post(alice, "B1", data, "preview").content.decode()


def test_save_after_preview_stores_it_with_the_reason_and_shows_it_in_the_audit(
    alice: Client,
) -> None:
    data = opened(alice, "B1")
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    preview = form_of(post(alice, "B1", data, "preview").content.decode())
    assert preview["previewed"]
    preview["reason"] = "policy 2026: L2 gets a share"
    response = post(alice, "B1", preview, "save")
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/"
    assert node("whitepaper", "L2").shares == 10
    assert node("whitepaper", "L1").fairshare_perc == pytest.approx(0.05)
    change = ShareChange.objects.get(reason="policy 2026: L2 gets a share")
    assert (change.node_name, change.what(), str(change.changed_by)) == (
        "L2",
        "0 → 10 shares",
        "admin",
    )
    assert "Saved: 1 change(s)" in text(alice.get(response["Location"]))
    audit = text(alice.get("/clusters/whitepaper/audit/"))
    assert "admin L2 0 → 10 shares policy 2026: L2 gets a share" in audit


def test_a_save_that_goes_through_computes_no_preview(
    alice: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = opened(alice, "B1")
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    saved = form_of(post(alice, "B1", data, "preview").content.decode()) | {"reason": "once"}

    def no_preview(**_: object) -> None:
        raise AssertionError("the save computed a preview")

    monkeypatch.setattr("trees.views.edit.tree_edit_preview_get", no_preview)
    assert post(alice, "B1", saved, "save").status_code == 302
    assert node("whitepaper", "L2").shares == 10


def test_save_needs_a_reason_and_the_edit_previewed(alice: Client) -> None:
    data = opened(alice, "B1")
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    preview = form_of(post(alice, "B1", data, "preview").content.decode())
    response = post(alice, "B1", preview, "save")  # no reason
    assert "a reason is required to save" in text(response)
    preview.update(reason="why not")
    preview[f"child-{rows(data)['L2']}-shares"] = "20"  # changed after its preview
    response = post(alice, "B1", preview, "save")
    assert response.status_code == 200
    assert "The rows changed after their preview" in text(response)
    assert node("whitepaper", "L2").shares == 0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("shares", "ten", "Enter a whole number."),
        ("shares", "-1", "Ensure this value is greater than or equal to 0."),
        ("shares", "", "shares are required: a whole number, 0 or more"),
        ("name", "two words", "use only letters, digits and . _ : - (resource_group splits"),
        ("name", "L5", "L5 is another entry&#x27;s name (PBS names are unique)"),
        ("parent", "L6", "B2 cannot move under L6: it is inside B2&#x27;s own subtree"),
        ("parent", "nowhere", "nowhere is not in the tree"),
    ],
)
def test_bad_rows_get_their_message_next_to_the_field_and_nothing_is_saved(
    alice: Client, field: str, value: str, message: str
) -> None:
    cluster = node("whitepaper", "B2").cluster
    before = pbs_state_get(cluster=cluster).groups
    data = opened(alice, "TREEROOT")
    row = rows(data)["B2"]
    data[f"child-{row}-{field}"] = value
    data["reason"] = "trying"
    response = post(alice, "TREEROOT", data, "preview")
    assert response.status_code == 200
    html = response.content.decode()
    field_cell = html[html.index(f'name="child-{row}-{field}"') :]
    assert message in field_cell[: field_cell.index("</td>")]
    assert "What-if preview" not in html
    assert pbs_state_get(cluster=cluster).groups == before
    assert not ShareChange.objects.filter(reason="trying").exists()


def test_rename_move_add_and_remove_in_one_save(alice: Client) -> None:
    data = opened(alice, "B2")
    index = rows(data)
    b3 = node("whitepaper", "B3").pk
    data[f"child-{index['B3']}-name"] = "B3-new"
    data[f"child-{index['L4']}-parent"] = "B1"
    data[f"child-{index['L3']}-remove"] = "on"
    data.update({"child-3-name": "L9", "child-3-shares": "5"})
    preview = post(alice, "B2", data, "preview")
    page = text(preview)
    assert "B3 renamed B3-new" in page
    assert "L4 moved from B2 to B1" in page
    assert "removed: L3" in page
    assert "added: L9" in page
    saved = form_of(preview.content.decode()) | {"reason": "reorganisation"}
    assert post(alice, "B2", saved, "save").status_code == 302
    assert node("whitepaper", "B3-new").pk == b3
    assert node("whitepaper", "L4").parent_id == node("whitepaper", "B1").pk
    assert node("whitepaper", "L3").parent_id == node("whitepaper", "unknown").pk  # its usage
    assert node("whitepaper", "L9").parent_id == node("whitepaper", "B2").pk
    whats = sorted(c.what() for c in ShareChange.objects.filter(reason="reorganisation"))
    assert whats == [
        "added with 5 shares",
        "moved from B2 to B1",
        "removed from B2 (had 10 shares)",
        "renamed from B3",
    ]
    # B2's own trail has all four, the ones gone or moved away included; B1's the one come.
    b2, b1 = node("whitepaper", "B2").pk, node("whitepaper", "B1").pk
    around_b2 = text(alice.get(f"/clusters/whitepaper/audit/?node={b2}"))
    assert "Audit trail of B2 and its children" in around_b2
    assert "4 changes" in around_b2
    around_b1 = text(alice.get(f"/clusters/whitepaper/audit/?node={b1}&q=L"))
    assert "1 change " in around_b1
    assert "L4 moved from B2 to B1" in around_b1


def test_a_second_admin_is_told_and_nothing_of_theirs_is_saved(alice: Client) -> None:
    other = Client()
    login(other, "admin2", staff=True)
    mine, theirs = opened(alice, "B1"), opened(other, "B1")
    row = rows(mine)["L2"]
    mine[f"child-{row}-shares"] = "10"
    saved = form_of(post(alice, "B1", mine, "preview").content.decode()) | {"reason": "first"}
    theirs[f"child-{row}-shares"] = "30"
    theirs = form_of(post(other, "B1", theirs, "preview").content.decode()) | {"reason": "second"}
    assert post(alice, "B1", saved, "save").status_code == 302
    response = post(other, "B1", theirs, "save")
    assert response.status_code == 409
    page = text(response)
    assert "The tree changed while you edited it: nothing was saved." in page
    assert "admin: L2, 0 → 10 shares (first)" in page
    assert "L2: L2 under B1, 30 shares" in page  # their rows, to redo
    assert node("whitepaper", "L2").shares == 10
    assert form_of(response.content.decode())[f"child-{row}-shares"] == "10"  # the tree now
    assert not ShareChange.objects.filter(reason="second").exists()


def test_the_resource_group_download_reads_back_as_the_tree(alice: Client) -> None:
    response = alice.get("/clusters/whitepaper/resource_group")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="resource_group"'
    groups = parse_resource_group(response.content).groups
    assert groups == pbs_state_get(cluster=node("whitepaper", "B1").cluster).groups
    assert len(groups) == 12


def test_audit_page_filters_by_name_and_pages(alice: Client) -> None:
    cluster = node("whitepaper", "B1").cluster
    ShareChange.objects.bulk_create(
        ShareChange(
            cluster=cluster,
            node_name=f"x{n}",
            changed_at="2026-11-01T00:00Z",
            old_shares=n,
            new_shares=n + 1,
            reason="bulk",
        )
        for n in range(150)
    )
    first = text(alice.get("/clusters/whitepaper/audit/"))
    assert "150 changes; page 1 of 2" in first
    assert alice.get("/clusters/whitepaper/audit/?page=3").status_code == 404
    assert alice.get("/clusters/whitepaper/audit/?page=x").status_code == 400
    assert alice.get("/clusters/whitepaper/audit/?node=B1").status_code == 400
    assert alice.get("/clusters/whitepaper/audit/?node=99999999").status_code == 404
    only = text(alice.get("/clusters/whitepaper/audit/?q=x149"))
    assert "1 change" in only
    assert "x149 149 → 150 shares bulk" in only


def test_slurm_and_nodes_without_entries_have_no_edit_page(alice: Client) -> None:
    slurm = Node.objects.filter(cluster__scheduler="slurm").first()
    assert slurm is not None
    assert alice.get(f"/clusters/{slurm.cluster.name}/nodes/{slurm.pk}/edit/").status_code == 404
    assert alice.get(edit_url("unknown")).status_code == 404
    assert alice.get(f"/clusters/{slurm.cluster.name}/resource_group").status_code == 404


def test_the_node_page_links_to_the_edit_for_admins_only(alice: Client) -> None:
    page = alice.get(f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/")
    assert "Edit B1's children" in page.content.decode()
    member = Client()
    login(member, "someone")
    page = member.get(f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/")
    assert page.status_code == 200
    assert "children</a>" not in page.content.decode()


def users_made_under(name: str, how_many: int) -> None:
    """`how_many` entities of the tree under the group, after its own entries."""
    group = node("whitepaper", name)
    Node.objects.bulk_create(
        Node(
            cluster=group.cluster,
            parent=group,
            name=f"u{number:04d}",
            shares=1,
            position=10_000 + number,
            cgroup_id=10_000 + number,
        )
        for number in range(how_many)
    )


def test_a_group_of_too_many_children_for_one_form_points_to_the_resource_group(
    alice: Client,
) -> None:
    users_made_under("B4", MAX_EDIT_CHILDREN - 1)  # B4 has L5 of its own
    assert rows(opened(alice, "B4"))["u0498"] == MAX_EDIT_CHILDREN - 1
    users_made_under("B2", MAX_EDIT_CHILDREN - 2)  # and B2 three: one too many
    answer = alice.get(edit_url("B2"))
    assert answer.status_code == 200
    page = answer.content.decode()
    assert '<form method="post" class="edit"' not in page
    assert len(_INPUT.findall(page)) < 5  # the log-out form's, not a row a child
    said = text(answer)
    assert f"B2 has {MAX_EDIT_CHILDREN + 1:,} children: more than the {MAX_EDIT_CHILDREN}" in said
    assert 'href="/clusters/whitepaper/resource_group"' in page
    assert 'href="/clusters/whitepaper/import/"' in page
    before = ShareChange.objects.count()
    data = {"child-TOTAL_FORMS": "1", "child-INITIAL_FORMS": "1", "child-0-original": "B3",
            "child-0-name": "B3", "child-0-parent": "B2", "child-0-shares": "1"}  # fmt: skip
    refused = post(alice, "B2", {**data, "reason": "r"}, "save")
    assert refused.status_code == 400
    assert f"more than the {MAX_EDIT_CHILDREN}" in text(refused)
    assert ShareChange.objects.count() == before
    assert node("whitepaper", "B3").shares == 75
