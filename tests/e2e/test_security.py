"""The pages under the site's Content-Security-Policy, and a crafted link that tries to run a
script: the charts draw with no console error (a blocked script or eval logs one), and the
script never runs."""

from urllib.parse import quote

from playwright.sync_api import Dialog, Page, expect

from tests.e2e.conftest import expect_status, shot

SCRIPT = "<img src=x onerror=alert(document.cookie)>"


def policy_of(page: Page, path: str) -> str:
    with page.expect_response(lambda answer: answer.url.endswith(path)) as answer:
        page.goto(path)
    return answer.value.headers["content-security-policy"]


def test_every_chart_draws_under_the_content_security_policy(alice: Page) -> None:
    csp = policy_of(alice, "/clusters/hpc/")
    # The directives come in no fixed order: the last has no `;` after it.
    assert "script-src 'self'" in [part.strip() for part in csp.split(";")]
    assert "unsafe-eval" not in csp
    expect(alice.locator("#tree-chart g.slice")).not_to_have_count(0)

    alice.get_by_role("link", name="physics").click()
    expect(alice.locator("#history-usage .legendtext").first).to_have_text("usage")
    expect(alice.locator("#recovery-chart g.trace.scatter")).to_have_count(2)

    alice.goto("/clusters/hpc/trends/")
    expect(alice.locator("#trends-chart g.trace.scatter")).not_to_have_count(0)
    alice.goto("/clusters/fairtree/")
    expect(alice.locator("#tree-chart g.slice")).not_to_have_count(0)
    shot(alice, "csp-cluster-fairtree")  # fails on any console error the policy caused


def test_a_crafted_link_shows_the_400_page_and_runs_no_script(carol: Page) -> None:
    dialogs: list[str] = []

    def dismissed(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    carol.on("dialog", dismissed)
    trends = f"/clusters/hpc/trends/?range={quote(SCRIPT)}"
    tree = f"/clusters/hpc/tree.json?node={quote(SCRIPT)}"
    for path in (trends, tree):
        expect_status(carol, 400, path)
    carol.goto(tree)
    expect(carol.locator("body")).to_contain_text('"parameter": "node"')
    carol.goto(trends)
    expect(carol.get_by_role("heading", name="Bad request")).to_be_visible()
    expect(carol.locator("p.error")).to_have_text("range must be one of 7d, 30d, 1y, all")
    expect(carol.get_by_role("link", name="My standing")).to_be_visible()
    shot(carol, "bad-request")
    assert dialogs == []
