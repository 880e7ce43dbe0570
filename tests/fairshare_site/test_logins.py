"""Login throttling (django-axes) and a password reset offered only with a mail server."""

import importlib
import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from django.urls import clear_url_caches
from django.utils import timezone

import fairshare_site.urls
from tests.cast import FAST_HASHER

pytestmark = pytest.mark.django_db

LIMIT = 10
AccessAttempt = apps.get_model("axes", "AccessAttempt")  # django-axes has no type hints


@pytest.fixture
def bob(settings: Any) -> User:
    settings.PASSWORD_HASHERS = FAST_HASHER
    return User.objects.create_user("bob", password="right")


def log_in(client: Client, name: str, password: str, address: str = "10.0.0.1") -> int:
    answer = client.post(
        "/accounts/login/", {"username": name, "password": password}, REMOTE_ADDR=address
    )
    return answer.status_code


def test_ten_failures_for_one_name_lock_it_out_with_429(
    bob: User, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client()
    # From ten addresses: the name alone is what is counted.
    failures = [log_in(client, "bob", "wrong", f"10.0.0.{n}") for n in range(LIMIT - 1)]
    assert failures == [200] * (LIMIT - 1)  # the form again, with its error
    with caplog.at_level(logging.WARNING, logger="axes"):
        assert log_in(client, "bob", "wrong", "10.0.1.1") == 429
    assert any("Locking out" in record.getMessage() for record in caplog.records)
    locked = client.post(
        "/accounts/login/", {"username": "bob", "password": "right"}, REMOTE_ADDR="10.0.2.2"
    )
    assert locked.status_code == 429  # even with the right password
    assert b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session


def test_ten_failures_from_one_address_lock_it_out(bob: User) -> None:
    client = Client()
    for n in range(LIMIT - 1):
        assert log_in(client, f"guess{n}", "wrong", "10.9.9.9") == 200
    assert log_in(client, "guess-last", "wrong", "10.9.9.9") == 429
    assert log_in(client, "bob", "right", "10.9.9.9") == 429
    assert log_in(client, "bob", "right", "10.9.9.10") == 302  # another address logs in


def test_nine_failures_then_the_right_password_logs_in_and_resets(bob: User) -> None:
    client = Client()
    for _ in range(LIMIT - 1):
        assert log_in(client, "bob", "wrong") == 200
    assert log_in(client, "bob", "right") == 302
    assert not AccessAttempt.objects.filter(username="bob").exists()


def test_a_lockout_ends_after_fifteen_minutes(bob: User) -> None:
    client = Client()
    for _ in range(LIMIT):
        log_in(client, "bob", "wrong")
    assert log_in(client, "bob", "right") == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert log_in(client, "bob", "right") == 302


def test_sso_logins_are_not_throttled_by_password_failures(bob: User, settings: Any) -> None:
    """Behind REMOTE_USER every request comes from the proxy's address: a lockout of that
    address by password guesses must not lock out the people the web server authenticated."""
    settings.AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.RemoteUserBackend",
        *settings.AUTHENTICATION_BACKENDS,
    ]
    auth = settings.MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[: auth + 1],
        "fairshare_site.middleware.SsoLoginMiddleware",
        *settings.MIDDLEWARE[auth + 1 :],
    ]
    client = Client()
    for n in range(LIMIT):
        log_in(client, f"guess{n}", "wrong", "127.0.0.1")
    assert log_in(client, "bob", "right", "127.0.0.1") == 429
    sso = Client().get("/me/", REMOTE_USER="carol", REMOTE_ADDR="127.0.0.1")
    assert sso.status_code == 200
    assert b"carol" in sso.content


def sso_middleware(settings: Any) -> None:
    settings.AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.RemoteUserBackend",
        *settings.AUTHENTICATION_BACKENDS,
    ]
    auth = settings.MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[: auth + 1],
        "fairshare_site.middleware.SsoLoginMiddleware",
        *settings.MIDDLEWARE[auth + 1 :],
    ]


def test_behind_a_proxy_the_name_comes_in_the_header_it_sets(bob: User, settings: Any) -> None:
    """nginx cannot set the WSGI REMOTE_USER of gunicorn: REMOTE_USER_HEADER names the header
    it sets instead; then REMOTE_USER itself is not read."""
    sso_middleware(settings)
    settings.REMOTE_USER_META_KEY = "HTTP_X_REMOTE_USER"
    by_header = Client().get("/me/", headers={"X-Remote-User": "carol"})
    assert by_header.status_code == 200
    assert b"carol" in by_header.content
    not_by_variable = Client().get("/me/", REMOTE_USER="carol")
    assert not_by_variable.status_code == 302  # to the login page


def test_without_a_header_setting_only_remote_user_logs_in(bob: User, settings: Any) -> None:
    sso_middleware(settings)
    assert Client().get("/me/", headers={"X-Remote-User": "carol"}).status_code == 302
    assert Client().get("/me/", REMOTE_USER="carol").status_code == 200


@pytest.fixture
def mail_server(settings: Any) -> Iterator[None]:
    """The site as set up with EMAIL_URL (the test mail backend keeps the messages)."""
    settings.PASSWORD_RESET = True
    importlib.reload(fairshare_site.urls)
    clear_url_caches()
    yield
    settings.PASSWORD_RESET = False
    importlib.reload(fairshare_site.urls)
    clear_url_caches()


def test_without_a_mail_server_no_password_reset_is_offered() -> None:
    client = Client()
    assert b"password" in client.get("/accounts/login/").content  # the field
    assert b"Forgotten your password" not in client.get("/accounts/login/").content
    assert client.get("/accounts/password_reset/").status_code == 404
    assert client.get("/accounts/reset/done/").status_code == 404


@pytest.mark.usefixtures("mail_server")
def test_with_a_mail_server_the_reset_is_offered_and_mails_a_link(
    bob: User, mailoutbox: list[Any]
) -> None:
    bob.email = "bob@example.org"
    bob.save()
    client = Client()
    assert b"Forgotten your password" in client.get("/accounts/login/").content
    answer = client.post("/accounts/password_reset/", {"email": "bob@example.org"})
    assert answer.status_code == 302
    assert len(mailoutbox) == 1
    assert "/accounts/reset/" in mailoutbox[0].body
