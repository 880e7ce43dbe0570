"""The queue and a job's priority through the API, on the small PBS cluster whose numbers
tests/trees/queue_site.py computes by hand."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounting.models import JobPriorityHistory
from tests.cast import login_made, member_made
from tests.trees.api.test_views import bearer, ok
from trees.models import Cluster, Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def bea(queue_site: Cluster) -> User:
    user = login_made("bea", scheduler_user="bea")
    member_made(user, Node.objects.get(cluster=queue_site, name="bio"))
    return user


def test_the_queue_in_order_with_each_job_s_terms(client: Client, bea: User) -> None:
    data = ok(client.get("/api/clusters/q/jobs/?state=queued", headers=bearer(bea)))
    assert (data["cluster"], data["formula"], data["waiting"]) == (
        "q", "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)", 3,
    )  # fmt: skip
    jobs = data["jobs"]
    assert [job["job_id"] for job in jobs] == ["102.srv", "101[1]", "103", "104"]
    assert [job["position"] for job in jobs] == [1, 2, 3, None]
    assert [job["queue_position"] for job in jobs] == [1, 2, 1, None]
    first = jobs[1]
    assert (first["entity"], first["user"], first["queue"], first["ncpus"]) == (
        "cond", "dkaya", "workq", 64,
    )  # fmt: skip
    assert first["walltime"] == 3600
    assert first["terms"]["1000*(1-fairshare_tree_usage)"] == pytest.approx(583.333)
    assert first["terms"]["10*(ncpus/6656)"] == pytest.approx(640 / 6656)
    assert first["priority"] == pytest.approx(585.429, abs=1e-3)
    assert jobs[3]["held"] is True
    assert not any(job["masked"] for job in jobs)


def test_the_queue_comes_a_page_at_a_time_in_its_order(client: Client, bea: User) -> None:
    headers = bearer(bea)
    first = ok(client.get("/api/clusters/q/jobs/?page_size=3", headers=headers))
    assert [job["job_id"] for job in first["jobs"]] == ["102.srv", "101[1]", "103"]
    assert (first["waiting"], first["previous"]) == (3, None)
    assert first["next"] == "http://testserver/api/clusters/q/jobs/?page=2&page_size=3"
    second = ok(client.get(first["next"], headers=headers))
    assert [job["job_id"] for job in second["jobs"]] == ["104"]
    assert [job["position"] for job in second["jobs"]] == [None]  # held: last, unnumbered
    assert second["next"] is None
    assert second["previous"] == "http://testserver/api/clusters/q/jobs/?page_size=3"
    too_many = client.get("/api/clusters/q/jobs/?page_size=1001", headers=headers)
    assert (too_many.status_code, too_many.json()["parameter"]) == (400, "page_size")


def test_private_usage_masks_the_queue_s_other_jobs(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    Cluster.objects.filter(pk=queue_site.pk).update(private_usage=True)
    jobs = ok(client.get("/api/clusters/q/jobs/", headers=bearer(bea)))["jobs"]
    assert [job["masked"] for job in jobs] == [False, True, True, True]
    masked = jobs[1]
    assert masked["job_id"] is masked["entity"] is masked["user"] is masked["queue"] is None
    assert masked["terms"] == {}
    assert (masked["ncpus"], masked["walltime"]) == (64, 3600)
    assert masked["priority"] == pytest.approx(585.429, abs=1e-3)


def test_another_state_is_a_400_naming_the_one_allowed(client: Client, bea: User) -> None:
    answer = client.get("/api/clusters/q/jobs/?state=running", headers=bearer(bea))
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": "state must be one of queued",
        "parameter": "state",
    }


def test_a_job_s_priority_explained(client: Client, bea: User, queue_site: Cluster) -> None:
    at = timezone.now() - timedelta(minutes=10)
    JobPriorityHistory.objects.create(
        cluster=queue_site, job_id="101[1]", at=at, priority=584.5, position=2, queue_position=2
    )
    data = ok(client.get("/api/jobs/q/101[1]/priority/", headers=bearer(bea)))
    assert (data["job_id"], data["entity"], data["queue"], data["user"]) == (
        "101[1]", "cond", "workq", "dkaya",
    )  # fmt: skip
    assert (data["position"], data["queue_position"], data["waiting"], data["in_queue"]) == (
        2, 2, 3, 2,
    )  # fmt: skip
    assert data["ahead"] == {"jobs": 1, "cores": 16, "core_hours": 32.0}
    assert data["fairshare"] == {
        "term": "1000*(1-fairshare_tree_usage)", "value": pytest.approx(583.333), "best": 1000.0,
    }  # fmt: skip
    over = data["furthest_over_target"]
    assert over["name"] == "physics"
    assert over["ratio"] == pytest.approx(4000 / 3000)
    assert data["values"]["fairshare_tree_usage"] == pytest.approx(0.416667)
    assert data["values"]["ncpus"] == 64
    assert data["explanation"][:2] == [
        "2nd of 3 waiting; 2nd in queue workq.",
        "1 job ahead of it, asking for 16 cores and 32.0 core-hours in all (requested cores ×"
        " requested walltime).",
    ]
    assert data["history"] == [
        {"at": at.isoformat(), "priority": 584.5, "position": 2, "queue_position": 2}
    ]


def test_the_answers_are_tagged_and_a_client_holding_one_gets_a_304(
    client: Client, bea: User
) -> None:
    headers = bearer(bea)
    for url in ("/api/clusters/q/jobs/", "/api/jobs/q/102.srv/priority/"):
        first = client.get(url, headers=headers)
        tag = first["ETag"]
        again = client.get(url, headers={**headers, "If-None-Match": tag})
        # Computed at the cycle now falls in: the same answer, so the same tag, all cycle long.
        assert (again.status_code, again.content, again["ETag"]) == (304, b"", tag)


@pytest.mark.parametrize(
    "url",
    [
        "/api/jobs/q/999/priority/",
        "/api/jobs/nowhere/101[1]/priority/",
        "/api/jobs/q/<script>/priority/",
        "/api/jobs/q/" + "9" * 500 + "/priority/",
        "/api/clusters/nowhere/jobs/",
    ],
)
def test_unknown_jobs_and_clusters_are_a_json_404(client: Client, bea: User, url: str) -> None:
    answer = client.get(url, headers=bearer(bea))
    assert answer.status_code == 404
    body: dict[str, Any] = answer.json()
    assert set(body) == {"error", "detail"}
    assert body["error"] == "not found"


def test_a_private_job_answers_as_one_that_does_not_exist(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    Cluster.objects.filter(pk=queue_site.pk).update(private_usage=True)
    hidden = client.get("/api/jobs/q/101[1]/priority/", headers=bearer(bea))
    missing = client.get("/api/jobs/q/999/priority/", headers=bearer(bea))
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
