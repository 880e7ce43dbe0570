from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from trees.engine.accelerator import NO_RANK, NO_RANK9
from trees.engine.formula import USAGE_RESOURCES, FormulaError, parse_formula
from trees.engine.recording import MAX_CHECK_POLL, MIN_CHECK_POLL
from trees.engine.slurm import Algorithm, UsageResetPeriod
from trees.formats.sched_config import MAX_DECAY_TIME


class Scheduler(models.TextChoices):
    PBS = "pbs", "PBS Professional / OpenPBS"
    SLURM = "slurm", "Slurm"
    ACCELERATOR = "accelerator", "Altair Accelerator"


FAIRSHARE_ALGORITHMS = [
    (Algorithm.FAIR_TREE.value, "Fair Tree"),
    (Algorithm.CLASSIC.value, "classic (PriorityFlags=NO_FAIR_TREE)"),
    (Algorithm.DEPTH_OBLIVIOUS.value, "depth-oblivious classic (PriorityFlags=DEPTH_OBLIVIOUS)"),
]
USAGE_RESET_PERIODS = [(period.value, period.value.lower()) for period in UsageResetPeriod]


class UsageRecording(models.TextChoices):
    """How a PBS cluster's cycles accrue a job's usage."""

    EXACT = "exact", "exact: a job's usage spread evenly over its run"
    PBS = "pbs", "pbs: what PBS records of it (polls read at cycles)"


USAGE_RECORDINGS = UsageRecording.choices
FAIRSHARE_RELATIVE_MODES = [
    (0, "0: (running - target) + (history - target)"),
    (1, "1: the same, over the target"),
    (2, "2: (running - target) + alpha × (history - target)"),
]
DEFAULT_SLURM_TRES = "cpu,mem,energy,node,billing,fs/disk,vmem,pages"


class FairshareEntity(models.TextChoices):
    """The job attribute that names the leaf a job is charged to (sched_config)."""

    EUSER = "euser", "user (euser)"
    EGROUP = "egroup", "group (egroup)"
    ACCOUNT = "Account_Name", "account (Account_Name)"
    PROJECT = "project", "project"
    QUEUE = "queue", "queue"
    EGROUP_EUSER = "egroup:euser", "group and user (egroup:euser)"


class SlurmTreeSource(models.TextChoices):
    SACCTMGR_DUMP = "sacctmgr_dump", "sacctmgr dump"
    SSHARE = "sshare", "sshare"


SLURM_TREE_SOURCES = SlurmTreeSource.choices


