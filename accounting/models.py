from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Q

from accounting.parsers.records import JobState
from trees.engine.pbs import f32
from trees.models import Cluster, Node

JOB_STATES = [(state.value, state.value) for state in JobState]


class IngestSource(models.TextChoices):
    PBS_ACCOUNTING = "pbs_accounting", "PBS accounting logs"
    SWF = "swf", "SWF workload trace"
    SACCT = "sacct", "Slurm sacct dump"
    QSTAT = "qstat", "PBS qstat -f -F json snapshot"
    SQUEUE = "squeue", "Slurm squeue --json snapshot"
    ACCELERATOR = "accelerator", "Altair Accelerator jobs export"


class IngestRun(models.Model):
    """One ingestion: which files, what each gave, how long it took.

    Each file is its own transaction, so `files` lists only the files that were stored; a run
    with no `finished_at` is going, or was interrupted: the stalled-work sweep gives one whose
    process has not been heard from for WORK_SILENT_MINUTES its `failure` and, as
    `finished_at`, when it was last heard from. Running it again stores only what is missing.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="ingest_runs")
    source = models.CharField(max_length=16, choices=IngestSource.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # [{"path", "read", "ingested", "duplicates", "rejected", "running", "queued"}] per file
    files = models.JSONField(default=list)
    read = models.PositiveIntegerField(default=0)
    ingested = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    running = models.PositiveIntegerField(default=0, help_text="Runs started, not yet ended.")
    queued = models.PositiveIntegerField(default=0, help_text="Jobs queued, not yet started.")
    record_types = models.JSONField(default=dict, help_text="Lines read, by record type.")
    unknown_entities = models.JSONField(
        default=list, help_text="Entities met in the jobs that the tree does not have."
    )
    created_nodes = models.JSONField(default=list, help_text="Nodes made by --create-nodes.")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="The last sign of life of the process ingesting."
    )
    failure = models.TextField(
        blank=True, help_text="Why it stopped before the end (its process gone), if it did."
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(source__in=IngestSource.values), name="ingest_run_source_known"
            ),
        ]
        # The few runs still going, among every push's: what the stalled-work sweep reads.
        indexes = [
            models.Index(
                fields=["started_at"],
                condition=Q(finished_at__isnull=True),
                name="ingest_run_unfinished",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.source}@{self.started_at:%Y-%m-%d %H:%M}"

    @property
    def duration(self) -> float | None:
        """Seconds from start to finish; None while running or when interrupted."""
        if self.finished_at is None or self.failure:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class IngestRejection(models.Model):
    """A line an ingestion did not take, with why, and the line itself."""

    run = models.ForeignKey(IngestRun, on_delete=models.CASCADE, related_name="rejections")
    file = models.CharField(max_length=1024)
    line = models.PositiveIntegerField()
    field = models.CharField(max_length=255)
    reason = models.TextField()
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["run_id", "file", "line", "id"]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.reason}"


class Job(models.Model):
    """One run of a job, as the scheduler's accounting recorded it.

    `entity` is the fairshare entity the run is charged to, named as the scheduler keys it
    (PBS: by `fairshare_entity`; Slurm: `account:user`); `node` is that leaf while it exists.
    `usage` is the run's `fairshare_usage_res`, undecayed. Times are UTC, durations seconds.
    """

    # The job table is loaded by COPY, a million rows at a time: its foreign keys are not
    # database constraints (each would check every row, halving COPY's speed), so Django's
    # deletion collector applies their on_delete. The cluster has no index of its own: the
    # unique (cluster, job_id, run) and (cluster, end) begin with it.
    cluster = models.ForeignKey(
        Cluster,
        on_delete=models.CASCADE,
        related_name="jobs",
        db_index=False,
        db_constraint=False,
    )
    job_id = models.CharField(max_length=128, help_text="Without the server; array index kept.")
    run = models.PositiveIntegerField(default=1, help_text="PBS run_count: 1 for the first run.")
    state = models.CharField(max_length=16, choices=JOB_STATES)
    server = models.CharField(max_length=255, blank=True)
    entity = models.CharField(max_length=255)
    # No index: each would cost every COPY'd row; a node's jobs are found by (cluster, end).
    node = models.ForeignKey(
        Node,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="jobs",
        db_index=False,
        db_constraint=False,
    )
    user = models.CharField(max_length=255, blank=True)
    group = models.CharField(max_length=255, blank=True)
    account = models.CharField(max_length=255, blank=True)
    project = models.CharField(max_length=255, blank=True)
    queue = models.CharField(max_length=255, blank=True)
    partition = models.CharField(max_length=255, blank=True)
    jobname = models.CharField(max_length=255, blank=True)
    ncpus = models.PositiveIntegerField(default=0)
    ngpus = models.PositiveIntegerField(default=0)
    nodes = models.PositiveIntegerField(default=0)
    memory = models.BigIntegerField(null=True, blank=True, help_text="Bytes used.")
    vmem = models.BigIntegerField(null=True, blank=True, help_text="Bytes of virtual memory.")
    mpiprocs = models.PositiveIntegerField(null=True, blank=True)
    cpupercent = models.PositiveIntegerField(null=True, blank=True)
    billing = models.FloatField(null=True, blank=True, help_text="Slurm billing TRES.")
    requested_walltime = models.PositiveIntegerField(null=True, blank=True)
    walltime = models.PositiveIntegerField(null=True, blank=True)
    cput = models.FloatField(null=True, blank=True)
    ctime = models.DateTimeField(null=True, blank=True)
    qtime = models.DateTimeField(null=True, blank=True)
    etime = models.DateTimeField(null=True, blank=True)
    start = models.DateTimeField(null=True, blank=True)
    end = models.DateTimeField(null=True, blank=True)
    exit_status = models.IntegerField(null=True, blank=True)
    usage = models.FloatField(default=0.0)
    mom = models.CharField(
        max_length=255,
        blank=True,
        default="",
        db_default="",
        help_text="PBS: the host of the run's MoM (exec_host's first host).",
    )
    # What the cycles have added to the entity's usage for this run so far: when it equals
    # `usage` the run is accrued (a running run is priced by the cycles as it runs).
    accrued = models.FloatField(default=0.0, db_default=0.0)
    # Set once the cycles will add nothing more for the run, whatever `accrued` says: with the
    # cluster's usage_recording `pbs`, an ended run is charged what PBS would have recorded,
    # often less than its usage.
    accrual_closed = models.BooleanField(default=False, db_default=False)
    source_file = models.CharField(max_length=1024)
    source_line = models.PositiveIntegerField()
    # A queued job's request (records.JobRequest as JSON text): what its priority is computed
    # from. Not a COPY column: written after the rows, for the few queued ones.
    request = models.TextField(null=True, blank=True)  # noqa: DJ001 (COPY leaves it NULL)
    ingest = models.ForeignKey(
        IngestRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        db_index=False,
        db_constraint=False,
    )

    class Meta:
        ordering = ["cluster_id", "end", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "job_id", "run"], name="job_run_unique_per_cluster"
            ),
            models.CheckConstraint(
                condition=Q(state__in=[state.value for state in JobState]),
                name="job_state_known",
            ),
            models.CheckConstraint(condition=Q(usage__gte=0), name="job_usage_not_negative"),
            models.CheckConstraint(
                condition=Q(end__isnull=True) | Q(start__isnull=True) | Q(end__gte=F("start")),
                name="job_ends_after_start",
            ),
        ]
        indexes = [
            models.Index(fields=["cluster", "end"]),
            # The running and queued rows, which an ingestion reads first: a few among millions.
            models.Index(
                fields=["cluster", "job_id"],
                condition=Q(state__in=[JobState.RUNNING, JobState.QUEUED]),
                name="job_not_over",
            ),
            # The runs a cycle still has to accrue.
            models.Index(
                fields=["cluster", "start"],
                condition=Q(state=JobState.RUNNING)
                | (~Q(accrued=F("usage")) & Q(accrual_closed=False)),
                name="job_accruing",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.job_id}#{self.run}"

    @property
    def core_hours(self) -> float:
        return self.ncpus * (self.walltime or 0) / 3600


class Cycle(models.Model):
    """One scheduling cycle of a cluster: what it accrued and decayed up to `at`.

    The ledger that makes cycles exactly-once: a cycle at or before the cluster's last one is
    refused, and (cluster, at) is unique; a cycle is one transaction with all it changed.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="cycles")
    at = models.DateTimeField(help_text="The cycle's time: usage is accrued up to it.")
    jobs_accrued = models.PositiveIntegerField(default=0)
    usage_added = models.FloatField(default=0.0)
    decays_applied = models.PositiveIntegerField(default=0)
    decay_times = models.JSONField(
        default=list, help_text="When each decay applied fell due (PBS; Slurm decays each pass)."
    )
    usage_reset = models.BooleanField(
        default=False, help_text="Slurm: the pass reset usage (PriorityUsageResetPeriod)."
    )
    history_kept = models.BooleanField(
        default=True, help_text="Whether NodeHistory still holds this cycle (the roll-up thins)."
    )
    duration = models.FloatField(default=0.0, help_text="Seconds the cycle took.")
    started_at = models.DateTimeField(help_text="Wall-clock time the cycle ran.")

    class Meta:
        ordering = ["cluster_id", "-at"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "at"], name="cycle_unique_per_cluster"),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}@{self.at:%Y-%m-%d %H:%M:%S}"


