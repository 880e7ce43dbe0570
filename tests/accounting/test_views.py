"""The import page: admins upload a site's PBS files and see the figures and every rejected line."""

import re
from html.parser import HTMLParser
from io import BytesIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounting.models import IngestRun, Job
from tests.accounting.test_real_data import DATA, files_or_skip
from tests.accounting.test_services import DAY1, DAY2
from tests.accounting.test_services_files_import import BAD_TREE, SAMPLES
from tests.trees.views.conftest import sample, sample_site  # noqa: F401  (the demo fixtures)
from trees.models import Cluster, Node, Scheduler

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sample")]


def alice(client: Client) -> None:
    client.force_login(User.objects.get(username="alice"))


def upload(name: str, content: str | bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content)


class _Table(HTMLParser):
    """The cells' text of the first <table class="{css}">, row by row."""

    def __init__(self, css: str) -> None:
        super().__init__()
        self.css = css
        self.inside = self.done = False
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and not self.done and self.css in (dict(attrs).get("class") or ""):
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("th", "td"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if self.inside and tag in ("th", "td") and self.cell is not None:
            self.rows[-1].append(re.sub(r"\s+", " ", "".join(self.cell)).strip())
            self.cell = None
        elif self.inside and tag == "table":
            self.inside, self.done = False, True

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def table(page: Any, css: str) -> list[list[str]]:
    """The rows of the page's table of that class, each cell's text."""
    parser = _Table(css)
    parser.feed(page.content.decode())
    assert parser.done, f"no table.{css}"
    return parser.rows


@pytest.mark.parametrize("person", ["bob", "carol"])
def test_only_admins_may_import(client: Client, person: str) -> None:
    client.force_login(User.objects.get(username=person))
    assert client.get("/clusters/hpc/import/").status_code == 403
    assert client.get("/import/").status_code == 403
    sent = {"kind": "resource_group", "upload": upload("rg", "g 1 root 1\n")}
    assert client.post("/clusters/hpc/import/", sent).status_code == 403
    assert Node.objects.filter(cluster__name="hpc", name="g").count() == 0


def test_an_unknown_cluster_is_404_and_a_new_one_is_named_in_the_form(client: Client) -> None:
    alice(client)
    assert client.get("/clusters/nowhere/import/").status_code == 404
    page = client.get("/import/")
    assert page.status_code == 200
    assert 'name="cluster"' in page.content.decode()
    fixed = client.get("/clusters/hpc/import/").content.decode()
    assert 'name="cluster"' not in fixed
    assert "Import into hpc" in fixed
    assert 'name="csrfmiddlewaretoken"' in fixed


def test_the_form_page_reads_little(client: Client, django_assert_max_num_queries: Any) -> None:
    alice(client)
    with django_assert_max_num_queries(3):  # session, user, cluster
        assert client.get("/clusters/hpc/import/").status_code == 200


def test_links_for_admins_only(client: Client) -> None:
    alice(client)
    assert 'href="/clusters/hpc/import/"' in client.get("/clusters/hpc/").content.decode()
    assert 'href="/import/"' in client.get("/").content.decode()
    assert "/import/" not in client.get("/clusters/fairtree/").content.decode()  # Slurm
    other = Client()
    other.force_login(User.objects.get(username="carol"))
    assert "/import/" not in other.get("/clusters/hpc/").content.decode()
    assert "/import/" not in other.get("/").content.decode()


def test_csrf_is_checked(client: Client) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(User.objects.get(username="alice"))
    sent = {"cluster": "new", "kind": "resource_group", "upload": upload("rg", "g 1 root 1\n")}
    assert strict.post("/import/", sent).status_code == 403
    assert not Cluster.objects.filter(name="new").exists()


def test_a_sample_tree_into_a_new_cluster(client: Client) -> None:
    alice(client)
    whitepaper = (SAMPLES / "whitepaper" / "resource_group").read_bytes()
    page = client.post(
        "/import/",
        {
            "cluster": "wp-upload",
            "kind": "resource_group",
            "upload": upload("resource_group", whitepaper),
        },
    )
    assert page.status_code == 200
    assert "Imported into wp-upload (new cluster)" in page.content.decode()
    assert table(page, "import-figures") == [
        ["File", "Entries imported", "Rejected", "Nodes added", "Updated", "Removed",
         "Entities under unknown"],
        ["resource_group", "12", "0", "12", "0", "0", "0"],
    ]  # fmt: skip
    assert "None: every line was taken." in page.content.decode()
    l5 = Node.objects.get(cluster__name="wp-upload", name="L5")
    assert (l5.parent.name if l5.parent else None, l5.shares) == ("B3", 10)


def test_every_rejected_tree_line_is_listed_by_file_line_and_field(client: Client) -> None:
    alice(client)
    page = client.post(
        "/import/",
        {"cluster": "bad", "kind": "resource_group", "upload": upload("my-rg", BAD_TREE)},
    )
    assert table(page, "rejects") == [
        ["File", "Line", "Field", "Reason", "Text"],
        ["my-rg", "2", "line", "needs 4 fields (name cgroup parent shares); parent, shares missing",
         "bad line"],
        ["my-rg", "3", "shares", "shares 'abc' is not a whole number", "u1 11 g1 abc"],
    ]  # fmt: skip
    assert table(page, "import-figures")[1][:3] == ["my-rg", "2", "2"]


def test_strict_or_nothing_left_imports_nothing_and_says_why(client: Client) -> None:
    alice(client)
    sent = {"cluster": "bad", "kind": "resource_group", "strict": "on"}
    page = client.post("/import/", {**sent, "upload": upload("rg", BAD_TREE)})
    text = page.content.decode()
    assert "Nothing imported into bad" in text
    assert "2 lines rejected and strict was asked" in text
    assert len(table(page, "rejects")) == 3
    assert not Cluster.objects.filter(name="bad").exists()


def test_form_errors_sit_by_their_field_and_nothing_is_saved(client: Client) -> None:
    alice(client)
    two = [upload("a", "g 1 root 1\n"), upload("b", "h 2 root 1\n")]
    page = client.post("/import/", {"cluster": "two", "kind": "resource_group", "upload": two})
    assert page.status_code == 200
    assert page.context["form"].errors == {
        "upload": ["a resource_group import takes one file; give several for logs only"]
    }
    page = client.post("/import/", {"cluster": "not a slug!", "kind": "sched_config"})
    assert set(page.context["form"].errors) == {"cluster", "upload"}
    page = client.post(
        "/import/", {"cluster": "x", "kind": "swf", "upload": upload("rg", "g 1 root 1\n")}
    )
    assert set(page.context["form"].errors) == {"kind"}
    assert page.context["result"] is None
    assert not Cluster.objects.filter(name__in=["two", "x"]).exists()


def test_a_slurm_cluster_refuses_and_nothing_is_stored(client: Client) -> None:
    alice(client)
    assert Cluster.objects.get(name="fairtree").scheduler == Scheduler.SLURM
    page = client.post(
        "/clusters/fairtree/import/",
        {"kind": "pbs_accounting", "upload": upload("20260301", DAY1)},
    )
    text = page.content.decode()
    assert "Nothing imported into fairtree" in text
    assert "cluster fairtree is a Slurm cluster, not PBS Professional / OpenPBS" in text
    assert not Job.objects.filter(cluster__name="fairtree").exists()


def test_accounting_logs_with_a_bad_line_then_again_as_duplicates(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    alice(client)
    before = Job.objects.filter(cluster__name="hpc").count()
    logs = [upload("20260302", DAY2), upload("20260301", DAY1 + "not a record\n")]
    page = client.post("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": logs})
    assert table(page, "import-figures") == [
        ["File", "Read", "Ingested", "Running", "Duplicates", "Rejected"],
        ["20260301", "10", "3", "1", "0", "1"],
        ["20260302", "2", "1", "0", "0", "0"],
        ["All 2 files", "12", "4", "1", "0", "1"],
    ]
    reject = table(page, "rejects")[1]
    assert reject[:3] == ["20260301", "10", "line"]
    assert reject[4] == "not a record"
    # hpc charges projects by Account_Name; these two are not in its tree: under unknown.
    assert (
        "2 entities are not in the tree; PBS charges their jobs under <code>unknown</code>:"
        " CHEM01, PHYS01." in page.content.decode()
    )
    assert Job.objects.filter(cluster__name="hpc").count() == before + 4
    again = [upload("20260301", DAY1 + "not a record\n"), upload("20260302", DAY2)]
    with django_assert_max_num_queries(35):  # 29: the ingest's few per file, and the page
        page = client.post("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": again})
    assert table(page, "import-figures")[-1] == ["All 2 files", "12", "0", "0", "5", "1"]
    assert Job.objects.filter(cluster__name="hpc").count() == before + 4
    assert IngestRun.objects.filter(cluster__name="hpc").count() == 3  # the demo's, and these


