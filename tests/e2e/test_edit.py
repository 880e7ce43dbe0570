"""Share editing in a browser: alice changes Cathy's shares on the forum tree with a preview,
saves with a reason, finds it in the audit trail, and puts the tree back as it was."""

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import shot


def edit_cathy(alice: Page, shares: str, reason: str) -> None:
    alice.goto("/clusters/forum/")
    alice.locator("#tree-table").get_by_role("link", name="group1", exact=True).click()
    alice.get_by_role("link", name="Edit group1's children").click()
    expect(alice.get_by_role("heading", name="Edit the children of group1")).to_be_visible()
    cathy = alice.locator("tr.edit-row").filter(has=alice.locator("input[value='Cathy']"))
    cathy.locator("input[name$='-shares']").fill(shares)
    alice.get_by_role("button", name="Preview").click()
    expect(alice.get_by_role("heading", name="What-if preview")).to_be_visible()
    alice.get_by_label("Reason").fill(reason)
    alice.get_by_role("button", name="Save this edit").click()
    expect(alice.get_by_role("status")).to_contain_text("Saved: 1 change(s)")


def test_alice_edits_shares_with_a_preview_sees_the_audit_entry_and_undoes_it(
    alice: Page,
) -> None:
    alice.goto("/clusters/forum/")
    alice.locator("#tree-table").get_by_role("link", name="group1", exact=True).click()
    alice.get_by_role("link", name="Edit group1's children").click()
    rows = alice.locator("tr.edit-row")
    expect(rows).to_have_count(5)  # Bob, Cathy and three blank rows
    alice.get_by_role("button", name="Add a row").click()
    expect(rows).to_have_count(6)
    expect(alice.locator("input[name='child-TOTAL_FORMS']")).to_have_value("6")
    expect(rows.last.locator("input[name$='-parent']")).to_have_value("group1")

    cathy = rows.filter(has=alice.locator("input[value='Cathy']"))
    cathy.locator("input[name$='-shares']").fill("-5")
    alice.get_by_role("button", name="Preview").click()
    expect(cathy).to_contain_text("greater than or equal to 0")
    expect(alice.get_by_role("heading", name="What-if preview")).to_have_count(0)

    cathy.locator("input[name$='-shares']").fill("60")
    alice.get_by_role("button", name="Preview").click()
    preview = alice.locator("section.preview")
    expect(preview).to_contain_text("2 entities and 0 groups change")
    # Bob 50 of 100 -> 50 of 110 and Cathy 60 of 110, of group1's 40%.
    expect(preview.locator("tr", has_text="Bob")).to_contain_text("20.000000 %")
    expect(preview.locator("tr", has_text="Bob")).to_contain_text("18.181818 %")
    expect(preview.locator("tr", has_text="Cathy")).to_contain_text(
        "21.818184 %"
    )  # float32, as pbsfs
    shot(alice, "edit-forum-preview")

    alice.get_by_role("button", name="Save this edit").click()
    expect(alice.get_by_label("Reason")).to_be_visible()
    expect(alice.locator("form.edit")).to_contain_text("a reason is required to save")
    alice.get_by_label("Reason").fill("e2e: Cathy's project grows")
    alice.get_by_role("button", name="Save this edit").click()
    expect(alice.get_by_role("status")).to_contain_text("Saved: 1 change(s)")
    expect(alice.get_by_role("heading", name=re.compile("^group1"))).to_be_visible()

    alice.get_by_role("link", name="Its audit trail").click()
    entry = alice.locator("table.audit tbody tr").first
    expect(entry).to_contain_text("alice")
    expect(entry).to_contain_text("Cathy")
    expect(entry).to_contain_text("50 → 60 shares")
    expect(entry).to_contain_text("e2e: Cathy's project grows")
    shot(alice, "audit-forum")

    edit_cathy(alice, "50", "e2e: back as it was")
    children = alice.locator("table.children")
    expect(children.locator("tr", has_text="Cathy")).to_contain_text("50")
