"""What /metrics says (accounting.metrics.metrics_text), read back with prometheus_client's
own parser."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from accounting.metrics import metrics_text
from accounting.models import Cycle, IngestRun, IngestSource, TaskFailure
from accounting.services.cycles import cycle_run
from tests.accounting.accelerator_site import site_made
from tests.accounting.services.test_cycles import T0, at
from trees.engine.slurm import AssociationDef
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster, Node
from trees.services.pbs import pbs_usage_set, resource_group_import
from trees.services.slurm import slurm_tree_import

pytestmark = pytest.mark.django_db

# phys/astro/alice at depth 3; eve below `deep`, at depth 4.
TREE = (
    "phys 10 root 60\nchem 11 root 40\nastro 12 phys 3\ndeep 13 astro 1\n"
    "alice 20 astro 1\nbob 21 chem 1\neve 22 deep 1\n"
)
ACCELERATOR_GAUGES = (
    "fairshare_fs_target",
    "fairshare_fs_running",
    "fairshare_fs_running_count",
    "fairshare_fs_excess_running",
    "fairshare_fs_excess_running_local",
    "fairshare_fs_history",
    "fairshare_fs_excess_history",
    "fairshare_fs_rank",
)
NODE_GAUGES = (
    "fairshare_shares",
    "fairshare_perc",
    "fairshare_usage",
    "fairshare_tree_usage",
    "fairshare_factor",
    "fairshare_level_fs",
    *ACCELERATOR_GAUGES,
)
PBS_PATHS = {  # path: (name, kind, depth)
    "/": ("TREEROOT", "organization", "0"),
    "/unknown": ("unknown", "organization", "1"),
    "/phys": ("phys", "organization", "1"),
    "/chem": ("chem", "organization", "1"),
    "/phys/astro": ("astro", "project", "2"),
    "/chem/bob": ("bob", "user", "2"),
    "/phys/astro/deep": ("deep", "project", "3"),
    "/phys/astro/alice": ("alice", "user", "3"),
}


def pbs_site(name: str = "site") -> Cluster:
    groups = parse_resource_group(TREE.encode()).groups
    resource_group_import(cluster_name=name, groups=groups, pbs_messages=[], source="test")
    cluster = Cluster.objects.get(name=name)
    pbs_usage_set(cluster=cluster, usage=[("alice", 1000.0), ("bob", 300.0)], reason="test")
    return cluster


def slurm_site() -> Cluster:
    """Fair Tree: ann and bob used their accounts' usage; cat used nothing (Level FS inf)."""
    slurm_tree_import(
        cluster_name="slurm",
        associations=[
            AssociationDef(account="chem", shares=2, usage=100.0),
            AssociationDef(account="chem", parent="chem", user="ann", shares=1, usage=100.0),
            AssociationDef(account="chem", parent="chem", user="cat", shares=1),
            AssociationDef(account="phys", shares=1, usage=50.0),
            AssociationDef(account="phys", parent="phys", user="bob", shares=1, usage=50.0),
        ],
        source="test",
    )
    return Cluster.objects.get(name="slurm")


def scrape(
    max_depth: int = 3, now: datetime | None = None, max_series: int = 100_000
) -> dict[str, Metric]:
    text = metrics_text(max_depth=max_depth, max_series=max_series, now=now).decode()
    assert "NaN" not in text
    assert "Inf" not in text
    return {family.name: family for family in text_string_to_metric_families(text)}


def by_path(family: Metric, cluster: str) -> dict[str, float]:
    return {s.labels["path"]: s.value for s in family.samples if s.labels["cluster"] == cluster}


def by_cluster(family: Metric) -> dict[str, float]:
    return {sample.labels["cluster"]: sample.value for sample in family.samples}


