"""Accounting files read, every job run priced and laid out as a row of the job table.

Pure (no Django): a file becomes batches of PreparedRun with the lines that could not be
taken. The service decides what is new and stores it. For big inputs the reading runs in a
helper process, so that parsing one batch and storing the previous one use both cores.
"""

from __future__ import annotations

import gc
import gzip
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, tzinfo
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, cast

from accounting.copy_text import SOURCE_MAX, TEXT_MAX, CopyLines, node_text, with_node
from accounting.entities import SwfAccountFrom, pbs_entity, pbs_placement, slurm_entity, swf_named
from accounting.parsers.accelerator_jobs import read_accelerator_jobs
from accounting.parsers.pbs import read_pbs_log
from accounting.parsers.pbs import record_type as pbs_record_type
from accounting.parsers.qstat import QstatJsonReader
from accounting.parsers.records import USAGE_RESOURCES, JobRecord, JobState, Parsed, Recognised
from accounting.parsers.sacct import read_sacct
from accounting.parsers.squeue import read_squeue_json
from accounting.parsers.swf import SwfReader
from trees.engine.formula import Formula, FormulaValueError, parse_formula
from trees.engine.slurm_pass import run_usage
from trees.formats.lines import MAX_LINE_BYTES, overlong_reason
from trees.formats.rejected import RejectedLine

__all__ = [
    "BATCH",
    "HELPER_CODE",
    "HELPER_FROM_BYTES",
    "WRONG_FORMAT_AFTER",
    "Batch",
    "HelperFailed",
    "Preparation",
    "PreparedRun",
    "SourceKind",
    "completed_row",
    "helper",
    "input_size",
    "prepare_file",
    "prepared_files",
]

SourceKind = Literal["pbs_accounting", "swf", "sacct", "qstat", "squeue", "accelerator"]
# Sources that are a snapshot of the queue: a job queued before it and missing from it has
# left the queue.
SNAPSHOTS = frozenset({"qstat", "squeue", "accelerator"})
BATCH = 5000
# A file whose first lines are all rejected is not of this format: stop reading it there.
WRONG_FORMAT_AFTER = 100
# Inputs at least this big are read by a helper process (starting one costs about 0.1 s).
HELPER_FROM_BYTES = 16 << 20
_LENGTH = struct.Struct("<Q")  # a helper's message length on its stdout
HELPER_CODE = "from accounting.job_rows import helper; helper()"
_HELPER_GC = (100_000, 50, 100)  # gc.set_threshold in a helper (Python's default: 700, 10, 10)
_INT_MAX = 2**31 - 1
_BIG_MAX = 2**63 - 1
_LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z, the last time a database stores
# What the job table's columns hold; the parsers refuse absurd values well before these.
_LIMITS = (
    ("run", _INT_MAX),
    ("ncpus", _INT_MAX),
    ("ngpus", _INT_MAX),
    ("nodes", _INT_MAX),
    ("requested_walltime", _INT_MAX),
    ("walltime", _INT_MAX),
    ("memory", _BIG_MAX),
    ("vmem", _BIG_MAX),
    ("mpiprocs", _INT_MAX),
    ("cpupercent", _INT_MAX),
)
_TEXTS = ("job_id", "server", "user", "group", "account", "project", "queue", "partition",
          "jobname", "mom")  # fmt: skip
_GZIP_MAGIC = b"\x1f\x8b"
_LABELS = {
    "pbs_accounting": "PBS accounting log",
    "swf": "SWF workload trace",
    "sacct": "Slurm sacct dump",
    "qstat": "qstat -f -F json snapshot",
    "squeue": "squeue --json snapshot",
    "accelerator": "Altair Accelerator jobs export",
}


@dataclass(frozen=True)
class Preparation:
    """What pricing and laying out the runs needs to know of the cluster and the ingestion."""

    source: SourceKind
    usage_formula: str  # the cluster's fairshare_usage_res (Slurm: billable TRES × elapsed)
    fairshare_entity: str
    slurm: bool  # runs are charged to `account:user` associations
    cluster_id: int
    ingest_id: int
    copy: bool  # rows as COPY text lines (PostgreSQL), else tuples of values
    swf_account_from: SwfAccountFrom = "group"
    time_zone: tzinfo = UTC  # sacct prints the cluster's local time without a zone
    # The tree's node of each entity when the ingestion began (PBS: by name; Slurm: by
    # `account:user`); a run of another entity is left for the service to place.
    nodes: dict[str, int] = field(default_factory=dict)
    # A compressed file that unpacks to more is read up to there (a gzip bomb), then rejected.
    max_decompressed: int | None = None


