"""The cluster settings page: admins only, each change audited with its reason, values the
cluster's constraints refuse are refused with why, and nothing else of the cluster moves."""

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from tests.cast import FAST_HASHER
from trees.models import Cluster, Node, SettingChange
from trees.services.clusters import cluster_get_or_create, cluster_settings_set
from trees.services.people import login_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def pbs(settings: Any) -> Cluster:
    settings.PASSWORD_HASHERS = FAST_HASHER
    cluster, _ = cluster_get_or_create(name="hpc")
    return cluster


def test_an_admin_sets_private_usage_and_the_decay_with_a_reason(
    client: Client, pbs: Cluster
) -> None:
    alice = login_set(username="alice", password="pw", admin=True)
    client.force_login(alice)
    stored_at = pbs.metrics_updated_at
    answer = client.post(
        "/clusters/hpc/settings/",
        {
            "private_usage": "on",
            "decay_interval": "43200",
            "decay_factor": "0.5",
            "scheduler_iteration": "600",
            "usage_recording": "exact",
            "reason": "policy of 2026-11",
        },
    )
    assert answer.status_code == 302
    pbs.refresh_from_db()
    assert pbs.private_usage is True
    assert pbs.decay_interval == timedelta(hours=12)
    assert pbs.metrics_updated_at == stored_at  # no store: no setting enters the metrics
    changes = list(SettingChange.objects.order_by("setting").values_list(
        "setting", "old_value", "new_value", "reason", "changed_by__username"
    ))  # fmt: skip
    assert changes == [
        ("decay_interval", "86400 s", "43200 s", "policy of 2026-11", "alice"),
        ("private_usage", "off", "on", "policy of 2026-11", "alice"),
    ]
    page = client.get("/clusters/hpc/settings/")
    assert "policy of 2026-11" in page.content.decode()


def test_members_may_not_open_the_settings(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="bob", password="pw"))
    assert client.get("/clusters/hpc/settings/").status_code == 403
    answer = client.post("/clusters/hpc/settings/", {"private_usage": "on", "reason": "mine"})
    assert answer.status_code == 403
    assert not Cluster.objects.get(name="hpc").private_usage


