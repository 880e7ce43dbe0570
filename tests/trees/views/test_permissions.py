"""Every page × every kind of person, with private_usage on and off (the issue's matrix).

The people on the demo's `hpc`: bob is a member of cond-matter (and genomics), `other` of
cryo-em, carol manages physics (over cond-matter and gravwaves), alice is an admin. A URL
the site serves that the table does not cover fails the test, so each new page adds its row;
each page of a cluster also has its row in the Accelerator cluster's table, at the end.
"""

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounting.models import FilesUpload, Scenario
from tests.cast import node
from tests.trees.queue_site import queued_job_made
from tests.trees.views.accelerator_seed import seed_site_made
from trees.models import Cluster, Membership, Node, Role

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

PEOPLE = ("anonymous", "bob", "other", "carol", "alice")
JOB = "9999001[1].pbs"  # a queued job of gravwaves's that each test makes
SKIPPED = ("admin", "accounts", "api")  # Django's own; the API's matrix is tests/trees/api/

# url name -> (path with {mine} and {theirs} node ids, statuses for PEOPLE with private_usage
# off, then on); `mine` is bob's project cond-matter, `theirs` is gravwaves (carol's physics).
OPEN = (302, 200, 200, 200, 200)
ANYONE = (200, 200, 200, 200, 200)
ADMINS = (302, 403, 403, 403, 200)
ALIKE = (0,) * 5  # the same answer for everyone, 200 or 503 (a health endpoint's state)
MATRIX: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    "trees:healthz": ("/healthz", ANYONE, ANYONE),
    "favicon": ("/favicon.ico", (301,) * 5, (301,) * 5),
    "trees:index": ("/", OPEN, OPEN),
    "trees:cluster": ("/clusters/hpc/", OPEN, OPEN),
    "trees:tree-json": ("/clusters/hpc/tree.json", OPEN, OPEN),
    # The whole tree as the scheduler prints it: for those who read every node.
    "trees:listing": ("/clusters/hpc/listing.txt", OPEN, (302, 403, 403, 403, 200)),
    "trees:node": ("/clusters/hpc/nodes/{mine}/", OPEN, (302, 200, 404, 200, 200)),
    "trees:node-history": (
        "/clusters/hpc/nodes/{theirs}/history.json",
        OPEN,
        (302, 404, 404, 200, 200),
    ),
    "trees:node-recovery": (
        "/clusters/hpc/nodes/{theirs}/recovery.json",
        OPEN,
        (302, 404, 404, 200, 200),
    ),
    "trees:me": ("/me/", OPEN, OPEN),
    # Anyone reads the queue (private jobs masked); a job is its entity's readers' and its
    # user's: JOB is gravwaves's, run by someone none of them is.
    "trees:queue": ("/clusters/hpc/queue/", OPEN, OPEN),
    "trees:job": ("/clusters/hpc/jobs/{job}/", OPEN, (302, 404, 404, 200, 200)),
    "trees:job-whatif": (
        "/clusters/hpc/jobs/{job}/whatif.json",
        OPEN,
        (302, 404, 404, 200, 200),
    ),
    "trees:trends": (
        "/clusters/hpc/trends/?node={theirs}",
        (302, 403, 403, 200, 200),
        (302, 403, 404, 200, 200),  # bob sees gravwaves as cond-matter's sibling, `other` not
    ),
    "trees:compare": (
        "/clusters/hpc/compare/?a=cond-matter&b=gravwaves",
        OPEN,
        (302, 400, 400, 200, 200),
    ),
    "trees:compare-names": (
        "/clusters/hpc/compare/names.json?q=matter",
        OPEN,
        OPEN,  # answers with the names each may read, none for `other`
    ),
    "trees:node-edit": (
        "/clusters/hpc/nodes/{mine}/edit/",
        ADMINS,
        (302, 403, 404, 403, 200),  # `other` may not know cond-matter exists
    ),
    "trees:audit": ("/clusters/hpc/audit/", ADMINS, ADMINS),
    "trees:resource-group": ("/clusters/hpc/resource_group", ADMINS, ADMINS),
    "trees:settings": ("/clusters/hpc/settings/", ADMINS, ADMINS),
    "trees:usage-loss": ("/clusters/hpc/usage-loss/", ADMINS, ADMINS),
    "accounting:import": ("/clusters/hpc/import/", ADMINS, ADMINS),
    "accounting:import-new": ("/import/", ADMINS, ADMINS),
    "accounting:upload": ("/imports/{upload}/", ADMINS, ADMINS),
    "accounting:upload-state": ("/imports/{upload}/state.json", ADMINS, ADMINS),
    "accounting:upload-rejects": ("/imports/{upload}/rejected.csv", ADMINS, ADMINS),
    "accounting:whatif": ("/clusters/hpc/whatif/", ADMINS, ADMINS),
    "accounting:scenario": ("/clusters/hpc/whatif/{scenario}/", ADMINS, ADMINS),
    "accounting:scenario-state": ("/clusters/hpc/whatif/{scenario}/state.json", ADMINS, ADMINS),
    # Prometheus's: a metrics token, an allowed address, or an admin's session.
    "metrics": ("/metrics", (401, 403, 403, 403, 200), (401, 403, 403, 403, 200)),
    # A site's monitoring, without a login (under the test settings no broker: healthy).
    "health-db": ("/healthz/db", ANYONE, ANYONE),
    "health-broker": ("/healthz/broker", ANYONE, ANYONE),
    "health-worker": ("/healthz/worker", ANYONE, ANYONE),
    # Whether the demo's cycles are late by now depends on the clock: one answer for all.
    "health-beat": ("/healthz/beat", ALIKE, ALIKE),
}


