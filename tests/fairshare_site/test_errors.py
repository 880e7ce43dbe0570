"""Errors answer in the site's frame or as JSON, and never echo what was typed unescaped."""

import json

import pytest
from django.test import Client

from tests.cast import login, node

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]

SCRIPT = "<img src=x onerror=alert(1)>"


def test_a_script_in_a_json_parameter_is_answered_as_json_without_it(client: Client) -> None:
    login(client, "ann")
    leaf = node("whitepaper", "L1").pk
    for url, parameter in (
        ("/clusters/whitepaper/tree.json", "node"),
        ("/clusters/whitepaper/tree.json", "levels"),
        (f"/clusters/whitepaper/nodes/{leaf}/history.json", "range"),
    ):
        response = client.get(url, {parameter: SCRIPT})
        assert (response.status_code, response["Content-Type"]) == (400, "application/json")
        answer = json.loads(response.content)
        assert answer["parameter"] == parameter
        assert answer["error"].startswith(f"{parameter} must be")
        assert b"<img" not in response.content


@pytest.mark.parametrize(
    ("url", "parameter"),
    [
        ("/clusters/whitepaper/trends/", "range"),
        ("/clusters/whitepaper/audit/", "page"),
        ("/clusters/whitepaper/audit/", "node"),
    ],
)
def test_a_script_in_a_page_parameter_gets_the_sites_400_page(
    client: Client, url: str, parameter: str
) -> None:
    login(client, "alice-admin", staff=True)
    response = client.get(url, {parameter: SCRIPT})
    body = response.content.decode()
    assert (response.status_code, response["Content-Type"]) == (400, "text/html; charset=utf-8")
    assert "<h1>Bad request</h1>" in body
    assert "My standing" in body  # the site's frame, with the person's menu
    assert f"{parameter} must be" in body
    assert "<img" not in body
    assert "onerror" not in body


def test_a_long_text_parameter_is_escaped_where_it_is_shown(client: Client) -> None:
    """The audit page shows its search text back in the field: escaped."""
    login(client, "alice-admin", staff=True)
    body = client.get("/clusters/whitepaper/audit/", {"q": SCRIPT}).content.decode()
    assert SCRIPT not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("node=%C2%B2", 400),  # `²`: str.isdigit() says yes, int() raises
        ("node=9223372036854775807", 404),  # the largest id: no such row
        ("node=9223372036854775808", 404),  # beyond any id: not found, not an OverflowError
        ("node=99999999999999999999999999999999999", 400),  # no id is that long
        ("levels=%D9%A3", 400),  # an Arabic-Indic 3
    ],
)
def test_odd_numbers_are_400_or_404_never_500(client: Client, query: str, status: int) -> None:
    login(client, "ann")
    assert client.get(f"/clusters/whitepaper/tree.json?{query}").status_code == status


def test_ids_beyond_the_database_in_a_path_are_not_found(client: Client) -> None:
    login(client, "alice-admin", staff=True)
    for path in (
        "/clusters/whitepaper/nodes/9223372036854775808/",
        "/clusters/whitepaper/nodes/99999999999999999999999/history.json",
        "/clusters/whitepaper/nodes/9223372036854775807/recovery.json",
        "/clusters/whitepaper/nodes/9223372036854775808/edit/",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
    assert (
        b"<h1>Not found</h1>"
        in client.get("/clusters/whitepaper/nodes/9223372036854775808/").content
    )


def test_json_answers_say_not_found_in_json(client: Client) -> None:
    login(client, "ann")
    response = client.get("/clusters/whitepaper/tree.json?node=9223372036854775807")
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    assert "error" in json.loads(response.content)


def test_a_forbidden_page_is_in_the_sites_frame(client: Client) -> None:
    login(client, "ann")
    response = client.get("/clusters/whitepaper/audit/")
    assert response.status_code == 403
    assert b"<h1>Not allowed</h1>" in response.content
    assert b"the audit trail is for admins" in response.content


def test_a_request_django_refuses_gets_the_sites_400_page(client: Client) -> None:
    login(client, "ann")
    response = client.get("/", headers={"host": "evil.example<script>"})
    assert response.status_code == 400
    assert b"<h1>Bad request</h1>" in response.content
    assert b"<script>" not in response.content


def test_a_failure_is_the_site_s_500_page_with_its_frame_and_a_way_back(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    login(client, "ann")

    def failing(**_: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr("trees.views.standing.clusters_list", failing)
    client.raise_request_exception = False
    response = client.get("/")
    assert response.status_code == 500
    page = response.content.decode()
    assert "<h1>Something went wrong</h1>" in page
    assert "Nothing you sent was stored half-way." in page
    assert (
        '<nav aria-label="Site"><a href="/">Clusters</a> <a href="/me/">My standing</a></nav>'
        in page
    )
    assert "the database went away" not in page  # the log holds it, not the page
    json_answer = client.get("/clusters/whitepaper/compare/names.json?q=L")
    assert json_answer.status_code == 200  # a page that does not fail still answers
