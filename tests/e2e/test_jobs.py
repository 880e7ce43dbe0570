"""Why a job waits, in a browser: the job page (its terms' bar, its place, the projection it
fetches, its history chart), the queue page and "my jobs", as bob at 1280×800."""

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Site, expect_status, shot
from tests.e2e.test_accessibility import charts_without_words, violations

WIDTH, HEIGHT = 1280, 800
LAPTOP = 1024
# Rows a test adds to the shared site, and takes away again: a queued and a running job of
# bob's (his jobs run as dkaya), and six cycles of priority history for the job shown.
SETUP = """
from datetime import timedelta
from django.utils import timezone
from accounting.models import Job, JobPriorityHistory
queued = Job.objects.filter(cluster__name="hpc", state="queued", node__name="genomics").first()
queued = queued or Job.objects.filter(cluster__name="hpc", state="queued").first()
now = timezone.now()
for step in range(6):
    JobPriorityHistory.objects.create(
        cluster=queued.cluster, job_id=queued.job_id, at=now - timedelta(minutes=10 * (6 - step)),
        priority=640 + 8 * step, position=14 - step, queue_position=14 - step,
    )
mine = Job.objects.get(pk=queued.pk)
mine.pk, mine.job_id, mine.user = None, "1299999[1]", "dkaya"
mine.save()
running = Job.objects.filter(cluster__name="hpc", state="running").first()
running.pk, running.job_id, running.user = None, "1299998", "dkaya"
running.save()
print(queued.job_id)
"""
TEARDOWN = """
from accounting.models import Job, JobPriorityHistory
Job.objects.filter(cluster__name="hpc", job_id__in=["1299999[1]", "1299998"]).delete()
JobPriorityHistory.objects.filter(cluster__name="hpc", job_id="{job_id}").delete()
"""


@pytest.fixture
def job_id(site: Site) -> Iterator[str]:
    """A queued job of the demo's hpc (one of genomics's, bob's project, if there is one)."""
    found = site.manage("shell", "-c", SETUP).strip().splitlines()[-1]
    try:
        yield found
    finally:
        site.manage("shell", "-c", TEARDOWN.replace("{job_id}", found))


def fits(page: Page, name: str) -> None:
    """No serious axe finding, every chart with words, no sideways scrolling at 1280 px nor
    on a 1,024 px laptop (docs/pages.md); test-artifacts/w1024-NAME.png, then NAME.png at
    1280×800."""
    assert violations(page) == []
    assert charts_without_words(page) == []
    for width in (LAPTOP, WIDTH):
        page.set_viewport_size({"width": width, "height": HEIGHT})
        page.wait_for_timeout(300)  # plotly lays its charts out again
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{page.url} scrolls sideways at {width} px ({wide} px wide)"
        shot(page, name if width == WIDTH else f"w{width}-{name}")


def test_bob_reads_why_a_job_waits(bob: Page, job_id: str) -> None:
    bob.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    bob.goto(f"/clusters/hpc/jobs/{job_id}/")
    heading = re.compile(rf"^Job {re.escape(job_id)}")
    expect(bob.get_by_role("heading", level=1)).to_have_text(heading)
    expect(bob.locator("p.place strong")).to_have_text(
        re.compile(r"^\d+(st|nd|rd|th) of \d+ waiting; \d+(st|nd|rd|th) in queue \w+\.$")
    )
    expect(bob.locator("ul.reasons")).to_contain_text("fairshare term")
    expect(bob.locator(".termbar .term")).to_have_count(3)
    expect(bob.locator("table.terms tbody tr")).to_have_count(3)
    # The projection replaces "Projecting…" with its sentence.
    expect(bob.locator("#whatif-sentence")).to_have_text(
        re.compile(
            r"^If \S+ ran nothing more, after the next decay on \d{4}-\d\d-\d\d \d\d:\d\d UTC"
            r" this job would be \d+(st|nd|rd|th), with priority [\d,.]+ \(.*\)\.$"
        )
    )
    chart = bob.locator("#job-history-chart")
    expect(chart.locator("g.trace.scatter")).to_have_count(2)
    expect(chart.locator(".ytitle").first).to_have_text("priority (sum of the terms)")
    fits(bob, "job-hpc")

    bob.get_by_role("link", name="The whole queue of hpc").click()
    expect(bob.get_by_role("heading", level=1)).to_contain_text("Queue of hpc")
    rows = bob.locator("table.queue").first.locator("tbody tr")
    expect(rows.first.locator("td").first).to_have_text("1st")
    expect(rows.filter(has_text=job_id)).to_have_count(1)
    fits(bob, "queue-hpc")


def test_bob_finds_his_jobs_on_his_landing_page(bob: Page, job_id: str) -> None:
    bob.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    bob.goto("/")
    jobs = bob.locator("section.my-jobs")
    expect(jobs.get_by_role("heading", name=re.compile("^My jobs"))).to_be_visible()
    expect(jobs.locator("li").filter(has_text="1299998")).to_contain_text(
        re.compile(r"core-hours so far")
    )
    jobs.get_by_role("link", name="1299999[1]").click()
    expect(bob.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Job 1299999\[1\]"))
    bob.goto("/")
    fits(bob, "landing-bob-jobs")
    bob.goto("/me/")
    mine = bob.locator("#my-jobs")
    expect(mine).to_have_text(re.compile("^My jobs as "))
    fits(bob, "me-bob-jobs")


def test_a_hostile_job_id_is_the_site_s_404(bob: Page) -> None:
    path = "/clusters/hpc/jobs/%3Cscript%3Ealert(1)%3C/script%3E/"
    expect_status(bob, 404, "/clusters/hpc/jobs/%3Cscript%3Ealert(1)%3C/script%3E/")
    answer = bob.goto(path)
    assert answer is not None
    assert answer.status == 404
    expect(bob.get_by_role("heading", level=1)).to_have_text("Not found")