_NOT_OVER = frozenset({JobState.RUNNING, JobState.QUEUED})


class DecompressedTooLarge(Exception):
    """A compressed file unpacked past Preparation.max_decompressed."""


class PreparedRun(NamedTuple):
    """One priced run: its key, its entity and its row of the job table.

    `row` is a COPY text line or the tuple of the values of JOB_COLUMNS; without `node_id`
    (and the newline) unless `complete`.
    """

    job_id: str
    run: int
    state: str  # a JobState value
    entity: str
    row: Any
    complete: bool = False


@dataclass
class Batch:
    """Up to BATCH priced runs of one file, with what the reading counted on the way.

    The ended and requeued runs of entities the tree has come as complete rows, ready to be
    stored at once (`fresh_*`, in step); the others (running, or of an entity the tree lacks)
    as PreparedRun, to be checked against the job table one by one.
    """

    fresh_ids: list[str] = field(default_factory=list)
    fresh_runs: list[int] = field(default_factory=list)
    fresh_rows: list[Any] = field(default_factory=list)
    others: list[PreparedRun] = field(default_factory=list)
    duplicates: int = 0  # runs the batch repeats (the first end of a run is kept)
    rejects: list[RejectedLine] = field(default_factory=list)
    read: int = 0  # lines that held a record
    record_types: Counter[str] = field(default_factory=Counter)
    # The entities first met in this batch and the node --create-nodes would put them under.
    parents: dict[str, str | None] = field(default_factory=dict)
    # Jobs that will not start from the queue any more (PBS D, A): their queued rows go.
    withdrawn: list[str] = field(default_factory=list)
    # Each queued job's request (job id, records.JobRequest as JSON), for its queued row.
    requests: list[tuple[str, str]] = field(default_factory=list)
    # A snapshot's jobs (every job it lists) and its time, on its last batch.
    listed: list[str] = field(default_factory=list)
    snapshot_at: int | None = None
    consumed: int = 0  # bytes of the (compressed) file read since the previous batch

    @property
    def runs(self) -> int:
        return len(self.fresh_rows) + len(self.others)


@dataclass
class _Runs:
    """The runs of a batch being read, by (job id, run): fresh rows, and the others."""

    fresh: dict[tuple[str, int], Any] = field(default_factory=dict)
    others: dict[tuple[str, int], PreparedRun] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.fresh) + len(self.others)


def completed_row(row: Any, node: int | None) -> Any:
    """A row of PreparedRun with its node_id: the COPY line ended, or the values extended."""
    return with_node(row, node) if isinstance(row, str) else (*row, node)


def prepare_file(path: str, preparation: Preparation) -> Iterator[Batch]:
    """The batches of one file, in file order; a file that cannot be read is one rejection."""
    try:
        handle = _open(path)
    except OSError as exc:
        rejection = RejectedLine(0, "file", f"cannot read: {exc.strerror or exc}", "")
        yield Batch(rejects=[rejection])
        return
    with handle:
        yield from _Reader(path, handle, preparation).batches()


