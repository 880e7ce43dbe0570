"""What a real OpenPBS did, from its own inputs: every captured case imported as a site
imports it, PBS's own numbers and order required.

Each folder of tests/captures/pbs/ is one case that `make pbs-oracle` (ops/pbs_oracle/) ran on
an OpenPBS built from source (server, scheduler, comm and one MoM on one host) and captured;
its case.json says what kind it is, the inputs in import order and the cycle it was taken at.

- priorities: jobs kept queued (the node offline) and one scheduling cycle. Every job's
  `Formula Evaluation` as PBS printed it in its log, the jobs considered in PBS's order, the
  ones left out (0 shares, under the threshold) unnumbered; formulas PBS refused refused.
- usage: real jobs that ended by themselves on a clean usage database, then two more cycles.
  Replayed with usage_recording `pbs` on the cycles of PBS's log, the usage database is the one
  PBS wrote (`pbsfs` prints what PBS's printed), each decay falls in the cycle PBS's did, and
  usage_loss's `actual` is the accounting log's. With fairshare_usage_res cput the CPU time
  at each sample is in no file a site has (docs/pbs.md): there the samples PBS read must be
  the ones we say it read, their CPU time taken from what the server said then (probe.json).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from accounting.models import Cycle, NodeHistory
from accounting.parsers.pbs import read_pbs_accounting
from accounting.parsers.records import JobRecord, JobState
from accounting.parsers.sched_log import SchedCycle, read_sched_log
from accounting.usage_loss import cluster_iteration, cluster_polling, recording_events_get
from tests.conftest import Run
from trees.engine.formula import parse_formula
from trees.engine.job_sort import formula_log_line
from trees.engine.times import epoch_seconds, epoch_time
from trees.formats.sched_config import parse_sched_config
from trees.formats.usage_file import read_usage_file
from trees.models import Cluster, UsageRecording
from trees.services.clusters import cluster_settings_set
from trees.services.priority_config import job_sort_formula_problem

pytestmark = pytest.mark.django_db

CAPTURES = Path(__file__).resolve().parents[2] / "captures" / "pbs"
CASES = sorted(path.parent for path in CAPTURES.glob("*/case.json"))
PRIORITY_CASES = [
    folder for folder in CASES
    if json.loads((folder / "case.json").read_text())["kind"] == "priorities"
]  # fmt: skip
USAGE_CASES = [
    folder for folder in CASES
    if json.loads((folder / "case.json").read_text())["kind"] == "usage"
]  # fmt: skip


def case_imported(run: Run, folder: Path, document: dict[str, Any], cluster: str) -> None:
    """The case's inputs through the commands, in its order; each must succeed."""
    for step in document["inputs"]:
        if "import" in step:
            args = [step["import"], str(folder / step["file"]), *step.get("args", [])]
        else:
            args = [step["command"], *step["args"]]
        ran = run(*args, "--cluster", cluster)
        assert ran.status == 0, f"{' '.join(args)}: {ran.err}"


def short(job_id: str) -> str:
    """A job id without its server (`7.vm` is `7`), as the imports store it."""
    return job_id.split(".", 1)[0]


def test_the_captures_are_there() -> None:
    assert len(PRIORITY_CASES) >= 3, f"no PBS priority captures under {CAPTURES}"
    assert len(USAGE_CASES) >= 3, f"no PBS usage captures under {CAPTURES}"


@pytest.mark.parametrize("folder", PRIORITY_CASES, ids=[path.name for path in PRIORITY_CASES])
def test_priorities_are_pbs_s(run: Run, folder: Path) -> None:
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    (cycle,) = read_sched_log((folder / "sched_log").read_text().splitlines()).cycles
    ran = run("job_priorities", "--cluster", "oracle", "--now", document["cycle_time"],
              "--format", "json")  # fmt: skip
    assert ran.status == 0, ran.err
    ours = {job["job_id"]: job for job in json.loads(ran.out)}
    values = {
        short(job_id): formula_log_line(ours[short(job_id)]["priority"]) for job_id in cycle.formula
    }
    assert values == {
        short(job_id): f"Formula Evaluation = {v}" for job_id, v in cycle.formula.items()
    }
    considered = sorted((job for job in ours.values() if job["position"] is not None),
                        key=lambda job: job["position"])  # fmt: skip
    assert [job["job_id"] for job in considered] == [short(job_id) for job_id in cycle.considered]
    for job_id in [*cycle.zero_shares, *cycle.under_threshold]:
        assert ours[short(job_id)]["position"] is None, job_id
    for refused in document["refused"]:
        if refused["status"] != 0:
            assert job_sort_formula_problem(refused["formula"], {}) is not None, refused