class SchedulerCycle(models.Model):
    """A cycle of a PBS cluster's own scheduler, as its log shows it (import_sched_log): when
    it ran, and what it said of the jobs it sorted. The recording of usage runs on these
    where the log covers (trees.engine.recording); a log imported again replaces its span."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="scheduler_cycles")
    at = models.DateTimeField(help_text="When it started (Starting Scheduling Cycle).")
    ended_at = models.DateTimeField(help_text="When it ended (Leaving Scheduling Cycle).")
    formula = models.JSONField(
        default=dict, help_text="Each job's Formula Evaluation as PBS printed it, by job id."
    )
    considered = models.JSONField(
        default=list, help_text="The jobs it considered to run, in its order."
    )
    left_out = models.JSONField(
        default=dict, help_text="The jobs it left out and why (zero shares, under threshold)."
    )
    decays = models.PositiveSmallIntegerField(default=0)
    source_file = models.CharField(max_length=1024)
    source_line = models.PositiveIntegerField()

    class Meta:
        ordering = ["cluster_id", "at", "source_line"]
        indexes = [models.Index(fields=["cluster", "at"])]

    def __str__(self) -> str:
        return f"{self.cluster_id}@{self.at:%Y-%m-%d %H:%M:%S}"


class JobPriorityHistory(models.Model):
    """A queued job's priority and place as a cycle computed them, while it waits.

    Bounded as node history is: the roll-up thins it at the same instants, and a job's rows go
    a week after it stopped waiting.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="priority_history", db_index=False
    )
    job_id = models.CharField(max_length=128)
    at = models.DateTimeField()
    priority = models.FloatField(null=True, blank=True, help_text="Empty: PBS without formula.")
    position = models.PositiveIntegerField(help_text="1-based, in the order jobs are considered.")
    queue_position = models.PositiveIntegerField()

    class Meta:
        ordering = ["cluster_id", "job_id", "at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "job_id", "at"], name="job_priority_once_per_cycle"
            ),
        ]
        indexes = [models.Index(fields=["cluster", "at"], name="job_priority_history_at")]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.job_id}@{self.at:%Y-%m-%d %H:%M:%S}"