class _Reader:
    """One file, read into batches: parsed, priced, checked against the table's limits."""

    def __init__(self, path: str, handle: IO[bytes], preparation: Preparation) -> None:
        self.preparation = preparation
        self.handle = handle
        self.raw = getattr(handle, "fileobj", None) or handle
        self.reported = 0
        self.number = 0  # lines read so far
        self.unpacked = 0  # bytes read so far, unpacked
        self.compressed = handle is not self.raw
        self.overlong: list[int] = []  # lines too long to read, not yet rejected
        self.skipped: list[int] = []  # every line too long to read (a snapshot's job with one is)
        self.cut: RejectedLine | None = None  # where a compressed file stopped early, and why
        self.formula: Formula = parse_formula(preparation.usage_formula, USAGE_RESOURCES)
        self.slurm = preparation.slurm
        self.seen: set[str] = set()
        self.lines = (
            CopyLines(preparation.cluster_id, path, preparation.ingest_id)
            if preparation.copy
            else None
        )
        self.path = path[:SOURCE_MAX]
        self.snapshot_at: int | None = None  # a qstat or squeue snapshot's time, once read

    def batches(self) -> Iterator[Batch]:
        batch, runs = Batch(), _Runs()
        kinds: list[str] = []  # of the batch's lines, counted when it is done
        read = rejected = 0
        last_line = -1
        self.cut = None
        try:
            for item in self._items():
                if item.line != last_line:
                    batch.read += 1
                    read += 1
                    last_line = item.line
                if isinstance(item, JobRecord):
                    kinds.append(self._record_type(item))
                    self._add(runs, batch, item)
                    if len(runs) >= BATCH:
                        yield self._done(batch, runs, kinds)
                        batch, runs, kinds = Batch(), _Runs(), []
                elif isinstance(item, Recognised):
                    kinds.append(item.kind)
                    if item.withdrawn:
                        batch.withdrawn.append(item.withdrawn)
                else:
                    batch.rejects.append(item)
                    rejected += 1
                    if read == rejected == WRONG_FORMAT_AFTER:
                        batch.rejects.append(self._not_this_format())
                        break
                if self.overlong:
                    batch.rejects.extend(self._overlong())
        finally:
            if self.cut is not None:
                batch.rejects.append(self.cut)
        batch.rejects.extend(self._overlong())
        batch.snapshot_at = self.snapshot_at
        if read == 0 and not batch.rejects:
            batch.rejects.append(RejectedLine(0, "file", "empty: no records in the file", ""))
        yield self._done(batch, runs, kinds)

    def _items(self) -> Iterator[Parsed]:
        lines = self._lines()
        source = self.preparation.source
        if source == "pbs_accounting":
            return read_pbs_log(lines)
        if source == "sacct":
            return read_sacct(lines, tz=self.preparation.time_zone)
        if source == "qstat":
            reader = QstatJsonReader(lines, tz=self.preparation.time_zone, skipped=self.skipped)
            return self._snapshot(reader, lambda: reader.timestamp)
        if source == "squeue":
            return self._snapshot(read_squeue_json(lines, skipped=self.skipped), lambda: None)
        if source == "accelerator":
            return self._snapshot(read_accelerator_jobs(lines), self._modified)
        account_from = self.preparation.swf_account_from
        return (
            swf_named(item, account_from=account_from) if isinstance(item, JobRecord) else item
            for item in SwfReader(lines)
        )

    def _snapshot(
        self, items: Iterable[Parsed], taken: Callable[[], int | None]
    ) -> Iterator[Parsed]:
        """A snapshot's items; once read whole, `snapshot_at` is when it was taken: the
        file's own time (qstat's timestamp; an Accelerator export's has none, and its file's
        modification time stands for it), but never before the newest time a job in it
        carries; without either, now. A file that is not a snapshot at all (a `file`
        rejection) leaves it None: it says nothing of the queue."""
        newest, whole = None, True
        for item in items:
            if isinstance(item, RejectedLine) and item.field == "file":
                whole = False
            elif isinstance(item, JobRecord) and item.request and item.request.sampled:
                newest = max(newest or 0, item.request.sampled)
            elif isinstance(item, JobRecord) and self.preparation.source == "accelerator":
                # The export has no time of its own: it was taken after every time it holds.
                times = (item.ctime, item.start, item.end)
                newest = max(newest or 0, *(moment or 0 for moment in times))
            yield item
        if whole:
            self.snapshot_at = max(taken() or 0, newest or 0) or int(time.time())

    def _modified(self) -> int | None:
        """When the file read was last written; None for what is no file on disk."""
        try:
            return int(os.fstat(self.raw.fileno()).st_mtime)
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            return None

    def _lines(self) -> Iterator[bytes]:
        """The file's lines, up to where a compressed file ends early, is damaged or unpacks
        past max_decompressed: then they stop as at the end of the file (the parser hands on
        the runs still running or queued that it held) and `cut` says why, with its line."""
        try:
            yield from self._whole_lines()
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            reason = f"the compressed file ends early or is damaged ({exc}); lines before kept"
            self.cut = RejectedLine(self.number + 1, "file", reason, "")
        except DecompressedTooLarge:
            reason = (
                f"unpacks to more than {self.preparation.max_decompressed:,} bytes (the limit,"
                " MAX_DECOMPRESSED_BYTES): the rest is not read; lines before kept"
            )
            self.cut = RejectedLine(self.number, "file", reason, "")

    def _whole_lines(self) -> Iterator[bytes]:
        """The file's lines; one longer than MAX_LINE_BYTES is skipped (a blank line stands
        for it, and it is rejected), and a compressed file stops at max_decompressed."""
        limit = self.preparation.max_decompressed if self.compressed else None
        readline = self.handle.readline
        while line := readline(MAX_LINE_BYTES + 1):
            self.number += 1
            self.unpacked += len(line)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    self._count(len(rest), limit)
                self._count(len(rest), limit)
                self.overlong.append(self.number)
                self.skipped.append(self.number)
                line = b"\n"
            if limit is not None and self.unpacked > limit:
                raise DecompressedTooLarge
            yield line

    def _count(self, size: int, limit: int | None) -> None:
        self.unpacked += size
        if limit is not None and self.unpacked > limit:
            raise DecompressedTooLarge

    def _overlong(self) -> list[RejectedLine]:
        reason = overlong_reason()
        rejects = [RejectedLine(number, "line", reason, "") for number in self.overlong]
        self.overlong.clear()
        return rejects

    def _done(self, batch: Batch, runs: _Runs, kinds: list[str]) -> Batch:
        # A rejected line is stored as read, but the database cannot store NUL.
        batch.rejects = [
            _storable(bad) if "\x00" in bad.text or "\x00" in bad.reason else bad
            for bad in batch.rejects
        ]
        batch.fresh_ids = [job_id for job_id, _ in runs.fresh]
        batch.fresh_runs = [run for _, run in runs.fresh]
        batch.fresh_rows = list(runs.fresh.values())
        batch.others = list(runs.others.values())
        batch.record_types = Counter(kinds)
        position = self.raw.tell()
        batch.consumed = position - self.reported
        self.reported = position
        return batch

    def _record_type(self, record: JobRecord) -> str:
        if record.kind:
            return record.kind
        if self.preparation.source == "pbs_accounting":
            return pbs_record_type(record)
        return record.state.value

    def _not_this_format(self) -> RejectedLine:
        reason = (
            f"not a {_LABELS[self.preparation.source]}: its first {WRONG_FORMAT_AFTER} lines"
            " are all rejected; the rest of the file is not read"
        )
        return RejectedLine(self.number, "file", reason, "")

    def _add(self, runs: _Runs, batch: Batch, record: JobRecord) -> None:
        """The run into `runs`, once per (job, run): an end beats a start, else the first stays.

        An ended or requeued run of an entity the tree has is fresh: its row is complete.
        """
        usage = self._usage(batch, record)
        if usage is None:
            return
        preparation = self.preparation
        accelerator = preparation.source == "accelerator"
        if accelerator:
            entity = record.account  # the FairShare group the job is in
        elif preparation.slurm:
            entity = slurm_entity(record)
        else:
            entity = pbs_entity(record, preparation.fairshare_entity)
        if entity not in self.seen:
            self.seen.add(entity)
            batch.parents[entity] = (
                None
                if preparation.slurm or accelerator
                else pbs_placement(record, preparation.fairshare_entity).parent
            )
        key = (record.job_id, record.run)
        if preparation.source in SNAPSHOTS:
            batch.listed.append(record.job_id)
        if record.request is not None:
            batch.requests.append((record.job_id, json.dumps(asdict(record.request))))
        # Running or queued: checked against the job table (a later file ends or starts it).
        running = record.state in _NOT_OVER
        if key in runs.fresh:
            batch.duplicates += 1
            return
        held = runs.others.get(key)
        if held is not None:
            if running or held.state not in _NOT_OVER:
                batch.duplicates += 1
                return
            del runs.others[key]  # the start this end completes
        node = None if running else preparation.nodes.get(entity)
        lines = self.lines
        if node is not None:
            if lines is None:
                runs.fresh[key] = (*self._values(record, usage, entity), node)
            else:
                runs.fresh[key] = lines.line(record, usage, entity, node_text(node))
            return
        row = (
            self._values(record, usage, entity)
            if lines is None
            else lines.line(record, usage, entity)
        )
        runs.others[key] = PreparedRun(record.job_id, record.run, record.state.value, entity, row)

    def _usage(self, batch: Batch, record: JobRecord) -> float | None:
        """The run's fairshare_usage_res; None (and the line rejected) when it has none."""
        problem = _out_of_range(record)
        if problem is not None:
            batch.rejects.append(RejectedLine(record.line, *problem, ""))
            return None
        if record.state in _NOT_OVER:
            return 0.0  # what a running job uses is accrued by the cycles, not priced here
        if self.slurm:
            return run_usage(record.usage_resources())
        try:
            usage = self.formula.evaluate(record.usage_resources())
        except FormulaValueError as exc:
            batch.rejects.append(RejectedLine(record.line, "fairshare_usage_res", str(exc), ""))
            return None
        if usage < 0:
            reason = f"{self.formula.text} gives {usage} < 0"
            batch.rejects.append(RejectedLine(record.line, "fairshare_usage_res", reason, ""))
            return None
        return usage

    def _values(self, record: JobRecord, usage: float, entity: str) -> tuple[Any, ...]:
        """The run as the values of JOB_COLUMNS but `node_id`, times as SQLite stores them."""
        extra, moment = record.extra, _sqlite_time
        return (
            self.preparation.cluster_id, record.job_id, record.run, record.state.value,
            record.server[:TEXT_MAX], entity[:TEXT_MAX], record.user[:TEXT_MAX],
            record.group[:TEXT_MAX], record.account[:TEXT_MAX], record.project[:TEXT_MAX],
            record.queue[:TEXT_MAX], record.partition[:TEXT_MAX], record.jobname[:TEXT_MAX],
            record.ncpus, record.ngpus, record.nodes, record.memory, _int(extra.get("vmem")),
            _int(extra.get("mpiprocs")), _int(extra.get("cpupercent")), extra.get("billing"),
            record.requested_walltime, record.walltime, record.cput, moment(record.ctime),
            moment(record.qtime), moment(record.etime), moment(record.start), moment(record.end),
            record.exit_status, usage, record.mom[:TEXT_MAX], self.path, record.line,
            self.preparation.ingest_id,
        )  # fmt: skip


