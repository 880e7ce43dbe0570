"""manage.py error_pages DIR: the pages the server in front answers itself (an address too
long for it: 414), rendered from the site's templates into files it serves."""

from pathlib import Path

import pytest

from tests.conftest import Run


@pytest.mark.django_db
def test_the_414_page_is_the_site_s_page_as_a_file(run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "errors"
    ran = run("error_pages", str(folder))
    assert ran.status == 0, ran.err
    assert ran.out == f"{folder / '414.html'}\n"
    page = (folder / "414.html").read_text()
    assert page.startswith("<!doctype html>")
    assert "<h1>Address too long</h1>" in page
    assert 'href="/static/css/site.css"' in page  # the site's frame and style
    assert '<a href="/">Back to the clusters</a>' in page
    assert "{%" not in page
    assert "{{" not in page
    assert "Log out" not in page  # nobody's menu: the file is the same for everyone
