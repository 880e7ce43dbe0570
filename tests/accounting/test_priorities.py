"""accounting.priorities: the queue as the scheduler orders it, from what is stored (the
queue site's numbers are computed by hand in tests/trees/queue_site.py)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounting.models import Job
from accounting.parsers.records import JobRequest
from accounting.priorities import (
    ZERO_SHARES,
    _ranks,
    eligible_times,
    job_request,
    queue_order_get,
)
from tests.trees.queue_site import frozen_now, queue_site_made, queued_job_made
from trees.engine import job_sort
from trees.engine.times import epoch_seconds
from trees.models import Cluster, Queue

pytestmark = pytest.mark.django_db


def test_seed_003_orders_the_queue_site_as_computed_by_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    order = queue_order_get(cluster=cluster, at=now)
    assert [job.job_id for job in order.ordered] == ["102.srv", "101[1]", "103"]
    assert [job.job_id for job in order.held] == ["104"]
    bio, cond, grav = order.ordered
    # 10*16/6656 + 1000*(1 - 0.333333) + 1 day, stored as a float32 as PBS keeps it
    assert bio.priority == pytest.approx(667.6910, abs=5e-5)
    # 0.0961538 + 583.333 + 2 = 585.4291538, the float32 585.42913818...
    assert cond.priority == 585.4291381835938
    assert grav.priority == pytest.approx(419.8450, abs=5e-5)
    assert bio.terms == pytest.approx(
        {"10*(ncpus/6656)": 0.024038, "1000*(1-fairshare_tree_usage)": 666.667,
         "eligible_time/86400": 1.0},
        abs=1e-3,
    )  # fmt: skip
    assert cond.values["fairshare_tree_usage"] == 0.416667  # %f, as PBS hands it over
    assert [job.position for job in order.ordered] == [1, 2, 3]
    assert [job.queue_position for job in order.ordered] == [1, 2, 1]  # 103 is in `long`


def test_by_queue_puts_the_higher_priority_queue_first(monkeypatch: pytest.MonkeyPatch) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(by_queue=True)
    Queue.objects.create(cluster=cluster, name="long", priority=150)
    Queue.objects.create(cluster=cluster, name="workq", priority=100)
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    assert [job.job_id for job in order.ordered] == ["103", "102.srv", "101[1]"]


def test_without_a_formula_fair_share_orders_by_standing(monkeypatch: pytest.MonkeyPatch) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(job_sort_formula="", fair_share=True)
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    # root's children: bio 1000/0.5 = 2000 before physics 2000/0.5 = 4000; under physics,
    # cond 500/0.25 before grav 1499/0.25
    assert [job.job_id for job in order.ordered] == ["102.srv", "101[1]", "103"]
    assert [job.priority for job in order.ordered] == [None, None, None]


def test_a_formula_pbs_would_refuse_is_reported_and_the_order_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(job_sort_formula="ncpus +* 2")
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    assert order.problem.startswith("job_sort_formula 'ncpus +* 2': col ")
    assert len(order.ordered) == 3


def test_a_formula_past_its_time_budget_is_reported_and_every_job_counts_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(job_sort_formula="round(ncpus, -100000000)")
    monkeypatch.setattr(job_sort, "FORMULA_SECONDS", 0.0)  # spent at the first job
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    refusal = "formula refused: evaluating it over the queue's 3 jobs took more than 0 s"
    assert order.problem == f"job_sort_formula 'round(ncpus, -100000000)': {refusal}"
    assert [(job.priority, job.error, job.terms) for job in order.ordered] == [
        (0.0, refusal, {})
    ] * 3


def test_eligible_time_is_zero_unless_enabled_and_grows_from_a_snapshot() -> None:
    sampled = JobRequest(eligible_time=3600, sampled=1000, accrue_type=2)
    ineligible = JobRequest(eligible_time=3600, sampled=1000, accrue_type=1)
    requests = [sampled, ineligible]
    assert eligible_times([None, None], requests, 1600, enabled=False).tolist() == [0, 0]
    assert eligible_times([None, None], requests, 1600, enabled=True).tolist() == [4200, 3600]


def test_eligible_time_counts_from_etime_without_a_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = frozen_now(monkeypatch)
    etime_us = (epoch_seconds(now) - 5 * 3600) * 1_000_000 + 250_000
    later_us = (epoch_seconds(now) + 60) * 1_000_000  # an etime ahead of now accrues nothing
    times = eligible_times(
        [etime_us, None, later_us], [JobRequest()] * 3, epoch_seconds(now), enabled=True
    )
    assert times.tolist() == [5 * 3600, 0, 0]


def test_a_request_stored_by_an_older_version_reads_back() -> None:
    stored = {"resources": {"ncpus": 4.0}, "held": True, "gone_field": 1}
    request = job_request(json.dumps(stored))
    assert (request.resources, request.held, request.job_priority) == ({"ncpus": 4.0}, True, 0)
    assert job_request(None) == JobRequest()


def test_a_job_of_an_entity_without_shares_is_never_considered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fair_share with fairshare_enforce_no_shares (PBS's default): "Job has zero shares for
    fairshare" (job_info.cpp:516-522); the job keeps its place in no order, and says why."""
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(job_sort_formula="", fair_share=True)
    stranger = queued_job_made(cluster, "105", "cond", "x", 1, 60, now - timedelta(days=9))
    Job.objects.filter(pk=stranger.pk).update(node=None, entity="nobody")
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    assert "105" not in order.ordered.job_ids
    left = order.find("105")
    assert left is not None
    assert (left.position, left.held, left.left_out) == (None, False, ZERO_SHARES)


