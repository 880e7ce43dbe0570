"""Accounting pushed through the API (`POST /api/clusters/{name}/accounting/`): what
`ingest_pbs_accounting` does to a file, done to the request's body, exactly once; its limits,
its Idempotency-Key, its refusals; no file left behind."""

# ruff: noqa: E501  (accounting records are long lines)

from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as site_settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.utils import timezone

from accounting.api.schemas import FileCountsSerializer, IngestAnswerSerializer
from accounting.models import IngestRun, Job, PushedAccounting
from tests.cast import login, login_made, member_made, node
from tests.conftest import SHARED, write_file
from trees.models import Role, TokenScope
from trees.services.tokens import api_token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("samples")]

URL = "/api/clusters/whitepaper/accounting/"
# A morning on the white paper's cluster (usage: cput): L5 runs a job to its end (4 CPU-hours),
# L1 starts one, and L7's end record is damaged (its ctime).
MORNING = b"""\
11/20/2026 09:00:00;S;9001.server;user=L5 group=g account="B3" jobname=a queue=work ctime=1795597200 qtime=1795597200 etime=1795597200 start=1795597200 exec_host=n1/0*4 Resource_List.ncpus=4 Resource_List.walltime=02:00:00
11/20/2026 10:00:00;E;9001.server;user=L5 group=g account="B3" jobname=a queue=work ctime=1795597200 qtime=1795597200 etime=1795597200 start=1795597200 exec_host=n1/0*4 Resource_List.ncpus=4 Resource_List.walltime=02:00:00 session=1 end=1795600800 Exit_status=0 resources_used.cput=04:00:00 resources_used.ncpus=4 resources_used.walltime=01:00:00 run_count=1
11/20/2026 10:30:00;S;9002.server;user=L1 group=g account="B1" jobname=b queue=work ctime=1795602600 qtime=1795602600 etime=1795602600 start=1795602600 exec_host=n2/0*2 Resource_List.ncpus=2 Resource_List.walltime=04:00:00
11/20/2026 10:45:00;E;9003.server;user=L7 group=g jobname=c queue=work ctime=abc qtime=1795602600 etime=1795602600 start=1795602600 session=3 end=1795603500 Exit_status=0 resources_used.cput=00:15:00 resources_used.walltime=00:15:00 run_count=1
"""
REAL_LOG = SHARED / "data" / "pbs_accounting" / "xdmod-unit" / "accounting-logs.log"


def real_lines(count: int) -> bytes:
    """The first lines of a real accounting log (XDMoD's test file: E records of Torque and PBS
    Pro servers)."""
    if not REAL_LOG.is_file():
        pytest.skip(f"the real accounting logs are not at {REAL_LOG.parent}")
    return b"".join(REAL_LOG.read_bytes().splitlines(keepends=True)[:count])


@pytest.fixture
def admin(client: Client) -> User:
    return login(client, "alice", staff=True)


def push(client: Client, body: bytes, url: str = URL, **extra: Any) -> Any:
    content_type = extra.pop("content_type", "text/plain")
    return client.post(url, body, content_type=content_type, **extra)


def leftovers() -> list[Path]:
    """What the pushes left in UPLOAD_DIR/api (the folder of their temporary files, made by
    the first push that is read at all)."""
    folder = Path(site_settings.UPLOAD_DIR) / "api"
    return sorted(folder.iterdir()) if folder.exists() else []


def command_answer(folder: Path, body: bytes) -> dict[str, Any]:
    """`ingest_pbs_accounting --json` on the same lines in a file, undone after: what the
    command answers on the cluster as it is."""

    class Undone(Exception):
        pass

    out = StringIO()
    path = write_file(folder, "20261120", body)
    try:
        with transaction.atomic():
            call_command(
                "ingest_pbs_accounting", "--json", "--cluster", "whitepaper", path, stdout=out
            )
            raise Undone
    except Undone:
        pass
    answer: dict[str, Any] = json.loads(out.getvalue())
    return comparable(answer, path)


def comparable(answer: dict[str, Any], path: str) -> dict[str, Any]:
    """The answer without what differs from run to run (its row, its time) and the file's name."""
    answer = {key: value for key, value in answer.items() if key not in ("ingest_run", "seconds")}
    answer["rejects"] = [
        {**bad, "file": bad["file"].replace(path, "FILE")} for bad in answer["rejects"]
    ]
    answer["files"] = [{**f, "path": f["path"].replace(path, "FILE")} for f in answer["files"]]
    return answer


