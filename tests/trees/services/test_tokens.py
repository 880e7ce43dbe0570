"""trees.services.tokens: a token is made with only its digest kept, acts for its person until
it expires or is revoked, and the admins' scopes are theirs only."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from tests.cast import ALICE, BOB, CAROL, login_made
from trees.models import ApiToken, TokenScope
from trees.services.tokens import (
    MAX_TOKEN_DAYS,
    TOKEN_PREFIX,
    TokenRefused,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
    api_tokens_revoke,
    token_digest,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def made(user: User, *, days: int = 30, scope: str = TokenScope.READ) -> tuple[ApiToken, str]:
    return api_token_create(user=user, name="grafana", days=days, scope=scope, now=NOW)


def refusal(token: str, now: datetime = NOW) -> str:
    with pytest.raises(TokenRefused) as refused:
        api_token_authenticate(token=token, now=now)
    return str(refused.value)


def field_errors(invalid: pytest.ExceptionInfo[ValidationError]) -> set[str]:
    return set(invalid.value.message_dict)


def test_it_keeps_the_digest_and_the_prefix_never_the_token() -> None:
    token, secret = made(login_made(BOB))
    stored = ApiToken.objects.get()
    assert secret.startswith(TOKEN_PREFIX)
    assert len(secret) > len(TOKEN_PREFIX) + 40  # 256 random bits, base64
    assert stored.digest == token_digest(secret) != secret
    assert secret.startswith(stored.prefix)
    assert len(stored.prefix) == len(TOKEN_PREFIX) + 6
    assert secret not in {value for value in vars(stored).values() if isinstance(value, str)}
    assert (stored.name, stored.scope, stored.user.username) == ("grafana", "read", BOB)
    assert token.pk == stored.pk


def test_it_expires_the_given_days_after_it_is_made() -> None:
    token, _ = made(login_made(BOB), days=7)
    assert (token.created_at, token.expires_at) == (NOW, NOW + timedelta(days=7))
    assert (token.last_used_at, token.revoked_at) == (None, None)


def test_each_token_is_new() -> None:
    bob = login_made(BOB)
    assert made(bob)[1] != made(bob)[1]


@pytest.mark.parametrize("scope", ["read write", "metrics"])
def test_members_are_refused_the_admins_scopes_on_scope(scope: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        made(login_made(BOB), scope=scope)
    assert invalid.value.message_dict == {"scope": [f"the '{scope}' scope is for admins"]}
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("scope", [TokenScope.WRITE, TokenScope.METRICS])
def test_admins_may_have_the_admins_scopes(scope: str) -> None:
    token, _ = made(login_made(ALICE, admin=True), scope=scope)
    assert token.scope == scope


def test_an_unknown_scope_is_refused() -> None:
    with pytest.raises(ValidationError) as invalid:
        made(login_made(ALICE, admin=True), scope="write")
    assert field_errors(invalid) == {"scope"}


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_name_of_1_to_100_characters_is_required(name: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        api_token_create(user=login_made(BOB), name=name, days=30, scope="read", now=NOW)
    assert field_errors(invalid) == {"name"}


def test_the_name_is_kept_stripped_at_its_longest() -> None:
    name = " " + "x" * 100 + " "
    token, _ = api_token_create(user=login_made(BOB), name=name, days=1, scope="read", now=NOW)
    assert token.name == "x" * 100


@pytest.mark.parametrize("days", [0, -1, MAX_TOKEN_DAYS + 1])
def test_a_lifetime_out_of_bounds_is_refused(days: int) -> None:
    with pytest.raises(ValidationError) as invalid:
        made(login_made(BOB), days=days)
    assert field_errors(invalid) == {"expires_days"}


def test_the_bounds_themselves_are_lifetimes() -> None:
    bob = login_made(BOB)
    assert made(bob, days=1)[0].expires_at == NOW + timedelta(days=1)
    assert made(bob, days=MAX_TOKEN_DAYS)[0].expires_at == NOW + timedelta(days=MAX_TOKEN_DAYS)


def test_every_wrong_field_is_named_at_once() -> None:
    with pytest.raises(ValidationError) as invalid:
        api_token_create(user=login_made(BOB), name="", days=0, scope="metrics", now=NOW)
    assert field_errors(invalid) == {"name", "expires_days", "scope"}


def test_the_token_authenticates_its_person_and_notes_its_use() -> None:
    bob = login_made(BOB)
    token, secret = made(bob)
    found = api_token_authenticate(token=secret, now=NOW + timedelta(hours=1))
    assert (found.pk, found.user) == (token.pk, bob)
    assert found.last_used_at == NOW + timedelta(hours=1)
    assert ApiToken.objects.get().last_used_at == NOW + timedelta(hours=1)


def test_a_use_within_a_minute_of_the_last_is_not_written_again(
    django_assert_num_queries: Any,
) -> None:
    _, secret = made(login_made(BOB))
    first = NOW + timedelta(hours=1)
    api_token_authenticate(token=secret, now=first)
    with django_assert_num_queries(1):  # the lookup only: no UPDATE
        api_token_authenticate(token=secret, now=first + timedelta(seconds=59))
    assert ApiToken.objects.get().last_used_at == first
    api_token_authenticate(token=secret, now=first + timedelta(minutes=1))
    assert ApiToken.objects.get().last_used_at == first + timedelta(minutes=1)


@pytest.mark.parametrize(
    "wrong", ["", "fsd_", "fsd_not-a-token", "not-even-the-prefix", "Bearer fsd_x"]
)
def test_a_wrong_token_is_refused_as_no_such_token(wrong: str) -> None:
    made(login_made(BOB))
    assert refusal(wrong) == "no such token"


def test_a_token_with_another_character_is_refused() -> None:
    _, secret = made(login_made(BOB))
    changed = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    assert refusal(changed) == "no such token"


def test_a_revoked_token_is_refused() -> None:
    bob = login_made(BOB)
    token, secret = made(bob)
    assert api_token_revoke(user=bob, token_id=token.pk, now=NOW)
    assert refusal(secret) == "the token was revoked"


def test_an_expired_token_is_refused_from_its_expiry_on() -> None:
    token, secret = made(login_made(BOB), days=1)
    api_token_authenticate(token=secret, now=token.expires_at - timedelta(seconds=1))
    assert refusal(secret, now=token.expires_at) == "the token has expired"


def test_the_token_of_an_inactive_user_is_refused() -> None:
    bob = login_made(BOB)
    _, secret = made(bob)
    User.objects.filter(pk=bob.pk).update(is_active=False)
    assert refusal(secret) == "the token's user is inactive"


def test_a_refused_token_notes_no_use() -> None:
    bob = login_made(BOB)
    token, secret = made(bob)
    api_token_revoke(user=bob, token_id=token.pk, now=NOW)
    refusal(secret)
    assert ApiToken.objects.get().last_used_at is None


def test_a_person_revokes_their_own_token_once() -> None:
    bob = login_made(BOB)
    token, _ = made(bob)
    later = NOW + timedelta(days=1)
    assert api_token_revoke(user=bob, token_id=token.pk, now=later) is True
    assert ApiToken.objects.get().revoked_at == later
    assert api_token_revoke(user=bob, token_id=token.pk, now=later + timedelta(days=1)) is False
    assert ApiToken.objects.get().revoked_at == later


def test_nobody_revokes_another_s_token_not_even_an_admin() -> None:
    token, secret = made(login_made(BOB))
    for other in (login_made(CAROL), login_made(ALICE, admin=True)):
        assert api_token_revoke(user=other, token_id=token.pk, now=NOW) is False
    assert ApiToken.objects.get().revoked_at is None
    assert api_token_authenticate(token=secret, now=NOW).pk == token.pk


def test_revoking_a_missing_token_is_no_change() -> None:
    assert api_token_revoke(user=login_made(BOB), token_id=12345, now=NOW) is False


def test_an_admin_revokes_any_active_tokens_and_counts_only_those() -> None:
    now = timezone.now()
    bob = login_made("bob-revoke")
    _, token = api_token_create(user=bob, name="a", days=1, scope=TokenScope.READ, now=now)
    second, _ = api_token_create(user=bob, name="b", days=1, scope=TokenScope.READ, now=now)
    ApiToken.objects.filter(pk=second.pk).update(revoked_at=now)
    assert api_tokens_revoke(tokens=ApiToken.objects.filter(user=bob), now=now) == 1
    with pytest.raises(TokenRefused, match="revoked"):
        api_token_authenticate(token=token, now=now)


def test_a_person_holds_at_most_the_setting_s_tokens(settings: Any) -> None:
    """Revoked and expired ones do not count: they open nothing."""
    settings.API_TOKENS_PER_USER = 3
    bob = login_made(BOB)
    first, _ = made(bob)
    made(bob)
    api_token_create(
        user=bob, name="old", days=1, scope=TokenScope.READ, now=NOW - timedelta(days=2)
    )
    made(bob)
    with pytest.raises(ValidationError) as invalid:
        made(bob)
    assert invalid.value.messages == [
        "You hold the most tokens one person may (3): revoke one you no longer use first."
    ]
    assert ApiToken.objects.filter(user=bob).count() == 4
    assert made(login_made(CAROL))[0].user.username == CAROL  # another person's are theirs
    api_token_revoke(user=bob, token_id=first.pk, now=NOW)
    assert made(bob)[0].revoked_at is None