def test_without_enforce_no_shares_such_a_job_is_ordered_last_by_standing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    Cluster.objects.filter(pk=cluster.pk).update(
        job_sort_formula="", fair_share=True, enforce_no_shares=False
    )
    stranger = queued_job_made(cluster, "105", "cond", "x", 1, 60, now - timedelta(days=9))
    Job.objects.filter(pk=stranger.pk).update(node=None, entity="nobody")
    order = queue_order_get(cluster=Cluster.objects.get(pk=cluster.pk), at=now)
    assert order.ordered[-1].job_id == "105"


@pytest.mark.usefixtures("samples")
def test_seed_003_over_queued_jobs_of_the_white_papers_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # fairshare_tree_usage as pbsfs -g prints it for the white paper's tree (every leaf at
    # 100 cput): L1 0.250936, L7 0.124844, L5 0.333750 — the %f text PBS hands the formula.
    now = frozen_now(monkeypatch)
    Cluster.objects.filter(name="whitepaper").update(
        job_sort_formula="10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)",
        eligible_time_enable=True,
    )
    cluster = Cluster.objects.get(name="whitepaper")
    queued_job_made(cluster, "1", "L1", "l1", 6656, 3600, now)
    queued_job_made(cluster, "2", "L7", "l7", 1, 3600, now - timedelta(days=1))
    queued_job_made(cluster, "3", "L5", "l5", 128, 3600, now - timedelta(days=2))
    order = queue_order_get(cluster=cluster, at=now)
    # L7: 10/6656 + 875.156 + 1; L1: 10 + 749.064 + 0; L5: 1280/6656 + 666.25 + 2 (float32)
    assert [(job.entity, job.priority) for job in order.ordered] == [
        ("L7", 876.1575317382812),
        ("L1", 759.0640258789062),
        ("L5", 668.4423217773438),
    ]
    assert order.ordered[1].values["fairshare_tree_usage"] == 0.250936


def test_the_next_cycle_reorders_from_the_rows_kept_until_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process keeps the queued rows between cycles: a new instant reorders them without
    reading them again; a job that loses its entity (its node removed from the tree, no
    ingestion involved) is read anew."""
    now = frozen_now(monkeypatch)
    cluster = queue_site_made(now)
    queue_order_get(cluster=cluster, at=now)
    later = now + timedelta(minutes=10)
    with CaptureQueriesContext(connection) as queries:
        order = queue_order_get(cluster=cluster, at=later)
    assert not [query for query in queries if '"request"' in query["sql"]]
    # eligible_time grew by the 10 minutes: 600/86400 more for each job
    assert order.ordered[0].terms["eligible_time/86400"] == pytest.approx(1 + 600 / 86400)
    Job.objects.filter(cluster=cluster, job_id="102.srv").update(node=None)
    order = queue_order_get(cluster=cluster, at=later + timedelta(minutes=10))
    stranded = order.find("102.srv")
    assert stranded is not None
    assert stranded.node_id is None
    assert stranded.terms["1000*(1-fairshare_tree_usage)"] == 1000.0


def test_job_ids_rank_as_servers_number_them() -> None:
    """Plain sequence numbers as numbers, array subjobs by index, the same id by row."""
    assert _ranks(["10", "9", "100"], [1, 2, 3]).tolist() == [2, 1, 3]
    assert _ranks(["100[10]", "100[2]", "99.srv"], [1, 2, 3]).tolist() == [3, 2, 1]
    assert _ranks(["09", "9", "7_1"], [1, 2, 3]).tolist() == [2, 3, 1]
    assert _ranks(["5", "5", "4"], [9, 3, 1]).tolist() == [3, 2, 1]