class Cluster(models.Model):
    """One scheduler's fairshare world: its policy and its tree."""

    name = models.SlugField(max_length=64, unique=True)
    scheduler = models.CharField(max_length=16, choices=Scheduler.choices, default=Scheduler.PBS)
    fairshare_usage_res = models.CharField(
        max_length=500,
        default="ncpus*walltime",
        help_text="PBS formula a job's usage is accrued with (sched_config fairshare_usage_res).",
    )
    fairshare_entity = models.CharField(
        max_length=16, choices=FairshareEntity.choices, default=FairshareEntity.EUSER
    )
    decay_interval = models.DurationField(default=timedelta(hours=24))
    decay_factor = models.FloatField(default=0.5)
    scheduler_iteration = models.DurationField(default=timedelta(minutes=10))
    unknown_shares = models.IntegerField(
        default=0, help_text="Shares of the `unknown` group that holds entities not in the tree."
    )
    job_sort_formula = models.TextField(blank=True)
    last_decay = models.DateTimeField(
        null=True, blank=True, help_text="When usage was last decayed; empty: never (PBS 0)."
    )
    has_usage_database = models.BooleanField(
        default=False, help_text="Whether the scheduler's usage database exists yet."
    )
    resource_group_messages = models.TextField(
        blank=True, help_text="What PBS prints about the imported resource_group on each run."
    )
    metrics_updated_at = models.DateTimeField(
        null=True, blank=True, help_text="When the tree was last stored (set by every store)."
    )
    tree_json_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The metrics_updated_at of the tree its tree.json rows (TreeJsonRow) hold;"
        " tree.json reads those rows only while the two are equal.",
    )
    private_usage = models.BooleanField(
        default=False,
        help_text="Like Slurm's PrivateData=usage: members see only their own path and its"
        " siblings' totals; off, any logged-in person reads the whole tree.",
    )

    eligible_time_enable = models.BooleanField(
        default=False,
        help_text="PBS server eligible_time_enable (qmgr): whether a job's eligible_time accrues.",
    )
    job_sort_formula_threshold = models.FloatField(
        null=True, blank=True, help_text="PBS job_sort_formula_threshold: jobs at or under wait."
    )
    fair_share = models.BooleanField(
        default=True,
        help_text="PBS sched_config fair_share: jobs are ordered by their entity's standing.",
    )
    by_queue = models.BooleanField(
        default=True,
        help_text="PBS sched_config by_queue: queues are considered in order of Priority.",
    )
    job_sort_key = models.JSONField(
        default=list,
        blank=True,
        help_text='PBS sched_config job_sort_key lines in order: [["ncpus", "HIGH"], ...].',
    )
    strict_ordering = models.BooleanField(
        default=False,
        help_text="PBS sched_config strict_ordering: jobs start in order, a blocked job waits"
        " for room instead of being passed by any that fits.",
    )
    backfill = models.BooleanField(
        default=True,
        help_text="PBS sched_config backfill: with strict_ordering, jobs that delay no"
        " reservation start ahead of the blocked ones.",
    )
    backfill_depth = models.PositiveIntegerField(
        default=1,
        help_text="PBS backfill_depth: how many blocked jobs get a reservation (0: none).",
    )
    preemptive_sched = models.BooleanField(
        default=False,
        help_text="PBS sched_config preemptive_sched: jobs of express queues (Priority at least"
        " preempt_queue_prio) are considered first.",
    )
    preempt_queue_prio = models.IntegerField(
        default=150,
        help_text="PBS scheduler attribute preempt_queue_prio: a queue of this Priority or more"
        " is an express queue.",
    )
    enforce_no_shares = models.BooleanField(
        default=True,
        help_text="PBS sched_config fairshare_enforce_no_shares: with fair_share, a job of an"
        " entity without shares is never considered.",
    )
    cores = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The cores jobs are placed on (the what-if's pool); empty: not known.",
    )
    gpus = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The GPUs jobs are placed on (the what-if's GPU pool); empty: not counted.",
    )
    compute_nodes = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The nodes jobs are placed on (the what-if's node pool); empty: not counted.",
    )
    server_attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text="The server attributes of the last qmgr print, those PBS does not define too.",
    )
    custom_resources = models.JSONField(
        default=dict, blank=True, help_text="qmgr's `create resource` lines: name → type."
    )
    slurm_priority = models.JSONField(
        default=dict,
        blank=True,
        help_text="The Priority* settings of the last `scontrol show config` imported.",
    )

    fairshare_algorithm = models.CharField(
        max_length=16, choices=FAIRSHARE_ALGORITHMS, default=Algorithm.FAIR_TREE.value
    )
    fairshare_dampening_factor = models.PositiveIntegerField(
        default=1, help_text="Slurm FairShareDampeningFactor (classic fairshare)."
    )
    priority_decay_half_life = models.DurationField(
        default=timedelta(days=7), help_text="Slurm PriorityDecayHalfLife; 0: no decay."
    )
    priority_calc_period = models.DurationField(
        default=timedelta(minutes=5),
        help_text="Slurm PriorityCalcPeriod: usage is charged and decayed this often.",
    )
    priority_usage_reset_period = models.CharField(
        max_length=16, choices=USAGE_RESET_PERIODS, default=UsageResetPeriod.NONE.value
    )
    charge_job_end = models.BooleanField(
        default=True,
        help_text="Slurm AccountingStorageEnforce has `limits`: a job's last part, after the"
        " last pass before its end, is charged when it ends (without it, never).",
    )
    slurm_tres = models.CharField(
        max_length=500,
        default=DEFAULT_SLURM_TRES,
        help_text="The cluster's TRES, in the order sshare lists them.",
    )
    slurm_tree_source = models.CharField(
        max_length=16,
        choices=SLURM_TREE_SOURCES,
        blank=True,
        help_text="What made the Slurm tree: a sacctmgr dump (then sshare brings only usage)"
        " or sshare.",
    )

    usage_recording = models.CharField(
        max_length=8,
        choices=USAGE_RECORDINGS,
        default=UsageRecording.EXACT,
        help_text="PBS: how cycles accrue a job's usage: exact (evenly over its run) or pbs"
        " (what PBS records: the MoM's polls read at the scheduler's cycles while it runs).",
    )
    mom_min_check_poll = models.PositiveIntegerField(
        default=MIN_CHECK_POLL, help_text="PBS MoM $min_check_poll, seconds (import_mom_config)."
    )
    mom_max_check_poll = models.PositiveIntegerField(
        default=MAX_CHECK_POLL, help_text="PBS MoM $max_check_poll, seconds (import_mom_config)."
    )
    fairshare_relative = models.PositiveSmallIntegerField(
        choices=FAIRSHARE_RELATIVE_MODES,
        default=2,
        help_text="Altair Accelerator fairshare.relative: how a group's distance from its"
        " target is measured (0, 1 or 2).",
    )
    fairshare_relative_alpha = models.FloatField(
        default=10.0,
        help_text="Altair Accelerator fairshare.relative_alpha: the weight of the history"
        " with fairshare.relative 2.",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(fairshare_dampening_factor__gte=1),
                name="cluster_dampening_at_least_1",
            ),
            models.CheckConstraint(
                condition=Q(priority_decay_half_life__gte=timedelta(0)),
                name="cluster_half_life_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(priority_calc_period__gt=timedelta(0)),
                name="cluster_calc_period_positive",
            ),
            models.CheckConstraint(
                condition=Q(fairshare_algorithm__in=[value for value, _ in FAIRSHARE_ALGORITHMS]),
                name="cluster_algorithm_known",
            ),
            models.CheckConstraint(
                condition=Q(
                    priority_usage_reset_period__in=[value for value, _ in USAGE_RESET_PERIODS]
                ),
                name="cluster_usage_reset_known",
            ),
            models.CheckConstraint(
                condition=Q(decay_factor__gt=0) & Q(decay_factor__lt=1),
                name="cluster_decay_factor_between_0_and_1",
            ),
            models.CheckConstraint(
                condition=Q(unknown_shares__gte=0), name="cluster_unknown_shares_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(decay_interval__gt=timedelta(0)),
                name="cluster_decay_interval_positive",
            ),
            models.CheckConstraint(
                condition=Q(decay_interval__lte=timedelta(seconds=MAX_DECAY_TIME)),
                name="cluster_decay_interval_at_most_ten_years",
            ),
            models.CheckConstraint(
                condition=Q(scheduler_iteration__gt=timedelta(0)),
                name="cluster_scheduler_iteration_positive",
            ),
            models.CheckConstraint(
                condition=Q(scheduler__in=Scheduler.values), name="cluster_scheduler_known"
            ),
            models.CheckConstraint(
                condition=Q(usage_recording__in=[mode for mode, _ in USAGE_RECORDINGS]),
                name="cluster_usage_recording_known",
            ),
            models.CheckConstraint(
                condition=Q(mom_min_check_poll__gt=0)
                & Q(mom_min_check_poll__lte=F("mom_max_check_poll")),
                name="cluster_check_poll_in_order",
            ),
            models.CheckConstraint(
                condition=Q(fairshare_relative__in=[mode for mode, _ in FAIRSHARE_RELATIVE_MODES]),
                name="cluster_fairshare_relative_known",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def tree_json_current(self) -> bool:
        """Whether the tree.json rows hold the tree as last stored (tree.json may read them)."""
        return self.tree_json_at is not None and self.tree_json_at == self.metrics_updated_at

    def clean(self) -> None:
        """A usage formula that does not parse is refused here, with where it goes wrong."""
        try:
            parse_formula(self.fairshare_usage_res, USAGE_RESOURCES)
        except FormulaError as exc:
            text = self.fairshare_usage_res
            raise ValidationError({"fairshare_usage_res": f"{text!r}: {exc}"}) from exc


class Queue(models.Model):
    """A PBS queue (qmgr print) or a Slurm partition (scontrol show partition): what a job's
    priority reads of where it waits. `priority` is PBS's Priority or Slurm's
    PriorityJobFactor; `attributes` keeps every attribute as the file gave it."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="queues")
    name = models.CharField(max_length=255)
    queue_type = models.CharField(max_length=16, blank=True, help_text="PBS: Execution or Route.")
    priority = models.IntegerField(default=0)
    enabled = models.BooleanField(default=True)
    started = models.BooleanField(default=True)
    attributes = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["cluster_id", "-priority", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="queue_unique_per_cluster"),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.name}"


class Qos(models.Model):
    """A Slurm QOS and its priority (sacctmgr show qos), for the QOS factor."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="qos")
    name = models.CharField(max_length=255)
    priority = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["cluster_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="qos_unique_per_cluster"),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.name}"


class PreemptRule(models.Model):
    """An Altair Accelerator preemption rule (VovPreemptRule) as the cluster's rule file
    defines it; the file's rules replace the cluster's at each import."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="preempt_rules")
    position = models.PositiveIntegerField(help_text="Its place in the file, from 0.")
    name = models.CharField(max_length=255)
    preempting = models.TextField(blank=True, help_text="Selects the queued jobs that preempt.")
    preemptable = models.TextField(blank=True, help_text="Selects the running jobs they may.")
    bucketage = models.PositiveIntegerField(default=0, help_text="Seconds a job waits first.")
    killage = models.PositiveIntegerField(null=True, blank=True, help_text="Seconds.")
    pool = models.CharField(max_length=255)
    ruletype = models.CharField(max_length=255, blank=True)
    order = models.IntegerField(null=True, blank=True, help_text="-order; empty: after those.")
    options = models.JSONField(default=list, blank=True, help_text="Every other option: pairs.")
    source = models.CharField(max_length=255, help_text="The file it was imported from.")
    line = models.PositiveIntegerField(help_text="The line of its VovPreemptRule in the file.")

    class Meta:
        ordering = ["cluster_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "position"], name="preempt_rule_place_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.name}"


class NodeKind(models.TextChoices):
    ORGANIZATION = "organization", "organization"
    PROJECT = "project", "project"
    USER = "user", "user"


class NodeOrigin(models.TextChoices):
    SCHEDULER = "scheduler", "made by the scheduler (the root, `unknown`)"
    DEFINED = "defined", "defined in the tree (resource_group, sshare, forms)"
    USAGE = "usage", "met only in usage data, so placed under `unknown`"


class Node(models.Model):
    """A group or entity of the fairshare tree, with its usage and its current metrics.

    `usage_record` is the node's entry in the scheduler's usage database (empty: none, which
    PBS counts as 1); the fields after it are the metrics the engine last computed.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="nodes")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=16, choices=NodeKind.choices, default=NodeKind.USER)
    origin = models.CharField(max_length=16, choices=NodeOrigin.choices, default=NodeOrigin.DEFINED)
    position = models.PositiveIntegerField(
        default=0, help_text="Definition order (resource_group line order; record order for usage)."
    )
    shares = models.IntegerField(
        null=True, blank=True, help_text="Empty only for the PBS root and for Slurm `parent`."
    )
    shares_parent = models.BooleanField(
        default=False, help_text="Slurm FairShare=parent: the association uses its parent's."
    )
    cgroup_id = models.IntegerField(null=True, blank=True, help_text="PBS resource group id.")
    usage_record = models.FloatField(null=True, blank=True)
    usage_record_seq = models.PositiveIntegerField(null=True, blank=True)

    usage = models.FloatField(default=1.0)
    group_perc = models.FloatField(default=0.0)
    fairshare_perc = models.FloatField(default=0.0)
    fairshare_tree_usage = models.FloatField(default=0.0)
    usage_perc = models.FloatField(default=-1.0)
    fairshare_factor = models.FloatField(default=0.0)
    # Slurm: sshare's columns as slurmctld holds them; empty where Slurm leaves them unset.
    norm_shares = models.FloatField(null=True, blank=True)
    norm_usage = models.FloatField(null=True, blank=True)
    effectv_usage = models.FloatField(null=True, blank=True)
    level_fs = models.FloatField(null=True, blank=True)
    fairshare_rank = models.PositiveIntegerField(null=True, blank=True)
    fairshare_rank_of = models.PositiveIntegerField(
        null=True, blank=True, help_text="How many user associations are ranked."
    )
    grp_tres_mins = models.TextField(blank=True, help_text="Slurm GrpTRESMins, as sshare lists it.")
    tres_run_mins = models.TextField(
        blank=True, help_text="Slurm TRESRunMins as last imported; empty: no job running."
    )
    assoc_priority = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Slurm association Priority as set; empty: its parent's."
    )
    assoc_priority_effective = models.PositiveBigIntegerField(
        default=0, help_text="Slurm association Priority as slurmctld holds it (inherited)."
    )
    # Altair Accelerator: the FairShare group's settings, then the FS_* fields (scaled by
    # 10,000) as the last cycle computed them; empty on other schedulers' nodes.
    fs_window = models.PositiveIntegerField(
        null=True, blank=True, help_text="Accelerator -t/-window, seconds; empty: inherited."
    )
    fs_users = models.TextField(blank=True, help_text="Accelerator -u: the only users allowed.")
    fs_user_level = models.BooleanField(default=False, help_text="Accelerator -user.")
    fs_window_effective = models.PositiveIntegerField(
        null=True, blank=True, help_text="The window its history counts over; 0: FairShare off."
    )
    fs_active = models.BooleanField(null=True, blank=True)
    fs_target = models.IntegerField(null=True, blank=True)
    fs_running = models.IntegerField(null=True, blank=True)
    fs_running_count = models.PositiveIntegerField(null=True, blank=True)
    fs_excess_running = models.IntegerField(null=True, blank=True)
    fs_excess_running_local = models.IntegerField(null=True, blank=True)
    fs_history = models.IntegerField(null=True, blank=True)
    fs_excess_history = models.IntegerField(null=True, blank=True)
    fs_rank = models.IntegerField(null=True, blank=True, help_text="-1: no queued job.")
    fs_distance = models.FloatField(
        null=True, blank=True, help_text="From its target (fairshare.relative); empty: off."
    )

    class Meta:
        ordering = ["cluster_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "parent", "name"], name="node_name_unique_per_parent"
            ),
            models.UniqueConstraint(
                fields=["cluster"], condition=Q(parent__isnull=True), name="node_one_root"
            ),
            models.UniqueConstraint(
                fields=["cluster", "name"],
                condition=~Q(kind=NodeKind.USER),
                name="node_group_name_unique",
            ),
            models.CheckConstraint(
                # Spelled out: a CHECK passes when it is NULL, so `shares >= 0` alone lets NULL in.
                condition=Q(shares__isnull=False, shares__gte=0, shares_parent=False)
                | Q(shares__isnull=True, parent__isnull=True, shares_parent=False)
                | Q(shares__isnull=True, parent__isnull=False, shares_parent=True),
                name="node_shares_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(usage_record__isnull=True) | Q(usage_record__gte=0),
                name="node_usage_record_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(usage_record__isnull=True, usage_record_seq__isnull=True)
                | Q(usage_record__isnull=False, usage_record_seq__isnull=False),
                name="node_usage_record_has_seq",
            ),
            models.CheckConstraint(condition=Q(kind__in=NodeKind.values), name="node_kind_known"),
            models.CheckConstraint(
                condition=Q(origin__in=NodeOrigin.values), name="node_origin_known"
            ),
        ]
        indexes = [models.Index(fields=["cluster", "name"])]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.name}"

    @property
    def fs_rank9(self) -> int | None:
        """Accelerator FS_RANK9: FS_RANK, 9,999,999 for a group without a queued job."""
        return (
            None
            if self.fs_rank is None
            else (NO_RANK9 if self.fs_rank == NO_RANK else self.fs_rank)
        )