def test_every_metric_has_a_one_line_help_and_its_type() -> None:
    pbs_site()
    families = scrape()
    assert {name: family.type for name, family in families.items()} == {
        **dict.fromkeys(NODE_GAUGES, "gauge"),
        "fairshare_nodes": "gauge",
        "fairshare_metrics_nodes_left_out": "gauge",
        "fairshare_cycle_duration_seconds": "gauge",
        "fairshare_cycle_lag_seconds": "gauge",
        "fairshare_cycle_last_run_timestamp_seconds": "gauge",
        "fairshare_metrics_updated_timestamp_seconds": "gauge",
        "fairshare_ingest_lines": "counter",
        "fairshare_task_failures": "counter",
    }
    for family in families.values():
        assert family.documentation
        assert "\n" not in family.documentation


def test_each_node_is_a_series_labelled_with_its_path_from_the_root() -> None:
    pbs_site()
    shares = scrape()["fairshare_perc"]
    assert sorted(tuple(sorted(s.labels.items())) for s in shares.samples) == sorted(
        (
            ("cluster", "site"),
            ("depth", depth),
            ("kind", kind),
            ("name", name),
            ("path", path),
        )
        for path, (name, kind, depth) in PBS_PATHS.items()
    )


def test_the_values_are_the_stored_metrics() -> None:
    pbs_site()
    families = scrape()
    assert by_path(families["fairshare_shares"], "site") == {
        "/unknown": 0,
        "/phys": 60,
        "/chem": 40,
        "/phys/astro": 3,
        "/chem/bob": 1,
        "/phys/astro/deep": 1,
        "/phys/astro/alice": 1,
    }  # the root has no shares: no series
    perc = by_path(families["fairshare_perc"], "site")
    assert perc["/"] == 1.0
    assert perc["/phys"] == 0.6000000238418579  # 60 of 100 shares, as PBS's float32
    assert perc["/phys/astro/alice"] == 0.30000001192092896
    usage = by_path(families["fairshare_usage"], "site")
    assert (usage["/phys/astro/alice"], usage["/chem/bob"], usage["/"]) == (1000, 300, 1301)
    names = {path: name for path, (name, _, _) in PBS_PATHS.items()}
    stored = {
        node.name: node
        for node in Node.objects.filter(cluster__name="site", name__in=names.values())
    }
    for gauge, column in (
        ("fairshare_tree_usage", "fairshare_tree_usage"),
        ("fairshare_factor", "fairshare_factor"),
    ):
        values = by_path(families[gauge], "site")
        assert values == {path: getattr(stored[names[path]], column) for path in PBS_PATHS}
    assert families["fairshare_level_fs"].samples == []  # Slurm's only


def test_nodes_deeper_than_the_bound_are_left_out_but_counted() -> None:
    pbs_site()
    deep = scrape(max_depth=3)
    assert "/phys/astro/deep/eve" not in by_path(deep["fairshare_usage"], "site")
    assert by_cluster(deep["fairshare_nodes"]) == {"site": 9}
    shallow = scrape(max_depth=1)
    assert set(by_path(shallow["fairshare_usage"], "site")) == {"/", "/unknown", "/phys", "/chem"}
    assert by_cluster(shallow["fairshare_nodes"]) == {"site": 9}
    everything = scrape(max_depth=4)
    assert by_path(everything["fairshare_usage"], "site")["/phys/astro/deep/eve"] == 1.0
    (eve,) = (s for s in everything["fairshare_usage"].samples if s.labels["name"] == "eve")
    assert eve.labels["depth"] == "4"


def test_past_max_series_a_cluster_lists_the_nodes_nearest_the_root_and_counts_the_rest() -> None:
    """A PBS node is five series, so 29 are five nodes (a node's series all or none): the root
    and its children (4), then the first of the depth 2 nodes in tree order; the others within
    the depth bound (one at depth 2, deep and alice) are counted as left out."""
    pbs_site()
    pbs_site("other")
    capped = scrape(max_depth=3, max_series=29)
    listed = set(by_path(capped["fairshare_usage"], "site"))
    assert listed - {"/phys/astro", "/chem/bob"} == {"/", "/unknown", "/phys", "/chem"}
    assert len(listed) == 5
    assert by_cluster(capped["fairshare_metrics_nodes_left_out"]) == {"site": 3, "other": 3}
    assert by_cluster(capped["fairshare_nodes"]) == {"site": 9, "other": 9}
    whole = scrape(max_depth=3, max_series=40)
    assert set(by_path(whole["fairshare_usage"], "site")) == set(PBS_PATHS)
    assert by_cluster(whole["fairshare_metrics_nodes_left_out"]) == {"site": 0, "other": 0}


