"""Uploads are bounded and imported off the request; a resource_group into a tree is
previewed, then applied with a reason as one audited change."""

import csv
import gzip
import io
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounting.forms import NEW_CLUSTER as NEW
from accounting.models import FilesUpload, UploadRejection, UploadState
from accounting.services.demo import DEMO_SAMPLES
from accounting.services.upload_runs import uploads_clean
from tests.accounting.services.test_ingest import DAY1
from tests.accounting.test_views import alice, table, upload
from trees.models import Cluster, Node, ShareChange

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

WHITEPAPER = (DEMO_SAMPLES / "whitepaper/resource_group").read_text()


@pytest.fixture
def send(client: Client, django_capture_on_commit_callbacks: Any) -> Any:
    def _send(url: str, data: dict[str, Any], **extra: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(url, data, **extra)
        if answer.status_code != 302:
            return answer
        return client.get(answer["Location"])

    return _send


def leftovers(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def test_a_request_past_the_limit_is_refused_before_it_is_read(
    client: Client, settings: Any, upload_dir: Path
) -> None:
    alice(client)
    settings.UPLOAD_MAX_REQUEST_BYTES = 1000
    page = client.post(
        "/clusters/hpc/import/",
        {"kind": "pbs_accounting", "upload": upload("20260301", "x" * 5000)},
    )
    assert page.status_code == 413
    text = page.content.decode()
    assert "<h1>Too large</h1>" in text
    assert "an upload may have at most 1,000 bytes (UPLOAD_MAX_REQUEST_BYTES)" in text
    assert (FilesUpload.objects.count(), leftovers(upload_dir)) == (0, [])


def test_a_file_past_its_limit_is_stopped_as_it_streams_in(
    client: Client, settings: Any, upload_dir: Path
) -> None:
    alice(client)
    settings.UPLOAD_MAX_FILE_BYTES = 4000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1000  # to a temporary file, as big uploads go
    logs = [upload("20260301", DAY1[:3000]), upload("20260302", DAY1 * 3)]
    page = client.post("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": logs})
    assert page.status_code == 413
    assert "20260302 is more than the 4,000 bytes a file may have" in page.content.decode()
    assert (FilesUpload.objects.count(), leftovers(upload_dir)) == (0, [])


def test_an_upload_is_imported_by_a_task_that_the_page_follows(
    client: Client, django_capture_on_commit_callbacks: Any, upload_dir: Path
) -> None:
    alice(client)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        answer = client.post(
            "/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d1", DAY1)}
        )
    assert answer.status_code == 302
    page = client.get(answer["Location"])
    assert 'data-state="queued"' in page.content.decode()
    assert "js/upload.js" in page.content.decode()  # polls while it works
    created = FilesUpload.objects.get()
    state = client.get(f"/imports/{created.pk}/state.json").json()
    assert state == {"state": "queued", "label": "queued", "working": True}
    assert leftovers(upload_dir) == [f"upload-{created.pk}/0/d1"]
    for callback in queued:
        callback()  # the task, eager: as a worker would run it
    assert client.get(f"/imports/{created.pk}/state.json").json()["working"] is False
    page = client.get(answer["Location"])
    assert "js/upload.js" not in page.content.decode()
    assert table(page, "import-figures")[1] == ["d1", "9", "3", "1", "0", "0", "0"]
    assert leftovers(upload_dir) == []  # the files are gone once read


def test_a_folder_left_with_the_next_upload_s_number_is_not_its_files(
    client: Client, django_capture_on_commit_callbacks: Any, upload_dir: Path, monkeypatch: Any
) -> None:
    """A database made afresh numbers uploads from 1 again, where an older site's folder may
    be left: the new upload is stored, with its own file alone."""
    from accounting.services.upload_runs import upload_folder

    def left_behind(upload: FilesUpload) -> Path:
        folder = upload_folder(upload)
        (folder / "0").mkdir(parents=True)
        (folder / "0" / "old").write_text(DAY1)
        return folder

    monkeypatch.setattr("accounting.services.uploads.upload_folder", left_behind)
    alice(client)
    with django_capture_on_commit_callbacks(execute=False):
        answer = client.post(
            "/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d1", DAY1)}
        )
    assert answer.status_code == 302
    assert leftovers(upload_dir) == [f"upload-{FilesUpload.objects.get().pk}/0/d1"]