class TreeJsonRow(models.Model):
    """A node as tree.json lists it to those who may read the whole tree: their answer is these
    rows joined, not 10,000 nodes rebuilt per request. After each store of the tree a task
    writes them anew (tree_json_write); until it has, readers get answers built from the
    nodes, as they do for a tree stored before these rows existed.

    Derived data, rewritten whole: no foreign key constraints or unique index for the database
    to check on each of 100,000 rows (they tripled the time of writing them); Django still
    removes a node's row with the node.
    """

    node = models.ForeignKey(
        Node, on_delete=models.CASCADE, db_constraint=False, related_name="tree_json_rows"
    )
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, db_constraint=False, db_index=False, related_name="+"
    )
    place = models.PositiveIntegerField(help_text="In tree order, from 0 (the root).")
    last = models.PositiveIntegerField(help_text="The place of its last descendant (or its own).")
    depth = models.PositiveIntegerField()
    document = models.TextField(help_text="Its tree.json document, as JSON.")

    class Meta:
        indexes = [models.Index(fields=["cluster", "place"])]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.place}"


class ShareChange(models.Model):
    """The audit trail of shares: who changed which node from what to what, and why."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="share_changes")
    node = models.ForeignKey(
        Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="share_changes"
    )
    node_name = models.CharField(max_length=255, help_text="Kept when the node is removed.")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    changed_at = models.DateTimeField(db_index=True)
    old_shares = models.IntegerField(null=True, blank=True, help_text="Empty: the node was added.")
    new_shares = models.IntegerField(
        null=True, blank=True, help_text="Empty: the node was removed."
    )
    old_name = models.CharField(
        max_length=255, blank=True, help_text="The name it had before; empty: not renamed."
    )
    old_parent = models.CharField(
        max_length=255,
        blank=True,
        help_text="Where it was before a move or a removal (`root`: the top).",
    )
    new_parent = models.CharField(
        max_length=255, blank=True, help_text="Where it was moved; empty: not moved."
    )
    reason = models.TextField()

    class Meta:
        ordering = ["-changed_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(old_shares__isnull=True) | Q(old_shares__gte=0),
                name="share_change_old_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(new_shares__isnull=True) | Q(new_shares__gte=0),
                name="share_change_new_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(old_shares__isnull=False) | Q(new_shares__isnull=False),
                name="share_change_changes_something",
            ),
            models.CheckConstraint(condition=~Q(reason=""), name="share_change_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.node_name}: {self.what()}"

    def what(self) -> str:
        """The change in words: "renamed from B3", "moved from B3 to B1", "10 → 20 shares"."""
        parts = []
        if self.old_name:
            parts.append(f"renamed from {self.old_name}")
        if self.new_parent:
            parts.append(f"moved from {self.old_parent} to {self.new_parent}")
        if self.old_shares is None:
            parts.append(f"added with {self.new_shares} shares")
        elif self.new_shares is None:
            where = f" from {self.old_parent}" if self.old_parent else ""
            parts.append(f"removed{where} (had {self.old_shares} shares)")
        elif self.old_shares != self.new_shares or not parts:
            parts.append(f"{self.old_shares} → {self.new_shares} shares")
        return "; ".join(parts)


class SettingChange(models.Model):
    """The audit trail of a cluster's settings (its settings page): who set what, and why."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="setting_changes")
    setting = models.CharField(max_length=64, help_text="The Cluster field that changed.")
    old_value = models.CharField(max_length=255)
    new_value = models.CharField(max_length=255)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    changed_at = models.DateTimeField(db_index=True)
    reason = models.TextField()

    class Meta:
        ordering = ["-changed_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="setting_change_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}: {self.setting} {self.old_value} → {self.new_value}"