class ScenarioState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Scenario(models.Model):
    """A what-if: the cluster's workload over a window replayed under its policy (the baseline)
    and under a variant of it; its parameters, its progress while a worker runs it, and its
    result (the `simulate --format json` document, without the jobs, plus the share series)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="scenarios")
    title = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    parameters = models.JSONField(
        help_text="order, backfill, from, until, cores and the variant's settings (KEY=VALUE)."
    )
    state = models.CharField(
        max_length=8, choices=ScenarioState.choices, default=ScenarioState.QUEUED
    )
    progress = models.FloatField(default=0.0, help_text="From 0 to 1, while it runs.")
    message = models.TextField(blank=True, help_text="Why it failed.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="The last sign of life: queued, taken, or its worker's."
    )
    retries = models.PositiveSmallIntegerField(
        default=0, help_text="Times it was sent again, its worker or its message lost."
    )

    class Meta:
        ordering = ["cluster_id", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.cluster_id}: scenario {self.pk}"


class Float32Field(models.FloatField[float, float]):
    """A float of IEEE single precision, as PBS keeps percentages and fairshare_tree_usage:
    PostgreSQL's `real`, 4 bytes, holds the engine's float32 values exactly."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "real"

    def from_db_value(
        self, value: float | None, expression: object, connection: BaseDatabaseWrapper
    ) -> float | None:
        # PostgreSQL prints a real as its shortest decimal ("0.4"), which reads back as the
        # nearest double: round it to the float32 it stands for.
        return None if value is None else f32(value)


