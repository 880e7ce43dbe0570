"""The What-if pages in a browser, on a 1,024 px laptop: alice follows the cluster page's link,
changes physics's shares on the small demo's `hpc` and runs it (the worker's part eagerly, as
the site runs without a broker), then reads the result and its chart; a scenario left queued
shows its progress bar until a worker runs it, and the page then shows the result by itself."""

import re

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, ViewportSize, expect

from tests.e2e.conftest import Site, shot

LAPTOP: ViewportSize = {"width": 1024, "height": 900}
WAIT = re.compile(r"^(under a minute|\d+ (day|hour|minute)s?( \d+ (hour|minute)s?)?)$")


def fits(page: Page) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= LAPTOP["width"], f"{page.url} scrolls sideways ({wide} px wide)"


def serious(page: Page) -> list[str]:
    found = Axe().run(page).response["violations"]
    return [rule["id"] for rule in found if rule["impact"] in ("serious", "critical")]


def test_alice_runs_a_what_if_and_reads_what_it_would_change(alice: Page) -> None:
    alice.set_viewport_size(LAPTOP)
    alice.goto("/clusters/hpc/")
    alice.get_by_role("link", name="What if").click()
    expect(alice.get_by_role("heading", level=1)).to_have_text("What if: hpc")
    expect(alice.get_by_label("fair_share", exact=True)).to_be_checked()
    expect(alice.get_by_label("physics", exact=True)).to_have_value("30")
    fits(alice)
    assert serious(alice) == []
    shot(alice, "whatif-form-hpc")

    alice.get_by_label("Title").fill("physics at 300")
    alice.get_by_label("Cores").fill("512")
    alice.get_by_label("physics", exact=True).fill("300")
    alice.get_by_label("strict_ordering", exact=True).check()
    alice.get_by_role("button", name="Run this what-if").click()
    expect(alice).to_have_url(re.compile(r"/clusters/hpc/whatif/\d+/$"))
    expect(alice.get_by_role("heading", level=1)).to_contain_text("physics at 300")
    expect(alice.locator("ul.settings li")).to_have_text(
        ["strict_ordering=true", "shares:physics=300"]
    )
    expect(alice.locator("p.calibration")).to_contain_text("Against what really happened")

    summary = alice.locator("table.whatif-summary tbody tr")
    expect(summary).to_have_count(7)
    expect(summary.nth(0).locator("td").first).to_have_text(re.compile(r"^[\d,]+ jobs$"))
    for row in (1, 2, 3):
        expect(summary.nth(row).locator("td").first).to_have_text(WAIT)
    expect(summary.nth(4).locator("td").first).to_have_text(re.compile(r"^\d+\.\d\d×$"))
    expect(summary.nth(5).locator("td").first).to_have_text(re.compile(r"^\d+\.\d %$"))
    expect(summary.nth(6).locator("td").first).to_have_text(re.compile(r"^0\.\d{3}$"))
    physics = alice.locator("table.whatif-projects tbody tr", has_text="physics")
    expect(physics.locator("td").nth(1)).to_have_text("30.0 % → 81.1 %")  # 300 of 370 shares

    chart = alice.locator("#whatif-chart")
    expect(chart.locator("g.trace.scatter")).not_to_have_count(0)
    expect(chart.locator("g.infolayer")).to_contain_text("time (UTC)")
    expect(chart.locator("g.infolayer")).to_contain_text("core-seconds (%)")
    expect(chart.locator(".legendtext")).to_have_text(
        ["baseline: delivered", "baseline: target", "variant: delivered", "variant: target"]
    )
    expect(chart.locator("g.annotation").first).to_have_text("physics")
    alice.wait_for_timeout(300)  # plotly lays its chart out after the last answer
    fits(alice)
    assert serious(alice) == []
    shot(alice, "whatif-result-hpc")

    alice.get_by_role("link", name="what if").click()
    expect(alice.locator("table.scenarios tbody tr").first).to_contain_text("physics at 300")


def test_a_queued_what_if_shows_its_progress_until_a_worker_runs_it(
    alice: Page, site: Site
) -> None:
    made = site.manage(
        "shell", "-c",
        "from accounting.services.whatif import WhatIfParameters, scenario_create;"
        "from trees.models import Cluster;"
        "print(scenario_create(cluster=Cluster.objects.get(name='gpu'),"
        " parameters=WhatIfParameters(cores=64, settings=('shares:physics=60',)),"
        " title='queued for a worker').pk)",
    )  # fmt: skip
    scenario = int(made.strip().splitlines()[-1])
    alice.set_viewport_size(LAPTOP)
    alice.goto(f"/clusters/gpu/whatif/{scenario}/")
    expect(alice.locator("#scenario-label")).to_have_text("Queued, 0 % done: this page follows it.")
    expect(alice.get_by_label("Progress")).to_have_attribute("value", "0.000000")
    fits(alice)
    shot(alice, "whatif-queued-gpu")

    site.manage(
        "shell", "-c",
        f"from accounting.tasks import run_scenario; run_scenario({scenario})",
    )  # fmt: skip
    expect(alice.get_by_role("heading", name="The cluster")).to_be_visible()
    expect(alice.locator("#scenario-label")).to_have_count(0)
    expect(alice.locator("#whatif-chart g.trace.scatter")).not_to_have_count(0)