class Person(models.Model):
    """Who a dashboard login is to the schedulers: the user name their jobs run under, which
    links them to every leaf of that name ("my standing in every account")."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="person"
    )
    scheduler_user = models.CharField(
        max_length=255, blank=True, db_index=True, help_text="Empty: the login name."
    )

    def __str__(self) -> str:
        return f"{self.user} as {self.scheduler_user or self.user}"


class Role(models.TextChoices):
    MEMBER = "member", "member: reads the subtree"
    MANAGER = "manager", "manager: reads the subtree, its trends and its members' standing"


class Membership(models.Model):
    """A person's place in a tree: member or manager of a node (a project, an organization).
    Admins are Django staff and need none."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)

    class Meta:
        ordering = ["user_id", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "node"], name="membership_once_per_node"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_known"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.node}"


class TokenScope(models.TextChoices):
    READ = "read", "read: the API's answers"
    WRITE = "read write", "read write: also pushes accounting and edits shares (admins)"
    METRICS = "metrics", "metrics: /metrics only, for a Prometheus server (admins)"


class ApiToken(models.Model):
    """A personal API token (`Authorization: Bearer`): only its SHA-256 is kept, so the token
    itself is shown once, when it is made; it acts for its person within its scope until it
    expires or is revoked."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What it is for, in its owner's words.")
    prefix = models.CharField(max_length=16, help_text="Its first characters, to tell it apart.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex.")
    scope = models.CharField(max_length=16, choices=TokenScope.choices, default=TokenScope.READ)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user_id", "-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(scope__in=TokenScope.values), name="api_token_scope_known"
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("created_at")), name="api_token_expires_after_made"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}'s token {self.name!r} ({self.prefix}…)"

    def usable_at(self, now: datetime) -> bool:
        return self.revoked_at is None and now < self.expires_at

    def state_at(self, now: datetime) -> str:
        """active, expired or revoked."""
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.usable_at(now) else "expired"
