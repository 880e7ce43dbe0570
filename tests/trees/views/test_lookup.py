"""A node or job the person may not see and one that does not exist take the same path: the
same answer, byte for byte, after the same queries, on the pages and in the API, so neither
the words nor the time tell that a hidden one exists."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Max
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.cast import login, member_made
from trees.api.throttles import AddressRateThrottle, PersonRateThrottle
from trees.models import Cluster, Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def bea(client: Client, queue_site: Cluster, monkeypatch: pytest.MonkeyPatch) -> User:
    """A member of bio where usage is private: physics's subtree (cond, grav) is hidden."""
    Cluster.objects.filter(pk=queue_site.pk).update(private_usage=True)
    user = login(client, "bea", scheduler_user="bea")
    member_made(user, Node.objects.get(cluster=queue_site, name="bio"))
    # The API's throttle counts in the database's cache: in one minute's window, each request
    # after the first makes the same queries for it.
    for throttle in (PersonRateThrottle, AddressRateThrottle):
        monkeypatch.setattr(throttle, "timer", lambda self: 1_800_000_030.0)
    client.get("/api/me/")
    return user


CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')  # masked anew each answer


def answered(client: Client, url: str) -> tuple[int, bytes, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, CSRF.sub(b"", response.content), len(queries.captured_queries)


def assert_alike(client: Client, hidden: str, missing: str) -> Any:
    seen, gone = answered(client, hidden), answered(client, missing)
    assert seen[0] == gone[0] == 404, (hidden, seen[0], gone[0])
    assert seen[1] == gone[1], hidden
    assert seen[2] == gone[2], f"{hidden}: {seen[2]} queries, {missing}: {gone[2]}"


@pytest.mark.parametrize(
    "route",
    [
        "/clusters/q/nodes/{}/",
        "/clusters/q/nodes/{}/history.json",
        "/api/nodes/{}/",
        "/api/nodes/{}/history/",
        "/api/nodes/{}/jobs/",
    ],
)
def test_a_hidden_node_answers_as_a_missing_one(client: Client, bea: User, route: str) -> None:
    grav = Node.objects.get(cluster__name="q", name="grav")
    assert client.get(route.format(Node.objects.get(name="bio").pk)).status_code == 200
    missing = (Node.objects.aggregate(Max("id"))["id__max"] or 0) + 1000
    assert_alike(client, route.format(grav.pk), route.format(missing))


@pytest.mark.parametrize(
    "route", ["/clusters/q/jobs/{}/", "/clusters/q/jobs/{}/whatif.json", "/api/jobs/q/{}/priority/"]
)
def test_a_hidden_job_answers_as_a_missing_one(client: Client, bea: User, route: str) -> None:
    assert client.get(route.format("102.srv")).status_code == 200  # her own project's
    assert_alike(client, route.format("101[1]"), route.format("999"))
