"""My standing, compare and trends in a browser, as the people each is for."""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from accounting.services.demo import DEMO_SAMPLES
from tests.e2e.conftest import Site, expect_status, shot


def test_bob_sees_his_standing_and_opens_his_most_deserving_entity(bob: Page) -> None:
    bob.get_by_role("navigation").get_by_role("link", name="My standing").click()
    expect(bob.get_by_role("heading", name="My standing")).to_be_visible()
    expect(bob.locator("main code").first).to_have_text("dkaya")
    hpc = bob.locator("section.standing").filter(has=bob.get_by_role("link", name="hpc"))
    expect(hpc.locator("table.standing tbody tr")).to_have_count(2)
    expect(hpc.locator("table.standing")).to_contain_text("physics / cond-matter")
    expect(hpc.locator("table.standing")).to_contain_text("lifesci / genomics")
    expect(
        hpc.locator("td").filter(has_text=re.compile(r"^\d+(st|nd|rd|th) of 31$"))
    ).to_have_count(2)
    shot(bob, "me-bob")

    hpc.locator("p.best a").click()
    expect(
        bob.get_by_role("heading", name=re.compile(r"^(cond-matter|genomics) project$"))
    ).to_be_visible()


def test_carol_sees_her_members_on_her_standing(carol: Page) -> None:
    carol.goto("/me/")
    hpc = carol.locator("section.standing").filter(has=carol.get_by_role("link", name="hpc"))
    expect(hpc.get_by_role("heading", name="Members of what you manage")).to_be_visible()
    expect(hpc.locator("table.standing").last).to_contain_text("physics / gravwaves")
    shot(carol, "me-carol")


def test_bob_compares_his_project_with_a_sibling(bob: Page) -> None:
    bob.goto("/clusters/hpc/")
    bob.get_by_role("link", name="Compare two entities").click()
    bob.get_by_label("A").fill("cond-matter")
    bob.get_by_label("B").fill("gravwaves")
    bob.get_by_role("button", name="Compare").click()
    expect(bob).to_have_url(re.compile(r"/clusters/hpc/compare/\?a=cond-matter&b=gravwaves$"))
    expect(bob.get_by_role("heading", level=2)).to_have_text(
        re.compile(r"^(cond-matter|gravwaves) is more deserving$")
    )
    expect(bob.locator("main")).to_contain_text("physics")
    shot(bob, "compare-hpc")

    # Suggestions as he types: the names he may read that hold what he typed.
    bob.get_by_label("A").fill("")
    with bob.expect_response(re.compile(r"compare/names\.json\?q=matt$")):
        bob.get_by_label("A").press_sequentially("matt")
    expect(bob.locator("#names-a option")).to_have_count(1)
    expect(bob.locator("#names-a option")).to_have_attribute("value", "cond-matter")
    bob.get_by_label("A").fill("cond-matter")

    bob.get_by_label("B").fill("no-such-entity")
    expect_status(bob, 400, "/clusters/hpc/compare/?a=cond-matter&b=no-such-entity")
    bob.get_by_role("button", name="Compare").click()
    expect(bob.get_by_role("alert")).to_contain_text("no-such-entity")


def test_carol_follows_the_trends_of_physics_down_to_a_project(carol: Page) -> None:
    carol.goto("/clusters/hpc/")
    carol.get_by_role("link", name="Trends").click()
    expect(carol.get_by_role("heading", name="Trends of physics")).to_be_visible()
    expect(carol.get_by_role("link", name="30d")).to_have_attribute("aria-current", "true")
    expect(carol.locator("table.shares tbody tr")).to_have_count(7)
    expect(carol.locator("#trends-chart g.trace.scatter")).to_have_count(7)
    # Each child's share of usage and its target over time: two lines a child, in the legend.
    expect(carol.locator("#shares-chart g.trace.scatter")).to_have_count(14)
    expect(carol.locator("#shares-chart .legendtext").first).to_have_text(
        re.compile(r"^[\w-]+: share of usage$")
    )
    expect(carol.locator("#shares-chart .ytitle")).to_have_text("share of the siblings' usage (%)")
    expect(carol.locator("p.callout").first).to_contain_text("ran far over target")
    expect(carol.locator("p.period")).to_contain_text(re.compile(r"^From \d{4}-\d\d-\d\d"))
    expect(carol.locator("table.top tbody tr").first).to_be_visible()
    shot(carol, "trends-hpc-physics")

    carol.locator("table.shares").get_by_role("link", name="cond-matter").click()
    expect(carol.get_by_role("heading", name="Trends of cond-matter")).to_be_visible()
    carol.get_by_role("link", name="7d", exact=True).click()
    expect(carol.get_by_role("link", name="7d", exact=True)).to_have_attribute(
        "aria-current", "true"
    )
    expect(carol.locator("#trends-chart g.trace.scatter")).to_have_count(1)


