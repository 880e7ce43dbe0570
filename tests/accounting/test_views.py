"""The import page: admins upload a site's PBS files and see the figures and every rejected line."""

import re
from html.parser import HTMLParser
from io import BytesIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounting.forms import NEW_CLUSTER as NEW
from accounting.models import FilesUpload, IngestRun, Job
from accounting.services.demo import DEMO_SAMPLES
from tests.accounting.services.test_ingest import DAY1, DAY2
from tests.accounting.services.test_site_files import BAD_TREE
from tests.accounting.test_real_data import DATA, files_or_skip
from trees.models import Cluster, Node, Scheduler

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def alice(client: Client) -> None:
    client.force_login(User.objects.get(username="alice"))


@pytest.fixture
def send(client: Client, django_capture_on_commit_callbacks: Any) -> Any:
    """POST to the import page as the browser does, then follow it to the upload's page
    once the import task (queued on commit, eager here) has run."""

    def _send(url: str, data: dict[str, Any]) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(url, data)
        if answer.status_code != 302:
            return answer
        return client.get(answer["Location"])

    return _send


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
    assert '<option value="+new">A new cluster, named below</option>' in page.content.decode()
    assert 'name="new_cluster"' in page.content.decode()
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
    sent = {"cluster": NEW, "new_cluster": "new", "kind": "resource_group",
            "upload": upload("rg", "g 1 root 1\n")}  # fmt: skip
    assert strict.post("/import/", sent).status_code == 403
    assert not Cluster.objects.filter(name="new").exists()
    assert not FilesUpload.objects.exists()


