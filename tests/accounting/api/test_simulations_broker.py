"""A what-if started while the broker is down: the answer says it failed (503), not queued.

Transactional, so that the task is sent when the scenario is committed, as in production,
before the answer is made; the broker is a real Redis address that nothing listens on.
"""

from collections.abc import Iterator

import pytest
from django.test import Client
from django.utils import timezone
from kombu import pools

from accounting.models import Scenario
from fairshare_site.celery import app
from tests.cast import login_made
from trees.models import Cluster, TokenScope
from trees.services.tokens import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)


def forget_connections() -> None:
    pools.reset()
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_down() -> Iterator[None]:
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url="redis://127.0.0.1:9/0", task_always_eager=False)
    forget_connections()
    try:
        yield
    finally:
        app.conf.update(saved)
        forget_connections()


def test_a_what_if_the_broker_cannot_take_answers_failed_not_queued(
    client: Client, broker_down: None
) -> None:
    Cluster.objects.create(name="hpc", scheduler="pbs", cores=64)
    alice = login_made("alice", admin=True)
    token = api_token_create(
        user=alice, name="t", days=1, scope=TokenScope.WRITE, now=timezone.now()
    )[1]

    answer = client.post(
        "/api/clusters/hpc/simulations/",
        {"cores": 64, "settings": []},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )

    scenario = Scenario.objects.get()
    message = "the what-if could not be queued (OperationalError): start it again"
    assert (scenario.state, scenario.message) == ("failed", message)
    assert answer.status_code == 503
    body = answer.json()
    assert (body["id"], body["state"], body["message"]) == (scenario.pk, "failed", message)
    assert body["page"] == f"http://testserver/clusters/hpc/whatif/{scenario.pk}/"
