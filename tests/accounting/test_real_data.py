"""The acceptance test: every real file in ../shared/data ingests, line for line.

Each line is stored, recognised (a record type that carries no run) or rejected with a reason;
the counts per record type equal what the file holds, and ingesting again adds nothing.
"""

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from accounting.models import IngestSource, Job
from accounting.services.ingest import IngestResult, ingest
from tests.conftest import SHARED, Run

pytestmark = pytest.mark.django_db

DATA = SHARED / "data"


def files_or_skip(folder: str, pattern: str) -> list[Path]:
    found = sorted((DATA / folder).glob(pattern))
    if not found:
        pytest.skip(f"the real {folder} files are not at {DATA / folder}")
    return found


def stored(source: IngestSource, path: Path, cluster: str = "real") -> IngestResult:
    return ingest(cluster_name=cluster, source=source, paths=[str(path)])


def pbs_types(path: Path) -> Counter[str]:
    return Counter(line.split(";")[1] for line in path.read_text().splitlines() if line.strip())


@pytest.mark.parametrize(
    "name",
    [
        "ncar-casper/20260101",
        "ncar-casper/20260102",
        "ncar-casper/20260103",
        "ncar-casper/20260130",
        "ncar-derecho/20260101",
        "ncar-derecho/20260102",
        "ncar-derecho/20260103",
        "ncar-derecho/20260129",
        "ncar-laramie/20180212",
        "torque2db-travis/20130819",
        "xdmod-unit/accounting-logs.log",
    ],
)
def test_pbs_logs(name: str) -> None:
    files_or_skip("pbs_accounting", "*/*")
    path = DATA / "pbs_accounting" / name
    first = stored(IngestSource.PBS_ACCOUNTING, path)
    (summary,) = first.files
    types = pbs_types(path)
    assert summary.record_types == types
    assert (summary.read, summary.rejected) == (sum(types.values()), 0)
    runs = summary.ingested + summary.running + summary.queued
    assert Job.objects.count() == runs
    assert Job.objects.filter(state="queued").count() == summary.queued
    again = stored(IngestSource.PBS_ACCOUNTING, path)
    assert (again.run.ingested, again.run.running, again.run.queued, again.run.rejected) == (
        0, 0, 0, 0,
    )  # fmt: skip
    assert again.run.duplicates == summary.duplicates + runs
    assert Job.objects.count() == runs


def test_pbs_figures_of_sources_md() -> None:
    files_or_skip("pbs_accounting", "*/*")
    laramie = stored(IngestSource.PBS_ACCOUNTING, DATA / "pbs_accounting/ncar-laramie/20180212")
    assert laramie.files[0].record_types == {"Q": 43, "S": 34, "E": 33, "L": 19, "D": 3}
    # Every E is a run; the one S without its E in the file is still running; the 7 jobs with
    # a Q and no S, E, R, D or A (awk's count of the file says 7 too) are waiting, but their Q
    # says only queue=, as OpenPBS writes it: no one to queue them as, so none is stored.
    assert (laramie.run.ingested, laramie.run.running, laramie.run.queued) == (33, 1, 0)
    logs = DATA / "pbs_accounting"
    xdmod = stored(IngestSource.PBS_ACCOUNTING, logs / "xdmod-unit/accounting-logs.log", "x")
    # Lines 1 and 2 are one job, with and without its server.
    assert (xdmod.run.ingested, xdmod.run.duplicates) == (8, 1)
    torque = stored(IngestSource.PBS_ACCOUNTING, logs / "torque2db-travis/20130819", "t")
    assert torque.files[0].record_types == {"Q": 239, "S": 236, "E": 234, "D": 5}
    assert torque.run.queued == 0  # Torque's Q says only queue= too: 3 are waiting, no one's


