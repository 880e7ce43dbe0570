"""import_slurm_config, import_squeue and sprio: the multifactor documentation's worked
weights (job 1234: priority 5879) from the site's own files to sprio's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Run, write_file
from trees.models import Cluster, Node, Qos, Queue, SettingChange

pytestmark = pytest.mark.django_db

SSHARE = """Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|0||1.000000
 root|root|1|0.500000|0|0.000000|1.000000
 physics||1|0.500000|0|0.000000|
  physics|alice|1|1.000000|0|0.000000|0.375000
"""
CONFIG = f"""Configuration data as of 2026-11-26T12:00:00
AccountingStorageEnforce = associations,limits
ClusterName             = fsd
FairShareDampeningFactor = 1
PriorityParameters      = (null)
PrioritySiteFactorParameters = (null)
PrioritySiteFactorPlugin = (null)
PriorityDecayHalfLife   = 7-00:00:00
PriorityCalcPeriod      = 00:05:00
PriorityFavorSmall      = No
PriorityFlags           = {""}
PriorityMaxAge          = 7-00:00:00
PriorityUsageResetPeriod = NONE
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightAssoc     = 0
PriorityWeightFairShare = 10000
PriorityWeightJobSize   = 500
PriorityWeightPartition = 2000
PriorityWeightQOS       = 3000
PriorityWeightTRES      = CPU=1000
"""
PARTITIONS = """PartitionName=normal
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   Nodes=n[01-08]
   PriorityJobFactor=5 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   State=UP TotalCPUs=256 TotalNodes=8 SelectTypeParameters=NONE
   MaxTime=2-00:00:00
   TRES=cpu=256,mem=1000G,node=8,billing=256

PartitionName=all
   Nodes=n[01-16]
   PriorityJobFactor=10 PriorityTier=1
   State=UP TotalCPUs=512 TotalNodes=16
   MaxTime=UNLIMITED
   TRES=cpu=512,mem=2000G,node=16,billing=512