def _open(path: str) -> IO[bytes]:
    """The file's bytes, gunzipped when it is gzip (by its magic number, not its name)."""
    handle = Path(path).open("rb")  # noqa: SIM115  (closed by the caller's with)
    if handle.peek(2)[:2] == _GZIP_MAGIC:
        return cast(IO[bytes], gzip.GzipFile(fileobj=handle, mode="rb"))
    return handle


def _out_of_range(record: JobRecord) -> tuple[str, str] | None:
    """The first value the job table cannot hold, as (field, reason); None when all fit."""
    texts = (record.job_id, record.server, record.user, record.group, record.account)
    others = (record.project, record.queue, record.partition, record.jobname, record.mom)
    if "\x00" in "".join(texts) or "\x00" in "".join(others):
        name = next(name for name in _TEXTS if "\x00" in getattr(record, name))
        return name, "holds a NUL byte, which no scheduler writes and the database cannot store"
    counts = (record.run, record.ncpus, record.ngpus, record.nodes, record.walltime or 0)
    times = (record.ctime or 0, record.qtime or 0, record.etime or 0, record.start or 0)
    if (
        min(counts) >= 0
        and max(counts) <= _INT_MAX
        and 0 <= (record.requested_walltime or 0) <= _INT_MAX
        and 0 <= (record.memory or 0) <= _BIG_MAX
        and min(times) >= 0
        and max(times) <= _LAST_SECOND
        and 0 <= (record.end or 0) <= _LAST_SECOND
        and _extra_fits(record.extra)
    ):
        return None
    for name, limit in _LIMITS:
        value = getattr(record, name) if hasattr(record, name) else record.extra.get(name)
        if value is not None and not 0 <= value <= limit:
            return name, f"{value} is out of range (0 to {limit})"
    for name in ("ctime", "qtime", "etime", "start", "end"):
        moment = getattr(record, name)
        if moment is not None and not 0 <= moment <= _LAST_SECOND:
            return name, f"{moment} is not a time (seconds since 1970)"
    return None