def test_a_directory_of_day_files_pairs_starts_with_later_ends(run: Run) -> None:
    files_or_skip("pbs_accounting", "*/*")
    folder = DATA / "pbs_accounting" / "ncar-derecho"
    ran = run("ingest_pbs_accounting", str(folder), "--cluster", "derecho", "--json")
    assert ran.status == 0, ran.err
    document = json.loads(ran.out)
    total = sum((pbs_types(path) for path in sorted(folder.iterdir())), Counter())
    assert (document["record_types"], document["rejected"]) == (dict(sorted(total.items())), 0)
    runs = Job.objects.exclude(state__in=["running", "queued"]).count()
    # Every E is a run, stored once; a later day's E completes an earlier day's running S.
    assert document["ingested"] + document["duplicates"] == total["E"] + total.get("R", 0)
    assert runs == document["ingested"]
    # A running row stored from one day is gone once a later day holds the job's end; a
    # queued row once a later day starts, ends, deletes or aborts the job.
    ended = Job.objects.exclude(state__in=["running", "queued"]).values("job_id")
    assert not Job.objects.filter(state="running", job_id__in=ended).exists()
    assert 0 < Job.objects.filter(state="running").count() <= document["running"]
    started = Job.objects.exclude(state="queued").values("job_id")
    assert not Job.objects.filter(state="queued", job_id__in=started).exists()
    assert 0 < Job.objects.filter(state="queued").count() <= document["queued"]


SACCT_FILES = [
    "phillips.log",
    "pozidriv.log",
    "robertson-filter-test.log",
    "xdmod-unit/accounting-logs-with-job-arrays.log",
    "xdmod-unit/accounting-logs.log",
    "xdmod-unit/non-ended-job-state.log",
    "xdmod-unit/unknown-job-state.log",
    "xdmod-unit/utf8-multibyte-chars.log",
]


@pytest.mark.parametrize("name", SACCT_FILES)
def test_sacct_dumps(name: str) -> None:
    files_or_skip("sacct", "*.log")
    path = DATA / "sacct" / name
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    states = Counter(line.split("|")[16].split()[0] for line in lines)
    result = stored(IngestSource.SACCT, path)
    (summary,) = result.files
    rejected = {state: n for state, n in states.items() if state in ("FOO", "BAR")}
    assert summary.rejected == sum(rejected.values())
    kept = {state: n for state, n in states.items() if state not in rejected}
    if "with-job-arrays" not in name:  # a range row expands into its tasks
        assert summary.record_types == kept
    assert summary.read == len(lines)
    again = stored(IngestSource.SACCT, path)
    assert (again.run.ingested, again.run.running) == (0, 0)


def test_sacct_figures_of_sources_md() -> None:
    files_or_skip("sacct", "*.log")
    phillips = stored(IngestSource.SACCT, DATA / "sacct/phillips.log")
    assert phillips.files[0].record_types == {
        "COMPLETED": 2324,
        "FAILED": 1717,
        "CANCELLED": 243,
        "TIMEOUT": 1,
    }
    assert phillips.run.ingested == 4285


SWF_TRACES = {
    "KTH-SP2-1996-2.1-cln.swf.gz": (28476, 0),
    "Sandia-Ross-2001-1.1-cln.swf.gz": (57882, 0),
    "LLNL-Thunder-2007-1.1-cln.swf.gz": (121039, 1190),
    "HPC2N-2002-2.2-cln.swf.gz": (202871, 0),
    "SDSC-BLUE-2000-4.2-cln.swf.gz": (243306, 0),
    "CEA-Curie-2011-2.1-cln.swf.gz": (312826, 0),
}


@pytest.mark.parametrize("name", sorted(SWF_TRACES))
def test_swf_traces(name: str) -> None:
    files_or_skip("swf", "*.swf.gz")
    path = DATA / "swf" / name
    jobs, rejected = SWF_TRACES[name]
    with gzip.open(path, "rt") as trace:
        data_lines = sum(1 for line in trace if line.strip() and not line.startswith(";"))
    assert data_lines == jobs
    result = stored(IngestSource.SWF, path)
    (summary,) = result.files
    assert (summary.read, summary.rejected) == (jobs, rejected)
    assert {bad.field for bad in summary.rejects} <= {"submit_time"}
    # A job number may repeat in a cleaned trace; the repeat is a duplicate, never stored twice.
    assert summary.ingested + summary.duplicates + summary.rejected == jobs
    assert Job.objects.count() == summary.ingested


def test_swf_again_is_a_no_op() -> None:
    files_or_skip("swf", "*.swf.gz")
    path = DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
    first = stored(IngestSource.SWF, path)
    again = stored(IngestSource.SWF, path)
    assert (again.run.ingested, again.run.duplicates) == (0, first.run.ingested)
