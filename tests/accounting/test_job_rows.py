"""Reading files into batches: runs priced and sorted, the same in a helper process."""

# ruff: noqa: E501  (accounting records are long lines)

import dataclasses
from pathlib import Path

import pytest

import accounting.job_rows as job_rows
from accounting.copy_text import JOB_COLUMNS
from accounting.job_rows import (
    BATCH,
    Batch,
    HelperFailed,
    Preparation,
    prepare_file,
    prepared_files,
)
from tests.conftest import write_file

Q = '03/01/2026 08:00:00;Q;{id}.pbs01;user={user} group=chem account="CHEM01" queue=work ctime=1772352000 qtime=1772352000 etime=1772352000'
S = '03/01/2026 08:00:05;S;{id}.pbs01;user={user} group=chem account="CHEM01" queue=work ctime=1772352000 qtime=1772352000 etime=1772352000 start=1772352005 exec_host=n1/0*4'
E = '03/01/2026 09:00:05;E;{id}.pbs01;user={user} group=chem account="CHEM01" queue=work ctime=1772352000 qtime=1772352000 etime=1772352000 start=1772352005 exec_host=n1/0*4 end=1772355605 Exit_status=0 resources_used.cput=03:00:00 resources_used.ncpus=4 resources_used.walltime=01:00:00 run_count=1'


def day(*jobs: tuple[int, str], running: int | None = None) -> str:
    lines = []
    for number, user in jobs:
        lines += [Q.format(id=number, user=user), S.format(id=number, user=user)]
        lines.append(E.format(id=number, user=user))
    if running is not None:
        lines.append(S.format(id=running, user="ann"))
    return "\n".join(lines) + "\n"


def preparation(copy: bool = True, formula: str = "ncpus*walltime") -> Preparation:
    return Preparation(
        source="pbs_accounting",
        usage_formula=formula,
        fairshare_entity="euser",
        slurm=False,
        cluster_id=7,
        ingest_id=42,
        copy=copy,
        nodes={"ann": 1, "bob": 2},
    )


def test_runs_of_known_entities_are_fresh_the_others_to_be_checked(tmp_path: Path) -> None:
    text = day((1, "ann"), (2, "cy"), (3, "bob"), running=4) + E.format(id=1, user="ann") + "\n"
    (batch,) = prepare_file(write_file(tmp_path, "20260301", text), preparation())
    assert (batch.fresh_ids, batch.fresh_runs) == (["1", "3"], [1, 1])
    assert [row.rsplit("\t", 1)[1] for row in batch.fresh_rows] == ["1\n", "2\n"]
    assert [(run.job_id, run.state, run.entity) for run in batch.others] == [
        ("2", "ended", "cy"),
        ("4", "running", "ann"),
    ]
    assert not any(run.complete for run in batch.others)
    assert batch.others[0].row.endswith("\t42\t")  # ready for its node
    assert batch.duplicates == 1  # job 1's end, twice
    assert (batch.read, dict(batch.record_types)) == (11, {"Q": 3, "S": 4, "E": 4})
    assert batch.parents == {"ann": "CHEM01", "cy": "CHEM01", "bob": "CHEM01"}


def test_values_for_sqlite_end_with_the_node(tmp_path: Path) -> None:
    (batch,) = prepare_file(write_file(tmp_path, "d", day((1, "bob"))), preparation(copy=False))
    (row,) = batch.fresh_rows
    values = dict(zip(JOB_COLUMNS, row, strict=True))
    assert {name: values[name] for name in ("cluster_id", "job_id", "usage", "node_id")} == {
        "cluster_id": 7,
        "job_id": "1",
        "usage": 4 * 3600,
        "node_id": 2,
    }
    assert values["end"] == "2026-03-01 09:00:05"


def test_batches_hold_at_most_batch_runs(tmp_path: Path) -> None:
    jobs = [(number, "ann") for number in range(1, BATCH + 2)]
    batches = list(prepare_file(write_file(tmp_path, "d", day(*jobs)), preparation()))
    assert [batch.runs for batch in batches] == [BATCH, 1]
    assert sum(batch.read for batch in batches) == 3 * (BATCH + 1)


