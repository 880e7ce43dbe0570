"""Personal API tokens: made (shown once), checked on each request, revoked."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from trees.access import is_admin
from trees.models import ApiToken, TokenScope

TOKEN_PREFIX = "fsd_"  # tells a leaked token apart in logs and secret scanners
MAX_TOKEN_DAYS = 3650
LAST_USED_STEP = timedelta(minutes=1)  # last_used_at is written at most this often per token
ADMIN_SCOPES = {TokenScope.WRITE, TokenScope.METRICS}


# What a refused token is told, whatever the reason: a reason per case (unknown, revoked,
# expired) told whoever held a token whether it had ever been one.
NOT_VALID = "the token is not valid: unknown, revoked or expired"


class TokenRefused(Exception):
    """The token names no usable token; the message says why, without the token (for the
    log), `answer` what the caller is told."""

    def __init__(self, reason: str, *, answer: str | None = None) -> None:
        super().__init__(reason)
        self.answer = reason if answer is None else answer


def token_digest(token: str) -> str:
    """What is stored of a token: its SHA-256 (the token is 256 random bits: no slow hash needed
    against guessing, and lookups stay one indexed query)."""
    return hashlib.sha256(token.encode()).hexdigest()


def api_token_create(
    *,
    user: User,
    name: str,
    days: int,
    scope: str,
    now: datetime,
) -> tuple[ApiToken, str]:
    """A new token of the person's and the token itself, which is not stored: shown once.
    Write and metrics scopes are for admins (what they open is theirs only); a person holds at
    most API_TOKENS_PER_USER usable tokens (the throttle counts them together anyway: the cap
    keeps the ones a leak could expose few)."""
    name = name.strip()
    errors = {}
    if not name or len(name) > 100:
        errors["name"] = "a name of 1 to 100 characters says what the token is for"
    if not 1 <= days <= MAX_TOKEN_DAYS:
        errors["expires_days"] = f"a token lives from 1 to {MAX_TOKEN_DAYS} days"
    if scope not in TokenScope.values:
        errors["scope"] = f"the scope is one of {', '.join(TokenScope.values)}"
    elif scope in ADMIN_SCOPES and not is_admin(user):
        errors["scope"] = f"the '{scope}' scope is for admins"
    if errors:
        raise ValidationError(errors)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        # The person's row locked: two tokens made at once are counted one after the other.
        User.objects.select_for_update().get(pk=user.pk)
        cap = settings.API_TOKENS_PER_USER
        usable = ApiToken.objects.filter(user=user, revoked_at__isnull=True, expires_at__gt=now)
        if usable.count() >= cap:
            raise ValidationError(
                f"You hold the most tokens one person may ({cap}): revoke one you no longer"
                " use first."
            )
        made = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=token[: len(TOKEN_PREFIX) + 6],
            digest=token_digest(token),
            scope=scope,
            created_at=now,
            expires_at=now + timedelta(days=days),
        )
    return made, token


def api_token_revoke(*, user: User, token_id: int, now: datetime) -> bool:
    """Revoke one of the person's tokens (False: none of theirs, or revoked already)."""
    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
            revoked_at=now
        )
    )


def api_tokens_revoke(*, tokens: QuerySet[ApiToken], now: datetime) -> int:
    """An admin's revocation of any tokens (a leaked one): how many were still active."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=now)


def bearer_token(authorization: str) -> str | None:
    """The token an Authorization header carries as `Bearer TOKEN`; None without one (no
    header, or another scheme). TokenRefused: a Bearer header of another shape."""
    words = authorization.split()
    if not words or words[0].lower() != "bearer":
        return None
    if len(words) != 2 or not words[1].isascii():
        raise TokenRefused("the Authorization header is `Bearer TOKEN`")
    return words[1]


def api_token_authenticate(*, token: str, now: datetime) -> ApiToken:
    """The usable token that `token` is, its last use noted (TokenRefused: why not)."""
    found = (
        ApiToken.objects.select_related("user").filter(digest=token_digest(token)).first()
        if token.startswith(TOKEN_PREFIX)
        else None
    )
    if found is None:
        raise TokenRefused("no such token", answer=NOT_VALID)
    if found.revoked_at is not None:
        raise TokenRefused("the token was revoked", answer=NOT_VALID)
    if now >= found.expires_at:
        raise TokenRefused("the token has expired", answer=NOT_VALID)
    if not found.user.is_active:
        raise TokenRefused("the token's user is inactive", answer=NOT_VALID)
    if found.last_used_at is None or now - found.last_used_at >= LAST_USED_STEP:
        with transaction.atomic():
            ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        found.last_used_at = now
    return found
