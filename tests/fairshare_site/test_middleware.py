"""Every answer carries the security headers; those that need a login are never cached."""

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