def test_a_failing_import_says_so_and_leaves_no_file(
    send: Any, client: Client, monkeypatch: Any, upload_dir: Path
) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr("accounting.services.upload_runs.site_files_import", broken)
    alice(client)
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d", DAY1)})
    assert "the import failed: disk full" in page.content.decode()
    assert FilesUpload.objects.get().state == UploadState.FAILED
    assert leftovers(upload_dir) == []


def test_a_gzip_bomb_is_read_up_to_the_limit(send: Any, client: Client, settings: Any) -> None:
    settings.MAX_DECOMPRESSED_BYTES = 100_000
    alice(client)
    bomb = gzip.compress(DAY1.encode() + b"\x00" * 10_000_000)  # 10 MB of NULs: 10 KB packed
    assert len(bomb) < 20_000
    page = send("/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d.gz", bomb)})
    rejects = table(page, "rejects")
    assert rejects[-1][2:4] == [
        "file",
        "unpacks to more than 100,000 bytes (the limit, MAX_DECOMPRESSED_BYTES): the rest is"
        " not read; lines before kept",
    ]
    assert table(page, "import-figures")[1][2] == "3"  # the day's runs before the NULs


def test_one_line_too_long_to_be_a_record_is_rejected_unread(send: Any, client: Client) -> None:
    alice(client)
    long_line = gzip.compress(b"x" * (5 << 20) + b"\n" + DAY1.encode())
    page = send(
        "/clusters/hpc/import/", {"kind": "pbs_accounting", "upload": upload("d.gz", long_line)}
    )
    assert table(page, "rejects")[1][1:4] == [
        "1", "line", "longer than 4,194,304 bytes: no record is; not read"
    ]  # fmt: skip
    assert table(page, "import-figures")[1][2] == "3"  # the day after it is read


def test_the_page_shows_the_first_thousand_rejects_and_the_csv_has_all(
    send: Any, client: Client
) -> None:
    alice(client)
    lines = "".join(f"bad{n}\n" for n in range(1500))
    page = send(
        "/import/",
        {"cluster": NEW, "new_cluster": "junk", "kind": "resource_group",
         "skip_rejected": "on", "upload": upload("rg", "g 1 root 5\n" + lines)},
    )  # fmt: skip
    text = page.content.decode()
    assert "Rejected lines (1,500)" in text
    assert "The first 1,000 of 1,500;" in text
    assert len(table(page, "rejects")) == 1 + 1000
    created = FilesUpload.objects.get()
    answer = client.get(f"/imports/{created.pk}/rejected.csv")
    body = answer.getvalue().decode()
    assert body.splitlines()[:2] == [
        "file,line,byte,field,reason,text",
        'rg,2,,line,"needs 4 fields (name cgroup parent shares); cgroup, parent, shares'
        ' missing",bad0',
    ]
    assert len(body.splitlines()) == 1 + 1500


def test_rejected_lines_that_start_like_formulas_are_text_in_the_csv(
    send: Any, client: Client
) -> None:
    alice(client)
    lines = '=HYPERLINK("http://evil.example","x")\n@SUM(1+1)\n-2+3 x\n+1\n\tcmd\n'
    send(
        "/import/",
        {"cluster": NEW, "new_cluster": "junk", "kind": "resource_group",
         "skip_rejected": "on", "upload": upload("=rg", "g 1 root 5\n" + lines)},
    )  # fmt: skip
    created = FilesUpload.objects.get()
    answer = client.get(f"/imports/{created.pk}/rejected.csv")
    assert answer["Content-Disposition"] == (
        f'attachment; filename="upload-{created.pk}-rejected.csv"'
    )
    rows = list(csv.reader(io.StringIO(answer.getvalue().decode())))
    assert [(row[0], row[1], row[5]) for row in rows[1:]] == [
        ("'=rg", "2", '\'=HYPERLINK("http://evil.example","x")'),
        ("'=rg", "3", "'@SUM(1+1)"),
        ("'=rg", "4", "'-2+3 x"),
        ("'=rg", "5", "'+1"),
        ("'=rg", "6", "'\tcmd"),
    ]


