"""With private_usage on, a member opens his own project's page and gets the 404 page for one
that is not his, as if it did not exist."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Site, expect_status, shot

PRIVATE = (
    "from trees.models import Cluster as C; C.objects.filter(name='hpc').update(private_usage={})"
)


@pytest.fixture
def private_hpc(site: Site) -> Iterator[None]:
    site.manage("shell", "-c", PRIVATE.format(True))
    try:
        yield
    finally:
        site.manage("shell", "-c", PRIVATE.format(False))


def node_path(page: Page, name: str) -> str:
    answer = page.request.get(f"/clusters/hpc/tree.json?q={name}")
    assert answer.ok
    (found,) = [doc for doc in answer.json()["nodes"] if doc["name"] == name]
    return f"/clusters/hpc/nodes/{found['id']}/"


def test_bob_gets_the_404_page_for_another_project_when_usage_is_private(
    bob: Page, private_hpc: None
) -> None:
    mine = node_path(bob, "cond-matter")
    bob.goto(mine)
    expect(bob.get_by_role("heading", name="cond-matter project")).to_be_visible()
    expect(bob.locator("#history-usage .legendtext").first).to_have_text("usage")

    # gravwaves is cond-matter's sibling: bob sees its totals in the tree, but not its page.
    bob.goto("/clusters/hpc/")  # physics opens by itself: it is on the path to cond-matter
    expect(bob.get_by_role("button", name="close physics")).to_be_visible()
    gravwaves = bob.locator("#tree-table tr").filter(has_text="gravwaves")
    expect(gravwaves).to_be_visible()
    expect(gravwaves.get_by_role("link")).to_have_count(0)

    theirs = node_path(bob, "gravwaves")
    expect_status(bob, 404, theirs)
    answer = bob.goto(theirs)
    assert answer is not None
    assert answer.status == 404
    expect(bob.get_by_role("heading", name="Not found")).to_be_visible()
    expect(bob.locator("main")).not_to_contain_text("gravwaves")
    shot(bob, "node-not-found")
