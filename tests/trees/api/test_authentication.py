"""A token that opens nothing gets one 401, whatever the reason: unknown, revoked, expired or
its person's login switched off answer alike (the reason goes to the log), so the answer
tells nobody whether a token they hold ever existed."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.cast import login_made
from trees.services.tokens import TOKEN_PREFIX, api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db

ME = "/api/me/"


def refused(client: Client, token: str) -> tuple[int, bytes, str]:
    response = client.get(ME, headers={"Authorization": f"Bearer {token}"})
    return response.status_code, response.content, response["WWW-Authenticate"]


def test_unknown_revoked_expired_and_inactive_tokens_get_the_same_401(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    now = timezone.now()
    ann, ben = login_made("ann"), login_made("ben")
    revoked, revoked_secret = api_token_create(user=ann, name="r", days=30, scope="read", now=now)
    api_token_revoke(user=ann, token_id=revoked.pk, now=now)
    _, expired = api_token_create(
        user=ann, name="e", days=1, scope="read", now=now - timedelta(days=2)
    )
    _, inactive = api_token_create(user=ben, name="i", days=30, scope="read", now=now)
    ben.is_active = False
    ben.save(update_fields=["is_active"])
    unknown = TOKEN_PREFIX + "x" * 43
    with caplog.at_level(logging.INFO, logger="trees.api.authentication"):
        answers = {
            reason: refused(client, token)
            for reason, token in (
                ("unknown", unknown),
                ("revoked", revoked_secret),
                ("expired", expired),
                ("inactive", inactive),
            )
        }
    assert {answer[0] for answer in answers.values()} == {401}
    assert len({answer[1] for answer in answers.values()}) == 1, answers
    assert len({answer[2] for answer in answers.values()}) == 1
    assert answers["unknown"][1] == (
        b'{"error":"authentication is needed: a personal token (Authorization: Bearer) or a'
        b' login","detail":"the token is not valid: unknown, revoked or expired"}'
    )
    logged = [record.getMessage() for record in caplog.records]
    assert "API token refused: the token was revoked" in logged
    assert "API token refused: the token has expired" in logged