class NodeHistory(models.Model):
    """A node's numbers as a cycle left them (usage/perc is usage / fairshare_perc).

    Bounded by the roll-up: every cycle of the last day, the last cycle of each hour of the
    last week, the last cycle of each day before (docs/history.md has the sizes). On
    PostgreSQL the table is partitioned by month of `at` (migration 0013), which the primary
    key holds as PostgreSQL requires; HISTORY_RETENTION_DAYS drops whole months.
    """

    pk = models.CompositePrimaryKey("node", "at")
    node = models.ForeignKey(
        Node, on_delete=models.CASCADE, related_name="history", db_constraint=False
    )
    at = models.DateTimeField()
    usage = models.FloatField()
    fairshare_perc = Float32Field()
    fairshare_tree_usage = Float32Field()
    fairshare_factor = models.FloatField()
    level_fs = models.FloatField(null=True, blank=True, help_text="Slurm Fair Tree.")
    fairshare_rank = models.PositiveIntegerField(null=True, blank=True, help_text="Fair Tree.")
    # Altair Accelerator's FS_* fields of the group (scaled by 10,000), as the cycle left them.
    fs_target = models.IntegerField(null=True, blank=True)
    fs_running = models.IntegerField(null=True, blank=True)
    fs_running_count = models.PositiveIntegerField(null=True, blank=True)
    fs_history = models.IntegerField(null=True, blank=True)
    fs_rank = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["node_id", "at"]

    def __str__(self) -> str:
        return f"{self.node_id}@{self.at:%Y-%m-%d %H:%M:%S}"

    @property
    def usage_perc(self) -> float:
        """usage / fairshare_perc; -1 when the percentage is 0 (pbsfs)."""
        return -1.0 if self.fairshare_perc == 0 else self.usage / self.fairshare_perc


class UploadState(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "being imported"
    PREVIEW = "preview", "waiting for confirmation"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class FilesUpload(models.Model):
    """Files an admin uploaded on the import page, imported by a task off the request.

    The files wait in their own folder (settings.UPLOAD_DIR / id) until the task has read them;
    what the import did is kept here, its rejected lines in UploadRejection.
    """

    cluster_name = models.CharField(max_length=64)
    new_cluster = models.BooleanField(default=False, help_text="Made by this upload if new.")
    kind = models.CharField(max_length=16)  # an accounting.services.SiteFile value
    files = models.JSONField(default=list, help_text="The names the files were uploaded with.")
    size = models.BigIntegerField(default=0, help_text="Bytes uploaded, all files.")
    strict = models.BooleanField(default=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    uploaded_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=8, choices=UploadState.choices, default=UploadState.QUEUED)
    result = models.JSONField(default=dict, help_text="The figures and outcome, once done.")
    preview = models.JSONField(
        default=dict, help_text="A resource_group's changes to the tree, before confirmation."
    )
    rejected = models.PositiveIntegerField(default=0, help_text="Rejected lines, in all.")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="The last sign of life: queued, taken, or its worker's."
    )
    retries = models.PositiveSmallIntegerField(
        default=0, help_text="Times it was sent again, its worker or its message lost."
    )

    class Meta:
        ordering = ["-uploaded_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=UploadState.values), name="files_upload_state_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} into {self.cluster_name} ({self.state})"


class UploadRejection(models.Model):
    """A line (in a usage file, a record) an upload did not take, and why."""

    upload = models.ForeignKey(FilesUpload, on_delete=models.CASCADE, related_name="rejections")
    file = models.CharField(max_length=255)
    line = models.PositiveIntegerField(help_text="1-based; a usage file's record, 0: its header.")
    byte = models.BigIntegerField(null=True, blank=True)
    field = models.CharField(max_length=64)
    reason = models.TextField()
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.reason}"


class PushedAccounting(models.Model):
    """The answer to a push of accounting lines through the API that carried an
    `Idempotency-Key`: the same person's retry with the same key gets it again, and nothing is
    ingested twice (the job runs are exactly-once anyway; the key spares the work and keeps
    the first answer's counts)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pushed_accounting"
    )
    key = models.CharField(max_length=255)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="pushes")
    answer = models.JSONField(help_text="The first answer's JSON.")
    received_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="pushed_accounting_key_once"),
        ]

    def __str__(self) -> str:
        return f"push {self.key!r} by {self.user} to {self.cluster}"


class TaskFailure(models.Model):
    """A Celery task that raised (recorded by the task_failure signal): counted on /metrics."""

    task = models.CharField(max_length=255)
    failed_at = models.DateTimeField(db_index=True)
    error = models.TextField()

    class Meta:
        ordering = ["-failed_at"]

    def __str__(self) -> str:
        return f"{self.task} failed at {self.failed_at:%Y-%m-%d %H:%M:%S}"
