"""Names that look like markup, in the charts: plotly reads tags in every text it draws, so a
Slurm account named as a link would be a link in the treemap and in the Trends legend, and one
named as a styled span would draw styled. Both show as the text they are, at 1280 px."""

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import ROOT, Site, shot

CLUSTER = "markup"
LINK = '<a href="https://evil.example/login">Click to re-login</a>'
STYLED = '<span style="color:red">x</span>'
# `sshare -a -P` of two accounts with one user each (the indent is the hierarchy).
SSHARE = f"""\
Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|30|1.000000|
 {LINK}||10|0.5|10|0.333333|
  {LINK}|u1|1|1.0|10|1.0|0.4
 {STYLED}||10|0.5|20|0.666667|
  {STYLED}|u2|1|1.0|20|1.0|0.6
"""


@pytest.fixture(scope="module")
def cluster(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The two accounts imported as a site does, with two cycles for a trend; removed after."""
    path = tmp_path_factory.mktemp("markup") / "sshare.txt"
    path.write_text(SSHARE)
    site.manage("import_sshare", "--cluster", CLUSTER, str(path))
    now = datetime.now(UTC).replace(microsecond=0)
    for hours in (2, 1):
        moment = now - timedelta(hours=hours)
        site.manage("run_cycle", "--cluster", CLUSTER, "--now", moment.isoformat())
    yield CLUSTER
    site.manage("shell", "-c", "from trees.services.clusters import cluster_delete;"
                f" cluster_delete(name={CLUSTER!r})")  # fmt: skip


def assert_no_markup_drawn(chart: Locator) -> None:
    """No link and no styled text that a name made, in the chart's drawing: plotly draws a
    name's `<a href>` as an SVG `<a xlink:href>` and its `color:red` as a tspan's `fill:red`
    (the tspans of class `line` are a text's lines, from the site's own `<br>`)."""
    expect(chart.locator("svg a")).to_have_count(0)
    expect(chart.locator("svg tspan:not(.line)")).to_have_count(0)
    expect(chart.locator('svg [style*="fill:red"]')).to_have_count(0)


def test_the_treemap_shows_names_as_text(alice: Page, cluster: str) -> None:
    alice.goto(f"/clusters/{cluster}/")
    chart = alice.locator("#tree-chart")
    blocks = chart.locator("g.slice")
    expect(blocks.filter(has_text=LINK)).to_have_count(1)
    expect(blocks.filter(has_text=STYLED)).to_have_count(1)
    assert_no_markup_drawn(chart)
    # The account's own strip, above its user's block.
    blocks.filter(has_text=LINK).locator("path.surface").hover(position={"x": 30, "y": 4})
    expect(chart.locator("g.hovertext")).to_contain_text(LINK)
    assert_no_markup_drawn(chart)
    alice.wait_for_timeout(300)  # plotly lays its chart out after the last answer
    shot(alice, "chart-names-cluster")


def test_the_trends_legends_show_names_as_text(alice: Page, cluster: str) -> None:
    alice.goto(f"/clusters/{cluster}/trends/")
    usage = alice.locator("#trends-chart")
    # A stacked chart's legend lists its traces bottom up, as they are drawn.
    expect(usage.locator(".legendtext")).to_have_text([STYLED, LINK])
    assert_no_markup_drawn(usage)
    shares = alice.locator("#shares-chart")
    expect(shares.locator(".legendtext")).to_have_text(
        [f"{LINK}: share of usage", f"{LINK}: target", f"{STYLED}: share of usage",
         f"{STYLED}: target"]
    )  # fmt: skip
    assert_no_markup_drawn(shares)
    alice.wait_for_timeout(300)
    shot(alice, "chart-names-trends")


def test_every_page_with_a_chart_loads_the_one_escaping_helper_first() -> None:
    """A page that loads plotly loads static/js/chart_text.js before its own scripts, and no
    other script escapes names its own way."""
    pages = [path for path in (ROOT / "templates").rglob("*.html") if "plotly.min.js" in
             path.read_text()]  # fmt: skip
    assert len(pages) >= 6  # the cluster, node, group, job, trends and what-if pages
    for path in pages:
        scripts = re.findall(r"static '(js/[\w.]+|plotly/plotly.min.js)'", path.read_text())
        assert scripts[:2] == ["plotly/plotly.min.js", "js/chart_text.js"], path
    escaping = [path.name for path in (ROOT / "static/js").glob("*.js") if "&lt;" in
                path.read_text()]  # fmt: skip
    assert escaping == ["chart_text.js"]