def scenario_made(cluster: Cluster) -> Scenario:
    """A what-if of the cluster, queued."""
    return Scenario.objects.create(cluster=cluster, parameters={"cores": 64, "settings": []})


def url_names(patterns: list[Any], namespace: str = "") -> set[str]:
    names = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern).rstrip("/") in SKIPPED:
                continue
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= url_names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern):
            names.add(f"{namespace}{pattern.name}")
    return names


def test_the_matrix_covers_every_page_of_the_site() -> None:
    assert url_names(get_resolver().url_patterns) == set(MATRIX)


@pytest.mark.parametrize("private", [False, True], ids=["private_usage off", "private_usage on"])
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_who_gets_what(name: str, private: bool) -> None:
    Cluster.objects.filter(name="hpc").update(private_usage=private)
    other = User.objects.create_user("other", password="pw")
    Membership.objects.create(user=other, node=node("hpc", "cryo-em"), role=Role.MEMBER)
    path, when_off, when_on = MATRIX[name]
    done = FilesUpload.objects.create(
        cluster_name="hpc", kind="sched_config", state="done", uploaded_at=timezone.now()
    )
    gravwaves = node("hpc", "gravwaves")
    queued_job_made(gravwaves.cluster, JOB, "gravwaves", "nobody", 8, 3600, timezone.now())
    url = path.format(
        mine=node("hpc", "cond-matter").pk,
        theirs=gravwaves.pk,
        upload=done.pk,
        job=JOB,
        scenario=scenario_made(gravwaves.cluster).pk,
    )
    got = []
    for person in PEOPLE:
        client = Client()
        if person != "anonymous":
            client.force_login(User.objects.get(username=person))
        got.append(client.get(url).status_code)
    if when_off == ALIKE:
        assert got == [got[0]] * len(PEOPLE), url
        assert got[0] in (200, 503), url
        return
    assert tuple(got) == (when_on if private else when_off), url


