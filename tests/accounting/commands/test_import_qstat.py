"""import_qstat of the snapshots big sites write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accounting.models import Job
from tests.accounting.parsers.test_qstat import streamed
from tests.conftest import Run

pytestmark = pytest.mark.django_db


def test_a_snapshot_over_32_mib_is_imported_whole(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "qstat.json"
    with path.open("wb") as out:
        out.writelines(streamed(350, pad=100_000))
    assert path.stat().st_size > 33 << 20
    ran = run("import_qstat", str(path), "--cluster", "big", "--json")
    assert ran.status == 0, ran.err
    document = json.loads(ran.out)
    assert (document["queued"], document["rejected"]) == (350, 0)
    assert Job.objects.filter(cluster__name="big", state="queued").count() == 350