def test_alice_uploads_a_resource_group_previews_it_and_applies_it(
    alice: Page, tmp_path: Path
) -> None:
    """whitepaper's own tree with L7 re-shared and one line that is not an entry: the upload
    page follows the import, shows the preview, and applies it with a reason."""
    upload = tmp_path / "resource_group"
    sample = DEMO_SAMPLES / "whitepaper"
    tree = (sample / "resource_group").read_text().replace("L7\t400\troot\t40", "L7\t400\troot\t50")
    upload.write_text(tree + "L9\tnot-a-number\tB1\t5\n")
    alice.goto("/clusters/whitepaper/")
    alice.get_by_role("link", name="Import files").click()
    expect(alice.get_by_role("heading", level=1)).to_contain_text("whitepaper")
    alice.get_by_label("resource_group (the fairshare tree)").check()
    alice.get_by_label("File(s)").set_input_files(upload)
    alice.get_by_label("Import the good lines of a resource_group").check()
    shot(alice, "import-form-whitepaper")
    alice.get_by_role("button", name="Upload and import").click()
    expect(alice.get_by_role("heading", name="What resource_group would change")).to_be_visible()
    entries = alice.locator("table.entries tbody tr")
    expect(entries).to_have_count(1)
    expect(entries.first).to_contain_text("re-shared")
    rejects = alice.locator("table.rejects tbody tr")
    expect(rejects).to_have_count(1)
    expect(rejects.first).to_contain_text("not-a-number")
    shot(alice, "import-whitepaper-preview")
    alice.get_by_label("Reason").fill("L7 takes the 10 shares of the new project")
    alice.get_by_role("button", name="Apply to whitepaper").click()
    expect(alice.get_by_role("heading", name="Imported into whitepaper")).to_be_visible()
    expect(alice.locator("table.import-figures tbody tr").first).to_contain_text("resource_group")
    shot(alice, "import-whitepaper")
    alice.goto("/import/")
    expect(alice.get_by_label("Cluster", exact=True)).to_contain_text("A new cluster, named below")
    shot(alice, "import-form")
    # Put the tree back for the other tests, with its own reason.
    upload.write_text((sample / "resource_group").read_text())
    alice.goto("/clusters/whitepaper/import/")
    alice.get_by_label("resource_group (the fairshare tree)").check()
    alice.get_by_label("File(s)").set_input_files(upload)
    alice.get_by_role("button", name="Upload and import").click()
    alice.get_by_label("Reason").fill("back as it was")
    alice.get_by_role("button", name="Apply to whitepaper").click()
    expect(alice.get_by_role("heading", name="Imported into whitepaper")).to_be_visible()


def test_alice_sets_a_cluster_s_decay_with_a_reason(alice: Page) -> None:
    alice.goto("/clusters/forum/")
    alice.get_by_role("link", name="Settings").click()
    expect(alice.get_by_role("heading", level=1)).to_have_text("Settings of forum")
    expect(alice.get_by_label("decay_time (s)")).to_have_value("86400")
    alice.get_by_label("decay_time (s)").fill("43200")
    alice.get_by_label("Reason").fill("faster recovery, policy of 2026-11")
    alice.get_by_role("button", name="Save").click()
    expect(alice.get_by_role("status")).to_contain_text("Saved: decay_interval")
    changes = alice.locator("table.audit tbody tr")
    expect(changes).to_have_count(1)
    expect(changes.first).to_contain_text("86400 s → 43200 s")
    expect(changes.first).to_contain_text("faster recovery, policy of 2026-11")
    shot(alice, "settings-forum")


def test_a_refusal_is_the_site_s_page_with_its_reason(bob: Page) -> None:
    expect_status(bob, 403, "/clusters/hpc/audit/")
    answer = bob.goto("/clusters/hpc/audit/")
    assert answer is not None
    assert answer.status == 403
    expect(bob.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(bob.locator("main")).to_contain_text(
        "You may not open this page: the audit trail is for admins."
    )
    expect(bob.get_by_role("navigation").get_by_role("link", name="My standing")).to_be_visible()
    bob.get_by_role("link", name="Back to the clusters").click()
    expect(bob.get_by_role("heading", name="Your standing")).to_be_visible()
    shot(bob, "forbidden-audit")


def test_the_white_paper_s_l5_reads_its_target_as_pbsfs_g_prints_it(bob: Page) -> None:
    bob.goto("/clusters/whitepaper/")
    bob.get_by_label("Search by name").fill("L5")
    bob.locator("#tree-table tr.found").get_by_role("link", name="L5").click()
    expect(bob.get_by_role("heading", name="L5")).to_be_visible()
    last = bob.locator("table.path tbody tr").last
    expect(last.locator("td").nth(2)).to_have_text("10.000001")
    expect(bob.locator("main")).to_contain_text("Target share 10.000001 % of the machine")
    shot(bob, "node-whitepaper-l5")


def test_the_node_page_prints_its_numbers_without_the_controls(bob: Page) -> None:
    bob.goto("/clusters/hpc/")
    bob.locator("#tree-table").get_by_role("link", name="cond-matter").click()
    expect(bob.locator("#history-usage g.trace.scatter").first).to_be_visible()
    bob.emulate_media(media="print")
    expect(bob.locator("header nav")).to_be_hidden()
    expect(bob.locator("p.ranges")).to_be_hidden()
    expect(bob.locator("table.path")).to_be_visible()
    expect(bob.locator("#history-usage")).to_be_visible()
    bob.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    expect(bob.locator("details.legend dl")).to_be_visible()  # opened for the print
    shot(bob, "print-node-hpc-cond-matter")


def test_a_queued_job_shows_its_wait_on_its_node_page(alice: Page, site: Site) -> None:
    """The small demo's logs end with jobs queued (a Q with no S yet), some nodes with several."""
    found = site.manage(
        "shell", "-c",
        "from accounting.models import Job; job = Job.objects.filter(state='queued')"
        ".select_related('node__cluster').first();"
        " print(job.node.cluster.name, job.node.pk, job.job_id)",
    ).splitlines()[-1].split()  # fmt: skip
    cluster, node, job_id = found
    alice.goto(f"/clusters/{cluster}/nodes/{node}/")
    rows = alice.locator("table.jobs tbody tr")
    expect(rows.first.locator("td").nth(2)).to_have_text("queued")  # the queued come first
    row = rows.filter(has=alice.locator("td:first-child", has_text=re.compile(f"^{job_id}$")))
    expect(row.locator("td").nth(2)).to_have_text("queued")
    expect(row).to_contain_text(re.compile(r"waiting .*(minute|hour|day).* so far"))
    shot(alice, "node-with-a-queued-job")
