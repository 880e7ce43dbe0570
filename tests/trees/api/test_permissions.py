"""Every API endpoint × every kind of caller, with private_usage off and on: the pages' matrix
(tests/trees/views/test_permissions.py) for programs. An API address that the table does not
cover fails the test, so each new endpoint adds its row.

The callers on the demo's `hpc`: bob is a member of cond-matter, `other` of cryo-em, carol
manages physics (over cond-matter and gravwaves), alice is an admin; each calls with a token
of their own (read scope), alice's also revoked, expired, and with the write scope.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounting.models import Scenario
from tests.cast import node
from tests.trees.queue_site import queued_job_made
from trees.models import ApiToken, Cluster, Membership, Role, TokenScope
from trees.selectors.pbs import tree_version_get
from trees.services.tokens import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

CALLERS = (
    "anonymous", "bob", "other", "carol", "alice", "alice revoked", "alice expired",
    "alice read-only", "alice session",
)  # fmt: skip
# Statuses in CALLERS order. Reads: every logged-in caller as the pages answer them; a
# revoked or expired token is anonymous (401). Writes: admins with the write scope only;
# `alice read-only` is her read token on a write (403), her session writes.
EVERYONE = (401, 200, 200, 200, 200, 401, 401, 200, 200)
ADMINS = (401, 403, 403, 403, 200, 401, 401, 200, 200)
WRITERS = (401, 403, 403, 403, 200, 401, 401, 403, 200)
ACCEPTED = (401, 403, 403, 403, 202, 401, 401, 403, 202)  # writes answered "queued"
SHARE_EDIT = {"edits": [{"original": "physics", "name": "physics", "parent": "root", "shares": 7}]}
PUSHED = (
    "11/20/2026 10:00:00;E;9001.server;user=bob group=g project=_pbs_project_default"
    " account=cond-matter ctime=1795600000 qtime=1795600000 etime=1795600000 start=1795600000"
    " end=1795603600 Resource_List.ncpus=4 resources_used.walltime=01:00:00 Exit_status=0\n"
)
SIMULATION = {"cores": 512, "settings": ["shares:physics=40"]}

# url name -> (method, path, body, statuses with private_usage off, then on). `mine`: bob's
# project cond-matter; `theirs`: gravwaves (under carol's physics, beside cond-matter).
MATRIX: dict[str, tuple[str, str, Any, tuple[int, ...], tuple[int, ...]]] = {
    "api-schema": ("get", "/api/schema/", None, EVERYONE, EVERYONE),
    # The docs are pages: Django's login, then the page.
    "api-docs": ("get", "/api/docs/", None, (302,) * 8 + (200,), (302,) * 8 + (200,)),
    "api-redoc": ("get", "/api/redoc/", None, (302,) * 8 + (200,), (302,) * 8 + (200,)),
    "api-clusters": ("get", "/api/clusters/", None, EVERYONE, EVERYONE),
    "api-cluster": ("get", "/api/clusters/hpc/", None, EVERYONE, EVERYONE),
    "api-tree": ("get", "/api/clusters/hpc/tree/", None, EVERYONE, EVERYONE),
    "api-node": (
        "get", "/api/nodes/{mine}/", None, EVERYONE, (401, 200, 404, 200, 200, 401, 401, 200, 200),
    ),
    "api-node-history": (
        "get", "/api/nodes/{theirs}/history/", None, EVERYONE,
        (401, 404, 404, 200, 200, 401, 401, 200, 200),
    ),
    "api-node-jobs": (
        "get", "/api/nodes/{theirs}/jobs/", None, EVERYONE,
        (401, 404, 404, 200, 200, 401, 401, 200, 200),
    ),
    "api-compare": (
        "get", "/api/clusters/hpc/compare/?a=cond-matter&b=gravwaves", None, EVERYONE,
        (401, 400, 400, 200, 200, 401, 401, 200, 200),
    ),
    "api-me": ("get", "/api/me/", None, EVERYONE, EVERYONE),
    # The queue for everyone (private jobs masked); a job for its entity's readers and user.
    "api-cluster-jobs": ("get", "/api/clusters/hpc/jobs/?state=queued", None, EVERYONE, EVERYONE),
    "api-job-priority": (
        "get", "/api/jobs/hpc/{job}/priority/", None, EVERYONE,
        (401, 404, 404, 200, 200, 401, 401, 200, 200),
    ),
    "api-audit": ("get", "/api/clusters/hpc/audit/", None, ADMINS, ADMINS),
    "api-trends": (
        "get", "/api/clusters/hpc/trends/?node={theirs}", None,
        (401, 403, 403, 200, 200, 401, 401, 200, 200),
        (401, 403, 404, 200, 200, 401, 401, 200, 200),
    ),
    # PBS's listing: for whole-tree readers, as the cluster page's.
    "api-shares": (
        "get", "/api/clusters/hpc/shares/?format=pbsfs", None, EVERYONE,
        (401, 403, 403, 403, 200, 401, 401, 200, 200),
    ),
    "api-share-edits": (
        "post", "/api/clusters/hpc/share-edits/?dry_run=1", SHARE_EDIT, WRITERS, WRITERS,
    ),
    "api-accounting": ("post", "/api/clusters/hpc/accounting/", PUSHED, WRITERS, WRITERS),
    "api-simulations": ("post", "/api/clusters/hpc/simulations/", SIMULATION, ACCEPTED, ACCEPTED),
    "api-simulation": ("get", "/api/clusters/hpc/simulations/{scenario}/", None, ADMINS, ADMINS),
    "metrics": (
        "get", "/metrics", None, (401, 403, 403, 403, 403, 401, 401, 403, 200),
        (401, 403, 403, 403, 403, 401, 401, 403, 200),
    ),
}  # fmt: skip
NOT_API = ("admin", "accounts")
JOB = "9999001[1].pbs"  # a queued job of gravwaves's that each test makes


def api_names(patterns: list[Any], inside: bool = False) -> set[str]:
    names = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            prefix = str(pattern.pattern).rstrip("/")
            if prefix not in NOT_API and pattern.namespace is None:
                names |= api_names(pattern.url_patterns, inside or prefix == "api")
        elif isinstance(pattern, URLPattern) and (inside or pattern.name == "metrics"):
            names.add(str(pattern.name))
    return names


def test_the_matrix_covers_every_api_endpoint() -> None:
    assert api_names(get_resolver().url_patterns) == set(MATRIX)


def _tokens() -> dict[str, str]:
    now = timezone.now()
    other = User.objects.create_user("other", password="pw")
    Membership.objects.create(user=other, node=node("hpc", "cryo-em"), role=Role.MEMBER)
    made = {}
    for caller in ("bob", "other", "carol"):
        user = User.objects.get(username=caller)
        made[caller] = api_token_create(
            user=user, name="t", days=1, scope=TokenScope.READ, now=now
        )[1]
    alice = User.objects.get(username="alice")
    made["alice"] = api_token_create(user=alice, name="w", days=1, scope=TokenScope.WRITE, now=now)[
        1
    ]
    made["alice read-only"] = api_token_create(
        user=alice, name="r", days=1, scope=TokenScope.READ, now=now
    )[1]
    revoked, made["alice revoked"] = api_token_create(
        user=alice, name="x", days=1, scope=TokenScope.WRITE, now=now
    )
    ApiToken.objects.filter(pk=revoked.pk).update(revoked_at=now)
    _, made["alice expired"] = api_token_create(
        user=alice, name="y", days=1, scope=TokenScope.WRITE, now=now - timedelta(days=2)
    )
    return made


def _call(caller: str, tokens: dict[str, str], method: str, url: str, body: Any) -> int:
    client = Client()
    headers: dict[str, str] = {}
    if caller == "alice session":
        client.force_login(User.objects.get(username="alice"))
    elif caller != "anonymous":
        headers["Authorization"] = f"Bearer {tokens[caller]}"
    if method == "get":
        return client.get(url, headers=headers).status_code
    if isinstance(body, str):
        return client.post(url, body, content_type="text/plain", headers=headers).status_code
    version = tree_version_get(cluster=Cluster.objects.get(name="hpc"))
    headers["If-Match"] = version
    return client.post(url, body, content_type="application/json", headers=headers).status_code


@pytest.mark.parametrize("private", [False, True], ids=["private_usage off", "private_usage on"])
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_who_gets_what(name: str, private: bool) -> None:
    Cluster.objects.filter(name="hpc").update(private_usage=private)
    tokens = _tokens()
    method, path, body, when_off, when_on = MATRIX[name]
    gravwaves = node("hpc", "gravwaves")
    queued_job_made(gravwaves.cluster, JOB, "gravwaves", "nobody", 8, 3600, timezone.now())
    scenario = Scenario.objects.create(cluster=gravwaves.cluster, parameters={"settings": []})
    url = path.format(
        mine=node("hpc", "cond-matter").pk, theirs=gravwaves.pk, job=JOB, scenario=scenario.pk
    )
    got = tuple(_call(caller, tokens, method, url, body) for caller in CALLERS)
    assert got == (when_on if private else when_off), url