def test_a_slurm_tree_leaves_out_infinite_level_fs_and_the_pbs_numbers() -> None:
    slurm_site()
    assert Node.objects.get(cluster__name="slurm", name="cat").level_fs == float("inf")
    families = scrape()
    assert by_path(families["fairshare_level_fs"], "slurm") == {
        "/chem": 1.0,
        "/phys": 1.0,
        "/chem/ann": 0.5,
        "/phys/bob": 1.0,
    }  # cat's inf left out; the root has none
    assert families["fairshare_tree_usage"].samples == []
    # Fair Tree's FairShare is the ranked users' (accounts store 0 for it).
    assert by_path(families["fairshare_factor"], "slurm") == {
        "/chem/ann": pytest.approx(2 / 3),
        "/chem/cat": 1.0,
        "/phys/bob": pytest.approx(2 / 3),
    }
    assert by_path(families["fairshare_usage"], "slurm")["/chem/ann"] == 100.0


def test_an_accelerator_site_s_groups_have_their_fs_gauges_and_their_weight_and_target(
    tmp_path: Path,
) -> None:
    """The seed's /class/vcs picture (tests/accounting/accelerator_site.py); a group's path
    label is its name; its running jobs, stored as its usage, are not a decayed usage."""
    site_made(tmp_path)
    pbs_site()
    families = scrape()
    wanted = {  # FS_TARGET, FS_RUNNING, FS_RUNNING_COUNT, FS_EXCESS_RUNNING,
        # FS_EXCESS_RUNNING_LOCAL, FS_HISTORY, FS_EXCESS_HISTORY, FS_RANK
        "/": (10_000, 10_000, 16, 0, 0, 10_000, 0, -1),
        "/class": (10_000, 10_000, 16, 0, 0, 10_000, 0, -1),
        "/class/hsim": (5000, 7500, 12, 2500, 2500, 7500, 2500, -1),
        "/class/hsim.u2": (5000, 7500, 12, 2500, 0, 7500, 2500, -1),
        "/class/vcs": (5000, 2500, 4, -2500, -2500, 2500, -2500, -1),
        "/class/vcs.u1": (2500, 1875, 3, -625, 2500, 1875, -625, -1),
        "/class/vcs.u5": (2500, 625, 1, -1875, -2500, 625, -1875, 0),
    }
    for column, gauge in enumerate(ACCELERATOR_GAUGES):
        assert by_path(families[gauge], "vov") == {
            path: values[column] for path, values in wanted.items()
        }, gauge
        assert by_path(families[gauge], "site") == {}, gauge  # PBS nodes have none
    perc = by_path(families["fairshare_perc"], "vov")
    assert (perc["/"], perc["/class/hsim"], perc["/class/vcs.u1"]) == (1.0, 0.5, 0.25)
    shares = by_path(families["fairshare_shares"], "vov")
    assert shares == dict.fromkeys(set(wanted) - {"/"}, 100)  # the root has no weight
    for gauge in ("fairshare_usage", "fairshare_tree_usage", "fairshare_factor",
                  "fairshare_level_fs"):  # fmt: skip
        assert by_path(families[gauge], "vov") == {}, gauge
    (u1,) = (s for s in families["fairshare_fs_rank"].samples if s.labels["name"].endswith("u1"))
    assert u1.labels == {"cluster": "vov", "name": "/class/vcs.u1", "path": "/class/vcs.u1",
                         "kind": "user", "depth": "3"}  # fmt: skip


