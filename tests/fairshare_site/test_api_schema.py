"""The API against its own OpenAPI schema (schemathesis): generated requests to every
operation, as an admin with a write token on the demo's sample clusters; no answer is a 500,
and every answer (status, content type, body) is one the schema describes. Bounded: a few
dozen examples an operation. (schemathesis's pytest plugin does not run under pytest 9: the
operations are walked here, each under hypothesis.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings

from tests.accounting.accelerator_site import NOW, site_made
from tests.cast import login_made
from trees.models import Node, TokenScope
from trees.services.tokens import api_token_create

EXAMPLES = 25


@pytest.fixture(autouse=True)
def connection_kept() -> Iterator[None]:
    """The WSGI handler closes the database connection after each request (Django's test
    client stops it doing so): on PostgreSQL that would end the test's own transaction."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def _schema() -> tuple[Any, dict[str, str]]:
    admin = login_made("alice", admin=True)
    _, token = api_token_create(
        user=admin, name="schemathesis", days=1, scope=TokenScope.WRITE, now=timezone.now()
    )
    headers = {"Authorization": f"Bearer {token}"}
    loaded = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(), headers=headers)
    return loaded, headers


def _operations() -> list[str]:
    """The schema's operations, read from the URLconf's schema without a database."""
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        f"{method.upper()} {path}"
        for path, methods in document["paths"].items()
        for method in methods
    )


@pytest.mark.parametrize("label", _operations())
def test_every_answer_is_one_the_schema_describes(samples: None, label: str) -> None:
    loaded, headers = _schema()
    operation = loaded.find_operation_by_label(label)

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def answers_as_described(case: Any) -> None:
        case.call_and_validate(headers=headers)

    answers_as_described()


def test_every_operation_is_tested() -> None:
    assert len(_operations()) == 17


AT = (NOW - timedelta(minutes=5)).isoformat()
# An Accelerator cluster's answers, which generated requests would not find (its name and its
# groups' ids are the site's): label, path parameters (a group's name for its id), query, and
# the status (404: Accelerator has no priorities, comparisons or shares listing).
ACCELERATOR_CASES = [
    ("GET /api/clusters/", {}, {}, 200),
    ("GET /api/clusters/{name}/", {"name": "vov"}, {}, 200),
    ("GET /api/clusters/{name}/tree/", {"name": "vov"}, {}, 200),
    ("GET /api/clusters/{name}/tree/", {"name": "vov"}, {"q": "vcs", "depth": "2"}, 200),
    ("GET /api/clusters/{name}/tree/", {"name": "vov"}, {"node": "/class/vcs"}, 200),
    ("GET /api/clusters/{name}/tree/", {"name": "vov"}, {"at": AT}, 200),
    ("GET /api/clusters/{name}/tree/", {"name": "vov"}, {"at": NOW.isoformat()}, 200),
    ("GET /api/nodes/{node_id}/", {"node_id": "/"}, {}, 200),
    ("GET /api/nodes/{node_id}/", {"node_id": "/class/vcs"}, {}, 200),
    ("GET /api/nodes/{node_id}/", {"node_id": "/class/vcs.u5"}, {}, 200),
    ("GET /api/nodes/{node_id}/history/", {"node_id": "/class/vcs.u1"}, {}, 200),
    ("GET /api/nodes/{node_id}/jobs/", {"node_id": "/class/vcs"}, {}, 200),
    ("GET /api/clusters/{name}/trends/", {"name": "vov"}, {}, 200),
    ("GET /api/clusters/{name}/audit/", {"name": "vov"}, {}, 200),
    ("GET /api/me/", {}, {}, 200),
    ("GET /api/clusters/{name}/jobs/", {"name": "vov"}, {"state": "queued"}, 404),
    ("GET /api/jobs/{cluster}/{job_id}/priority/", {"cluster": "vov", "job_id": "q7"}, {}, 404),
    ("GET /api/clusters/{name}/compare/", {"name": "vov"}, {"a": "/class", "b": "/class/vcs"},
     404),
    ("GET /api/clusters/{name}/shares/", {"name": "vov"}, {}, 404),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(("label", "path", "query", "status"), ACCELERATOR_CASES)
def test_an_accelerator_cluster_s_answers_are_the_schema_s(
    tmp_path: Path, label: str, path: dict[str, str], query: dict[str, str], status: int
) -> None:
    cluster = site_made(tmp_path)
    ids = dict(Node.objects.filter(cluster=cluster).values_list("name", "id"))
    if "node_id" in path:
        path = {"node_id": str(ids[path["node_id"]])}
    if "node" in query:
        query = {"node": str(ids[query["node"]])}
    loaded, headers = _schema()
    case = loaded.find_operation_by_label(label).Case(path_parameters=path, query=query)
    assert case.call_and_validate(headers=headers).status_code == status
