"""An Altair Accelerator cluster in a browser: the seed's /class/vcs picture (accelerator_seed.py)
imported into the served site with the commands, its cluster page (a treemap sized by FS_TARGET
and coloured by FS_EXCESS_RUNNING, the FS_* table), a user's leaf with its history charts and
the preemption rules, and /me/ for the user u5; each screenshotted at a laptop's width."""

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.e2e.conftest import Browse, Site, shot
from tests.e2e.test_accessibility import violations
from tests.trees.views.accelerator_seed import CLUSTER, cycle_times, seed_files

U5 = "ulla"  # a login whose jobs run as u5
LAPTOP: ViewportSize = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def accelerator(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The seed's cluster as of now, with its cycles, and u5's login; removed after."""
    now = datetime.now(UTC).replace(microsecond=0)
    fsgroups, jobs, rules = seed_files(tmp_path_factory.mktemp("accelerator"), now)
    site.manage("import_fsgroups", fsgroups, "--cluster", CLUSTER)
    site.manage("import_accelerator_jobs", jobs, "--cluster", CLUSTER)
    site.manage("import_preempt_rules", rules, "--cluster", CLUSTER)
    for moment in cycle_times(now):
        site.manage("run_cycle", "--cluster", CLUSTER, "--now", moment.isoformat())
    people = "from trees.services.people import login_set, person_set; "
    site.manage("shell", "-c", people + f"person_set(user=login_set(username={U5!r},"
                f" password='demo'), scheduler_user='u5')")  # fmt: skip
    yield CLUSTER
    site.manage("shell", "-c", "from trees.services.clusters import cluster_delete;"
                f" from django.contrib.auth.models import User; cluster_delete(name={CLUSTER!r});"
                f" User.objects.filter(username={U5!r}).delete()")  # fmt: skip


def group_url(page: Page, cluster: str, name: str) -> str:
    answer = page.request.get(f"/clusters/{cluster}/tree.json", params={"q": name})
    assert answer.ok
    (found,) = [doc for doc in answer.json()["nodes"] if doc["name"] == name]
    return f"/clusters/{cluster}/nodes/{found['id']}/"


def test_the_cluster_page_maps_targets_and_colours_the_excess(
    alice: Page, accelerator: str
) -> None:
    alice.set_viewport_size(LAPTOP)
    alice.goto(f"/clusters/{accelerator}/")
    rows = alice.locator("#tree-table tbody tr")
    alice.get_by_role("button", name="open /class", exact=True).click()
    expect(rows.filter(has_text="/class/hsim")).to_contain_text("50.00 %")
    alice.get_by_role("button", name="open /class/vcs").click()
    u1 = rows.filter(has=alice.get_by_role("link", name="/class/vcs.u1", exact=True))
    expect(u1).to_contain_text("25.00 %")
    cells = u1.locator("td").all_inner_texts()
    # Kind, weight, FS_TARGET, FS_RUNNING, running jobs, excess, local excess, history, its
    # excess, rank.
    assert cells[1:] == ["user", "100", "25.00 %", "18.75 %", "3", "-6.25", "+25.00",
                         "24.27 %", "-0.73", "-1"]  # fmt: skip
    colorbar = alice.locator("#tree-chart .colorbar")
    expect(colorbar).to_contain_text("FS_EXCESS_RUNNING (points)")
    expect(colorbar).to_contain_text("0 on target")
    expect(colorbar).to_contain_text("+25 over target")
    blocks = alice.locator("#tree-chart g.slice")
    expect(blocks.filter(has_text="/class/vcs.u5")).to_have_count(1)
    colours = alice.evaluate(
        """() => {
          const trace = document.getElementById('tree-chart').data[0];
          const of = (name) => trace.marker.colors[trace.labels.indexOf(name)];
          return [of('/class/hsim'), of('/class/vcs.u5')];
        }"""
    )
    assert colours == [25, -18.75]  # over target (red end), under target (blue end)
    expect(alice.get_by_role("link", name="Queue: why jobs wait")).to_have_count(0)
    shot(alice, "accelerator-cluster")


def test_a_leaf_page_says_its_fields_charts_them_and_lists_the_rules(
    alice: Page, accelerator: str
) -> None:
    alice.set_viewport_size(LAPTOP)
    alice.goto(group_url(alice, accelerator, "/class/vcs.u5"))
    expect(alice.get_by_role("heading", level=1)).to_contain_text("/class/vcs.u5")
    expect(alice.locator("table.fields")).to_contain_text(
        "FS_RANK 0: dispatched first among the 1 group with queued jobs"
    )
    standing = alice.locator("#history-standing")
    expect(standing.locator(".ytitle")).to_have_text("share of the machine (%)")
    expect(standing.locator(".xtitle")).to_have_text("time (UTC)")
    expect(standing.locator("g.trace.scatter")).to_have_count(3)
    expect(standing.locator(".legendtext")).to_have_text(
        ["FS_RUNNING (running now)", "FS_HISTORY (over its window)", "FS_TARGET (its target)"]
    )
    counts = alice.locator("#history-usage")
    expect(counts.locator(".ytitle")).to_have_text("running jobs (count)")
    expect(alice.locator("#history-empty")).to_be_hidden()
    rules = alice.locator("table.preemptions tbody tr")
    expect(rules).to_have_count(2)
    expect(rules.nth(0)).to_contain_text("RuleThatDoesNotFire")
    expect(rules.nth(0)).to_contain_text("does not fire")
    expect(rules.nth(1)).to_contain_text("RuleThatFires")
    expect(rules.nth(1)).to_contain_text("13, 14, 15")
    shot(alice, "accelerator-leaf-u5")

    alice.goto(group_url(alice, accelerator, "/class/vcs.u1"))
    expect(alice.locator("table.preemptions.against")).to_contain_text("q7")
    expect(alice.locator("#history-standing g.trace.scatter")).to_have_count(3)
    shot(alice, "accelerator-leaf-u1")


def test_u5_finds_its_leaf_on_its_standing(browse: Browse, accelerator: str) -> None:
    page = browse(U5)
    page.set_viewport_size(LAPTOP)
    page.goto("/me/")
    section = page.locator("section.standing").filter(
        has=page.get_by_role("link", name=accelerator)
    )
    expect(section.locator("p.best")).to_contain_text("/class/vcs.u5, FS_RANK 0")
    expect(section.locator("table.standing tbody.group")).to_have_count(1)
    expect(section.locator("tr.said td")).to_have_text(
        re.compile(r"^It runs 1 of the 16 running jobs \(6\.25 %\) against a target of 25\.00 %")
    )
    shot(page, "accelerator-me-u5")


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_pages_pass_axe_and_fit_a_laptop(alice: Page, accelerator: str, width: int) -> None:
    alice.set_viewport_size({"width": width, "height": 900})
    pages = {
        "cluster": f"/clusters/{accelerator}/",
        "group-vcs": group_url(alice, accelerator, "/class/vcs"),
        "settings": f"/clusters/{accelerator}/settings/",
    }
    for name, path in pages.items():
        alice.goto(path)
        alice.wait_for_load_state("networkidle")
        alice.wait_for_timeout(300)  # plotly lays its charts out after the last answer
        wide = alice.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{path} scrolls sideways at {width} px ({wide} px wide)"
        assert violations(alice) == [], path
        shot(alice, f"w{width}-accelerator-{name}")
