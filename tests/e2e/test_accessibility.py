"""Every page of the site, as the person it is for, at a 1,024 px laptop and a 1,440 px
screen: axe-core finds no serious or critical violation, every chart has a text alternative,
and nothing scrolls sideways. The screenshots are test-artifacts/w1024-NAME.png and
w1440-NAME.png."""

from collections.abc import Callable

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

from tests.e2e.conftest import Browse, expect_status, shot

SERIOUS = {"serious", "critical"}
WIDTHS = (1024, 1440)


def node_path(page: Page, cluster: str, name: str) -> str:
    answer = page.request.get(f"/clusters/{cluster}/tree.json?q={name}")
    assert answer.ok
    (found,) = [doc for doc in answer.json()["nodes"] if doc["name"] == name]
    return f"/clusters/{cluster}/nodes/{found['id']}/"


# (name, person, the address or how to find it from the page, the status it answers)
Where = str | Callable[[Page], str]
PAGES: list[tuple[str, str | None, Where, int]] = [
    ("login", None, "/accounts/login/", 200),
    ("landing-bob", "bob", "/", 200),
    ("landing-alice", "alice", "/", 200),
    ("me-carol", "carol", "/me/", 200),
    ("tokens-bob", "bob", "/accounts/tokens/", 200),
    ("cluster-hpc", "bob", "/clusters/hpc/", 200),
    ("cluster-fairtree", "carol", "/clusters/fairtree/", 200),
    ("node-hpc-cond-matter", "bob", lambda page: node_path(page, "hpc", "cond-matter"), 200),
    ("node-whitepaper-l5", "bob", lambda page: node_path(page, "whitepaper", "L5"), 200),
    ("node-fairtree-cai", "carol", lambda page: node_path(page, "fairtree", "cai"), 200),
    ("trends-physics", "carol", "/clusters/hpc/trends/", 200),
    ("compare-hpc", "bob", "/clusters/hpc/compare/?a=cond-matter&b=gravwaves", 200),
    ("edit-hpc-physics", "alice", lambda page: node_path(page, "hpc", "physics") + "edit/", 200),
    ("audit-hpc", "alice", "/clusters/hpc/audit/", 200),
    ("settings-hpc", "alice", "/clusters/hpc/settings/", 200),
    ("usage-loss-hpc", "alice", "/clusters/hpc/usage-loss/", 200),
    ("import", "alice", "/import/", 200),
    ("not-found", "bob", "/clusters/nowhere/", 404),
    ("not-allowed", "bob", "/clusters/hpc/audit/", 403),
]


def violations(page: Page) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands, one line each."""
    found = Axe().run(page).response["violations"]
    return [
        f"{rule['id']} ({rule['impact']}): {rule['help']} at "
        + ", ".join(str(node["target"]) for node in rule["nodes"][:3])
        for rule in found
        if rule["impact"] in SERIOUS
    ]


def charts_without_words(page: Page) -> list[str]:
    """The charts on the page with neither an accessible name nor a visible sentence for
    their empty state: every chart needs a text alternative."""
    unnamed: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('.chart')]
             .filter((chart) => !(chart.getAttribute('aria-label') || '').trim())
             .map((chart) => chart.id)"""
    )
    return unnamed


@pytest.mark.parametrize(("name", "person", "where", "status"), PAGES, ids=[p[0] for p in PAGES])
def test_every_page_passes_axe_and_fits_a_laptop(
    browse: Browse, name: str, person: str | None, where: Where, status: int
) -> None:
    page = browse(person, again=person is not None)
    path = where if isinstance(where, str) else where(page)
    if status != 200:
        expect_status(page, status, path)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        answer = page.goto(path)
        assert answer is not None
        assert answer.status == status
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)  # plotly lays its charts out after the last answer
        assert page.locator("header").get_by_text("Fairshare dashboard").is_visible()
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{name} scrolls sideways at {width} px ({wide} px wide)"
        shot(page, f"w{width}-{name}")
    assert violations(page) == [], name
    assert charts_without_words(page) == [], name
