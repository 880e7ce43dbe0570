"""Recorded vs actual usage in a browser, on a 1,024 px laptop: alice follows the cluster page's
link, reads what PBS's sampling loses, changes the window and orders the entities."""

import re
from datetime import date, timedelta

from playwright.sync_api import Page, ViewportSize, expect

from tests.e2e.conftest import expect_status, shot

LAPTOP: ViewportSize = {"width": 1024, "height": 900}
TOTALS = re.compile(
    r"^Of [\d,]+ core-seconds \([\d,.]+ core-hours\) used by the [\d,]+ jobs of hpc that ended"
    r" from \d{4}-\d\d-\d\d \d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d UTC, PBS recorded"
    r" \d+\.\d %, [\d,]+ core-seconds \([\d,.]+ core-hours\): \d+\.\d % lost, [\d,]+"
    r" core-seconds \([\d,.]+ core-hours\); [\d,]+ of [\d,]+ jobs went unseen\.$"
)


def test_alice_reads_what_pbs_s_sampling_loses(alice: Page) -> None:
    alice.set_viewport_size(LAPTOP)
    alice.goto("/clusters/hpc/")
    alice.get_by_role("link", name="Recorded vs actual usage").click()
    expect(alice.get_by_role("heading", level=1)).to_have_text("Recorded vs actual usage of hpc")
    expect(alice.locator("p.said")).to_have_text(TOTALS)
    expect(alice.locator("main")).to_contain_text("$min_check_poll 10 s and $max_check_poll 120 s")
    entities = alice.locator("table.loss").first.locator("tbody tr")
    expect(entities.first).to_be_visible()
    assert entities.count() > 10
    expect(entities.first.locator("td").nth(4)).to_have_text(re.compile(r"^\d+\.\d %$"))
    expect(alice.locator("table.loss").first.locator("thead")).to_contain_text(
        "Used (core-seconds)"
    )
    expect(alice.get_by_role("heading", name="Charged less than their part")).to_be_visible()
    expect(alice.get_by_role("heading", name="Paying for it")).to_be_visible()
    expect(alice.locator("table.sides").first.locator("tbody tr").first).to_contain_text("points")
    whatifs = alice.locator("ul.whatifs li")
    expect(whatifs.first).to_contain_text(
        re.compile(r"^scheduler_iteration 5 minutes \(now 10 minutes\) would record \d+\.\d % more")
    )
    expect(alice.locator("table.loss.jobs tbody tr")).to_have_count(20)
    expect(alice.locator("main")).to_contain_text(
        re.compile(r"[\d,]+ of the [\d,]+ jobs went unseen")
    )
    wide = alice.evaluate("document.documentElement.scrollWidth")
    assert wide <= LAPTOP["width"], f"the page scrolls sideways ({wide} px wide)"
    shot(alice, "usage-loss-hpc")

    # A longer window, from the date field, then the entities by the part they lost.
    first = date.today() - timedelta(days=14)
    alice.get_by_label("Jobs that ended from").fill(f"{first:%Y-%m-%d}")
    alice.get_by_role("button", name="Show").click()
    expect(alice).to_have_url(re.compile(rf"\?from={first:%Y-%m-%d}&until=\d{{4}}-\d\d-\d\d$"))
    expect(alice.locator("p.said")).to_contain_text(f"from {first:%Y-%m-%d} 00:00 UTC")
    alice.get_by_role("link", name="Lost %").click()
    expect(alice).to_have_url(re.compile(r"&sort=lost_fraction$"))
    expect(alice.locator("th[aria-sort=descending]")).to_have_text("Lost %")
    lost = alice.locator("table.loss").first.locator("tbody tr td:nth-child(5)").all_inner_texts()
    parts = [float(text.rstrip(" %")) for text in lost]
    assert parts == sorted(parts, reverse=True)


def test_a_window_it_cannot_read_is_said_on_the_page(alice: Page) -> None:
    path = "/clusters/hpc/usage-loss/?from=%3Cscript%3Ealert(1)%3C/script%3E"
    expect_status(alice, 400, path)
    answer = alice.goto(path)
    assert answer is not None
    assert answer.status == 400
    expect(alice.get_by_role("alert")).to_have_text(
        "from must be a date, such as 2026-11-21. The page shows the last 7 days instead."
    )
    expect(alice.locator("p.said")).to_have_text(TOTALS)