@pytest.mark.usefixtures("admin")
def test_pushed_lines_are_counted_as_the_ingest_command_counts_them(
    client: Client, tmp_path: Path
) -> None:
    body = MORNING + real_lines(4)
    expected = command_answer(tmp_path, body)
    assert IngestRun.objects.count() == 0  # the command's run was undone
    answer = push(client, body)
    assert answer.status_code == 200
    assert comparable(answer.json(), "request body") == expected
    counted = answer.json()
    # Hand-counted: 8 lines; L5's run and three of XDMoD's (its first two are one job) ended,
    # L1's runs, L7's end is refused.
    assert {key: counted[key] for key in ("read", "ingested", "duplicates", "running", "rejected")} == {
        "read": 8, "ingested": 4, "duplicates": 1, "running": 1, "rejected": 1,
    }  # fmt: skip
    assert counted["record_types"] == {"E": 5, "S": 2}
    assert counted["unknown_entities"] == ["anonuser", "jonesm"]
    assert counted["cluster"] == "whitepaper"
    assert counted["ingest_run"] == IngestRun.objects.get().pk
    l5 = Job.objects.get(job_id="9001")
    assert (l5.node, l5.usage, l5.state) == (node("whitepaper", "L5"), 4 * 3600.0, "ended")
    assert leftovers() == []


@pytest.mark.usefixtures("admin")
def test_a_bad_line_is_reported_with_its_line_field_and_reason(client: Client) -> None:
    answer = push(client, MORNING).json()
    assert answer["rejects"] == [
        {"file": "request body", "line": 4, "field": "ctime", "reason": "not an epoch time: 'abc'"}
    ]
    assert answer["files"][0]["path"] == "request body"
    garbled = push(client, b"not an accounting line\n").json()
    assert garbled["rejects"] == [
        {"file": "request body", "line": 1, "field": "line",
         "reason": "not an accounting record: fewer than 3 ';'"},
        {"file": "request body", "line": 1, "field": "file",
         "reason": "not a PBS accounting log: its only line has no record's shape"
                   " (MM/DD/YYYY HH:MM:SS;T;ID;MESSAGE)"},
    ]  # fmt: skip


@pytest.mark.usefixtures("admin")
def test_the_same_lines_again_are_duplicates_and_change_nothing(client: Client) -> None:
    first = push(client, MORNING).json()
    jobs = list(Job.objects.order_by("pk").values_list("pk", "usage", "state"))
    again = push(client, MORNING).json()
    assert (again["read"], again["ingested"], again["duplicates"], again["running"]) == (4, 0, 2, 0)
    assert first["ingested"] + first["running"] == again["duplicates"]
    assert list(Job.objects.order_by("pk").values_list("pk", "usage", "state")) == jobs


@pytest.mark.usefixtures("admin")
@pytest.mark.parametrize(
    ("content_type", "encoding"),
    [("text/plain", "gzip"), ("application/gzip", None)],
    ids=["Content-Encoding gzip", "application/gzip"],
)
def test_a_gzip_body_is_read_as_its_lines(
    client: Client, tmp_path: Path, content_type: str, encoding: str | None
) -> None:
    expected = command_answer(tmp_path, MORNING)
    extra = {"HTTP_CONTENT_ENCODING": encoding} if encoding else {}
    answer = push(client, gzip.compress(MORNING), content_type=content_type, **extra)
    assert answer.status_code == 200
    assert comparable(answer.json(), "request body") == expected
    assert answer.json()["ingested"] == 1
    assert leftovers() == []


@pytest.mark.usefixtures("admin")
def test_a_gzip_unpacking_past_the_limit_is_read_up_to_it(client: Client, settings: Any) -> None:
    settings.MAX_DECOMPRESSED_BYTES = 100_000
    bomb = gzip.compress(MORNING + b"\x00" * 10_000_000)  # 10 MB of NULs, 10 KB packed
    assert len(bomb) < 20_000
    answer = push(client, bomb, content_type="application/gzip")
    assert answer.status_code == 200
    body = answer.json()
    limit = body["rejects"][-1]
    assert (limit["file"], limit["field"], limit["reason"]) == (
        "request body",
        "file",
        "unpacks to more than 100,000 bytes (the limit, MAX_DECOMPRESSED_BYTES): the rest is"
        " not read; lines before kept",
    )
    assert body["rejects"][0]["line"] == 4  # L7's damaged end, before the NULs
    assert body["ingested"] == 1  # L5's run
    assert Job.objects.get(job_id="9001").usage == 4 * 3600.0
    assert leftovers() == []


@pytest.mark.usefixtures("admin")
@pytest.mark.parametrize("cut", ["past the limit", "truncated"])
def test_a_cut_gzip_keeps_the_running_jobs_before_the_cut(
    client: Client, settings: Any, cut: str
) -> None:
    settings.MAX_DECOMPRESSED_BYTES = 100_000
    packed = gzip.compress(MORNING + b"\x00" * 10_000_000)
    body = packed if cut == "past the limit" else gzip.compress(MORNING * 50)[:-100]
    answer = push(client, body, content_type="application/gzip").json()
    assert answer["rejects"][-1]["field"] == "file"  # cut, as the test means it
    assert answer["ingested"] == 1  # L5's run, read before the cut
    assert answer["running"] == 1
    assert Job.objects.filter(job_id="9002", state="running").exists()


