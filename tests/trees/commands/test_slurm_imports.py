"""The import sequence a Slurm site runs: import_sacctmgr_dump (the tree, shares and association
priorities), import_sshare (then the usage only), import_slurm_config (slurm.conf beside
scontrol's output, in any order)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Run, write_file
from trees.models import Cluster, Node, NodeKind, Queue, SlurmTreeSource

pytestmark = pytest.mark.django_db

DUMP = """\
Cluster - 'oracle':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'bio':Description='bio':Organization='bio':Fairshare=25:Priority=50
Account - 'phys':Description='phys':Organization='phys':Fairshare=40:Priority=10
Parent - 'bio'
User - 'games':DefaultAccount='bio':Fairshare=1
Parent - 'phys'
User - 'mail':DefaultAccount='phys':Fairshare=20:Priority=30
Account - 'theory':Description='theory':Organization='phys':Fairshare=30
Parent - 'theory'
User - 'news':DefaultAccount='theory':Fairshare=1
"""
SSHARE = """\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins
root|||0.000000|40||1.000000||||cpu=0,mem=0
 root|root|1|0.011765|0|0.000000|0.000000|1.000000|inf||cpu=0,mem=0
 bio||25|0.294118|10|0.250000|0.250000||1.176471||cpu=0,mem=0
  bio|games|1|1.000000|10|0.250000|1.000000|0.666667|1.000000||cpu=0,mem=0
 phys||40|0.470588|30|0.750000|0.750000||0.627451||cpu=0,mem=0
  phys|mail|2|0.040000|20|0.500000|0.666667|0.333333|0.060000||cpu=0,mem=0
  theory||30|0.600000|10|0.250000|0.333333||1.800000||cpu=0,mem=0
   theory|news|1|1.000000|10|0.250000|1.000000|1.000000|1.000000||cpu=0,mem=0
 chem||60|0.705882|0|0.000000|0.000000||inf||cpu=0,mem=0
"""


def imported(run: Run, tmp_path: Path, command: str, name: str, text: str) -> str:
    ran = run(command, write_file(tmp_path, name, text), "--cluster", "oracle")
    assert ran.status == 0, ran.err
    return ran.err


def association(cluster: str, account: str, user: str | None = None) -> Node:
    if user is None:
        return Node.objects.get(cluster__name=cluster, name=account, kind__in=[
            NodeKind.ORGANIZATION, NodeKind.PROJECT])  # fmt: skip
    return Node.objects.get(cluster__name=cluster, name=user, parent__name=account)


class TestSshareAfterTheDump:
    @pytest.fixture
    def said(self, run: Run, tmp_path: Path) -> str:
        imported(run, tmp_path, "import_sacctmgr_dump", "dump.cfg", DUMP)
        return imported(run, tmp_path, "import_sshare", "sshare.txt", SSHARE)

    def test_the_usage_is_taken(self, said: str) -> None:
        assert association("oracle", "phys", "mail").usage == 20
        assert association("oracle", "theory", "news").usage == 10
        assert association("oracle", "root").usage == 40

    def test_the_dump_s_tree_shares_and_priorities_stay(self, said: str) -> None:
        mail = association("oracle", "phys", "mail")
        assert (mail.shares, mail.assoc_priority, mail.assoc_priority_effective) == (20, 30, 30)
        news = association("oracle", "theory", "news")
        assert (news.assoc_priority, news.assoc_priority_effective) == (None, 10)  # phys's
        assert not Node.objects.filter(cluster__name="oracle", name="chem").exists()
        cluster = Cluster.objects.get(name="oracle")
        assert cluster.slurm_tree_source == SlurmTreeSource.SACCTMGR_DUMP

    def test_what_differs_from_the_dump_is_said(self, said: str) -> None:
        assert "chem is not in the tree of the sacctmgr dump imported into oracle" in said
        assert "shares differ, phys:mail: the dump's 20, the file's 2: the dump's are kept" in said

    def test_a_new_dump_keeps_the_usage_sshare_gave(
        self, run: Run, tmp_path: Path, said: str
    ) -> None:
        imported(run, tmp_path, "import_sacctmgr_dump", "dump2.cfg", DUMP.replace("=30", "=35"))
        mail = association("oracle", "phys", "mail")
        assert (mail.usage, mail.assoc_priority) == (20, 35)


def test_sshare_alone_makes_the_tree_and_keeps_priorities(run: Run, tmp_path: Path) -> None:
    imported(run, tmp_path, "import_sshare", "sshare.txt", SSHARE)
    cluster = Cluster.objects.get(name="oracle")
    assert cluster.slurm_tree_source == SlurmTreeSource.SSHARE
    assert association("oracle", "chem").shares == 60  # sshare's tree
    assert association("oracle", "phys", "mail").shares == 2
    assert association("oracle", "phys", "mail").assoc_priority is None


SHOW_CONFIG = """\
Configuration data as of 2026-12-02T01:23:45
AccountingStorageEnforce = associations,limits,qos
FairShareDampeningFactor = 1
PriorityFavorSmall      = No
PriorityFlags           = NO_NORMAL_ALL
PriorityMaxAge          = 00:30:00
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightJobSize   = 500
PriorityWeightQOS       = 7
PriorityWeightTRES      = (null)
"""
PARTITIONS = """\
PartitionName=batch
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   PriorityJobFactor=10 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   MaxTime=UNLIMITED
   State=UP TotalCPUs=48 TotalNodes=4 SelectTypeParameters=NONE
   TRES=cpu=48,mem=96G,node=4,billing=48
