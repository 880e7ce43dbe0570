"""import_sshare and sshare: a real cluster's sshare output in, the same bytes out.

The captures under ../shared/examples/slurm are `sshare -a -l -P`, `sshare -a -l` and
`sshare -a -P` of a real Slurm 22.05.8 cluster (Fair Tree).
"""

from pathlib import Path

import pytest
from django.forms.models import model_to_dict

from tests.conftest import SHARED, Run, write_file
from tests.trees.formats.test_sshare import SMALL_LONG_P, ZEROS
from trees.engine.slurm import Algorithm
from trees.models import Cluster, Node, NodeKind, Scheduler, ShareChange

pytestmark = pytest.mark.django_db

CAPTURES = SHARED / "examples" / "slurm"
LONG_P = "ft_basic_sshare_l_P.txt"
LONG = "ft_basic_sshare_l.txt"
SHORT_P = "ft_basic_sshare_P.txt"
HEADER_P = "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare"


def capture_or_skip(name: str) -> Path:
    path = CAPTURES / name
    if not path.is_file():
        pytest.skip(f"the shared Slurm captures are not at {CAPTURES}")
    return path


def write(tmp_path: Path, text: str | bytes, name: str = "sshare.txt") -> str:
    return write_file(tmp_path, name, text)


def imported(run: Run, path: str | Path, cluster: str = "c") -> str:
    ran = run("import_sshare", "--cluster", cluster, str(path))
    assert ran.status == 0, ran.err
    return ran.out


def nodes(cluster: str = "c") -> dict[tuple[str, str | None], Node]:
    """The cluster's nodes by (account, user), as the file names them."""
    out: dict[tuple[str, str | None], Node] = {}
    for node in Node.objects.filter(cluster__name=cluster).select_related("parent"):
        if node.kind == NodeKind.USER:
            assert node.parent is not None
            out[(node.parent.name, node.name)] = node
        else:
            out[(node.name, None)] = node
    return out


