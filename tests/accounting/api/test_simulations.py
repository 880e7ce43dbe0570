"""What-ifs through the API on the demo's site: an admin's `read write` token starts one (202,
the address of its result), reads it back, and gets 400 saying why for what cannot run;
others get 401 or 403, and another cluster's what-if is not found."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounting import tasks
from accounting.models import Scenario
from tests.accounting.whatif_result import RESULT, scenario_made
from trees.models import Cluster, TokenScope
from trees.services.tokens import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

URL = "/api/clusters/hpc/simulations/"


def bearer(person: str, scope: str = TokenScope.WRITE) -> dict[str, str]:
    user = User.objects.get(username=person)
    token = api_token_create(user=user, name="t", days=1, scope=scope, now=timezone.now())[1]
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], str | None]]:
    queued: list[tuple[list[int], str | None]] = []
    monkeypatch.setattr(
        tasks.run_scenario, "apply_async", lambda args, queue: queued.append((args, queue))
    )
    return queued


def post(client: Client, body: Any, headers: dict[str, str]) -> Any:
    return client.post(URL, body, content_type="application/json", headers=headers)


def test_an_admin_starts_a_what_if_and_gets_the_address_of_its_result(
    client: Client, sent: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    body = {
        "title": "physics 40", "order": "fifo", "backfill": "3", "cores": 512,
        "from": "2026-11-14T00:00:00Z", "until": "2026-11-21T00:00:00Z",
        "settings": ["shares:physics=40", " fair_share=false "],
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, body, bearer("alice"))
    scenario = Scenario.objects.get()
    assert answer.status_code == 202
    url = f"http://testserver/api/clusters/hpc/simulations/{scenario.pk}/"
    assert answer.json() == {
        "id": scenario.pk,
        "url": url,
        "page": f"http://testserver/clusters/hpc/whatif/{scenario.pk}/",
        "state": "queued",
        "message": "",
    }
    assert answer["Location"] == url
    assert sent == [([scenario.pk], None)]
    kept = scenario.parameters
    assert kept["settings"] == ["shares:physics=40", "fair_share=false"]
    assert (kept["order"], kept["backfill"], kept["cores"]) == ("fifo", 3, 512)
    assert (kept["from"], kept["until"]) == (
        "2026-11-14T00:00:00+00:00",
        "2026-11-21T00:00:00+00:00",
    )
    assert (scenario.title, scenario.created_by) == (
        "physics 40",
        User.objects.get(username="alice"),
    )


def test_the_result_is_read_back_with_its_state_and_document(client: Client) -> None:
    done = scenario_made(
        Cluster.objects.get(name="hpc"), created_by=User.objects.get(username="alice")
    )
    answer = client.get(f"{URL}{done.pk}/", headers=bearer("alice", TokenScope.READ))
    assert answer.status_code == 200
    document = answer.json()
    assert {key: document[key] for key in ("id", "title", "state", "progress", "message")} == {
        "id": done.pk, "title": "physics at 40", "state": "done", "progress": 1.0, "message": "",
    }  # fmt: skip
    assert document["parameters"]["settings"] == ["shares:physics=40"]
    assert document["created_by"] == "alice"
    assert document["page"] == f"http://testserver/clusters/hpc/whatif/{done.pk}/"
    assert document["result"] == RESULT
    assert "no-cache" in answer["Cache-Control"]


def test_a_running_what_if_has_no_result_yet(client: Client) -> None:
    running = scenario_made(Cluster.objects.get(name="hpc"), "running", progress=0.25)
    document = client.get(f"{URL}{running.pk}/", headers=bearer("alice")).json()
    assert (document["state"], document["progress"], document["result"]) == ("running", 0.25, None)


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"cores": 64, "settings": ["shares:nobody=3"]},
         {"settings": ["shares:nobody=3: resource_group has no entity 'nobody'"]}),
        ({"cores": 64, "settings": ["shares:physics=-1"]},
         {"settings": ["shares:physics=-1: '-1' is not a whole number from 0 to 2147483647"]}),
        ({"cores": 64, "settings": ["fair_share"]},
         {"settings": ["'fair_share': give KEY=VALUE"]}),
        ({"settings": []},
         {"cores": ["how many cores the jobs ran on is not known: give cores, or set the"
                    " cluster's cores on its settings page"]}),
        ({"cores": 0}, {"cores": ["Ensure this value is greater than or equal to 1."]}),
        ({"cores": 64, "backfill": "sometimes"},
         {"backfill": ["backfill 'sometimes': give none, greedy, easy or a reservation depth"
                       " from 1 to 1000"]}),
        ({"cores": 64, "order": "random"}, {"order": ['"random" is not a valid choice.']}),
        ({"cores": 64, "from": "2026-11-20T00:00:00Z", "until": "2026-11-19T00:00:00Z"},
         {"until": ["the window's end must be after its start"]}),
        ({"cores": 64, "settings": "shares:physics=40"},
         {"settings": ['Expected a list of items but got type "str".']}),
        ({"cores": 64, "title": "x\x00y"}, {"title": ["Null characters are not allowed."]}),
    ],
)  # fmt: skip
def test_what_cannot_run_answers_400_saying_why(
    client: Client, sent: list[Any], body: dict[str, Any], detail: dict[str, Any]
) -> None:
    Cluster.objects.filter(name="hpc").update(cores=None)  # the body's cores are all there is
    answer = post(client, body, bearer("alice"))
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": detail,
    }
    assert Scenario.objects.count() == 0
    assert sent == []


def test_a_lone_surrogate_is_refused_not_stored(client: Client, sent: list[Any]) -> None:
    body = '{"cores": 64, "settings": ["shares:physics=\\ud800"]}'
    answer = client.post(URL, body, content_type="application/json", headers=bearer("alice"))
    assert answer.status_code == 400
    assert answer.json()["detail"] == {
        "settings": {"0": ["Surrogate characters are not allowed: U+D800."]}
    }


def test_the_cluster_s_cores_are_the_pool_when_none_is_given(
    client: Client, sent: list[Any]
) -> None:
    Cluster.objects.filter(name="hpc").update(cores=6656)
    assert post(client, {}, bearer("alice")).status_code == 202
    assert Scenario.objects.get().parameters["cores"] is None  # the cluster's at run time


@pytest.mark.parametrize(
    ("person", "scope", "status"),
    [("bob", TokenScope.READ, 403), ("carol", TokenScope.READ, 403),
     ("alice", TokenScope.READ, 403)],  # a read token writes nothing, an admin's neither
)  # fmt: skip
def test_only_an_admin_s_write_token_starts_one(
    client: Client, sent: list[Any], person: str, scope: str, status: int
) -> None:
    assert post(client, {"cores": 64}, bearer(person, scope)).status_code == status
    assert post(client, {"cores": 64}, {}).status_code == 401
    done = scenario_made(Cluster.objects.get(name="hpc"))
    reader = client.get(f"{URL}{done.pk}/", headers=bearer(person, TokenScope.READ))
    assert reader.status_code == (200 if person == "alice" else 403)
    assert client.get(f"{URL}{done.pk}/").status_code == 401
    assert Scenario.objects.count() == 1


def test_another_cluster_s_what_if_is_not_found(client: Client) -> None:
    gpu = scenario_made(Cluster.objects.get(name="gpu"))
    answer = client.get(f"{URL}{gpu.pk}/", headers=bearer("alice"))
    assert answer.status_code == 404
    assert answer.json() == {"error": "not found", "detail": "no such what-if on this cluster"}
    there = client.get(f"/api/clusters/gpu/simulations/{gpu.pk}/", headers=bearer("alice"))
    assert there.status_code == 200
    assert client.get(f"{URL}99999999999999999999/", headers=bearer("alice")).status_code == 404
    nowhere = client.post("/api/clusters/nowhere/simulations/", {"cores": 64},
                          content_type="application/json", headers=bearer("alice"))  # fmt: skip
    assert nowhere.status_code == 404