def _storable(bad: RejectedLine) -> RejectedLine:
    """The rejection with each NUL written as `\\x00`."""
    return replace(
        bad, text=bad.text.replace("\x00", "\\x00"), reason=bad.reason.replace("\x00", "\\x00")
    )


def _extra_fits(extra: dict[str, float]) -> bool:
    if not extra:
        return True
    return (
        min(extra.values()) >= 0
        and extra.get("vmem", 0) <= _BIG_MAX
        and extra.get("mpiprocs", 0) <= _INT_MAX
        and extra.get("cpupercent", 0) <= _INT_MAX
    )


def _sqlite_time(epoch: int | None) -> str | None:
    """The time as SQLite stores a DateTimeField: naive UTC text."""
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)


class HelperFailed(RuntimeError):
    """The helper process died or raised; the message says how."""


@contextmanager
def prepared_files(
    paths: Sequence[str], preparation: Preparation, *, helpers: int | None = None
) -> Iterator[Iterator[tuple[str, Iterator[Batch]]]]:
    """Each path with an iterator of its batches, to consume before the next file's.

    `helpers` processes read the files (file k by helper k mod helpers), each spooling its
    batches to a temporary file, so that reading runs ahead of storing on every core; 0 reads
    in this process. By default: one helper per core for big inputs, none for small ones.
    Leaving the `with` stops the helpers, whatever they are doing.
    """
    if helpers is None:
        big = input_size(paths) >= HELPER_FROM_BYTES
        helpers = _cores() if big else 0
    helpers = min(helpers, len(paths))
    if helpers == 0:
        yield ((path, prepare_file(path, preparation)) for path in paths)
        return
    with tempfile.TemporaryDirectory(prefix="fairshare-ingest-") as folder, ExitStack() as stack:
        readers = [
            stack.enter_context(_Helper(paths[index::helpers], preparation, Path(folder), index))
            for index in range(helpers)
        ]
        yield ((path, readers[k % helpers].batches()) for k, path in enumerate(paths))


