from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

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


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("1000000000:00:00", "3600000000000 s is more than ten years (87840:00:00)"),
        ("99999999999999999999:00:00", "is more than ten years (87840:00:00)"),
        ("9" * 400, "give HH:MM:SS, MM:SS or seconds, more than 0"),  # past a double
    ],
)
def test_a_decay_time_past_the_calendar_is_refused_with_line_and_key(
    run: Run, tmp_path: Path, value: str, reason: str
) -> None:
    path = tmp_path / "sched_config"
    path.write_text(f"# site\nfairshare_decay_time: {value}\n")
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert ran.status == 0
    assert f"{path}:2: fairshare_decay_time: Invalid time {value}" in ran.err
    assert reason in ran.err
    assert Cluster.objects.get(name="site").decay_interval == timedelta(hours=24)


def test_the_longest_decay_time_still_projects_recovery(
    run: Run, tmp_path: Path, client: Client
) -> None:
    """Ten years a decay, 400 decays ahead: the projection stops at the calendar's end."""
    tree = tmp_path / "resource_group"
    tree.write_text("grp 10 root 10\nalice 11 grp 10\nbob 12 root 90\n")
    assert run("import_resource_group", str(tree), "--cluster", "site").status == 0
    config = tmp_path / "sched_config"
    config.write_text("fairshare_decay_time: 87840:00:00\nfairshare_decay_factor: 0.99\n")
    assert run("import_sched_config", str(config), "--cluster", "site").status == 0
    assert run("pbsfs", "--cluster", "site", "-s", "alice", "1e12").status == 0
    client.force_login(User.objects.create_user("admin", is_staff=True))
    alice = Node.objects.get(cluster__name="site", name="alice")
    answer = client.get(f"/clusters/site/nodes/{alice.pk}/recovery.json")
    assert answer.status_code == 200
    projection = answer.json()
    assert projection["at"][-1] < "9999-12-31T23:59:59"
    assert len(projection["at"]) == len(projection["fairshare_factor"]) > 100


def test_a_file_of_another_kind_is_refused_and_makes_no_cluster(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sched_config"
    path.write_bytes(bytes(range(256)) * 100)
    ran = run("import_sched_config", str(path), "--cluster", "typo")
    assert ran.status == 1
    assert "nothing imported: line 1 holds control bytes: not a sched_config" in ran.err
    assert not Cluster.objects.filter(name="typo").exists()


def test_it_takes_the_scheduling_policy_and_prints_it(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sched_config"
    path.write_text(
        "# site\n"
        "strict_ordering: true ALL\n"
        "backfill: false non_prime\n"
        "backfill_depth: 4\n" + "\n" * 7 + "strict_ordering: false prime\n"
    )
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert (ran.status, ran.err) == (0, "")
    assert ran.out == (
        f"{path}: cluster site: fairshare_usage_res cput, fairshare_entity euser"
        ", decay_time 86400 s, decay_factor 0.5, unknown_shares 0, fair_share False"
        ", by_queue False, strict_ordering True, backfill False, backfill_depth 4"
        ", job_sort_key none (3 keys read, 0 refused, 1 not applied)\n"
        f"{path}: strict_ordering prime-only line 12 not applied\n"
    )
    cluster = Cluster.objects.get(name="site")
    assert (cluster.strict_ordering, cluster.backfill, cluster.backfill_depth) == (True, False, 4)


def test_it_prints_pbs_defaults_for_the_policy_left_unset(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sched_config"
    path.write_text("unknown_shares: 10\n")
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert ran.status == 0
    assert ", strict_ordering False, backfill True, backfill_depth 1," in ran.out
    assert ran.out.endswith("(1 keys read, 0 refused, 0 not applied)\n")


def test_an_unknown_prime_option_or_bad_depth_is_named_and_not_applied(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "sched_config"
    path.write_text("fair_share: true Prime\nbackfill_depth: -1\nbackfill_depth: 1.5 ALL\n")
    ran = run("import_sched_config", str(path), "--cluster", "site")
    assert ran.status == 0
    assert ran.err == (
        f"{path}:1: fair_share: Invalid prime keyword 'Prime': give one of all, ALL, prime, PRIME"
        ", non_prime, NON_PRIME, none, NONE\n"
        f"{path}:2: backfill_depth: backfill_depth '-1' is not a whole number of jobs"
        " (0 to 2147483647)\n"
        f"{path}:3: backfill_depth: backfill_depth '1.5' is not a whole number of jobs"
        " (0 to 2147483647)\n"
    )
    cluster = Cluster.objects.get(name="site")
    assert (cluster.fair_share, cluster.backfill_depth) == (False, 1)
