"""The tree pages in a browser: the index, a cluster's icicle and table, a node's history."""

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import expect_status, shot


def org_usages(page: Page) -> list[float]:
    """The Usage cells of the organizations under TREEROOT (the first row), top to bottom."""
    cells = [
        row.locator("td").all_inner_texts() for row in page.locator("#tree-table tbody tr").all()
    ]
    return [float(row[4].replace(",", "")) for row in cells[1:] if row[1] == "organization"]


def test_the_clusters_follow_and_each_prints_its_listing_on_a_tab(alice: Page) -> None:
    for name in ("fairtree", "forum", "gpu", "hpc", "whitepaper"):
        expect(
            alice.locator("div.clusters").get_by_role("link", name=name, exact=True)
        ).to_be_visible()
    expect(alice.locator("pre.pbsfs")).to_have_count(0)  # no wall of text on the front page
    shot(alice, "index")

    alice.goto("/clusters/hpc/")
    listing = alice.locator("#panel-listing pre")
    expect(listing).to_be_hidden()
    alice.get_by_role("tab", name="As pbsfs -p prints it").click()
    expect(listing).to_contain_text("cond-matter")
    expect(alice.get_by_role("tab", name="As pbsfs -p prints it")).to_have_attribute(
        "aria-selected", "true"
    )
    expect(alice.locator("#tree-chart")).to_be_hidden()
    shot(alice, "cluster-hpc-listing")
    alice.get_by_role("tab", name="As pbsfs -p prints it").press("ArrowLeft")
    expect(alice.locator("#tree-chart")).to_be_visible()

    alice.goto("/clusters/fairtree/")
    alice.get_by_role("tab", name="As sshare -a -l prints it").click()
    expect(alice.locator("#panel-listing pre")).to_contain_text("LevelFS")
    # Never cut off: the box scrolls what is wider than the page, and the file has it all.
    whole = alice.request.get("/clusters/fairtree/listing.txt").text()
    assert alice.locator("#panel-listing pre").text_content() == whole


def test_bob_lands_on_his_standing_and_the_tree_outlines_his_entities(bob: Page) -> None:
    hpc = bob.locator("section.standing").filter(has=bob.get_by_role("link", name="hpc"))
    row = hpc.locator("tr").filter(has=bob.get_by_role("link", name="physics / cond-matter"))
    expect(row).to_contain_text("over target: its jobs wait behind those under target")
    expect(row).to_contain_text("physics, over target")
    expect(row).to_contain_text("never by decay alone: physics is over target")
    shot(bob, "landing-bob")

    bob.goto("/clusters/hpc/")
    # His projects show, marked, their path opened for him (TREEROOT, physics and lifesci).
    mine = bob.locator("#tree-table tr.mine")
    expect(mine).to_have_count(2)
    expect(mine.first).to_contain_text("yours")
    expect(bob.get_by_role("button", name="close physics")).to_be_visible()
    expect(bob.get_by_role("button", name="close lifesci")).to_be_visible()
    widths = bob.evaluate(
        """() => {
          const trace = document.getElementById('tree-chart').data[0];
          const width = (name) => trace.marker.line.width[trace.labels.indexOf(name)];
          return [width('cond-matter'), width('physics'), width('chemistry')];
        }"""
    )
    assert widths == [4, 2.5, 1]  # his entity, a group on his path, someone else's
    # The root is the frame, not a column: the first organization's block starts at the left.
    frame = bob.locator("#tree-chart").bounding_box()
    physics = bob.locator("#tree-chart g.slice").filter(has_text="physics").first.bounding_box()
    assert frame is not None
    assert physics is not None
    assert physics["x"] - frame["x"] < frame["width"] / 10
    shot(bob, "cluster-hpc")
    # The colour bar says which end is over target, in words beside the numbers.
    expect(bob.locator("#tree-chart .colorbar")).to_contain_text("0.5 on target")
    expect(bob.locator("#tree-chart .colorbar")).to_contain_text("0 over target")

    bob.get_by_label("usage against target").check()
    expect(bob.locator("#tree-chart .cbtitle")).to_have_text("usage / target")
    expect(bob.locator("#tree-chart .colorbar")).to_contain_text("2+ over target")

    bob.locator("#tree-table th[data-key=usage]").click()
    usages = org_usages(bob)
    assert len(usages) == 6
    assert usages == sorted(usages, reverse=True)
    bob.locator("#tree-table th[data-key=usage]").click()
    assert org_usages(bob) == sorted(usages)

    bob.get_by_label("Search by name").fill("genomics")
    expect(bob.locator("#tree-table tr.found")).to_contain_text("genomics")
    shot(bob, "cluster-hpc-search")

    # The table (tree.js) prints each number as the node page (the server) does: shares,
    # target %, usage, usage/perc ("%.0f" with separators), tree usage, factor.
    listed = bob.locator("#tree-table tr.mine").filter(has_text="cond-matter").locator("td")
    table = listed.all_inner_texts()
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", table[6]), table  # usage/perc, as pbsfs prints it

    # A click on a block opens its page.
    bob.locator("#tree-chart g.slice").filter(has_text="cond-matter").first.click()
    expect(bob.get_by_role("heading", name="cond-matter project")).to_be_visible()
    expect(bob.locator("p.crumbs")).to_have_text(
        re.compile(r"hpc\s*/\s*TREEROOT\s*/\s*physics\s*/\s*cond-matter")
    )
    path = bob.locator("table.path tbody tr").last.locator("td").all_inner_texts()
    assert path[1:] == [table[2], table[3], table[4], table[6], table[7], table[8]]


