"""accounting_push: a pushed body ingested once, and a retried key answered without reading."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accounting.models import IngestRun, PushedAccounting
from accounting.services.pushes import KeyReused, PushRefused, accounting_push
from tests.accounting.api.test_views import MORNING
from tests.cast import login_made
from trees.models import Cluster

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]


def never_read() -> Iterator[bytes]:
    raise AssertionError("a replayed push reads no body")
    yield b""  # a generator: the assertion fires only when it is read


def test_a_key_used_before_answers_its_first_push_without_reading_the_body() -> None:
    alice = login_made("alice", admin=True)
    cluster = Cluster.objects.get(name="whitepaper")
    first = accounting_push(
        cluster=cluster, user=alice, key="k1", chunks=[MORNING[:200], MORNING[200:]]
    )
    assert (first.replayed, first.answer["read"], first.answer["ingested"]) == (False, 4, 1)
    again = accounting_push(cluster=cluster, user=alice, key="k1", chunks=never_read())
    assert (again.replayed, again.answer) == (True, first.answer)
    assert IngestRun.objects.filter(cluster=cluster).count() == 1
    assert PushedAccounting.objects.get(key="k1").answer == first.answer


def test_the_same_key_for_another_cluster_is_refused() -> None:
    alice = login_made("alice", admin=True)
    accounting_push(
        cluster=Cluster.objects.get(name="whitepaper"), user=alice, key="k2", chunks=[MORNING]
    )
    with pytest.raises(KeyReused, match="used for cluster whitepaper"):
        accounting_push(
            cluster=Cluster.objects.get(name="forum"), user=alice, key="k2", chunks=never_read()
        )


def test_an_empty_body_or_one_over_the_limit_is_refused(settings: object) -> None:
    alice = login_made("alice", admin=True)
    cluster = Cluster.objects.get(name="whitepaper")
    with pytest.raises(PushRefused, match="empty") as empty:
        accounting_push(cluster=cluster, user=alice, key=None, chunks=[])
    assert not empty.value.too_large
    settings.UPLOAD_MAX_FILE_BYTES = 100  # type: ignore[attr-defined]
    with pytest.raises(PushRefused, match="over 100 bytes") as large:
        accounting_push(cluster=cluster, user=alice, key=None, chunks=[MORNING[:60], MORNING[60:]])
    assert large.value.too_large
    assert not IngestRun.objects.filter(cluster=cluster).exists()
