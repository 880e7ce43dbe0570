"""The API tokens page: a person's own tokens only, a new one shown once in the answer that
made it, the admins' scopes offered to admins only, revoking one's own and nobody else's."""

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.cast import ALICE, BOB, CAROL, FAST_HASHER, login, login_made
from trees.models import ApiToken, TokenScope
from trees.services.tokens import (
    TOKEN_PREFIX,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
)
from trees.views.parameters import TOKENS_PAGE

pytestmark = pytest.mark.django_db

PAGE = "/accounts/tokens/"
TOKEN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{40,}")


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER


def create(client: Client, **fields: str) -> Any:
    data = {"action": "create", "name": "grafana", "expires_days": "30", "scope": "read"}
    return client.post(PAGE, {**data, **fields})


def shown_token(text: str) -> str:
    (token,) = {str(found) for found in TOKEN.findall(text)}
    return token


def scope_options(text: str) -> list[str]:
    (select,) = re.findall(r'<select name="scope".*?</select>', text, re.S)
    return re.findall(r'<option value="([^"]*)"', select)


def test_the_page_lists_one_s_own_tokens_newest_first(client: Client) -> None:
    bob = login(client, BOB)
    carol = login_made(CAROL)
    now = timezone.now()
    api_token_create(user=bob, name="older", days=30, scope="read", now=now - timedelta(days=2))
    api_token_create(user=bob, name="newer", days=30, scope="read", now=now - timedelta(days=1))
    api_token_create(user=carol, name="carols-widget", days=30, scope="read", now=now)
    answer = client.get(PAGE)
    assert answer.status_code == 200
    text = answer.content.decode()
    assert "<h1>API tokens</h1>" in text
    assert text.index("newer") < text.index("older")
    assert "carols-widget" not in text
    assert not TOKEN.search(text)  # only the prefixes: the tokens are not kept
    prefix = ApiToken.objects.filter(user=bob).values_list("prefix", flat=True)[0]
    assert f"<code>{prefix}…</code>" in text
    assert "never" in text  # not used yet
    assert 'href="/accounts/tokens/"' in text  # the nav's link


def test_each_token_says_whether_it_is_active_expired_or_revoked(client: Client) -> None:
    bob = login(client, BOB)
    now = timezone.now()
    api_token_create(user=bob, name="live", days=30, scope="read", now=now)
    api_token_create(user=bob, name="old", days=1, scope="read", now=now - timedelta(days=2))
    gone, _ = api_token_create(user=bob, name="gone", days=30, scope="read", now=now)
    api_token_revoke(user=bob, token_id=gone.pk, now=now)
    text = client.get(PAGE).content.decode()
    states = re.findall(r"<tr><td>(\w+)</td>.*?<td>(active|expired|revoked)", text, re.S)
    assert states == [("gone", "revoked"), ("live", "active"), ("old", "expired")]  # newest first
    assert text.count(">Revoke</button>") == 1  # the active one only


def test_a_new_token_is_shown_once_and_authenticates(client: Client) -> None:
    bob = login(client, BOB)
    answer = create(client, name="ood widget", expires_days="7")
    assert answer.status_code == 200  # the page itself: the token is in no URL or session
    text = answer.content.decode()
    token = shown_token(text)
    assert f"<code>{token}</code>" in text
    assert "Copy it now: it is not shown again." in text
    assert "<code>Authorization: Bearer TOKEN</code>" in text
    assert f'curl -H "Authorization: Bearer {token}" http://testserver/api/me/' in html.unescape(
        text
    )
    found = api_token_authenticate(token=token, now=timezone.now())
    assert (found.user, found.name, found.scope) == (bob, "ood widget", "read")
    assert found.expires_at - found.created_at == timedelta(days=7)
    again = client.get(PAGE).content.decode()
    assert token not in again
    assert "ood widget" in again
    assert not TOKEN.search(str(dict(client.session)))


def test_the_form_offers_the_default_lifetime(client: Client, settings: Any) -> None:
    settings.API_TOKEN_DAYS = 90
    login(client, BOB)
    text = client.get(PAGE).content.decode()
    assert re.search(r'name="expires_days" value="90"', text)
    for field in ("name", "expires_days", "scope"):
        assert f'<label for="id_{field}">' in text


def test_a_member_is_offered_the_read_scope_only(client: Client) -> None:
    login(client, BOB)
    assert scope_options(client.get(PAGE).content.decode()) == ["read"]


def test_an_admin_is_offered_every_scope(client: Client) -> None:
    login(client, ALICE, staff=True)
    assert scope_options(client.get(PAGE).content.decode()) == TokenScope.values
    answer = create(client, scope="read write")
    assert answer.status_code == 200
    assert ApiToken.objects.get().scope == "read write"


