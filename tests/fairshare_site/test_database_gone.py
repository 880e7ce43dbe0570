"""A database that goes away mid-request is the site's 503, "try again in a moment", in the
site's frame or as JSON, never a 500 or the database's own words; a share edit cut off by it
says that nothing was saved."""

from __future__ import annotations

import re
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.db.utils import InterfaceError, OperationalError
from django.test import Client

from tests.cast import login, node
from tests.trees.views.test_edit import form_of, rows
from trees.models import ShareChange

pytestmark = pytest.mark.django_db

SAID = "server closed the connection unexpectedly at 10.0.0.5"  # what must not be shown


def gone(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError(SAID)


def text(response: Any) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


@pytest.fixture
def database_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lookup of a cluster by name (pages, JSON, the API) fails as a lost connection."""
    monkeypatch.setattr("trees.views.lookup.cluster_get", gone)


@pytest.mark.usefixtures("samples", "database_gone")
def test_a_page_is_the_site_s_503_in_its_frame(client: Client, settings: Any) -> None:
    for debug in (False, True):
        settings.DEBUG = debug
        login(client, "ann")
        response = client.get("/clusters/whitepaper/")
        assert response.status_code == 503, debug
        assert response["Content-Type"] == "text/html; charset=utf-8"
        assert response["Retry-After"] == "30"
        said = text(response)
        assert "The database is not answering" in said
        assert "Try again in a moment" in said
        assert "My standing" in said  # the site's frame, with the person's menu
        assert "10.0.0.5" not in said
        assert "closed the connection" not in said


@pytest.mark.usefixtures("samples", "database_gone")
def test_json_and_the_api_are_a_503_in_json(client: Client) -> None:
    login(client, "ann")
    listing = client.get("/clusters/whitepaper/tree.json")
    assert (listing.status_code, listing["Content-Type"]) == (503, "application/json")
    assert listing.json() == {"error": "the database is not answering: try again in a moment"}
    api = client.get("/api/clusters/whitepaper/")
    assert (api.status_code, api["Retry-After"]) == (503, "30")
    assert api.json() == {
        "error": "the service is unavailable",
        "detail": "the database is not answering: try again in a moment",
    }


@pytest.mark.usefixtures("samples")
def test_a_closed_connection_is_the_503_too(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def closed(*args: Any, **kwargs: Any) -> Any:
        raise InterfaceError("connection already closed")

    monkeypatch.setattr("trees.views.lookup.cluster_get", closed)
    login(client, "ann")
    assert client.get("/clusters/whitepaper/").status_code == 503


def previewed_edit(client: Client) -> dict[str, str]:
    """alice's edit of B1 (L2 to 10 shares), previewed, with its reason: ready to save."""
    url = f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/edit/"
    data = form_of(client.get(url).content.decode())
    data[f"child-{rows(data)['L2']}-shares"] = "10"
    preview = form_of(client.post(url, {**data, "action": "preview"}).content.decode())
    preview["reason"] = "policy 2026: L2 gets a share"
    return {**preview, "action": "save"}


@pytest.mark.usefixtures("samples")
def test_a_share_edit_cut_off_says_nothing_was_saved(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    login(client, "admin", staff=True)
    edit = previewed_edit(client)
    monkeypatch.setattr("trees.views.edit.tree_edit", gone)
    url = f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/edit/"
    response = client.post(url, edit)
    assert response.status_code == 503
    said = text(response)
    assert "The database stopped answering while the shares were saved: nothing was saved" in said
    assert "Try again in a moment" in said
    assert "10.0.0.5" not in said
    assert node("whitepaper", "L2").shares == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("samples")
def test_a_share_edit_whose_connection_is_killed_saves_nothing_and_says_so(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL (DATABASE_URL): the save's own connection terminated by the server
    (pg_terminate_backend) between its edit and its writes, inside its transaction."""
    if connection.vendor != "postgresql":
        pytest.skip("kills a PostgreSQL backend: run with DATABASE_URL=postgres://...")
    from trees.selectors.edit import pbs_edit_applied as applied

    def applied_then_killed(*args: Any, **kwargs: Any) -> Any:
        edited = applied(*args, **kwargs)
        pid = connection.connection.info.backend_pid
        settings_dict = connection.settings_dict
        with psycopg.connect(
            host=settings_dict["HOST"],
            port=settings_dict["PORT"] or 5432,
            user=settings_dict["USER"],
            dbname=settings_dict["NAME"],
            password=settings_dict["PASSWORD"] or None,
            autocommit=True,
        ) as other:
            other.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
        return edited

    login(client, "admin", staff=True)
    edit = previewed_edit(client)
    monkeypatch.setattr("trees.services.tree_edit.pbs_edit_applied", applied_then_killed)
    url = f"/clusters/whitepaper/nodes/{node('whitepaper', 'B1').pk}/edit/"
    response = client.post(url, edit)
    assert response.status_code == 503
    assert "nothing was saved" in text(response)
    connection.close()  # the next query reconnects
    assert node("whitepaper", "L2").shares == 0
    assert not ShareChange.objects.filter(reason="policy 2026: L2 gets a share").exists()
