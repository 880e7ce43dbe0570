"""The API's throttle: one budget per person and one per address, whatever token, session or
web process a request comes through, counted in the cache every process shares."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.test import Client
from django.utils import timezone

from tests.cast import login_made
from trees.api.throttles import AddressRateThrottle, PersonRateThrottle
from trees.models import ApiToken, TokenScope
from trees.services.tokens import api_token_create

pytestmark = pytest.mark.django_db

CLUSTERS = "/api/clusters/"
# A moment in the middle of a minute: the throttle's windows are whole minutes, and all the
# requests of a test fall in one of them.
MOMENT = 1_800_000_030.0
REDIS_URL = os.environ.get("THROTTLE_REDIS_URL", "redis://127.0.0.1:6379/13")


def bearer(user: User) -> dict[str, str]:
    made = ApiToken.objects.filter(user=user).count()
    secret = api_token_create(
        user=user, name=f"token {made}", days=1, scope=TokenScope.READ, now=timezone.now()
    )[1]
    return {"Authorization": f"Bearer {secret}"}


def rates_set(monkeypatch: pytest.MonkeyPatch, settings: Any, person: str, address: str) -> None:
    """DRF reads the rates when the throttle classes are defined: the setting for the record,
    the classes' copy for the effect."""
    rates = {"api": person, "api-address": address}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    for throttle in (PersonRateThrottle, AddressRateThrottle):
        monkeypatch.setattr(throttle, "THROTTLE_RATES", rates)
        monkeypatch.setattr(throttle, "timer", lambda self: MOMENT)


@pytest.fixture
def three_a_minute(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[None]:
    rates_set(monkeypatch, settings, person="3/min", address="100/min")
    caches["default"].clear()
    yield
    caches["default"].clear()


@pytest.mark.usefixtures("samples", "three_a_minute")
def test_two_tokens_of_one_person_share_one_budget(client: Client) -> None:
    ann = login_made("ann")
    first, second = bearer(ann), bearer(ann)
    statuses = [
        client.get(CLUSTERS, headers=headers).status_code
        for headers in (first, second, first, second, first)
    ]
    assert statuses == [200, 200, 200, 429, 429]
    refused = client.get(CLUSTERS, headers=second)
    assert refused.json()["error"] == "too many requests"
    assert 1 <= int(refused["Retry-After"]) <= 30  # the minute's window ends 30 s after MOMENT
    # Another person's budget is their own.
    assert client.get(CLUSTERS, headers=bearer(login_made("ben"))).status_code == 200


@pytest.mark.usefixtures("samples", "three_a_minute")
def test_a_token_and_the_session_of_one_person_share_one_budget(client: Client) -> None:
    ann = login_made("ann")
    client.force_login(ann)
    token = bearer(ann)
    statuses = [
        client.get(CLUSTERS, headers=headers).status_code for headers in (token, {}, token, {})
    ]
    assert statuses == [200, 200, 200, 429]


@pytest.mark.usefixtures("samples")
def test_one_address_has_one_budget_for_every_person(
    client: Client, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    rates_set(monkeypatch, settings, person="100/min", address="4/min")
    caches["default"].clear()
    tokens = [bearer(login_made(f"user{number}")) for number in range(6)]
    statuses = [client.get(CLUSTERS, headers=headers).status_code for headers in tokens]
    assert statuses == [200, 200, 200, 200, 429, 429]
    elsewhere = client.get(CLUSTERS, headers=tokens[5], REMOTE_ADDR="192.0.2.7")
    assert elsewhere.status_code == 200


@pytest.mark.usefixtures("samples")
def test_a_forwarded_for_header_does_not_make_a_new_address_without_trusted_proxies(
    client: Client, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    rates_set(monkeypatch, settings, person="100/min", address="2/min")
    caches["default"].clear()
    tokens = [bearer(login_made(f"user{number}")) for number in range(3)]
    statuses = [
        client.get(
            CLUSTERS, headers=headers, HTTP_X_FORWARDED_FOR=f"198.51.100.{number}"
        ).status_code
        for number, headers in enumerate(tokens)
    ]
    assert statuses == [200, 200, 429]


def test_the_counts_are_in_the_cache_every_web_process_shares(settings: Any) -> None:
    """Without a broker the database's cache table (one per site, unlike each process's
    local memory): what one process counts, another reads."""
    backend = settings.CACHES["default"]["BACKEND"]
    assert backend == "django.core.cache.backends.db.DatabaseCache"


@pytest.fixture
def redis_counters(settings: Any) -> Iterator[dict[str, Any]]:
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.skip(f"a shared Redis counter needs Redis at {REDIS_URL}: {exc}")
    config = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    settings.CACHES = {"default": config}
    caches["default"].clear()
    yield config
    caches["default"].clear()


@pytest.mark.usefixtures("samples")
def test_two_redis_clients_count_one_budget(
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    redis_counters: dict[str, Any],
) -> None:
    """As two web processes do: each its own connection to Redis, one count."""
    rates_set(monkeypatch, settings, person="3/min", address="100/min")
    ann = login_made("ann")
    token = bearer(ann)
    own = RedisCache(REDIS_URL, {})  # another process's client: its own connection pool
    monkeypatch.setattr(PersonRateThrottle, "cache", own)
    assert [client.get(CLUSTERS, headers=token).status_code for _ in range(2)] == [200, 200]
    other = RedisCache(REDIS_URL, {})
    monkeypatch.setattr(PersonRateThrottle, "cache", other)
    assert [client.get(CLUSTERS, headers=token).status_code for _ in range(2)] == [200, 429]
    counted = redis.Redis.from_url(REDIS_URL).keys("*throttle*")
    assert counted, "the counters are in Redis"