def replayed_as_pbs(run: Run, folder: Path) -> Cluster:
    """The usage case imported and replayed on PBS's cycles with usage_recording `pbs`."""
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    cluster = Cluster.objects.get(name="oracle")
    cluster_settings_set(
        cluster=cluster,
        values={"usage_recording": UsageRecording.PBS},
        reason="as the oracle's PBS records usage",
        user=None,
    )
    # Up to the last cycle the capture waited for: PBS's usage database is as it left it.
    last = read_sched_log((folder / "sched_log").read_text().splitlines()).cycles[-1].start
    ran = run("replay", "--cluster", "oracle", "--until", epoch_time(last).isoformat())
    assert ran.status == 0, ran.err
    return Cluster.objects.get(pk=cluster.pk)


def ended_runs(folder: Path) -> list[JobRecord]:
    records = read_pbs_accounting((folder / "accounting").read_bytes().splitlines())
    return [r for r in records if isinstance(r, JobRecord) and r.state == JobState.ENDED]


def pbsfs_usage(text: str) -> dict[str, float]:
    """Each leaf's usage in `pbsfs` output (the lines below the units line)."""
    usage = {}
    for line in text.splitlines()[1:]:
        name, rest = line.split(":", 1)
        usage[name.strip()] = float(rest.split("Usage:")[1].split()[0])
    return usage


@pytest.mark.parametrize("folder", USAGE_CASES, ids=[path.name for path in USAGE_CASES])
def test_recorded_usage_is_pbs_s(run: Run, folder: Path) -> None:
    cluster = replayed_as_pbs(run, folder)
    ours = run("pbsfs", "--cluster", "oracle")
    assert ours.status == 0, ours.err
    pbs = (folder / "pbsfs.txt").read_text()
    if cluster.fairshare_usage_res != "cput":
        assert ours.out == pbs
    # Each decay in the cycle PBS's log shows it in.
    logged = [(cycle.start, cycle.decays) for cycle in read_sched_log(
        (folder / "sched_log").read_text().splitlines()).cycles if cycle.decays]  # fmt: skip
    ledger = Cycle.objects.filter(cluster=cluster, decays_applied__gt=0).order_by("at")
    assert [(epoch_seconds(c.at), c.decays_applied) for c in ledger] == logged
    # What the jobs used is what the accounting log says they used.
    formula = parse_formula(cluster.fairshare_usage_res, {"walltime", "cput", "ncpus"})
    used: dict[str, float] = {}
    for record in ended_runs(folder):
        used[record.user] = used.get(record.user, 0.0) + formula.evaluate(record.usage_resources())
    loss = run("usage_loss", "--cluster", "oracle", "--format", "json")
    assert loss.status == 0, loss.err
    assert {entity["entity"]: entity["actual"] for entity in json.loads(loss.out)} == used


def server_said(folder: Path) -> dict[tuple[str, int], float]:
    """What the server said of each job's cput at each of its samples (probe.json: the job's
    walltime then, from its start), by short job id and sample second."""
    starts = {short(r.job_id): r.start for r in ended_runs(folder) if r.start is not None}
    said = {}
    for seen in json.loads((folder / "probe.json").read_text()):
        if seen["walltime"]:
            hours, minutes, seconds = map(int, seen["walltime"].split(":"))
            cput_h, cput_m, cput_s = map(int, seen["cput"].split(":"))
            job = short(seen["job"])
            at = starts[job] + hours * 3600 + minutes * 60 + seconds
            said[job, at] = float(cput_h * 3600 + cput_m * 60 + cput_s)
    return said


CPUT_CASES = [
    folder for folder in USAGE_CASES
    if parse_sched_config((folder / "sched_config").read_bytes()).fairshare_usage_res == "cput"
]  # fmt: skip


@pytest.mark.parametrize("folder", CPUT_CASES, ids=[path.name for path in CPUT_CASES])
def test_the_samples_pbs_read_are_those_we_say(run: Run, folder: Path) -> None:
    replayed_as_pbs(run, folder)
    said = server_said(folder)
    loss = run("usage_loss", "--cluster", "oracle", "--format", "json", "--jobs")
    recorded: dict[str, float] = {}
    for job in json.loads(loss.out):
        if job["last_poll"] is not None:
            at = epoch_seconds(datetime.fromisoformat(job["last_poll"]))
            recorded[job["entity"]] = recorded.get(job["entity"], 0.0) + said[job["job_id"], at]
    pbs = pbsfs_usage((folder / "pbsfs.txt").read_text())
    assert {name: 1 + value for name, value in recorded.items() if value} == {
        name: value for name, value in pbs.items() if name in recorded and value != 1
    }