"""
QOS = "Name|Priority|GraceTime\nnormal|20|00:00:00\nhigh|100|00:00:00\n"
NOW = 1795694400  # 2026-11-26T12:00:00Z
SQUEUE_JOB: dict[str, object] = {
    "job_id": 1234,
    "job_state": ["PENDING"],
    "user_name": "alice",
    "group_name": "alice",
    "account": "physics",
    "partition": "normal",
    "qos": "normal",
    "name": "relax",
    "cluster": "fsd",
    "priority": {"set": True, "infinite": False, "number": 5879},
    "submit_time": {"set": True, "infinite": False, "number": NOW - 172800},
    "eligible_time": {"set": True, "infinite": False, "number": NOW - 172800},
    "accrue_time": {"set": True, "infinite": False, "number": NOW - 172800},
    "time_limit": {"set": True, "infinite": False, "number": 600},
    "nice": 100,
    "cpus": {"set": True, "infinite": False, "number": 64},
    "node_count": {"set": True, "infinite": False, "number": 4},
    "tres_req_str": "cpu=64,mem=64G,node=4,billing=64",
    "state_reason": "Priority",
}
SQUEUE = {
    "meta": {"plugin": {"type": "openapi/v0.0.40"}, "Slurm": {"release": "23.11.4"}},
    "errors": [],
    "warnings": [],
    "last_update": {"set": True, "infinite": False, "number": NOW},
    "jobs": [SQUEUE_JOB],
}


@pytest.fixture
def slurm(run: Run, tmp_path: Path) -> str:
    ran = run("import_sshare", write_file(tmp_path, "sshare", SSHARE), "--cluster", "fsd")
    assert ran.status == 0, ran.err
    files = [write_file(tmp_path, name, text) for name, text in
             (("config", CONFIG), ("partitions", PARTITIONS + "\n" + QOS))]  # fmt: skip
    ran = run("import_slurm_config", *files, "--cluster", "fsd")
    assert ran.status == 0, ran.err
    # The Fair Tree factor §E gives the job's association.
    Node.objects.filter(cluster__name="fsd", name="alice").update(fairshare_factor=0.375)
    squeue = write_file(tmp_path, "squeue.json", json.dumps(SQUEUE, indent=2))
    ran = run("import_squeue", squeue, "--cluster", "fsd")
    assert ran.status == 0, ran.err
    return "fsd"


def test_the_config_partitions_and_qos_are_stored_and_audited(slurm: str) -> None:
    cluster = Cluster.objects.get(name=slurm)
    assert cluster.slurm_priority["weight_fairshare"] == 10000
    assert cluster.slurm_priority["weight_tres"] == "CPU=1000"
    assert cluster.charge_job_end is True  # AccountingStorageEnforce has limits
    assert list(Queue.objects.filter(cluster=cluster).values_list("name", "priority")) == [
        ("all", 10),
        ("normal", 5),
    ]
    assert dict(Qos.objects.filter(cluster=cluster).values_list("name", "priority")) == {
        "normal": 20,
        "high": 100,
    }
    assert SettingChange.objects.filter(cluster=cluster, setting="slurm_priority").count() == 1


def test_sprio_prints_the_worked_example_byte_for_byte(run: Run, slurm: str) -> None:
    now = "2026-11-26T12:00:00Z"
    ran = run("sprio", "--cluster", slurm, "--now", now)
    assert ran.status == 0, ran.err
    assert ran.out == (
        "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE"
        "  PARTITION        QOS                 TRES\n"
        "           1234 normal          5879          0        286       3750         94"
        "       1000        600              cpu=250\n"
    )
    weights = run("sprio", "--cluster", slurm, "-w", "--now", now)
    assert weights.out.splitlines()[1] == (
        "        Weights                               1       1000      10000        500"
        "       2000       3000             CPU=1000"
    )
    normalized = run("sprio", "--cluster", slurm, "-n", "--now", now)
    assert normalized.out.splitlines()[1] == (
        "           1234 normal    0.00000136 0.2857143  0.3750000  0.1875000  0.5000000"
        "  0.2000000  cpu=0.25            "
    )
    assert run("sprio", "--cluster", slurm, "-j", "99", "--now", now).out == (
        "Unable to find jobs matching user/id(s) specified\n"
    )


def test_job_priorities_gives_the_same_priority_and_its_terms(run: Run, slurm: str) -> None:
    ran = run("job_priorities", "--cluster", slurm, "--now", "2026-11-26T12:00:00Z",
              "--format", "json")  # fmt: skip
    (job,) = json.loads(ran.out)
    assert (job["job_id"], job["priority"], job["position"]) == ("1234", 5879.0, 1)
    assert job["terms"] == pytest.approx(
        {"site": 0.0, "age": 285.7142857, "assoc": 0.0, "fairshare": 3750.0, "jobsize": 93.75,
         "partition": 1000.0, "qos": 600.0, "tres cpu": 250.0, "nice": -100.0}
    )  # fmt: skip


def more_jobs(*changes: dict[str, object]) -> dict[str, object]:
    """SQUEUE with copies of job 1234, each changed; their priority unreported."""
    unset = {"set": False, "infinite": False, "number": 0}
    first: dict[str, object] = SQUEUE_JOB
    jobs = [{**first, "priority": unset, **change} for change in changes]
    return {**SQUEUE, "jobs": [first, *jobs]}


def sprio_of(run: Run, tmp_path: Path, squeue: dict[str, object], *flags: str) -> list[str]:
    path = write_file(tmp_path, "more.json", json.dumps(squeue))
    ran = run("import_squeue", path, "--cluster", "fsd")
    assert ran.status == 0, ran.err
    ran = run("sprio", "--cluster", "fsd", "--now", "2026-11-26T12:00:00Z", *flags)
    assert ran.status == 0, ran.err
    return [line.split()[0] + " " + line.split()[1] for line in ran.out.splitlines()[1:]]


def test_a_job_s_partitions_are_listed_highest_tier_first(
    run: Run, slurm: str, tmp_path: Path
) -> None:
    ran = run("import_slurm_config", write_file(tmp_path, "tier", PARTITIONS.replace(
        "PriorityJobFactor=10 PriorityTier=1", "PriorityJobFactor=10 PriorityTier=3")),
        "--cluster", slurm)  # fmt: skip
    assert ran.status == 0, ran.err
    squeue = more_jobs({"job_id": 1235, "partition": "normal,all"})
    assert sprio_of(run, tmp_path, squeue) == ["1234 normal", "1235 all", "1235 normal"]


def test_jobs_whose_begin_time_has_not_come_are_left_out(
    run: Run, slurm: str, tmp_path: Path
) -> None:
    squeue = more_jobs(
        {"job_id": 1236, "eligible_time": {"set": True, "infinite": False, "number": NOW + 3600}},
        {"job_id": 1237, "eligible_time": {"set": True, "infinite": False, "number": 0}},
    )
    assert sprio_of(run, tmp_path, squeue) == ["1234 normal"]
    ran = run("job_priorities", "--cluster", slurm, "--now", "2026-11-26T12:00:00Z",
              "--format", "json")  # fmt: skip
    places = {job["job_id"]: job["position"] for job in json.loads(ran.out)}
    assert places == {"1234": 1, "1236": None, "1237": None}  # not considered yet
    config = CONFIG.replace("PriorityFlags           = ", "PriorityFlags           = ACCRUE_ALWAYS")
    ran = run("import_slurm_config", write_file(tmp_path, "accrue", config), "--cluster", slurm)
    assert ran.status == 0, ran.err
    # ACCRUE_ALWAYS: the submit time decides (priority_p_get_priority_factors_list)
    assert sprio_of(run, tmp_path, squeue) == ["1234 normal", "1236 normal", "1237 normal"]


def test_a_priority_no_factor_gives_is_shown_as_set_directly(
    run: Run, slurm: str, tmp_path: Path
) -> None:
    squeue = more_jobs({"job_id": 1238, "priority": {"set": True, "infinite": False,
                                                     "number": 7777}})  # fmt: skip
    path = write_file(tmp_path, "direct.json", json.dumps(squeue))
    assert run("import_squeue", path, "--cluster", slurm).status == 0
    ran = run("sprio", "--cluster", slurm, "--now", "2026-11-26T12:00:00Z", "-j", "1238")
    assert ran.out.splitlines()[1] == (
        "           1238 normal          7777          0          0          0          0"
        "          0          0                     "
    )