class TestPrintsTheCaptures:
    @pytest.mark.parametrize(
        ("flags", "capture"),
        [(["-l", "-P"], LONG_P), (["-l"], LONG), (["-P"], SHORT_P), (["-l", "-p"], LONG_P)],
    )
    def test_import_then_print(self, run: Run, flags: list[str], capture: str) -> None:
        out = imported(run, capture_or_skip(LONG_P))
        assert out == (
            f"{capture_or_skip(LONG_P)}: imported 17 associations into Slurm cluster c (new);"
            " rejected 0 lines; 18 nodes added, 0 updated, 0 removed\n"
        )
        ran = run("sshare", "--cluster", "c", "-a", *flags)
        assert (ran.status, ran.err) == (0, "")
        want = capture_or_skip(capture).read_text()
        if "-p" in flags:  # the same with a `|` after every field
            want = "".join(line + "|\n" for line in want.splitlines())
        assert ran.out == want

    @pytest.mark.parametrize("source", [LONG, SHORT_P])
    @pytest.mark.parametrize("capture", [LONG_P, LONG, SHORT_P])
    def test_every_capture_imports_to_every_capture(
        self, run: Run, source: str, capture: str
    ) -> None:
        imported(run, capture_or_skip(source))
        flags = {LONG_P: ["-l", "-P"], LONG: ["-l"], SHORT_P: ["-P"]}[capture]
        ran = run("sshare", "--cluster", "c", "-a", *flags)
        assert ran.out == capture_or_skip(capture).read_text()

    def test_the_aligned_capture_gives_the_parsable_one_exactly(self, run: Run) -> None:
        # Its TRESRunMins cells are the cut all-zero text: the full list is restored.
        imported(run, capture_or_skip(LONG))
        assert {node.tres_run_mins for node in Node.objects.all()} == {""}
        ran = run("sshare", "--cluster", "c", "-a", "-l", "-P")
        assert ran.out.encode() == capture_or_skip(LONG_P).read_bytes()

    def test_what_is_stored(self, run: Run) -> None:
        imported(run, capture_or_skip(LONG_P))
        cluster = Cluster.objects.get(name="c")
        assert (cluster.scheduler, cluster.fairshare_algorithm) == (
            Scheduler.SLURM,
            Algorithm.FAIR_TREE.value,
        )
        stored = nodes()
        assert len(stored) == 18  # the file's 18 rows, the root's among them
        erin = stored[("exp", "erin")]
        # slurmctld holds inf for a `parent` user's Level FS; sshare prints it blank.
        assert (erin.shares, erin.shares_parent, erin.usage, erin.level_fs) == (
            None,
            True,
            188.0,
            float("inf"),
        )
        assert (stored[("phys", "alice")].shares, stored[("chem", "alice")].shares) == (10, 5)
        root = stored[("root", None)]
        assert (root.parent, root.usage, root.norm_usage) == (None, 1786.0, None)
        assert stored[("exp", None)].parent == stored[("phys", None)]
        dave = stored[("theory", "dave")]
        assert (dave.fairshare_rank, dave.fairshare_rank_of) == (5, 12)
        assert dave.fairshare_factor == pytest.approx(0.416667, abs=5e-7)
        assert ShareChange.objects.count() == 0  # a first import is not a change

    def test_filters(self, run: Run) -> None:
        imported(run, capture_or_skip(LONG_P))
        ran = run("sshare", "--cluster", "c", "-P", "-n", "-A", "exp", "-a")
        assert ran.out == (
            "exp||10|0.142857|282|0.230769|\n"
            " exp|erin|parent|0.142857|188|0.666667|0.250000\n"
            " exp|frank|5|1.000000|94|0.333333|0.166667\n"
        )
        ran = run("sshare", "--cluster", "c", "-P", "-n", "-u", "GINA,hank", "-A", "chem")
        assert ran.out == (
            "chem||60|0.476190|564|0.315789|\n"
            " chem|gina|0|0.000000|282|0.500000|0.583333\n"
            " chem|hank|10|0.666667|94|0.166667|0.750000\n"
        )

    def test_without_all_users_only_the_callers_rows(
        self, run: Run, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("getpass.getuser", lambda: "alice")
        imported(run, capture_or_skip(LONG_P))
        ran = run("sshare", "--cluster", "c", "-l", "-P")
        capture = capture_or_skip(LONG_P).read_text().splitlines()
        want = [line for line in capture if line.split("|")[1] in ("User", "", "alice")]
        assert ran.out.splitlines() == want
        assert [line.split("|")[1] for line in want].count("alice") == 2
        assert len(want) == 9


class TestReimport:
    def test_the_same_file_changes_nothing(self, run: Run) -> None:
        path = capture_or_skip(LONG_P)
        imported(run, path)
        before = {key: (n.pk, n.shares, n.usage, n.level_fs) for key, n in nodes().items()}
        out = imported(run, path)
        assert out == (
            f"{path}: imported 17 associations into Slurm cluster c; rejected 0 lines;"
            " 0 nodes added, 0 updated, 0 removed\n"
        )
        after = {key: (n.pk, n.shares, n.usage, n.level_fs) for key, n in nodes().items()}
        assert after == before
        assert ShareChange.objects.count() == 0

    def test_the_aligned_capture_after_the_parsable_one_changes_nothing(self, run: Run) -> None:
        imported(run, capture_or_skip(LONG_P))
        out = imported(run, capture_or_skip(LONG))
        assert out.endswith("; 0 nodes added, 0 updated, 0 removed\n")

    def test_a_changed_file(self, run: Run, tmp_path: Path) -> None:
        text = capture_or_skip(LONG_P).read_text()
        imported(run, capture_or_skip(LONG_P))
        ids = {key: node.pk for key, node in nodes().items()}
        before = {key: model_to_dict(n) for key, n in nodes().items()}
        bob = "  phys|bob|20|0.285714|188|"
        hank = next(line for line in text.splitlines() if line.startswith("  chem|hank|"))
        assert bob in text
        changed = text.replace(bob, "  phys|bob|30|0.285714|188|").replace(hank + "\n", "")
        path = write(tmp_path, changed)
        out = imported(run, path)
        assert out == (
            f"{path}: imported 16 associations into Slurm cluster c; rejected 0 lines;"
            " 0 nodes added, 14 updated, 1 removed\n"
        )
        stored = nodes()
        assert ("chem", "hank") not in stored
        assert stored[("phys", "bob")].shares == 30
        assert {key: node.pk for key, node in stored.items()} == {
            key: pk for key, pk in ids.items() if key != ("chem", "hank")
        }
        # Updated: every node whose metrics moved; root, bio and chem kept theirs (an account's
        # raw usage is its own, as printed, so chem keeps hank's part of it).
        kept = {key for key, n in stored.items() if model_to_dict(n) == before[key]}
        assert kept == {("root", None), ("bio", None), ("chem", None)}
        assert stored[("chem", None)].usage == 564.0
        changes = {
            (c.node_name, c.old_shares, c.new_shares, c.node_id, c.reason)
            for c in ShareChange.objects.all()
        }
        assert changes == {
            ("bob", 20, 30, ids[("phys", "bob")], f"imported {path}"),
            ("hank", 10, None, None, f"imported {path}"),
        }
        ran = run("sshare", "--cluster", "c", "-a", "-P", "-n", "-A", "chem,phys")
        assert ran.out.splitlines() == [
            "chem||60|0.476190|564|0.315789|",
            " chem|alice|5|1.000000|188|0.333333|0.727273",
            " chem|gina|0|0.000000|282|0.500000|0.636364",
            "phys||40|0.317460|1222|0.684211|",
            " phys|alice|10|0.125000|376|0.307692|0.090909",
            " phys|bob|30|0.375000|188|0.153846|0.545455",
        ]  # -A names accounts exactly: exp and theory, under phys, are not listed

    def test_a_user_moving_to_parent_shares_is_audited_as_empty(
        self, run: Run, tmp_path: Path
    ) -> None:
        first = write(tmp_path, f"{HEADER_P}\na||1|1.0|10|1.0|\n a|u|5|1.0|10|1.0|1.0\n", "one")
        second = write(
            tmp_path, f"{HEADER_P}\na||1|1.0|10|1.0|\n a|u|parent|1.0|10|1.0|1.0\n", "two"
        )
        imported(run, first)
        imported(run, second)
        u = nodes()[("a", "u")]
        assert (u.shares, u.shares_parent) == (None, True)
        assert [(c.node_name, c.old_shares, c.new_shares) for c in ShareChange.objects.all()] == [
            ("u", 5, None)
        ]


class TestBadFiles:
    BAD = (
        f"{HEADER_P}\n"
        "root|||0.000000|30|1.000000|\n"
        " a||10|0.5|10|0.3|\n"
        "  a|u1|ten|0.5|4|0.4|0.4\n"
        "  a|u2|1|0.5|-6|0.6|0.8\n"
        "  a|u3|1|0.5|6|0.6|0.8\n"
        "    b||5|0.5|0|0.0|\n"
        " c||20|0.6|20|0.6|\n"
    )
    ERRORS = [
        "4: RawShares: 'ten' is not a number of shares or 'parent'",
        "5: RawUsage: -6 is not a usage (negative or not finite)",
        "7: Account: indentation skips a level: depth 4 under depth 1",
    ]

    def test_strict_imports_nothing(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, self.BAD)
        ran = run("import_sshare", "--cluster", "c", "--strict", path)
        assert ran.status == 1
        assert ran.out == ""
        assert ran.err.splitlines() == [
            *(f"{path}:{error}" for error in self.ERRORS),
            f"{path}: nothing imported (3 lines rejected)",
        ]
        assert not Cluster.objects.exists()
        assert not Node.objects.exists()

    def test_without_strict_the_good_rows_are_imported(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, self.BAD)
        ran = run("import_sshare", "--cluster", "c", path)
        assert ran.status == 0
        assert ran.err.splitlines() == [f"{path}:{error}" for error in self.ERRORS]
        assert ran.out == (
            f"{path}: imported 3 associations into Slurm cluster c (new); rejected 3 lines;"
            " 4 nodes added, 0 updated, 0 removed\n"
        )
        assert set(nodes()) == {("root", None), ("a", None), ("a", "u3"), ("c", None)}

    def test_a_file_with_no_good_row(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, "root|0.5\n a|0.4\n")
        ran = run("import_sshare", "--cluster", "c", path)
        assert ran.status == 1
        assert ran.err.splitlines() == [
            f"{path}: line 1: no header, and 2 columns is no default sshare column set:"
            " print it with its header (without -n) to import it",
            f"{path}:1: line: no header to name its 2 columns",
            f"{path}:2: line: no header to name its 2 columns",
            f"{path}: nothing imported (2 lines rejected)",
        ]
        assert not Cluster.objects.exists()

    def test_an_empty_file(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, "")
        ran = run("import_sshare", "--cluster", "c", path)
        assert ran.status == 1
        assert ran.err.splitlines() == [
            f"{path}: the file has no rows",
            f"{path}: nothing imported (no association in the file)",
        ]
        assert not Cluster.objects.exists()

    def test_a_missing_file(self, run: Run, tmp_path: Path) -> None:
        ran = run("import_sshare", "--cluster", "c", str(tmp_path / "nope"))
        assert (ran.status, ran.err) == (
            1,
            f"{tmp_path / 'nope'}: cannot read: No such file or directory\n",
        )

    def test_a_bad_cluster_name(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, f"{HEADER_P}\na||1|1.0|10|1.0|\n")
        ran = run("import_sshare", "--cluster", "no spaces", path)
        assert ran.status == 1
        assert ran.err.startswith(f"{path}: nothing imported: ")
        assert not Cluster.objects.exists()


class TestAlgorithmAndScheduler:
    CLASSIC = (
        "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|GrpTRESMins"
        "|TRESRunMins\n"
        "root|||1.000000|30||1.000000|0.500000||\n"
        " a||10|0.333333|10|0.333333|0.333333|0.5||\n"
        "  a|u1|1|1.000000|10|0.333333|0.333333|0.5||\n"
        " c||20|0.666667|20|0.666667|0.666667|0.5||\n"
    )

    def test_a_classic_file_into_a_fair_tree_cluster(self, run: Run, tmp_path: Path) -> None:
        imported(run, write(tmp_path, f"{HEADER_P}\nx||1|1.0|10|1.0|\n", "first"))
        path = write(tmp_path, self.CLASSIC)
        ran = run("import_sshare", "--cluster", "c", path)
        assert ran.status == 0
        assert ran.err == (
            f"{path}: the file shows classic fairshare (the long layout without LevelFS) but"
            " cluster c uses Fair Tree: its shares and raw usage are imported; its computed"
            " columns are not this cluster's\n"
        )
        assert Cluster.objects.get(name="c").fairshare_algorithm == Algorithm.FAIR_TREE.value
        stored = nodes()
        assert set(stored) == {("root", None), ("a", None), ("a", "u1"), ("c", None)}
        assert [(stored[k].shares, stored[k].usage) for k in [("a", "u1"), ("c", None)]] == [
            (1, 10.0),
            (20, 20.0),
        ]
        # Printed with the cluster's own algorithm: Fair Tree's LevelFS column.
        ran = run("sshare", "--cluster", "c", "-a", "-l", "-P")
        assert ran.out.splitlines()[0].split("|")[8] == "LevelFS"
        assert ran.out.splitlines()[1].startswith("root|||0.000000|30||1.000000||||")

    def test_a_new_cluster_takes_the_algorithm_of_the_file(self, run: Run, tmp_path: Path) -> None:
        path = write(tmp_path, self.CLASSIC)
        ran = run("import_sshare", "--cluster", "c", path)
        assert (ran.status, ran.err) == (0, "")
        assert Cluster.objects.get(name="c").fairshare_algorithm == Algorithm.CLASSIC.value
        ran = run("sshare", "--cluster", "c", "-a", "-P")
        assert ran.out.splitlines() == [
            HEADER_P,
            "root|||1.000000|30|1.000000|0.500000",
            " a||10|0.333333|10|0.333333|0.500000",
            "  a|u1|1|0.333333|10|0.333333|0.500000",
            " c||20|0.666667|20|0.666667|0.500000",
        ]

    def test_sshare_on_a_pbs_cluster(self, run: Run, tmp_path: Path) -> None:
        rg = write(tmp_path, "g 1 root 10\nu 2 g 5\n", "resource_group")
        assert run("import_resource_group", rg, "--cluster", "pbs").status == 0
        ran = run("sshare", "--cluster", "pbs", "-a")
        assert (ran.status, ran.out) == (1, "")
        assert ran.err == "cluster pbs is not a Slurm cluster; use pbsfs\n"

    def test_sshare_on_a_missing_cluster(self, run: Run) -> None:
        ran = run("sshare", "--cluster", "nope", "-a")
        assert (ran.status, ran.err) == (1, "cluster 'nope' does not exist\n")

    def test_import_into_a_pbs_cluster_is_refused(self, run: Run, tmp_path: Path) -> None:
        rg = write(tmp_path, "g 1 root 10\nu 2 g 5\n", "resource_group")
        assert run("import_resource_group", rg, "--cluster", "pbs").status == 0
        before = sorted(Node.objects.values_list("name", "shares"))
        path = write(tmp_path, f"{HEADER_P}\na||1|1.0|10|1.0|\n")
        ran = run("import_sshare", "--cluster", "pbs", path)
        assert (ran.status, ran.out) == (1, "")
        assert ran.err == (
            f"{path}: nothing imported: cluster pbs is a PBS Professional / OpenPBS cluster,"
            " not Slurm\n"
        )
        assert Cluster.objects.get(name="pbs").scheduler == Scheduler.PBS
        assert sorted(Node.objects.values_list("name", "shares")) == before


class TestTres:
    def test_tres_lists_and_limits_come_back(self, run: Run, tmp_path: Path) -> None:
        gpu = ZEROS + ",gres/gpu=0"
        lines = [line.replace(ZEROS, gpu) for line in SMALL_LONG_P]
        lines[3] = lines[3].replace("||" + gpu, "|cpu=1000,gres/gpu=10|" + gpu)  # a's limit
        running = gpu.replace("cpu=0", "cpu=12").replace("gres/gpu=0", "gres/gpu=2")
        lines[4] = lines[4].replace(gpu, running)  # a|u1 has jobs running
        text = "".join(line + "\n" for line in lines)
        imported(run, write(tmp_path, text))
        cluster = Cluster.objects.get(name="c")
        assert cluster.slurm_tres == "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu"
        stored = nodes()
        assert (stored[("a", None)].grp_tres_mins, stored[("a", None)].tres_run_mins) == (
            "cpu=1000,gres/gpu=10",
            "",
        )
        assert stored[("a", "u1")].tres_run_mins == running
        assert run("sshare", "--cluster", "c", "-a", "-l", "-P").out == text
        aligned = run("sshare", "--cluster", "c", "-a", "-l").out.splitlines()
        assert aligned[4].endswith(
            "           cpu=1000,gres/gpu=10 cpu=0,mem=0,energy=0,node=0,b+ "
        )
        assert aligned[5].endswith(" " * 31 + "cpu=12,mem=0,energy=0,node=0,+ ")


@pytest.mark.parametrize(
    "argv",
    [
        ["pbsfs"],
        ["pbsfs", "-g", "u1"],
        ["export_pbs_usage", "-o", "usage"],
        ["export_resource_group"],
    ],
)
def test_pbs_commands_refuse_a_slurm_cluster(run: Run, tmp_path: Path, argv: list[str]) -> None:
    imported(run, write(tmp_path, "\n".join(SMALL_LONG_P) + "\n"))
    result = run(*argv, "--cluster", "c")
    assert result.status == 1
    assert result.err.strip() == "cluster c is a Slurm cluster, not PBS"