def test_zooming_into_a_block_stays_on_the_page_and_loads_its_children(alice: Page) -> None:
    alice.goto("/clusters/gpu/")
    alice.get_by_label("zooms into it").check()
    with alice.expect_response(re.compile(r"tree\.json\?node=(\d+)&levels=1$")) as answer:
        alice.locator("#tree-chart g.slice").filter(has_text="cond-matter").first.click()
    documents = answer.value.json()["nodes"]
    assert any(doc["kind"] == "user" for doc in documents)
    expect(alice).to_have_url(re.compile(r"/clusters/gpu/$"))
    level = "() => document.getElementById('tree-chart').data[0].level"
    assert alice.evaluate(level) == str(documents[0]["id"])  # zoomed into cond-matter
    expect(alice.locator("#tree-chart g.slice").first).to_contain_text("cond-matter")
    shot(alice, "cluster-gpu-zoomed")
    # Its top block zooms back out, to its parent physics.
    alice.locator("#tree-chart g.slice").first.click(position={"x": 20, "y": 8})
    expect(alice.locator("#tree-chart g.slice").first).to_contain_text("physics")


def test_a_node_page_draws_its_history_and_recovery_and_reloads_a_range(bob: Page) -> None:
    bob.goto("/clusters/hpc/")
    bob.get_by_role("link", name="physics").click()
    expect(bob.get_by_role("heading", name="physics organization")).to_be_visible()
    bob.locator("table.children").get_by_role("link", name="cond-matter").click()

    expect(bob.locator("table.path tbody tr")).to_have_count(3)
    # The lines, then what the dotted marks are (hpc decays weekly: one in the last 30 days).
    expect(bob.locator("#history-usage .legendtext")).to_have_text(["usage", "decay"])
    expect(bob.locator("#history-standing .legendtext")).to_have_text(
        ["tree usage", "target", "factor (0.5 = on target)", "decay"]
    )
    expect(bob.locator("#history-usage .ytitle")).to_have_text("core-seconds, decayed")
    expect(bob.locator("#history-usage .xtitle")).to_have_text("time (UTC)")
    expect(bob.locator("#recovery-sentence")).not_to_have_text("Projecting…")
    expect(bob.locator("#recovery-chart g.trace.scatter")).to_have_count(2)
    expect(bob.get_by_role("button", name="30d")).to_have_attribute("aria-pressed", "true")
    shot(bob, "node-hpc-cond-matter")

    with bob.expect_response(re.compile(r"history\.json\?range=1y$")) as answer:
        bob.get_by_role("button", name="1y").click()
    assert answer.value.status == 200
    assert len(answer.value.json()["at"]) > 0
    expect(bob.get_by_role("button", name="1y")).to_have_attribute("aria-pressed", "true")
    expect(bob.get_by_role("button", name="30d")).to_have_attribute("aria-pressed", "false")
    shot(bob, "node-hpc-cond-matter-1y")


def test_opening_a_project_on_gpu_fetches_its_users(alice: Page) -> None:
    alice.goto("/clusters/gpu/")
    alice.get_by_role("button", name="open physics").click()
    rows = alice.locator("#tree-table tbody tr")
    before = rows.count()
    with alice.expect_response(re.compile(r"tree\.json\?node=\d+&levels=1$")) as answer:
        alice.get_by_role("button", name="open cond-matter").click()
    users = [doc for doc in answer.value.json()["nodes"] if doc["kind"] == "user"]
    assert users
    expect(rows).to_have_count(before + len(users))
    shot(alice, "cluster-gpu")


