"""The API against its own OpenAPI schema (schemathesis): generated requests to every
operation, as an admin with a write token on the demo's sample clusters; no answer is a 500,
and every answer (status, content type, body) is one the schema describes. Bounded: a few
dozen examples an operation. (schemathesis's pytest plugin does not run under pytest 9: the
operations are walked here, each under hypothesis.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings

from tests.cast import login_made
from trees.models import TokenScope
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
    assert len(_operations()) == 15
