"""Every answer carries the security headers; those that need a login are never cached."""

import logging
from typing import Any

import pytest
from django.test import Client

from tests.cast import login

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]


def policy(header: str) -> dict[str, str]:
    directives = (part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    return {name: value for name, value in directives}


def test_every_page_has_a_strict_content_security_policy(client: Client) -> None:
    login(client, "ann")
    for path in (
        "/",
        "/clusters/whitepaper/",
        "/clusters/whitepaper/tree.json",
        "/accounts/login/",
        "/nope",
    ):
        csp = policy(client.get(path)["Content-Security-Policy"])
        assert csp["script-src"] == "'self'", path  # no 'unsafe-inline', no 'unsafe-eval'
        assert (csp["object-src"], csp["base-uri"], csp["frame-ancestors"]) == (
            "'none'",
            "'self'",
            "'none'",
        )


def test_every_answer_refuses_the_browsers_powerful_features(client: Client) -> None:
    header = client.get("/accounts/login/")["Permissions-Policy"]
    assert {"camera=()", "geolocation=()", "microphone=()"} <= set(header.split(", "))


def test_pages_and_json_behind_the_login_are_private_and_not_stored(client: Client) -> None:
    login(client, "ann")
    for path in ("/", "/me/", "/clusters/whitepaper/", "/clusters/whitepaper/tree.json", "/nope"):
        control = {part.strip() for part in client.get(path)["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= control, path


def test_the_health_check_may_be_cached_by_anyone() -> None:
    assert not Client().get("/healthz").has_header("Cache-Control")


def test_pages_have_no_inline_script(client: Client) -> None:
    """The policy would block one: every script is a static file."""
    login(client, "alice-admin", staff=True)
    for path in ("/", "/clusters/whitepaper/", "/me/", "/clusters/whitepaper/trends/", "/import/"):
        body = client.get(path).content.decode()
        assert not any(inline in body for inline in ("<script>", "onclick=", "onload=")), path
        data = body.count('type="application/json">')  # json_script: data, never run
        assert body.count("<script") == body.count("<script src=") + data, path


def test_a_missing_cluster_or_node_and_a_refusal_are_the_site_s_pages_with_debug_on(
    client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.DEBUG = True  # the embedded default's: Django would show its technical pages
    login(client, "ann")
    for path, why in (
        ("/clusters/nope/", "There is no such cluster here."),
        (
            "/clusters/whitepaper/nodes/999999/",
            "There is no such node in this cluster, or it is not one you can see.",
        ),
    ):
        page = client.get(path)
        assert page.status_code == 404
        text = page.content.decode()
        assert "Fairshare dashboard" in text, path
        assert f"<p>{why}</p>" in text, path
        assert "Back to the clusters" in text, path
        assert "Using the URLconf" not in text  # not Django's page listing every URL
    assert client.get("/clusters/whitepaper/nodes/999999/history.json").json() == {
        "error": "There is no such node in this cluster, or it is not one you can see."
    }
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="django.request"):
        page = client.get("/clusters/whitepaper/audit/")
    assert page.status_code == 403
    assert "You may not open this page: the audit trail is for admins." in page.content.decode()
    assert "Back to the clusters" in page.content.decode()
    assert [record.exc_info for record in caplog.records] == [None]  # one line, no traceback


def test_a_refusal_reaches_the_root_s_handler_alone_with_debug_on_or_off(settings: Any) -> None:
    """Django's default logging adds a console handler of its own for DEBUG, which printed a
    403's "Forbidden: ..." a second time beside the root's handler; the site's LOGGING leaves
    django's loggers without handlers, so their records reach the root's one."""
    for debug in (True, False):
        settings.DEBUG = debug  # Django's require_debug_true filter reads it per record
        record = logging.LogRecord(
            "django.request", logging.WARNING, __file__, 1, "Forbidden: %s", ("/x/",), None
        )
        below_root = []
        logger = logging.getLogger("django.request")
        while logger is not logging.root:
            below_root += [h for h in logger.handlers if h.filter(record)]
            assert logger.propagate, logger.name
            assert logger.parent is not None
            logger = logger.parent
        assert below_root == [], debug