"""
SLURM_CONF = """\
ClusterName=oracle
SlurmctldHost=localhost
PriorityType=priority/multifactor
PriorityFlags=NO_NORMAL_QOS
PriorityWeightAge=1000
PriorityWeightJobSize=500
PriorityWeightQOS=7
PriorityMaxAge=30
NodeName=n[1-4] CPUs=12 RealMemory=24576
PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=INFINITE PriorityJobFactor=10
"""


class TestConfigWithSlurmConf:
    def files(self, tmp_path: Path, *names: str) -> list[str]:
        texts = {"show": SHOW_CONFIG, "partitions": PARTITIONS, "slurm.conf": SLURM_CONF}
        return [write_file(tmp_path, name, texts[name]) for name in names]

    @pytest.mark.parametrize(
        "order",
        [("show", "partitions", "slurm.conf"), ("slurm.conf", "partitions", "show"),
         ("partitions", "slurm.conf", "show")],
    )  # fmt: skip
    def test_the_flags_are_slurm_conf_s_in_any_order(
        self, run: Run, tmp_path: Path, order: tuple[str, ...]
    ) -> None:
        ran = run("import_slurm_config", *self.files(tmp_path, *order), "--cluster", "oracle")
        assert ran.status == 0, ran.err
        assert "NO_NORMAL_ALL" not in ran.err  # the warning is answered by slurm.conf
        cluster = Cluster.objects.get(name="oracle")
        assert cluster.slurm_priority["flags"] == ["NO_NORMAL_QOS"]
        assert cluster.slurm_priority["weight_qos"] == 7
        assert "flags NO_NORMAL_QOS" in ran.out

    def test_slurm_conf_changes_no_partition(self, run: Run, tmp_path: Path) -> None:
        ran = run("import_slurm_config", *self.files(tmp_path, "show", "partitions"),
                  "--cluster", "oracle")  # fmt: skip
        assert ran.status == 0, ran.err
        before = list(Queue.objects.filter(cluster__name="oracle").values("name", "attributes"))
        ran = run("import_slurm_config", *self.files(tmp_path, "slurm.conf"), "--cluster", "oracle")
        assert ran.status == 0, ran.err
        after = list(Queue.objects.filter(cluster__name="oracle").values("name", "attributes"))
        assert after == before  # TotalCPUs and TotalNodes still scontrol's: the job size stays
        assert after[0]["attributes"]["total_cpus"] == 48
        cluster = Cluster.objects.get(name="oracle")
        assert cluster.slurm_priority["flags"] == ["NO_NORMAL_QOS"]
        assert cluster.slurm_priority["weight_age"] == 1000  # scontrol's, still

    def test_without_slurm_conf_no_normal_all_is_a_warning(self, run: Run, tmp_path: Path) -> None:
        ran = run("import_slurm_config", *self.files(tmp_path, "show"), "--cluster", "oracle")
        assert ran.status == 0, ran.err
        assert "NO_NORMAL_ALL when any one NO_NORMAL_* flag is set" in ran.err

    def test_unknown_keys_and_includes_are_reported(self, run: Run, tmp_path: Path) -> None:
        text = SLURM_CONF + "Frobnicate=yes\nInclude /etc/slurm/more.conf\n"
        ran = run("import_slurm_config", write_file(tmp_path, "slurm.conf", text),
                  "--cluster", "oracle")  # fmt: skip
        assert ran.status == 0, ran.err
        conf = str(tmp_path / "slurm.conf")
        assert f"{conf}:11: Frobnicate: not a slurm.conf key of Slurm 22.05" in ran.err
        assert f"{conf}:12: Include: /etc/slurm/more.conf is not followed" in ran.err

    def test_a_file_of_nothing_is_named_and_the_others_imported(
        self, run: Run, tmp_path: Path
    ) -> None:
        junk = write_file(tmp_path, "junk.txt", "hello\n")
        ran = run("import_slurm_config", junk, *self.files(tmp_path, "show"),
                  "--cluster", "oracle")  # fmt: skip
        assert ran.status == 1
        assert f"{junk}: nothing imported" in ran.err
        assert Cluster.objects.get(name="oracle").slurm_priority["weight_qos"] == 7
