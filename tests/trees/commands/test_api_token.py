"""manage.py api_token: a token for a login, its last line alone, the scopes as on the page."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.cast import ALICE, BOB, FAST_HASHER, login_made
from tests.conftest import Run
from trees.models import ApiToken
from trees.services.tokens import TOKEN_PREFIX, api_token_authenticate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER


def test_the_last_line_is_the_token_and_it_authenticates(run: Run, settings: Any) -> None:
    settings.API_TOKEN_DAYS = 30
    bob = login_made(BOB)
    ran = run("api_token", BOB)
    assert ran.status == 0
    *said, token = ran.out.splitlines()
    assert ran.out.endswith(token + "\n")  # nothing after it
    assert token.startswith(TOKEN_PREFIX)
    assert token not in "\n".join(said)
    found = api_token_authenticate(token=token, now=timezone.now())
    assert (found.user, found.name, found.scope) == (bob, "api_token command", "read")
    assert found.expires_at - found.created_at == timedelta(days=30)
    assert "'api_token command'" in said[-1]
    assert "(read)" in said[-1]
    assert f"expires {timezone.localtime(found.expires_at):%Y-%m-%d}" in said[-1]


def test_name_and_days_are_given(run: Run) -> None:
    login_made(BOB)
    assert run("api_token", BOB, "--name", "ood", "--expires-days", "7").status == 0
    token = ApiToken.objects.get()
    assert token.name == "ood"
    assert token.expires_at - token.created_at == timedelta(days=7)


@pytest.mark.parametrize(("option", "scope"), [("write", "read write"), ("metrics", "metrics")])
def test_an_admin_s_write_scope_is_read_write(run: Run, option: str, scope: str) -> None:
    login_made(ALICE, admin=True)
    ran = run("api_token", ALICE, "--scope", option)
    assert ran.status == 0
    assert ApiToken.objects.get().scope == scope
    assert f"({scope})" in ran.out


def test_an_unknown_user_is_exit_1_naming_them(run: Run) -> None:
    ran = run("api_token", "nobody")
    assert ran.status == 1
    assert "nobody" in ran.err
    assert ran.out == ""
    assert not ApiToken.objects.exists()


def test_a_member_asking_for_write_is_exit_1_with_the_scope_message(run: Run) -> None:
    login_made(BOB)
    ran = run("api_token", BOB, "--scope", "write")
    assert ran.status == 1
    assert ran.err.strip() == "--scope: the 'read write' scope is for admins"
    assert ran.out == ""
    assert not ApiToken.objects.exists()


def test_a_lifetime_out_of_bounds_is_named_by_its_option(run: Run) -> None:
    login_made(BOB)
    ran = run("api_token", BOB, "--expires-days", "0")
    assert ran.status == 1
    assert ran.err.startswith("--expires-days: ")
    assert not ApiToken.objects.exists()


def test_a_token_past_the_cap_is_exit_1_saying_why(run: Run, settings: Any) -> None:
    settings.API_TOKENS_PER_USER = 1
    login_made(BOB)
    assert run("api_token", BOB).status == 0
    ran = run("api_token", BOB)
    assert ran.status == 1
    assert ran.err == (
        "You hold the most tokens one person may (1): revoke one you no longer use first.\n"
    )
    assert ApiToken.objects.filter(user__username=BOB).count() == 1