def test_uploads_are_for_admins() -> None:
    created = FilesUpload.objects.create(
        cluster_name="hpc", kind="sched_config", uploaded_at=timezone.now()
    )
    bob = Client()
    bob.force_login(User.objects.get(username="bob"))
    for path in ("", "state.json", "rejected.csv"):
        assert bob.get(f"/imports/{created.pk}/{path}").status_code == 403
    assert Client().get(f"/imports/{created.pk}/").status_code == 302  # to the login


def test_the_clean_up_removes_what_a_killed_worker_left(upload_dir: Path) -> None:
    long_ago = timezone.now() - timedelta(hours=30)
    died = FilesUpload.objects.create(
        cluster_name="hpc", kind="pbs_accounting", state=UploadState.RUNNING,
        uploaded_at=long_ago, files=["d"],
    )  # fmt: skip
    fresh = FilesUpload.objects.create(
        cluster_name="hpc", kind="pbs_accounting", uploaded_at=timezone.now(), files=["d"]
    )
    for upload_id in (died.pk, fresh.pk):
        (upload_dir / f"upload-{upload_id}" / "0").mkdir(parents=True)
        (upload_dir / f"upload-{upload_id}" / "0" / "d").write_text(DAY1)
    half_sent = upload_dir / "incoming" / "tmp1234.upload"
    half_sent.write_bytes(b"x" * 100)
    old = time.time() - 30 * 3600
    for path in (upload_dir / f"upload-{died.pk}", half_sent):
        os.utime(path, (old, old))
    cleaned = uploads_clean(now=timezone.now())
    assert (cleaned.folders_removed, cleaned.uploads_failed) == (2, 1)
    assert leftovers(upload_dir) == [f"upload-{fresh.pk}/0/d"]
    died.refresh_from_db()
    assert died.state == UploadState.FAILED
    assert "its worker died" in died.result["outcome"]


def test_the_clean_up_is_a_command_too(run: Any) -> None:
    assert call_command("clean_uploads") is None


def two_line_tree(send: Any, **options: str) -> Any:
    """The careless admin's file: one good line, one bad, into the white paper's tree."""
    return send(
        "/clusters/whitepaper/import/",
        {"kind": "resource_group", "upload": upload("rg", "B1 100 root 10\nbad line\n"),
         **options},
    )  # fmt: skip


def whitepaper() -> list[tuple[str, str | None, int | None]]:
    nodes = Node.objects.filter(cluster__name="whitepaper").exclude(parent=None)
    return sorted(nodes.values_list("name", "parent__name", "shares"))


def test_by_default_a_bad_line_keeps_the_tree_as_it_is(send: Any, client: Client) -> None:
    alice(client)
    before = whitepaper()
    page = two_line_tree(send)
    assert "1 lines rejected, and any stops the import" in page.content.decode()
    assert whitepaper() == before