def test_a_usage_file_with_a_bad_header_names_the_header(client: Client) -> None:
    alice(client)
    page = client.post(
        "/import/", {"cluster": "u", "kind": "pbs_usage", "upload": upload("usage", b"PBS")}
    )
    text = page.content.decode()
    assert "PBS reads no usage from a file with this header" in text
    assert table(page, "rejects")[1][:3] == ["usage", "header (byte 0)", "header"]
    assert not Cluster.objects.filter(name="u").exists()


def test_a_sched_config_with_a_refused_key(client: Client) -> None:
    alice(client)
    text = "fairshare_usage_res: ncpus*walltime\nfairshare_decay_factor: 2\n"
    page = client.post(
        "/import/", {"cluster": "sc", "kind": "sched_config", "upload": upload("sched", text)}
    )
    assert table(page, "rejects")[1][:3] == ["sched", "2", "fairshare_decay_factor"]
    assert table(page, "import-figures")[1] == ["sched", "1", "1"]


def test_real_trees_and_logs_of_the_shared_data(client: Client) -> None:
    files_or_skip("resource_group", "*/*")
    files_or_skip("pbs_accounting", "*/*")
    alice(client)
    derecho = DATA / "resource_group" / "ncar-derecho" / "derecho.tree"
    page = client.post(
        "/import/",
        {
            "cluster": "derecho",
            "kind": "resource_group",
            "upload": upload(derecho.name, derecho.read_bytes()),
        },
    )
    assert table(page, "import-figures")[1][:4] == ["derecho.tree", "1526", "0", "1526"]
    days = sorted((DATA / "pbs_accounting" / "ncar-derecho").iterdir())
    logs = [SimpleUploadedFile(day.name, day.read_bytes()) for day in days]
    page = client.post("/clusters/derecho/import/", {"kind": "pbs_accounting", "upload": logs})
    figures = table(page, "import-figures")
    assert [row[0] for row in figures[1:]] == [*(day.name for day in days), "All 4 files"]
    assert figures[-1][5] == "0"  # nothing rejected in NCAR's logs
    again = client.post(
        "/clusters/derecho/import/",
        {
            "kind": "pbs_accounting",
            "upload": [SimpleUploadedFile(d.name, d.read_bytes()) for d in days],
        },
    )
    assert table(again, "import-figures")[-1][2:4] == ["0", "0"]  # nothing ingested, no running


def test_a_big_log_is_streamed_through_a_temporary_file(client: Client, settings: Any) -> None:
    # Above FILE_UPLOAD_MAX_MEMORY_SIZE Django writes the upload to a temporary file.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    alice(client)
    log = BytesIO((DAY1 * 10).encode())
    log.name = "20260301"
    page = client.post("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": log})
    # Ten copies of the day (9 records each): the first stores 101, 103's two runs (R, then E)
    # and 102 running; each of the nine others repeats those three ended runs (27 duplicates),
    # its starts adding nothing.
    assert table(page, "import-figures")[1] == ["20260301", "90", "3", "1", "27", "0"]