class _Helper:
    """A helper process reading some of the files into its spool, and the reading of it.

    A plain subprocess, not multiprocessing: it works from any caller (a Celery worker's
    daemon process, a script without a main guard) and shares nothing with Django. It writes
    each message to the spool and its length to its stdout, so it never waits for the parent.
    """

    def __init__(
        self, paths: Sequence[str], preparation: Preparation, folder: Path, index: int
    ) -> None:
        spool = folder / f"spool-{index}"
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115  (closed in __exit__)
        self.process = subprocess.Popen(
            [sys.executable, "-c", HELPER_CODE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            env={**os.environ, "PYTHONPATH": _search_path()},
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.lengths = self.process.stdout
        pickle.dump((list(paths), preparation, str(spool)), self.process.stdin)
        self.process.stdin.close()
        spool.touch()
        self.spool = spool.open("rb")

    def __enter__(self) -> _Helper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait()
        self.lengths.close()
        self.spool.close()
        self.errors.close()

    def batches(self) -> Iterator[Batch]:
        """The batches of the helper's next file."""
        while True:
            kind, message = self._message()
            if kind == "done":
                return
            if kind == "failed":
                raise HelperFailed(f"the accounting reader failed:\n{message}")
            yield message

    def _message(self) -> tuple[str, Any]:
        header = self.lengths.read(_LENGTH.size)
        if len(header) < _LENGTH.size:
            code = self.process.wait()
            self.errors.seek(0)
            said = self.errors.read().decode(errors="replace").strip()
            raise HelperFailed(f"the accounting reader stopped (exit code {code}) {said}")
        (length,) = _LENGTH.unpack(header)
        return cast(tuple[str, Any], pickle.loads(self.spool.read(length)))


def helper() -> None:
    """The helper process: reads (paths, preparation, spool) on stdin and writes each message
    to the spool and its length to stdout: each file's ("batch", Batch) then ("done", None),
    or ("failed", traceback) when reading raises.
    """
    lengths = sys.stdout.buffer
    paths, preparation, spool_path = pickle.load(sys.stdin.buffer)
    # The reading makes millions of short-lived containers and few cycles: collecting the
    # youngest generation every 700 of them costs a tenth of the time.
    gc.freeze()
    gc.set_threshold(*_HELPER_GC)
    with Path(spool_path).open("ab") as spool:

        def send(kind: str, message: object) -> None:
            data = pickle.dumps((kind, message), pickle.HIGHEST_PROTOCOL)
            spool.write(data)
            spool.flush()
            lengths.write(_LENGTH.pack(len(data)))
            lengths.flush()

        try:
            for path in paths:
                for batch in prepare_file(path, preparation):
                    send("batch", batch)
                send("done", None)
        except BrokenPipeError:
            return  # the parent has left its `with`
        except BaseException:  # the parent raises HelperFailed with this text
            send("failed", traceback.format_exc())


def _search_path() -> str:
    """PYTHONPATH for the helper: this project's root first, then what the parent had."""
    root = str(Path(__file__).resolve().parents[1])
    return os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def input_size(paths: Sequence[str]) -> int:
    """Bytes of the files on disk (compressed ones as they are); 0 for one that is missing."""
    total = 0
    for path in paths:
        with suppress(OSError):
            total += Path(path).stat().st_size
    return total