def test_a_tree_import_is_previewed_then_applied_as_one_audited_change(
    send: Any, client: Client
) -> None:
    alice(client)
    before, audit_before = whitepaper(), ShareChange.objects.count()
    page = two_line_tree(send, skip_rejected="on")
    text = page.content.decode()
    assert "Nothing is applied yet." in text
    entries = table(page, "entries")
    assert entries[1] == ["B1", "now an entity", "under root, 10 shares", "under root, 10 shares"]
    removed = sorted(row[0] for row in entries[1:] if row[1] == "removed")
    assert removed == ["B2", "B3", "B4", "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8"]
    assert whitepaper() == before  # nothing yet
    created = FilesUpload.objects.get()
    assert created.state == UploadState.PREVIEW

    refused = client.post(f"/imports/{created.pk}/", {"action": "apply", "reason": " "})
    assert "This field is required." in refused.content.decode()
    assert whitepaper() == before

    done = client.post(f"/imports/{created.pk}/", {"action": "apply", "reason": "new policy"})
    assert done.status_code == 302
    page = client.get(done["Location"])
    figures = dict(zip(*table(page, "import-figures"), strict=True))
    assert (figures["Nodes added"], figures["Updated"], figures["Removed"]) == ("0", "0", "11")
    written = list(ShareChange.objects.filter(cluster__name="whitepaper", reason__contains="rg"))
    assert len(written) == ShareChange.objects.count() - audit_before == 11  # as the figures
    assert {change.reason for change in written} == {"imported resource_group rg: new policy"}
    assert {change.changed_by.username for change in written if change.changed_by} == {"alice"}
    assert [name for name, parent, _ in whitepaper() if parent == "TREEROOT"] == ["B1", "unknown"]


def test_a_tree_changed_since_the_preview_is_not_overwritten(send: Any, client: Client) -> None:
    alice(client)
    two_line_tree(send, skip_rejected="on")
    created = FilesUpload.objects.get()
    Node.objects.filter(cluster__name="whitepaper", name="L7").update(shares=41)
    # The store reads the tree as stored: an edit in between changes the version.
    answer = client.post(f"/imports/{created.pk}/", {"action": "apply", "reason": "go"})
    assert answer.status_code == 409
    assert "nothing was applied" in answer.content.decode()
    assert Node.objects.get(cluster__name="whitepaper", name="B4").parent is not None


def test_a_preview_can_be_discarded(send: Any, client: Client) -> None:
    alice(client)
    before = whitepaper()
    two_line_tree(send, skip_rejected="on")
    created = FilesUpload.objects.get()
    client.post(f"/imports/{created.pk}/", {"action": "discard"})
    created.refresh_from_db()
    assert (created.state, created.result["outcome"]) == (
        UploadState.DONE,
        "discarded: the tree is unchanged",
    )
    assert whitepaper() == before


def test_a_tree_into_a_cluster_without_one_applies_at_once(send: Any, client: Client) -> None:
    alice(client)
    page = send(
        "/import/",
        {"cluster": NEW, "new_cluster": "fresh", "kind": "resource_group",
         "upload": upload("resource_group", WHITEPAPER)},
    )  # fmt: skip
    assert "Imported into fresh (new cluster)" in page.content.decode()
    assert Cluster.objects.filter(name="fresh").exists()
    assert not UploadRejection.objects.exists()


def test_an_upload_sent_again_says_so_and_one_whose_worker_is_gone_asks_for_the_files(
    client: Client,
) -> None:
    alice(client)
    again = FilesUpload.objects.create(
        cluster_name="hpc", kind="pbs_accounting", files=["20261201"],
        uploaded_at=timezone.now(), state=UploadState.RUNNING, retries=1,
    )  # fmt: skip
    page = client.get(f"/imports/{again.pk}/").content.decode()
    assert "It was sent to a worker again: the first went silent or never took it." in page
    outcome = (
        "the import stopped: its worker stopped answering (nothing heard from it since"
        " 2026-12-01 09:00:00 UTC), and again when it was sent to a worker once more; upload"
        " the files again"
    )
    gone = FilesUpload.objects.create(
        cluster_name="hpc", kind="pbs_accounting", files=["20261201"],
        uploaded_at=timezone.now(), state=UploadState.FAILED,
        result={"imported": False, "outcome": outcome},
    )  # fmt: skip
    page = client.get(f"/imports/{gone.pk}/").content.decode()
    assert f"{outcome}." in page
    assert '<a href="/import/">Upload the files again</a>' in page
