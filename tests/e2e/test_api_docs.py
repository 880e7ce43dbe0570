"""The API's documentation, served from the site itself (no CDN): Swagger UI and Redoc draw
every operation under the site's content security policy, with nothing refused or failing."""

from playwright.sync_api import Page, expect

from tests.e2e.conftest import WATCHES, shot

# Redoc's sidebar footer always asks for its maker's logo from its own CDN; the site's policy
# refuses it (an offline site could not load it anyway) and Redoc then hides the image.
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def test_swagger_ui_lists_the_api_s_operations(bob: Page) -> None:
    bob.set_viewport_size({"width": 1024, "height": 900})
    bob.goto("/api/docs/")
    expect(bob.get_by_text("Fairshare dashboard API").first).to_be_visible()
    expect(bob.get_by_text("/api/clusters/{name}/tree/").first).to_be_visible()
    expect(bob.get_by_text("/api/clusters/{name}/accounting/").first).to_be_visible()
    shot(bob, "w1024-api-docs")


def test_redoc_reads_the_schema_and_draws_it(bob: Page) -> None:
    bob.set_viewport_size({"width": 1024, "height": 900})
    bob.goto("/api/redoc/")
    expect(bob.locator("h1").first).to_contain_text("Fairshare dashboard API", timeout=15_000)
    expect(bob.get_by_text("/api/clusters/{name}/tree/").first).to_be_attached()
    bob.wait_for_load_state("networkidle")
    watch = WATCHES[id(bob)]
    watch.problems = [problem for problem in watch.problems if REDOC_LOGO not in problem]
    shot(bob, "w1024-api-redoc")
