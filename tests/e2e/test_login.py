"""Logging in and out through the real form, as each of the demo's people."""

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Browse, log_in, shot


def test_anonymous_people_get_the_login_page_and_a_wrong_password_is_refused(
    browse: Browse,
) -> None:
    page = browse()
    expect(page).to_have_url("/accounts/login/?next=/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.get_by_role("link", name="My standing")).to_have_count(0)
    shot(page, "login")

    log_in(page, "bob", "not his password")
    expect(page.locator("p.error")).to_contain_text("enter a correct username and password")
    expect(page.get_by_label("User name")).to_have_value("bob")
    shot(page, "login-refused")


@pytest.mark.parametrize(
    ("name", "shown"), [("alice", "alice (admin)"), ("bob", "bob"), ("carol", "carol")]
)
def test_each_person_logs_in_to_the_clusters_and_out_again(
    browse: Browse, name: str, shown: str
) -> None:
    page = browse(name)
    expect(page.locator("header nav span")).to_have_text(shown)
    expect(page.get_by_role("heading", name="Clusters")).to_be_visible()

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.goto("/clusters/hpc/")
    expect(page).to_have_url("/accounts/login/?next=/clusters/hpc/")