@pytest.mark.usefixtures("admin")
def test_an_idempotency_key_replays_the_first_answer(client: Client) -> None:
    key = {"HTTP_IDEMPOTENCY_KEY": "whitepaper-20261120"}
    first = push(client, MORNING, **key)
    assert first.status_code == 200
    assert "Idempotent-Replayed" not in first
    retried = push(client, MORNING, **key)
    assert retried.status_code == 200
    assert retried["Idempotent-Replayed"] == "true"
    assert retried.json() == first.json()  # the first counts, not a second run's duplicates
    assert retried.json()["ingested"] == 1
    assert IngestRun.objects.count() == 1
    (pushed,) = PushedAccounting.objects.all()
    assert (pushed.key, pushed.cluster.name, pushed.answer) == (
        "whitepaper-20261120", "whitepaper", first.json(),
    )  # fmt: skip

    elsewhere = push(client, MORNING, "/api/clusters/forum/accounting/", **key)
    assert elsewhere.status_code == 409
    assert elsewhere.json() == {
        "error": "conflict",
        "detail": "this Idempotency-Key was used for cluster whitepaper: a new request needs a"
        " new key",
    }
    assert IngestRun.objects.count() == 1
    too_long = push(client, MORNING, HTTP_IDEMPOTENCY_KEY="k" * 256)
    assert too_long.status_code == 400
    assert too_long.json()["detail"] == {"Idempotency-Key": "1 to 255 printable characters"}


@pytest.mark.usefixtures("admin")
def test_an_empty_body_is_a_400(client: Client) -> None:
    # The test client leaves out the type of an empty body; a real client sends it.
    answer = client.generic("POST", URL, b"", CONTENT_TYPE="text/plain")
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "the request is not one this endpoint reads",
        "detail": "the body is empty: send PBS accounting log lines",
    }
    assert IngestRun.objects.count() == 0
    assert leftovers() == []


@pytest.mark.usefixtures("admin")
def test_json_is_an_unsupported_media_type(client: Client) -> None:
    answer = push(client, b'{"lines": []}', content_type="application/json")
    assert answer.status_code == 415
    assert answer.json() == {
        "error": "unsupported media type",
        "detail": 'Unsupported media type "application/json" in request.',
    }
    assert IngestRun.objects.count() == 0
    assert leftovers() == []


@pytest.mark.usefixtures("admin")
def test_a_body_over_the_upload_limit_is_a_413(client: Client, settings: Any) -> None:
    settings.UPLOAD_MAX_FILE_BYTES = 1000
    assert len(MORNING) > 1000
    answer = push(client, MORNING)
    assert answer.status_code == 413
    assert answer.json() == {
        "error": "the request is too large",
        "detail": "the body is over 1,000 bytes (UPLOAD_MAX_FILE_BYTES)",
    }
    assert (IngestRun.objects.count(), Job.objects.filter(job_id="9001").count()) == (0, 0)
    assert leftovers() == []
    assert push(client, MORNING.splitlines(keepends=True)[0]).status_code == 200


def test_a_member_may_not_push_accounting(client: Client) -> None:
    bob = login(client, "bob")
    member_made(bob, node("whitepaper", "B3"), Role.MANAGER)
    answer = push(client, MORNING)
    assert answer.status_code == 403
    assert answer.json() == {"error": "not allowed", "detail": "pushing accounting is for admins"}
    alice = login_made("alice", admin=True)
    secret = api_token_create(
        user=alice, name="read", days=1, scope=TokenScope.READ, now=timezone.now()
    )[1]
    read_only = push(Client(), MORNING, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert read_only.status_code == 403
    assert IngestRun.objects.count() == 0


@pytest.mark.usefixtures("admin")
def test_an_unknown_cluster_is_a_404(client: Client) -> None:
    answer = push(client, MORNING, "/api/clusters/nowhere/accounting/")
    assert answer.status_code == 404
    assert answer.json() == {"error": "not found", "detail": "no such cluster"}
    assert IngestRun.objects.count() == 0


def test_an_admin_s_write_token_pushes(client: Client) -> None:
    alice = login_made("alice", admin=True)
    secret = api_token_create(
        user=alice, name="cron", days=1, scope=TokenScope.WRITE, now=timezone.now()
    )[1]
    answer = push(client, MORNING, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert answer.status_code == 200
    assert answer.json()["ingested"] == 1


@pytest.mark.usefixtures("admin")
def test_the_answer_has_the_fields_its_schema_says(client: Client) -> None:
    answer = push(client, MORNING).json()
    assert set(answer) == set(IngestAnswerSerializer().fields)
    assert set(answer["files"][0]) == set(FileCountsSerializer().fields)