@pytest.mark.parametrize("folder", USAGE_CASES, ids=[path.name for path in USAGE_CASES])
def test_without_the_log_the_jobs_make_pbs_s_cycles(run: Run, folder: Path) -> None:
    """From the accounting log alone (its submissions, starts and ends) and
    scheduler_iteration: every cycle PBS's log shows after the first submission's second, at
    the same second (in that one, the scheduler's own start made more)."""
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    cluster = Cluster.objects.get(name="oracle")
    logged = [cycle.start for cycle in read_sched_log(
        (folder / "sched_log").read_text().splitlines()).cycles]  # fmt: skip
    first = min(r.qtime for r in ended_runs(folder) if r.qtime is not None)
    polling, iteration = cluster_polling(cluster), cluster_iteration(cluster)
    events = recording_events_get(cluster=cluster, first=first, last=logged[-1], margin=0)
    derived = events.recording(polling, iteration, logged=False).cycles
    assert derived[0].at == first
    after = [at for at in logged if at > first]
    assert [cycle.at for cycle in derived if cycle.at > first] == after


@pytest.mark.parametrize("folder", PRIORITY_CASES, ids=[path.name for path in PRIORITY_CASES])
def test_job_priorities_sets_pbs_s_logged_values_beside_ours(run: Run, folder: Path) -> None:
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    imported = run("import_sched_log", str(folder / "sched_log"), "--cluster", "oracle",
                   "--timezone", "UTC")  # fmt: skip
    assert imported.status == 0, imported.err
    (cycle,) = read_sched_log((folder / "sched_log").read_text().splitlines()).cycles
    now = ("--now", document["cycle_time"])
    ran = run("job_priorities", "--cluster", "oracle", *now, "--logged", "--format", "json")
    if not cycle.formula:  # no job_sort_formula: the log printed no value
        assert ran.status == 1
        assert "no cycle of an imported scheduler log" in ran.err
        return
    jobs = {job["job_id"]: job for job in json.loads(ran.out)}
    assert {job_id: job["logged"] for job_id, job in jobs.items() if job["logged"]} == {
        short(job_id): value for job_id, value in cycle.formula.items()
    }
    assert all(job["logged_equal"] for job in jobs.values() if job["logged"])
    text = run("job_priorities", "--cluster", "oracle", *now, "--logged").out
    count = len(cycle.formula)
    assert text.splitlines()[-1] == (
        f"PBS's log, cycle at {document['cycle_time']}: {count} of {count} formula values the same"
    )


def test_a_logged_value_we_do_not_print_is_marked(run: Run, tmp_path: Path) -> None:
    folder = CAPTURES / "seed_formula"
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    lines = (folder / "sched_log").read_text().splitlines()
    (first,) = [n for n, line in enumerate(lines) if "Formula Evaluation = " in line][:1]
    job_id = lines[first].split(";")[4]
    lines[first] = lines[first].rsplit("= ", 1)[0] + "= 12345.5"
    log = tmp_path / "sched_log"
    log.write_text("\n".join(lines) + "\n")
    run("import_sched_log", str(log), "--cluster", "oracle", "--timezone", "UTC")
    now = ("--now", document["cycle_time"])
    text = run("job_priorities", "--cluster", "oracle", *now, "--logged").out.splitlines()
    (row,) = [line for line in text if line.split()[2:3] == [short(job_id)]]
    assert "≠ 12345.5" in row
    count = sum(1 for line in lines if "Formula Evaluation = " in line)
    assert text[-1].endswith(f": {count - 1} of {count} formula values the same")
    slurm = run("job_priorities", "--cluster", "nowhere", "--logged")
    assert slurm.status == 1


SNAPSHOT_CASES = [folder for folder in USAGE_CASES if (folder / "usage_after").is_dir()]


@pytest.mark.parametrize("folder", SNAPSHOT_CASES, ids=[path.name for path in SNAPSHOT_CASES])
def test_the_usage_after_each_decay_is_pbs_s(run: Run, folder: Path) -> None:
    """The replay's history at each cycle PBS decayed in: every entity's usage as the usage
    file PBS wrote in that cycle has it (the last version of the file before the next cycle;
    after the last cycle, the file the capture took)."""
    cluster = replayed_as_pbs(run, folder)
    cycles = read_sched_log((folder / "sched_log").read_text().splitlines()).cycles
    written = sorted(
        (int(path.name), read_usage_file(path.read_bytes()))
        for path in (folder / "usage_after").iterdir()
    )
    # The file as the capture took it, after the last cycle.
    written.append((cycles[-1].start, read_usage_file((folder / "usage").read_bytes())))
    entities = sorted({record.user for record in ended_runs(folder)})
    nexts: list[SchedCycle | None] = [*cycles[1:], None]
    decayed = [(c, after) for c, after in zip(cycles, nexts, strict=True) if c.decays]
    assert len(decayed) >= 2
    for cycle, following in decayed:
        until = following.start if following is not None else cycle.start + 3600
        (_, usage), *_ = [item for item in reversed(written) if cycle.start <= item[0] < until]
        history = NodeHistory.objects.filter(node__cluster=cluster, at=epoch_time(cycle.start))
        ours = dict(history.filter(node__name__in=entities).values_list("node__name", "usage"))
        pbs = {record.name: record.usage for record in usage.records}
        assert {name: ours.get(name, 1.0) for name in entities} == {
            name: pbs.get(name, 1.0) for name in entities
        }, cycle.start