def test_a_file_that_cannot_be_read_is_one_rejection(tmp_path: Path) -> None:
    (batch,) = prepare_file(str(tmp_path / "missing"), preparation())
    (bad,) = batch.rejects
    assert (bad.line, bad.field, bad.reason) == (
        0,
        "file",
        "cannot read: No such file or directory",
    )


def summary(batches: list[Batch]) -> list[object]:
    return [
        (b.fresh_ids, b.fresh_rows, b.others, b.duplicates, b.rejects, b.read, b.record_types)
        for b in batches
    ]


def test_helpers_give_what_reading_here_gives(tmp_path: Path) -> None:
    paths = [
        write_file(tmp_path, "20260301", day((1, "ann"), (2, "cy"), running=3)),
        write_file(tmp_path, "20260302", day((3, "ann"), (4, "bob")) + "garbage\n"),
        write_file(tmp_path, "20260303", day(*[(n, "bob") for n in range(5, BATCH + 9)])),
    ]
    here, there = [], []
    with prepared_files(paths, preparation(), helpers=0) as files:
        here = [(path, summary(list(batches))) for path, batches in files]
    with prepared_files(paths, preparation(), helpers=2) as files:
        there = [(path, summary(list(batches))) for path, batches in files]
    assert there == here
    assert [len(batches) for _, batches in there] == [1, 1, 2]


def test_a_helper_that_fails_says_why(tmp_path: Path) -> None:
    path = write_file(tmp_path, "d", day((1, "ann")))
    with prepared_files([path], preparation(formula="ncpus*walltme"), helpers=1) as files:
        ((_, batches),) = files
        with pytest.raises(HelperFailed, match="unknown resource 'walltme'"):
            next(batches)


def test_a_helper_that_dies_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_rows, "HELPER_CODE", "import os; os._exit(3)")
    path = write_file(tmp_path, "d", day((1, "ann")))
    with prepared_files([path], preparation(), helpers=1) as files:
        ((_, batches),) = files
        with pytest.raises(HelperFailed, match=r"stopped \(exit code 3\)"):
            next(batches)


SACCT_RUN = "11|11|alpha|batch|normal|physics|phys|100|{user}|1000|2026-03-01T08:00:00|2026-03-01T08:00:00|2026-03-01T08:00:10|2026-03-01T09:00:10|01:00:00|0:0|COMPLETED|1|16|16|4000Mc|billing=16,cpu=16,mem=64000M,node=1|billing=32,cpu=16,mem=64000M,node=1|02:00:00|n1|x\n"


def test_a_run_with_a_nul_byte_is_rejected_with_its_field_not_stored(tmp_path: Path) -> None:
    # PostgreSQL refuses NUL in text: the run stored would have failed the whole ingest.
    path = write_file(tmp_path, "dump.log", SACCT_RUN.format(user="d\x00an"))
    source = dataclasses.replace(preparation(), source="sacct", slurm=True, nodes={})
    (batch,) = prepare_file(path, source)
    assert batch.runs == 0
    assert [(bad.line, bad.field, bad.reason) for bad in batch.rejects] == [
        (1, "user", "holds a NUL byte, which no scheduler writes and the database cannot store")
    ]


def test_a_rejected_line_is_kept_without_its_nul_bytes(tmp_path: Path) -> None:
    path = write_file(
        tmp_path, "t.swf", "1\x00 0 10 3600 4 1800 -1 4 7200 -1 1 7 2 -1 1 -1 -1 -1\n"
    )
    source = dataclasses.replace(preparation(), source="swf", slurm=False, nodes={})
    (batch,) = prepare_file(path, source)
    (bad,) = batch.rejects
    assert bad.line == 1
    assert "\x00" not in bad.text + bad.reason
    assert bad.text.startswith("1\\x00 0 10")
