from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import Run
from trees.models import Cluster, Node

pytestmark = pytest.mark.django_db


def test_it_takes_the_fairshare_keys_and_pbs_defaults(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sched_config"
    path.write_text(
        'fairshare_usage_res: "ncpus*pow(walltime,0.85)"\n'
        "fairshare_decay_time: 168:00:00\n"
        "unknown_shares: 10\n"
        "round_robin: False all\n"
    )
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert ran.status == 0, ran.err
    cluster = Cluster.objects.get(name="site")
    assert cluster.fairshare_usage_res == "ncpus*pow(walltime,0.85)"
    assert cluster.decay_interval == timedelta(hours=168)
    assert (cluster.decay_factor, cluster.fairshare_entity, cluster.unknown_shares) == (
        0.5,
        "euser",
        10,
    )
    assert Node.objects.get(cluster=cluster, name="unknown").shares == 10
    assert run("pbsfs", "--cluster", "site").out.startswith(
        "Fairshare usage units are in: ncpus*pow(walltime,0.85)\n"
    )


def test_a_bad_value_is_named_and_pbs_default_used(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sched_config"
    path.write_text("# site\nfairshare_decay_factor: 1.5\n")
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert ran.status == 0
    assert ran.err == (
        f"{path}:2: fairshare_decay_factor: fairshare_decay_factor: Invalid value: 1.5.  "
        "Valid values are between 0 and 1.\n"
    )
    assert Cluster.objects.get(name="site").decay_factor == 0.5


def test_the_leaves_are_projects_where_jobs_are_charged_to_accounts(
    run: Run, tmp_path: Path
) -> None:
    tree = tmp_path / "resource_group"
    tree.write_text("physics 10 root 60\nlattice-qcd 11 physics 40\nastro 12 physics 20\n")
    assert run("import_resource_group", str(tree), "--cluster", "site").status == 0
    kinds = dict(Node.objects.filter(cluster__name="site").values_list("name", "kind"))
    assert (kinds["physics"], kinds["lattice-qcd"]) == ("organization", "user")
    config = tmp_path / "sched_config"
    config.write_text("fairshare_entity: Account_Name\n")
    assert run("import_sched_config", str(config), "--cluster", "site").status == 0
    kinds = dict(Node.objects.filter(cluster__name="site").values_list("name", "kind"))
    assert (kinds["physics"], kinds["lattice-qcd"], kinds["astro"]) == (
        "organization",
        "project",
        "project",
    )