def test_an_accelerator_site_s_deeper_groups_are_left_out_but_counted(tmp_path: Path) -> None:
    site_made(tmp_path)
    families = scrape(max_depth=2)
    assert set(by_path(families["fairshare_fs_target"], "vov")) == {
        "/", "/class", "/class/hsim", "/class/vcs",
    }  # fmt: skip
    assert by_cluster(families["fairshare_nodes"]) == {"vov": 7}


def test_a_cluster_with_cycles_has_their_duration_lag_and_last_run() -> None:
    cluster = pbs_site()
    pbs_site("quiet")  # no cycles: no cycle series
    cycle_run(cluster=cluster, now=at(T0))
    cycle = Cycle.objects.get(cluster=cluster)
    # The slot due at T0 + 25 min is T0 + 20 min (10-minute iterations): two missed.
    families = scrape(now=at(T0 + 25 * 60))
    assert by_cluster(families["fairshare_cycle_lag_seconds"]) == {"site": 1200.0}
    assert by_cluster(families["fairshare_cycle_duration_seconds"]) == {"site": cycle.duration}
    assert by_cluster(families["fairshare_cycle_last_run_timestamp_seconds"]) == {
        "site": cycle.started_at.timestamp()
    }
    cluster.refresh_from_db()
    assert cluster.metrics_updated_at is not None
    assert by_cluster(families["fairshare_metrics_updated_timestamp_seconds"])["site"] == (
        cluster.metrics_updated_at.timestamp()
    )
    assert set(by_cluster(families["fairshare_metrics_updated_timestamp_seconds"])) == {
        "site",
        "quiet",
    }
    on_time = scrape(now=at(T0 + 9 * 60))
    assert by_cluster(on_time["fairshare_cycle_lag_seconds"]) == {"site": 0.0}


def test_the_ingest_counters_sum_the_runs_of_each_cluster() -> None:
    site, quiet = pbs_site(), pbs_site("quiet")
    started = datetime(2026, 3, 1, tzinfo=UTC)
    for read, ingested, duplicates, rejected in ((10, 7, 2, 1), (5, 5, 0, 0)):
        IngestRun.objects.create(
            cluster=site,
            source=IngestSource.PBS_ACCOUNTING,
            started_at=started,
            read=read,
            ingested=ingested,
            duplicates=duplicates,
            rejected=rejected,
        )
    lines = scrape()["fairshare_ingest_lines"]
    counted = {(s.labels["cluster"], s.labels["outcome"]): s.value for s in lines.samples}
    assert {s.name for s in lines.samples} == {"fairshare_ingest_lines_total"}
    assert counted == {
        ("site", "read"): 15,
        ("site", "ingested"): 12,
        ("site", "duplicates"): 2,
        ("site", "rejected"): 1,
        **{(quiet.name, outcome): 0 for outcome in ("read", "ingested", "duplicates", "rejected")},
    }


def test_task_failures_are_counted_by_task() -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    for task in ("accounting.tasks.run_cycle", "accounting.tasks.run_cycle", "trees.x"):
        TaskFailure.objects.create(task=task, failed_at=now, error="ValueError: boom")
    failures = scrape()["fairshare_task_failures"]
    assert {s.labels["task"]: s.value for s in failures.samples} == {
        "accounting.tasks.run_cycle": 2,
        "trees.x": 1,
    }


def test_no_clusters_gives_empty_families() -> None:
    families = scrape()
    assert families["fairshare_nodes"].samples == []
    assert families["fairshare_ingest_lines"].samples == []


def test_a_scrape_reads_each_tree_in_one_query(
    django_assert_max_num_queries: Any,
) -> None:
    pbs_site()
    slurm_site()
    cycle_run(cluster=Cluster.objects.get(name="site"), now=at(T0))
    # The clusters with their latest cycle, a tree each, the ingest sums, the task failures.
    with django_assert_max_num_queries(5):
        metrics_text(max_depth=3, max_series=1000, now=at(T0) + timedelta(minutes=1))
