"""Reads of cycles: a node's history for a chart, the events that annotate it, and trends."""

from datetime import UTC, datetime, timedelta

import pytest

from accounting.selectors import (
    CycleLag,
    HistoryEvent,
    clusters_due,
    cycle_lags_get,
    history_events_get,
    node_history_get,
    trends_get,
)
from accounting.services.cycles import cycle_run
from tests.accounting.services.test_cycles import DAY, T0, at, job, site
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Node
from trees.services.pbs import resource_group_import

pytestmark = pytest.mark.django_db


def test_a_node_history_is_each_kept_cycle_in_the_window_oldest_first() -> None:
    cluster = site()
    job(cluster, "1", "ann", T0, T0 + 3600, 4)
    for instant in (T0, T0 + 1800, T0 + 3600, T0 + DAY + 60):
        cycle_run(cluster=cluster, now=at(instant))
    ann = Node.objects.get(name="ann")
    points = node_history_get(node=ann)
    assert [(p.at, p.usage) for p in points] == [
        (at(T0), 1.0),
        (at(T0 + 1800), 7201.0),
        (at(T0 + 3600), 14_401.0),
        (at(T0 + DAY + 60), 7200.5),
    ]
    chem = 0.6000000238418579  # 60 of 100 shares, as a float32
    assert points[1].fairshare_perc == chem
    assert points[1].usage_perc == 7201 / chem
    assert points[1].fairshare_factor == ann.history.get(at=at(T0 + 1800)).fairshare_factor
    window = node_history_get(node=ann, since=at(T0 + 1800), until=at(T0 + 3600))
    assert [p.at for p in window] == [at(T0 + 1800)]


def test_events_are_the_decays_and_the_share_changes() -> None:
    cluster = site()
    cycle_run(cluster=cluster, now=at(T0))
    cycle_run(cluster=cluster, now=at(T0 + 2 * DAY + 5))  # two decays due
    more = "chem 10 root 70\nphys 11 root 40\nann 20 chem 1\nbob 21 phys 1\n"
    groups = parse_resource_group(more.encode()).groups
    resource_group_import(cluster_name="site", groups=groups, pbs_messages=[], source="test")
    events = history_events_get(cluster=cluster)
    decays = [event for event in events if event.kind == "decay"]
    assert decays == [
        HistoryEvent(at(T0 + DAY), "decay", "usage decayed × 0.5"),
        HistoryEvent(at(T0 + 2 * DAY), "decay", "usage decayed × 0.5"),
    ]
    (change,) = [event for event in events if event.kind == "shares"]
    assert change.text == "chem: 60 → 70 shares (imported resource_group test)"
    assert history_events_get(cluster=cluster, since=at(T0 + DAY + 1), until=at(T0 + 3 * DAY)) == [
        decays[1]
    ]


def test_the_clusters_due_are_those_whose_slot_has_not_run() -> None:
    cluster = site()
    Cluster.objects.create(name="empty")  # no tree: no cycles
    now = datetime(2026, 3, 1, 8, 17, tzinfo=UTC)
    assert [(c.name, slot) for c, slot in clusters_due(now)] == [
        ("site", datetime(2026, 3, 1, 8, 10, tzinfo=UTC))
    ]
    cycle_run(cluster=cluster, now=datetime(2026, 3, 1, 8, 10, tzinfo=UTC))
    assert clusters_due(now) == []


def test_a_cycle_lag_is_from_the_last_cycle_to_the_current_slot() -> None:
    cluster = site()  # a cycle every 10 minutes
    Cluster.objects.create(name="empty")  # no tree: no cycles, no lag
    cycle_run(cluster=cluster, now=datetime(2026, 3, 1, 8, 10, tzinfo=UTC))
    now = datetime(2026, 3, 1, 8, 47, tzinfo=UTC)  # in the slot of 8:40
    assert cycle_lags_get(now=now) == [
        CycleLag(
            cluster="site",
            period=timedelta(minutes=10),
            last_cycle=datetime(2026, 3, 1, 8, 10, tzinfo=UTC),
            behind=timedelta(minutes=30),
        )
    ]
    cycle_run(cluster=cluster, now=datetime(2026, 3, 1, 8, 40, tzinfo=UTC))
    assert cycle_lags_get(now=now)[0].behind == timedelta(0)


def test_a_cluster_never_cycled_lags_from_when_its_tree_was_stored() -> None:
    cluster = site()
    stored = datetime(2026, 3, 1, 8, 5, tzinfo=UTC)
    Cluster.objects.filter(pk=cluster.pk).update(metrics_updated_at=stored)
    (lag,) = cycle_lags_get(now=datetime(2026, 3, 1, 8, 32, tzinfo=UTC))
    assert (lag.last_cycle, lag.behind) == (None, timedelta(minutes=25))  # to the 8:30 slot
    (lag,) = cycle_lags_get(now=datetime(2026, 3, 1, 8, 9, tzinfo=UTC))
    assert lag.behind == timedelta(0)  # stored after its slot began: not behind


def test_trends_stack_the_children_and_weigh_their_present_usage() -> None:
    cluster = site()  # chem 60 and phys 40 shares under the root, with unknown at 0
    ann, bob = (Node.objects.get(cluster=cluster, name=name) for name in ("ann", "bob"))
    job(cluster, "1", "ann", T0, T0 + 3600, 4, node=ann)  # 14,400 cpu-seconds, under chem
    job(cluster, "2", "bob", T0, T0 + 1800, 1, node=bob)  # 1,800, under phys
    for instant in (T0, T0 + 1800, T0 + 3600):
        cycle_run(cluster=cluster, now=at(instant))
    root = Node.objects.get(cluster=cluster, parent=None)
    trends = trends_get(node=root, since=None)
    assert [child.name for child in trends.children] == ["chem", "phys", "unknown"]
    assert trends.at == [at(T0), at(T0 + 1800), at(T0 + 3600)]
    chem, phys, unknown = trends.children
    # Each leaf starts at 1; a group is 1 plus its leaves that are not 1 (none at T0).
    assert trends.usage == {
        chem.pk: [1.0, 7202.0, 14_402.0],
        phys.pk: [1.0, 1802.0, 1802.0],
        unknown.pk: [1.0, 1.0, 1.0],
    }
    assert trends.usage_share(chem) == 14_402 / (14_402 + 1802 + 1)
    assert trends.usage_share(unknown) == 1 / 16_205
    assert [(row.key, row.jobs, row.core_hours, row.usage) for row in trends.top] == [
        ("ann", 1, 4.0, 14_400.0),
        ("bob", 1, 0.5, 1800.0),
    ]
    recent = trends_get(node=root, since=at(T0 + 1800), top=1)
    assert recent.at == [at(T0 + 1800), at(T0 + 3600)]
    assert [row.key for row in recent.top] == ["ann"]
    under_phys = trends_get(node=phys, since=None)
    assert [child.name for child in under_phys.children] == ["bob"]
    assert [row.key for row in under_phys.top] == ["bob"]
    (only,) = under_phys.children
    assert (only, only.usage, under_phys.usage_share(only)) == (bob, 1801.0, 1.0)
    alone = trends_get(node=only, since=at(T0 + 3600))
    assert (alone.children, alone.usage) == ([bob], {bob.pk: [1801.0]})