def test_a_sample_tree_into_a_new_cluster(send: Any, client: Client) -> None:
    alice(client)
    whitepaper = (DEMO_SAMPLES / "whitepaper" / "resource_group").read_bytes()
    page = send(
        "/import/",
        {
            "cluster": NEW,
            "new_cluster": "wp-upload",
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


def test_a_cluster_name_that_is_not_there_is_a_form_error(client: Client) -> None:
    """A typo creates no cluster: the choice is among those that exist, or explicitly new."""
    alice(client)
    sent = {"kind": "resource_group", "upload": upload("rg", "g 1 root 1\n")}
    page = client.post("/import/", {**sent, "cluster": "hpcc"})
    assert "Select a valid choice" in page.context["form"].errors["cluster"][0]
    page = client.post("/import/", {**sent, "cluster": NEW, "new_cluster": "hpc"})
    assert page.context["form"].errors["new_cluster"] == ["cluster hpc exists: choose it above"]
    page = client.post("/import/", {**sent, "cluster": NEW})
    assert page.context["form"].errors["new_cluster"] == ["name the new cluster"]
    assert not Cluster.objects.filter(name="hpcc").exists()
    assert not FilesUpload.objects.exists()


def test_every_rejected_tree_line_is_listed_by_file_line_and_field(
    send: Any, client: Client
) -> None:
    alice(client)
    page = send(
        "/import/",
        {"cluster": NEW, "new_cluster": "bad", "kind": "resource_group", "skip_rejected": "on",
         "upload": upload("my-rg", BAD_TREE)},
    )  # fmt: skip
    assert table(page, "rejects") == [
        ["File", "Line", "Field", "Reason", "Text"],
        ["my-rg", "2", "line", "needs 4 fields (name cgroup parent shares); parent, shares missing",
         "bad line"],
        ["my-rg", "3", "shares", "shares 'abc' is not a whole number", "u1 11 g1 abc"],
    ]  # fmt: skip
    assert table(page, "import-figures")[1][:3] == ["my-rg", "2", "2"]


def test_by_default_a_rejected_line_imports_nothing_and_says_why(send: Any, client: Client) -> None:
    alice(client)
    sent = {"cluster": NEW, "new_cluster": "bad", "kind": "resource_group"}
    page = send("/import/", {**sent, "upload": upload("rg", BAD_TREE)})
    text = page.content.decode()
    assert "Nothing imported into bad" in text
    assert "2 lines rejected, and any stops the import" in text
    assert len(table(page, "rejects")) == 3
    assert not Cluster.objects.filter(name="bad").exists()


def test_form_errors_sit_by_their_field_and_nothing_is_saved(client: Client) -> None:
    alice(client)
    two = [upload("a", "g 1 root 1\n"), upload("b", "h 2 root 1\n")]
    sent = {"cluster": NEW, "new_cluster": "two", "kind": "resource_group", "upload": two}
    page = client.post("/import/", sent)
    assert page.status_code == 200
    assert page.context["form"].errors == {
        "upload": ["a resource_group import takes one file; give several for logs only"]
    }
    page = client.post("/import/", {"cluster": NEW, "new_cluster": "not a slug!", "kind": "x"})
    assert set(page.context["form"].errors) == {"new_cluster", "kind", "upload"}
    assert not Cluster.objects.filter(name__in=["two", "x"]).exists()
    assert not FilesUpload.objects.exists()


def test_a_slurm_cluster_refuses_and_nothing_is_stored(send: Any, client: Client) -> None:
    alice(client)
    assert Cluster.objects.get(name="fairtree").scheduler == Scheduler.SLURM
    page = send(
        "/clusters/fairtree/import/",
        {"kind": "pbs_accounting", "upload": upload("20260301", DAY1)},
    )
    text = page.content.decode()
    assert "Nothing imported into fairtree" in text
    assert "cluster fairtree is a Slurm cluster, not PBS Professional / OpenPBS" in text
    assert not Job.objects.filter(cluster__name="fairtree").exists()


def test_accounting_logs_with_a_bad_line_then_again_as_duplicates(
    send: Any, client: Client
) -> None:
    alice(client)
    before = Job.objects.filter(cluster__name="hpc").count()
    logs = [upload("20260302", DAY2), upload("20260301", DAY1 + "not a record\n")]
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": logs})
    assert table(page, "import-figures") == [
        ["File", "Read", "Ingested", "Running", "Queued", "Duplicates", "Rejected"],
        ["20260301", "10", "3", "1", "0", "0", "1"],
        ["20260302", "2", "1", "0", "0", "0", "0"],
        ["All 2 files", "12", "4", "1", "0", "0", "1"],
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
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": again})
    assert table(page, "import-figures")[-1] == ["All 2 files", "12", "0", "0", "0", "5", "1"]
    assert Job.objects.filter(cluster__name="hpc").count() == before + 4
    assert IngestRun.objects.filter(cluster__name="hpc").count() == 3  # the demo's, and these


def test_the_upload_page_reads_little(
    send: Any, client: Client, django_assert_max_num_queries: Any
) -> None:
    alice(client)
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d", DAY2)})
    with django_assert_max_num_queries(5):  # session, user, upload, its uploader, rejects
        assert client.get(page.request["PATH_INFO"]).status_code == 200


def test_a_usage_file_with_a_bad_header_names_the_header(send: Any, client: Client) -> None:
    alice(client)
    page = send(
        "/import/",
        {
            "cluster": NEW,
            "new_cluster": "u",
            "kind": "pbs_usage",
            "upload": upload("usage", b"PBS"),
        },
    )
    text = page.content.decode()
    assert "PBS reads no usage from a file with this header" in text
    assert table(page, "rejects")[1][:3] == ["usage", "header (byte 0)", "header"]
    assert not Cluster.objects.filter(name="u").exists()


def test_a_sched_config_with_a_refused_key(send: Any, client: Client) -> None:
    alice(client)
    text = "fairshare_usage_res: ncpus*walltime\nfairshare_decay_factor: 2\n"
    page = send(
        "/import/",
        {"cluster": NEW, "new_cluster": "sc", "kind": "sched_config",
         "upload": upload("sched", text)},
    )  # fmt: skip
    assert table(page, "rejects")[1][:3] == ["sched", "2", "fairshare_decay_factor"]
    assert table(page, "import-figures")[1] == ["sched", "1", "1"]


def test_real_trees_and_logs_of_the_shared_data(send: Any, client: Client) -> None:
    files_or_skip("resource_group", "*/*")
    files_or_skip("pbs_accounting", "*/*")
    alice(client)
    derecho = DATA / "resource_group" / "ncar-derecho" / "derecho.tree"
    page = send(
        "/import/",
        {
            "cluster": NEW,
            "new_cluster": "derecho",
            "kind": "resource_group",
            "upload": upload(derecho.name, derecho.read_bytes()),
        },
    )
    assert table(page, "import-figures")[1][:4] == ["derecho.tree", "1,526", "0", "1,526"]
    days = sorted((DATA / "pbs_accounting" / "ncar-derecho").iterdir())
    logs = [SimpleUploadedFile(day.name, day.read_bytes()) for day in days]
    page = send("/clusters/derecho/import/", {"kind": "pbs_accounting", "upload": logs})
    figures = table(page, "import-figures")
    assert [row[0] for row in figures[1:]] == [*(day.name for day in days), "All 4 files"]
    assert figures[-1][5] == "0"  # nothing rejected in NCAR's logs
    again = send(
        "/clusters/derecho/import/",
        {
            "kind": "pbs_accounting",
            "upload": [SimpleUploadedFile(d.name, d.read_bytes()) for d in days],
        },
    )
    assert table(again, "import-figures")[-1][2:4] == ["0", "0"]  # nothing ingested, no running


def test_a_big_log_is_streamed_through_a_temporary_file(
    send: Any, client: Client, settings: Any
) -> None:
    # Above FILE_UPLOAD_MAX_MEMORY_SIZE Django writes the upload to a temporary file.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    alice(client)
    log = BytesIO((DAY1 * 10).encode())
    log.name = "20260301"
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": log})
    # Ten copies of the day (9 records each): the first stores 101, 103's two runs (R, then E)
    # and 102 running; each of the nine others repeats those three ended runs (27 duplicates),
    # its starts adding nothing.
    assert table(page, "import-figures")[1] == ["20260301", "90", "3", "1", "0", "27", "0"]
