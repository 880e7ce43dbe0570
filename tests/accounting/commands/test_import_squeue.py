"""import_squeue of the snapshots big sites write, and of lines no squeue writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accounting.models import Job
from tests.accounting.parsers.test_squeue import streamed
from tests.conftest import Run

pytestmark = pytest.mark.django_db


def test_a_snapshot_over_32_mib_is_imported_whole(tmp_path: Path, run: Run) -> None:
    # 20,000 pending jobs are 60 MB of squeue --json; a bound of 32 MiB on the document refused
    # the queue of every big site.
    path = tmp_path / "squeue.json"
    with path.open("wb") as out:
        out.writelines(streamed(350, pad=100_000))
    assert path.stat().st_size > 33 << 20
    ran = run("import_squeue", str(path), "--cluster", "big", "--json")
    assert ran.status == 0, ran.err
    document = json.loads(ran.out)
    assert (document["queued"], document["rejected"]) == (350, 0)
    assert Job.objects.filter(cluster__name="big", state="queued").count() == 350


@pytest.mark.parametrize("size", [5 << 20, 60 << 20], ids=["5 MiB", "60 MiB"])
def test_a_job_with_a_line_no_squeue_writes_is_rejected_naming_it(
    tmp_path: Path, run: Run, size: int
) -> None:
    lines = list(streamed(3))
    at = [n for n, line in enumerate(lines) if b'"name"' in line][1]
    lines[at] = lines[at].replace(b'"relax"', b'"' + b"x" * size + b'"')
    path = tmp_path / "squeue.json"
    path.write_bytes(b"".join(lines))
    ran = run("import_squeue", str(path), "--cluster", "big", "--json")
    assert ran.status == 0, ran.err
    document = json.loads(ran.out)
    rejects = [(bad["line"], bad["field"]) for bad in document["rejects"]]
    opens = max(n for n in range(at) if lines[n] == b"{\n") + 1
    assert rejects == [(at + 1, "line"), (opens, "jobs[1]")]
    assert f"line {at + 1} is longer than" in document["rejects"][1]["reason"]
    stored = Job.objects.filter(cluster__name="big").values_list("job_id", flat=True)
    assert sorted(stored) == ["1000", "1002"]