# An Altair Accelerator cluster (the seed's /class/vcs picture beside the demo): every page of
# a cluster, with `mine` bob's group /class/vcs and `theirs` /class/hsim (carol manages /class,
# `other` holds nothing there). Its group pages answer as PBS's node pages; the pages that read
# pbsfs, sshare, usage trends, queues, job priorities or PBS's recorded usage are not
# Accelerator's: 404 for everyone.
NOT_ACCELERATOR = (302, 404, 404, 404, 404)
ACCELERATOR_MATRIX: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {
    "trees:cluster": ("/clusters/{cluster}/", OPEN, OPEN),
    # `other`, with nothing on it, sees no node of it when usage is private: not even the root.
    "trees:tree-json": ("/clusters/{cluster}/tree.json", OPEN, (302, 200, 404, 200, 200)),
    "trees:node": ("/clusters/{cluster}/nodes/{mine}/", OPEN, (302, 200, 404, 200, 200)),
    "trees:node-history": (
        "/clusters/{cluster}/nodes/{theirs}/history.json",
        OPEN,
        (302, 404, 404, 200, 200),
    ),
    "trees:audit": ("/clusters/{cluster}/audit/", ADMINS, ADMINS),
    "trees:settings": ("/clusters/{cluster}/settings/", ADMINS, ADMINS),
    "accounting:import": ("/clusters/{cluster}/import/", ADMINS, ADMINS),
    "accounting:whatif": ("/clusters/{cluster}/whatif/", ADMINS, ADMINS),
    "accounting:scenario": ("/clusters/{cluster}/whatif/{scenario}/", ADMINS, ADMINS),
    "accounting:scenario-state": (
        "/clusters/{cluster}/whatif/{scenario}/state.json",
        ADMINS,
        ADMINS,
    ),
    **{
        name: (path, NOT_ACCELERATOR, NOT_ACCELERATOR)
        for name, path in (
            ("trees:listing", "/clusters/{cluster}/listing.txt"),
            ("trees:node-recovery", "/clusters/{cluster}/nodes/{mine}/recovery.json"),
            ("trees:compare", "/clusters/{cluster}/compare/?a=/class/vcs&b=/class/hsim"),
            ("trees:compare-names", "/clusters/{cluster}/compare/names.json?q=vcs"),
            ("trees:trends", "/clusters/{cluster}/trends/?node={theirs}"),
            ("trees:node-edit", "/clusters/{cluster}/nodes/{mine}/edit/"),
            ("trees:resource-group", "/clusters/{cluster}/resource_group"),
            ("trees:usage-loss", "/clusters/{cluster}/usage-loss/"),
            ("trees:queue", "/clusters/{cluster}/queue/"),
            ("trees:job", "/clusters/{cluster}/jobs/q7/"),
            ("trees:job-whatif", "/clusters/{cluster}/jobs/q7/whatif.json"),
        )
    },
}


def cluster_url_names(patterns: list[Any], namespace: str = "") -> set[str]:
    """The names of the site's pages of one cluster (their path holds the cluster's name)."""
    names = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern).rstrip("/") in SKIPPED:
                continue
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= cluster_url_names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and "<slug:name>" in str(pattern.pattern):
            names.add(f"{namespace}{pattern.name}")
    return names


def test_the_accelerator_matrix_covers_every_page_of_a_cluster() -> None:
    assert cluster_url_names(get_resolver().url_patterns) == set(ACCELERATOR_MATRIX)


@pytest.mark.parametrize("private", [False, True], ids=["private_usage off", "private_usage on"])
def test_who_gets_what_on_an_accelerator_cluster(private: bool, tmp_path: Path) -> None:
    cluster = seed_site_made(tmp_path, timezone.now().replace(microsecond=0))
    Cluster.objects.filter(pk=cluster.pk).update(private_usage=private)
    other = User.objects.create_user("other", password="pw")
    groups = dict(Node.objects.filter(cluster=cluster).values_list("name", "pk"))
    Membership.objects.create(user=User.objects.get(username="bob"),
                              node_id=groups["/class/vcs"], role=Role.MEMBER)  # fmt: skip
    Membership.objects.create(user=User.objects.get(username="carol"),
                              node_id=groups["/class"], role=Role.MANAGER)  # fmt: skip
    scenario = scenario_made(cluster)
    clients = [Client()]
    for person in PEOPLE[1:]:
        clients.append(Client())
        clients[-1].force_login(other if person == "other" else User.objects.get(username=person))
    wrong = []
    for name, (path, when_off, when_on) in sorted(ACCELERATOR_MATRIX.items()):
        url = path.format(
            cluster=cluster.name,
            mine=groups["/class/vcs"],
            theirs=groups["/class/hsim"],
            scenario=scenario.pk,
        )
        got = tuple(client.get(url).status_code for client in clients)
        expected = when_on if private else when_off
        if got != expected:
            wrong.append(f"{name} {url}: {got}, not {expected}")
    assert not wrong, "\n".join(wrong)