def test_a_slurm_cluster_shows_fair_tree_columns(carol: Page) -> None:
    carol.goto("/clusters/fairtree/")
    expect(carol.get_by_role("heading", name="fairtree Slurm")).to_be_visible()
    expect(carol.locator("#tree-table th[data-key=level_fs]")).to_have_text("Level FS")
    expect(carol.locator("#tree-table tbody tr").first).to_contain_text("root")
    expect(carol.locator("#tree-chart g.slice").first).to_be_visible()
    shot(carol, "cluster-fairtree")


def test_an_answer_that_fails_says_so_on_the_page_and_keeps_the_tree(alice: Page) -> None:
    alice.goto("/clusters/hpc/")  # no entity of hers to open: TREEROOT and its six
    rows = alice.locator("#tree-table tbody tr")
    expect(rows).to_have_count(7)
    expect_status(alice, 503, "/clusters/hpc/tree.json?q=genomics")
    alice.route(
        re.compile(r"/tree\.json\?q="),
        lambda route: route.fulfill(
            status=503,
            content_type="application/json",
            body='{"error": "the database is restarting"}',
        ),
    )
    alice.get_by_label("Search by name").fill("genomics")
    expect(alice.locator("#tree-status")).to_have_text(
        "Could not search the tree: the database is restarting. Try again, or reload the page."
    )
    expect(rows).to_have_count(7)
    shot(alice, "cluster-hpc-failed-answer")

    alice.unroute(re.compile(r"/tree\.json\?q="))
    alice.get_by_label("Search by name").fill("genomic")  # a new answer clears the message
    expect(alice.locator("#tree-table tr.found")).to_contain_text("genomics")
    expect(alice.locator("#tree-status")).to_be_hidden()


def test_targets_read_as_pbsfs_prints_them_and_the_hover_names_the_colour(bob: Page) -> None:
    """The white paper's B2 holds 20 of the root's 100 shares (unknown has 10): 20.000000 %, a
    group's own target in the hover, not what its children leave of it."""
    bob.goto("/clusters/whitepaper/")
    row = bob.locator("#tree-table tbody tr").filter(has=bob.get_by_role("link", name="B2"))
    expect(row.locator("td").nth(3)).to_have_text("20.000000")
    expect(bob.locator("#tree-table th[data-key=usage]")).to_have_text("Usage (CPU-seconds)")
    expect(bob.locator("#tree-chart g.slice").first).to_be_visible()
    hovers = bob.evaluate(
        "() => { const trace = document.getElementById('tree-chart').data[0];"
        " return Object.fromEntries(trace.labels.map((name, i) => [name, trace.customdata[i]])); }"
    )
    target, colour, yours = hovers["B2"]
    assert target == "20.000000"
    assert re.fullmatch(r"factor 0\.\d\d \((under|over|on) target\)", colour), colour
    assert yours == ""  # bob has no entity on the white paper's tree
    bob.get_by_label("usage against target").check()
    hovers = bob.evaluate(
        "() => document.getElementById('tree-chart').data[0].customdata.map((data) => data[1])"
    )
    assert any(re.fullmatch(r"usage \d+\.\d\d × target \((under|over) target\)", h) for h in hovers)
    shot(bob, "cluster-whitepaper")


def test_a_history_without_two_cycles_says_so_instead_of_empty_axes(bob: Page) -> None:
    """The white paper's tree is a sample: no cycle ever ran on it."""
    bob.goto("/clusters/whitepaper/")
    bob.get_by_role("link", name="L7").click()
    expect(bob.get_by_role("heading", name="L7")).to_be_visible()
    expect(bob.locator("#history-empty")).to_have_text(
        "No cycle has run in this range yet: the charts start with the first one."
    )
    expect(bob.locator("#history-usage")).to_be_hidden()
    expect(bob.locator("#history-standing")).to_be_hidden()
    # L7 is under its target already: one point, the sentence and no chart.
    expect(bob.locator("#recovery-sentence")).to_have_text(re.compile(r"^Already at or above"))
    expect(bob.locator("#recovery-chart")).to_be_hidden()
    shot(bob, "node-whitepaper-l7-no-history")
