"""Who reads /metrics: an allowed address, a `metrics` token of an admin's, an admin's session;
and what a Prometheus server reads of an Accelerator group."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST

from tests.accounting.accelerator_site import site_made
from tests.accounting.test_metrics import pbs_site
from tests.cast import ALICE, BOB, FAST_HASHER, login, login_made
from trees.models import TokenScope
from trees.services.tokens import api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db

PROMETHEUS = "10.0.0.7"


@pytest.fixture(autouse=True)
def site(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER
    settings.METRICS_ADDRESSES = []  # whatever the environment says
    pbs_site()


def token(scope: str = TokenScope.METRICS, *, days: int = 30, ago: timedelta = timedelta()) -> str:
    user = login_made(ALICE, admin=True)
    now = timezone.now() - ago
    return api_token_create(user=user, name="prometheus", days=days, scope=scope, now=now)[1]


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def assert_metrics(response: Any) -> None:
    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE_LATEST
    assert "no-store" in response["Cache-Control"]
    assert b'fairshare_nodes{cluster="site"} 9.0' in response.content


def assert_refused(response: Any, status: int) -> None:
    assert response.status_code == status
    assert set(response.json()) == {"error", "detail"}
    assert "no-store" in response["Cache-Control"]
    if status == 401:
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    else:
        assert "WWW-Authenticate" not in response


def test_it_asks_an_anonymous_client_to_authenticate(client: Client) -> None:
    assert_refused(client.get("/metrics"), 401)


def test_it_refuses_a_member_session(client: Client) -> None:
    login(client, BOB)
    assert_refused(client.get("/metrics"), 403)


def test_it_answers_an_admin_session(client: Client) -> None:
    login(client, ALICE, staff=True)
    assert_metrics(client.get("/metrics"))


def test_it_answers_a_metrics_token(client: Client) -> None:
    assert_metrics(client.get("/metrics", headers=bearer(token())))


def test_it_refuses_a_token_of_another_scope(client: Client) -> None:
    response = client.get("/metrics", headers=bearer(token(TokenScope.READ)))
    assert_refused(response, 403)
    assert "metrics" in response.json()["detail"]


def test_it_refuses_a_metrics_token_of_someone_no_longer_admin(client: Client) -> None:
    value = token()
    login_made(ALICE, admin=False)
    assert_refused(client.get("/metrics", headers=bearer(value)), 403)


def test_a_revoked_token_must_authenticate_again(client: Client) -> None:
    value = token()
    user = login_made(ALICE, admin=True)
    (made,) = user.api_tokens.all()
    assert api_token_revoke(user=user, token_id=made.pk, now=timezone.now())
    response = client.get("/metrics", headers=bearer(value))
    assert_refused(response, 401)
    assert response.json()["detail"] == "the token is not valid: unknown, revoked or expired"


def test_an_expired_token_must_authenticate_again(client: Client) -> None:
    response = client.get("/metrics", headers=bearer(token(days=1, ago=timedelta(days=2))))
    assert_refused(response, 401)
    assert response.json()["detail"] == "the token is not valid: unknown, revoked or expired"


def test_an_unknown_or_malformed_token_must_authenticate_again(client: Client) -> None:
    assert_refused(client.get("/metrics", headers=bearer("fsd_nothing")), 401)
    assert_refused(client.get("/metrics", headers={"Authorization": "Bearer"}), 401)


def test_it_answers_an_allowed_address_without_credentials(client: Client) -> None:
    with override_settings(METRICS_ADDRESSES=[PROMETHEUS]):
        assert_metrics(client.get("/metrics", REMOTE_ADDR=PROMETHEUS))
        assert_metrics(client.get("/metrics", REMOTE_ADDR=PROMETHEUS, headers=bearer("fsd_stale")))
        assert_refused(client.get("/metrics", REMOTE_ADDR="10.0.0.8"), 401)


def test_it_answers_an_address_in_an_allowed_network(client: Client) -> None:
    with override_settings(METRICS_ADDRESSES=["192.0.2.1", "10.0.0.0/24", "2001:db8::/32"]):
        assert_metrics(client.get("/metrics", REMOTE_ADDR="10.0.0.200"))
        assert_metrics(client.get("/metrics", REMOTE_ADDR="::ffff:10.0.0.9"))  # dual stack
        assert_metrics(client.get("/metrics", REMOTE_ADDR="2001:db8::5"))
        assert_refused(client.get("/metrics", REMOTE_ADDR="10.0.1.1"), 401)


def test_an_entry_that_is_no_address_is_a_configuration_error(client: Client) -> None:
    with (
        override_settings(METRICS_ADDRESSES=["10.0.0.0/24", "prometheus.example.org"]),
        pytest.raises(ImproperlyConfigured, match=r"'prometheus\.example\.org'"),
    ):
        client.get("/metrics", REMOTE_ADDR="10.0.0.200")


def test_head_answers_and_post_is_not_allowed(client: Client) -> None:
    login(client, ALICE, staff=True)
    head = client.head("/metrics")
    assert head.status_code == 200
    assert head["Content-Type"] == CONTENT_TYPE_LATEST
    response = client.post("/metrics")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


U1 = 'cluster="vov",depth="3",kind="user",name="/class/vcs.u1",path="/class/vcs.u1"'


def test_a_metrics_token_reads_an_accelerator_group_s_fs_fields(
    client: Client, tmp_path: Path
) -> None:
    """The seed's /class/vcs.u1: its target 2500 (a quarter, ×10,000), 3 of the 16 running
    jobs (1875), 3 of /class/vcs's 4 against a local half (+2500), no queued job (-1)."""
    site_made(tmp_path)
    response = client.get("/metrics", headers=bearer(token()))
    assert_metrics(response)
    lines = [line for line in response.content.decode().splitlines() if U1 in line]
    assert lines == [
        f"fairshare_shares{{{U1}}} 100.0",
        f"fairshare_perc{{{U1}}} 0.25",
        f"fairshare_fs_target{{{U1}}} 2500.0",
        f"fairshare_fs_running{{{U1}}} 1875.0",
        f"fairshare_fs_running_count{{{U1}}} 3.0",
        f"fairshare_fs_excess_running{{{U1}}} -625.0",
        f"fairshare_fs_excess_running_local{{{U1}}} 2500.0",
        f"fairshare_fs_history{{{U1}}} 1875.0",
        f"fairshare_fs_excess_history{{{U1}}} -625.0",
        f"fairshare_fs_rank{{{U1}}} -1.0",
    ]
    text = response.content.decode()
    assert "# HELP fairshare_fs_target Altair Accelerator FS_TARGET" in text
    u5 = U1.replace("u1", "u5")
    assert f"fairshare_fs_rank{{{u5}}} 0.0" in text.splitlines()  # its queued job, first


def test_metrics_max_series_bounds_each_cluster_s_nodes(client: Client, settings: Any) -> None:
    """Five series a PBS node: 20 are the root and its three children, the other four nodes
    within METRICS_MAX_DEPTH are said to be left out."""
    settings.METRICS_MAX_SERIES = 20
    response = client.get("/metrics", headers=bearer(token()))
    assert_metrics(response)
    assert b'fairshare_metrics_nodes_left_out{cluster="site"} 4.0' in response.content
    assert response.content.count(b"fairshare_shares{") == 3  # the root has no shares