def test_a_value_out_of_range_is_refused_with_the_field(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    answer = client.post(
        "/clusters/hpc/settings/",
        {"decay_interval": "0", "decay_factor": "1.5", "scheduler_iteration": "600",
         "reason": "try"},
    )  # fmt: skip
    assert answer.status_code == 400
    text = answer.content.decode()
    assert "Ensure this value is greater than or equal to 1." in text
    assert "Ensure this value is less than or equal to 1.0." in text
    assert SettingChange.objects.count() == 0


def test_a_slurm_cluster_offers_slurm_s_settings_only(pbs: Cluster) -> None:
    slurm = Cluster.objects.create(name="fairtree", scheduler="slurm")
    with pytest.raises(Exception, match="decay_interval: not a setting of a slurm cluster"):
        cluster_settings_set(
            cluster=slurm, values={"decay_interval": timedelta(1)}, reason="x", user=None
        )
    changes = cluster_settings_set(
        cluster=slurm,
        values={"priority_decay_half_life": timedelta(days=14)},
        reason="longer memory",
        user=None,
    )
    assert [(c.setting, c.old_value, c.new_value) for c in changes] == [
        ("priority_decay_half_life", "604800 s", "1209600 s")
    ]


def test_a_reason_is_required_and_an_unchanged_value_writes_no_row(pbs: Cluster) -> None:
    with pytest.raises(Exception, match="a reason is required"):
        cluster_settings_set(cluster=pbs, values={"private_usage": True}, reason=" ", user=None)
    assert (
        cluster_settings_set(cluster=pbs, values={"private_usage": False}, reason="same", user=None)
        == []
    )


def test_the_admin_site_cannot_add_a_cluster_past_the_services(client: Client) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    assert client.get("/admin/trees/cluster/add/").status_code == 403
    assert not Node.objects.exists()


def test_each_time_in_seconds_reads_beside_its_span(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    page = client.get("/clusters/hpc/settings/").content.decode()
    # PBS's defaults: decay_time 86400 s, scheduler_iteration 600 s.
    assert 'value="86400"' in page
    assert "PBS decays usage this often (sched_config decay_time). Now 1 day." in page
    assert "and so the dashboard&#x27;s cycles. Now 10 minutes." in page


def test_an_admin_sets_what_pbs_s_cycles_charge_with_a_reason(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    page = client.get("/clusters/hpc/settings/").content.decode()
    assert '<option value="exact" selected>exact: a job&#x27;s usage spread evenly' in page
    assert "pbs charges what PBS records of it, its usage at the last MoM poll" in page
    assert 'href="/clusters/hpc/usage-loss/"' in page
    answer = client.post(
        "/clusters/hpc/settings/",
        {"decay_interval": "86400", "decay_factor": "0.5", "scheduler_iteration": "600",
         "usage_recording": "pbs", "reason": "match PBS's usage database"},
    )  # fmt: skip
    assert answer.status_code == 302
    assert Cluster.objects.get(pk=pbs.pk).usage_recording == "pbs"
    changes = list(SettingChange.objects.values_list(
        "setting", "old_value", "new_value", "reason", "changed_by__username"
    ))  # fmt: skip
    assert changes == [("usage_recording", "exact", "pbs", "match PBS's usage database", "alice")]
    page = client.get("/clusters/hpc/settings/").content.decode()
    assert "exact → pbs" in page


def test_a_usage_recording_it_does_not_know_is_refused(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    answer = client.post(
        "/clusters/hpc/settings/",
        {"decay_interval": "86400", "decay_factor": "0.5", "scheduler_iteration": "600",
         "usage_recording": "<b>sampled</b>", "reason": "try"},
    )  # fmt: skip
    assert answer.status_code == 400
    text = answer.content.decode()
    assert "usage_recording must be exact or pbs." in text
    assert "<b>sampled" not in text
    assert Cluster.objects.get(pk=pbs.pk).usage_recording == "exact"
    assert SettingChange.objects.count() == 0


def test_usage_recording_is_a_pbs_setting_only(client: Client, pbs: Cluster) -> None:
    slurm = Cluster.objects.create(name="fairtree", scheduler="slurm")
    with pytest.raises(Exception, match="usage_recording: not a setting of a slurm cluster"):
        cluster_settings_set(
            cluster=slurm, values={"usage_recording": "pbs"}, reason="x", user=None
        )
    client.force_login(login_set(username="alice", password="pw", admin=True))
    assert "usage_recording" not in client.get("/clusters/fairtree/settings/").content.decode()


def test_an_admin_sets_the_cores_a_what_if_replays_on(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    page = client.get("/clusters/hpc/settings/").content.decode()
    assert '<input type="number" name="cores" min="1" max="2147483647"' in page
    kept = {"decay_interval": "86400", "decay_factor": "0.5", "scheduler_iteration": "600",
            "usage_recording": "exact"}  # fmt: skip
    refused = client.post("/clusters/hpc/settings/", kept | {"cores": "0", "reason": "x"})
    assert refused.status_code == 400
    assert "Ensure this value is greater than or equal to 1." in refused.content.decode()
    answer = client.post("/clusters/hpc/settings/", kept | {"cores": "6656", "reason": "52 x 128"})
    assert answer.status_code == 302
    assert Cluster.objects.get(pk=pbs.pk).cores == 6656
    cleared = client.post("/clusters/hpc/settings/", kept | {"cores": "", "reason": "unknown"})
    assert cleared.status_code == 302
    assert Cluster.objects.get(pk=pbs.pk).cores is None
    changes = list(
        SettingChange.objects.order_by("pk").values_list("setting", "old_value", "new_value")
    )
    assert changes == [("cores", "not set", "6656"), ("cores", "6656", "not set")]


def test_an_admin_sets_the_gpus_and_nodes_a_what_if_counts(client: Client, pbs: Cluster) -> None:
    client.force_login(login_set(username="alice", password="pw", admin=True))
    page = client.get("/clusters/hpc/settings/").content.decode()
    assert '<input type="number" name="gpus" min="1" max="2147483647"' in page
    assert 'for="id_gpus">GPUs:</label>' in page
    assert '<input type="number" name="compute_nodes" min="1" max="2147483647"' in page
    kept = {"decay_interval": "86400", "decay_factor": "0.5", "scheduler_iteration": "600",
            "usage_recording": "exact", "cores": "1280"}  # fmt: skip
    refused = client.post(
        "/clusters/hpc/settings/", kept | {"gpus": "-4", "compute_nodes": "x", "reason": "x"}
    )
    assert refused.status_code == 400
    assert Cluster.objects.get(pk=pbs.pk).cores is None  # nothing saved
    answer = client.post(
        "/clusters/hpc/settings/", kept | {"gpus": "80", "compute_nodes": "20", "reason": "20 x 4"}
    )
    assert answer.status_code == 302
    saved = Cluster.objects.get(pk=pbs.pk)
    assert (saved.cores, saved.gpus, saved.compute_nodes) == (1280, 80, 20)
    changes = set(SettingChange.objects.values_list("setting", "old_value", "new_value"))
    assert changes == {
        ("cores", "not set", "1280"), ("gpus", "not set", "80"),
        ("compute_nodes", "not set", "20"),
    }  # fmt: skip
