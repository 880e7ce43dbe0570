"""trees.bulk: many rows in and updated at once, values read back as written."""

import gc
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.models.functions import Coalesce

from accounting.models import Job
from trees.bulk import EpochMicroseconds, collector_paused, rows_insert, rows_read, rows_update
from trees.models import Cluster, Node, ShareChange

pytestmark = pytest.mark.django_db


def test_rows_go_in_and_come_back_unchanged() -> None:
    cluster = Cluster.objects.create(name="c")
    when = datetime(2026, 3, 1, 8, 0, 0, 123456, tzinfo=UTC)
    odd = "tab\there, back\\slash, new\nline, cr\r, ünïcode"
    columns = ["cluster_id", "node_name", "changed_at", "old_shares", "new_shares", "reason"]
    columns += ["old_name", "old_parent", "new_parent"]
    moment = connection.ops.adapt_datetimefield_value(when)  # ready for the database
    rows_insert(
        ShareChange,
        columns,
        [
            (cluster.pk, "a", moment, None, 5, odd, "", "", ""),
            (cluster.pk, "b", moment, 7, None, "r", "", "", ""),
        ],
    )
    stored = ShareChange.objects.order_by("node_name")
    assert [(s.node_name, s.changed_at, s.old_shares, s.new_shares, s.reason) for s in stored] == [
        ("a", when, None, 5, odd),
        ("b", when, 7, None, "r"),
    ]


def test_rows_update_sets_the_columns_of_each_row_by_key() -> None:
    cluster = Cluster.objects.create(name="c")
    root = Node.objects.create(cluster=cluster, name="root", shares=None)
    kids = [
        Node.objects.create(cluster=cluster, parent=root, name=f"k{n}", shares=1) for n in range(3)
    ]
    third = 0.1 + 0.2  # a double whose shortest text has 17 digits
    rows_update(
        Node,
        ["usage", "shares_parent", "shares"],
        [(kids[0].pk, third, False, 4), (kids[2].pk, 1e300, False, 0)],
    )
    values = dict(Node.objects.filter(parent=root).values_list("name", "usage"))
    assert values == {"k0": third, "k1": 1.0, "k2": 1e300}
    assert list(
        Node.objects.filter(parent=root).order_by("name").values_list("shares", flat=True)
    ) == [4, 1, 0]
    rows_update(Node, ["usage"], [])  # nothing to do


def test_collector_paused_turns_the_collector_off_inside_and_on_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a cycle that dies")
    assert gc.isenabled()


def test_collector_paused_leaves_a_collector_paused_before_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_epoch_microseconds_are_exact_and_keep_the_query_parameters_in_place() -> None:
    cluster = Cluster.objects.create(name="c")
    moments = {
        "1": datetime(2026, 3, 1, 8, 0, 0, 123456, tzinfo=UTC),
        "2": datetime(2026, 3, 1, 8, 0, 0, tzinfo=UTC),  # stored without a fraction
        "3": None,
    }
    for job_id, moment in moments.items():
        Job.objects.create(
            cluster=cluster, job_id=job_id, run=0, state="queued", qtime=moment, source_line=1
        )
    # The filter's parameters come before and after the expression: a `%s` left in its SQL
    # would take one of them.
    jobs = Job.objects.filter(cluster=cluster, state="queued").annotate(
        at=EpochMicroseconds(Coalesce("qtime", "etime"))
    )
    read = dict(jobs.filter(run=0).values_list("job_id", "at"))
    assert read == {"1": 1772352000123456, "2": 1772352000000000, "3": None}
    assert dict(rows_read(jobs.values_list("job_id", "at"))) == read


def test_rows_read_gives_what_values_list_gives() -> None:
    cluster = Cluster.objects.create(name="c")
    root = Node.objects.create(cluster=cluster, name="root", shares=None)
    Node.objects.create(cluster=cluster, name="a", parent=root, shares=3, usage=1.5)
    query = (
        Node.objects.filter(cluster=cluster).order_by("name").values_list("name", "shares", "usage")
    )
    assert rows_read(query) == list(query) == [("a", 3, 1.5), ("root", None, 1.0)]