def test_a_member_s_forged_write_scope_is_refused_with_why(client: Client) -> None:
    login(client, BOB)
    answer = create(client, scope="read write")
    assert answer.status_code == 400
    text = html.unescape(answer.content.decode())
    assert "the 'read write' scope is for admins" in text
    assert not TOKEN.search(text)
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"name": ""}, "This field is required."),
        ({"name": "x" * 101}, "Ensure this value has at most 100 characters"),
        ({"expires_days": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"expires_days": "3651"}, "Ensure this value is less than or equal to 3650."),
        ({"expires_days": "soon"}, "Enter a whole number."),
        ({"scope": "everything"}, "Select a valid choice."),
    ],
)
def test_an_invalid_form_is_the_page_again_with_the_error(
    client: Client, fields: dict[str, str], error: str
) -> None:
    login(client, BOB)
    answer = create(client, **fields)
    assert answer.status_code == 400
    assert error in answer.content.decode()
    assert not ApiToken.objects.exists()


def test_a_hostile_name_is_shown_escaped(client: Client) -> None:
    login(client, BOB)
    hostile = "<script>alert(1)</script>"
    made = create(client, name=hostile).content.decode()
    listed = client.get(PAGE).content.decode()
    for text in (made, listed):
        assert hostile not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_one_revokes_one_s_own_token(client: Client) -> None:
    bob = login(client, BOB)
    token, _ = api_token_create(user=bob, name="w", days=30, scope="read", now=timezone.now())
    answer = client.post(PAGE, {"action": "revoke", "token": str(token.pk)}, follow=True)
    assert answer.redirect_chain == [(PAGE, 302)]
    assert "Revoked" in answer.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_another_s_token_is_not_revoked(client: Client) -> None:
    login(client, BOB)
    carol = login_made(CAROL)
    token, _ = api_token_create(user=carol, name="c", days=30, scope="read", now=timezone.now())
    answer = client.post(PAGE, {"action": "revoke", "token": str(token.pk)}, follow=True)
    assert answer.redirect_chain == [(PAGE, 302)]
    assert "No such token of yours" in answer.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.parametrize("wrong", ["", "abc", "-1", "0", "1.5", "²", "9" * 40])
def test_a_malformed_token_id_is_a_400(client: Client, wrong: str) -> None:
    login(client, BOB)
    answer = client.post(PAGE, {"action": "revoke", "token": wrong})
    assert answer.status_code == 400
    assert "token must be an id" in answer.content.decode()


def test_an_id_too_large_for_the_database_is_no_token(client: Client) -> None:
    login(client, BOB)
    answer = client.post(PAGE, {"action": "revoke", "token": str(2**63)}, follow=True)
    assert answer.status_code == 200
    assert "No such token of yours" in answer.content.decode()


def test_an_unknown_action_is_a_400(client: Client) -> None:
    login(client, BOB)
    assert client.post(PAGE, {"action": "delete-all"}).status_code == 400
    assert client.post(PAGE, {}).status_code == 400


def test_anonymous_people_are_sent_to_the_login(client: Client) -> None:
    answer = client.get(PAGE)
    assert answer.status_code == 302
    assert answer["Location"].startswith("/accounts/login/?next=/accounts/tokens/")
    assert client.post(PAGE, {"action": "create", "name": "x"}).status_code == 302
    assert not ApiToken.objects.exists()


def test_the_page_is_never_cached(client: Client) -> None:
    login(client, BOB)
    answer = create(client)
    assert "no-store" in answer["Cache-Control"]


def test_a_token_past_the_cap_is_refused_on_the_page_saying_why(
    client: Client, settings: Any
) -> None:
    settings.API_TOKENS_PER_USER = 2
    bob = login(client, BOB)
    assert create(client).status_code == 200
    assert create(client).status_code == 200
    refused = create(client)
    assert refused.status_code == 400
    text = html.unescape(refused.content.decode())
    assert (
        "You hold the most tokens one person may (2): revoke one you no longer use first." in text
    )
    assert not TOKEN.search(text)
    assert ApiToken.objects.filter(user=bob).count() == 2


def test_the_tokens_come_a_page_at_a_time(client: Client) -> None:
    bob = login(client, BOB)
    now = timezone.now()
    for number in range(TOKENS_PAGE + 5):  # revoked ones stay listed: what one did
        made, _ = api_token_create(
            user=bob, name=f"t{number:03d}", days=30, scope="read",
            now=now - timedelta(minutes=number),
        )  # fmt: skip
        api_token_revoke(user=bob, token_id=made.pk, now=now)
    first = client.get(PAGE).content.decode()
    names = re.findall(r"<tr><td>(t\d+)</td>", first)
    assert names == [f"t{number:03d}" for number in range(TOKENS_PAGE)]  # newest first
    assert f'<p class="pages">{TOKENS_PAGE + 5} tokens; page 1 of 2' in first
    assert '<a href="?page=2">next</a>' in first
    second = client.get(PAGE, {"page": "2"}).content.decode()
    names = re.findall(r"<tr><td>(t\d+)</td>", second)
    assert names == [f"t{number:03d}" for number in range(TOKENS_PAGE, TOKENS_PAGE + 5)]
    assert client.get(PAGE, {"page": "3"}).status_code == 404
