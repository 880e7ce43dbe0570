"""The shapes of the API's answers, for its OpenAPI schema (drf-spectacular): the views build
their answers from the pages' selectors (trees.api.documents); these say what they hold."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers as s

NUMBER_OR_INFINITY = {
    "oneOf": [{"type": "number"}, {"type": "string", "enum": ["inf", "-inf"]}],
    "nullable": True,
    "description": "a number; Fair Tree's infinite Level FS as sshare prints it, `inf`",
}


@extend_schema_field(NUMBER_OR_INFINITY)
class LevelFs(s.Field):  # type: ignore[type-arg]
    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(
    {
        "oneOf": [{"type": "number"}, {"type": "string", "enum": ["inf"]}],
        "nullable": True,
        "description": "how far from its target the group is by `fairshare.relative` (smaller:"
        " further behind, ranked first); `inf` with relative 1 and a target of 0; null with"
        " FairShare off (window 0) or before a cycle",
    }
)
class Distance(s.Field):  # type: ignore[type-arg]
    def to_representation(self, value: Any) -> Any:
        return value


class ErrorSerializer(s.Serializer):  # type: ignore[type-arg]
    error = s.CharField(help_text="what went wrong, one sentence per status")
    detail = s.JSONField(help_text="the specifics: a sentence, or each field's errors")
    parameter = s.CharField(required=False, help_text="the query parameter that was wrong")


class ClusterSerializer(s.Serializer):  # type: ignore[type-arg]
    name = s.CharField()
    scheduler = s.ChoiceField(["pbs", "slurm", "accelerator"])
    fairshare_usage_res = s.CharField(help_text="the usage formula, as PBS's sched_config")
    fairshare_entity = s.CharField()
    decay_interval = s.FloatField(help_text="seconds between decays")
    decay_factor = s.FloatField()
    unknown_shares = s.IntegerField()
    last_decay = s.DateTimeField(allow_null=True)
    metrics_updated_at = s.DateTimeField(allow_null=True)
    usage_unit = s.CharField(
        required=False,
        help_text="what a usage counts, e.g. core-seconds (the cluster endpoints; not the"
        " tree's `cluster`)",
    )
    tree_version = s.CharField(required=False, help_text="PBS: the If-Match of a share edit")
    fairshare_algorithm = s.CharField(required=False)
    fairshare_dampening_factor = s.IntegerField(required=False)
    priority_decay_half_life = s.FloatField(required=False, help_text="seconds")
    priority_calc_period = s.FloatField(required=False, help_text="seconds")
    priority_usage_reset_period = s.CharField(required=False)
    charge_job_end = s.BooleanField(required=False)
    fairshare_relative = s.ChoiceField(
        [0, 1, 2],
        required=False,
        help_text="Accelerator fairshare.relative: how a group's distance from its target is"
        " measured (0 absolute, 1 relative to the target, 2 running plus alpha times history)",
    )
    fairshare_relative_alpha = s.FloatField(
        required=False, help_text="Accelerator fairshare.relative_alpha (mode 2's weight)"
    )
    scheduler_iteration = s.FloatField(
        required=False, help_text="Accelerator: seconds between the cycles that compute FS_*"
    )


class PageSerializer(s.Serializer):  # type: ignore[type-arg]
    next = s.URLField(allow_null=True, help_text="the next page's address; null: the last")
    previous = s.URLField(allow_null=True)


class ClusterPageSerializer(PageSerializer):
    results = ClusterSerializer(many=True)


class RankSerializer(s.Serializer):  # type: ignore[type-arg]
    rank = s.IntegerField(help_text="Fair Tree's rank: the number of users is the best")
    of = s.IntegerField()


class SlurmColumnsSerializer(s.Serializer):  # type: ignore[type-arg]
    account = s.CharField()
    user = s.CharField(allow_null=True)
    raw_shares = s.JSONField(help_text="an integer, `parent`, or null for the root")
    norm_shares = s.FloatField(allow_null=True)
    raw_usage = s.IntegerField()
    norm_usage = s.FloatField(allow_null=True)
    effectv_usage = s.FloatField(allow_null=True)
    fairshare = s.FloatField(allow_null=True)
    level_fs = LevelFs(allow_null=True)


SCALED = "scaled by 10,000 (2500 is a quarter), as Accelerator's job fields are"


class AcceleratorHistorySerializer(s.Serializer):  # type: ignore[type-arg]
    """The FS_* fields a cycle keeps in a group's history."""

    FS_TARGET = s.IntegerField(
        allow_null=True,
        help_text="its target share of the machine: its weight over its active siblings'"
        " (a group is active with a queued, running or suspended job), times its parent's;"
        f" {SCALED}",
    )
    FS_RUNNING = s.IntegerField(
        allow_null=True, help_text=f"its share of the running jobs' tokens; {SCALED}"
    )
    FS_RUNNING_COUNT = s.IntegerField(
        allow_null=True, help_text="its running jobs, its subtree's for a group (a count)"
    )
    FS_HISTORY = s.IntegerField(
        allow_null=True,
        help_text=f"its share of the token-seconds run within its window; {SCALED}",
    )
    FS_RANK = s.IntegerField(
        allow_null=True,
        help_text="its place among the groups with queued jobs, 0 first; -1 without a queued job",
    )
    FS_RANK9 = s.IntegerField(allow_null=True, help_text="FS_RANK, 9999999 instead of -1")


class AcceleratorSerializer(AcceleratorHistorySerializer):
    """An Accelerator FairShare group's FS_* fields as the last cycle computed them."""

    FS_EXCESS_RUNNING = s.IntegerField(
        allow_null=True,
        help_text="FS_RUNNING - FS_TARGET (from the unrounded shares, rounded once): over its"
        f" target when positive; {SCALED}",
    )
    FS_EXCESS_RUNNING_LOCAL = s.IntegerField(
        allow_null=True,
        help_text="the same among its siblings only: its share of its parent's running tokens"
        f" less its weight's share of its active siblings'; {SCALED}",
    )
    FS_EXCESS_HISTORY = s.IntegerField(
        allow_null=True, help_text=f"FS_HISTORY - FS_TARGET, rounded once; {SCALED}"
    )
    active = s.BooleanField(
        allow_null=True, help_text="whether it (or a group below it) has a queued, running or"
        " suspended job",
    )  # fmt: skip
    window = s.IntegerField(
        allow_null=True,
        help_text="seconds FS_HISTORY counts over (its own or inherited; 0: FairShare off)",
    )
    window_set = s.IntegerField(
        allow_null=True, help_text="its own window (-t), seconds; null: inherited"
    )
    distance = Distance(allow_null=True)


class NodeSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    name = s.CharField()
    kind = s.ChoiceField(["organization", "project", "user"])
    # DRF moves declared fields out of the class: `parent` shadows nothing at run time.
    parent = s.IntegerField(allow_null=True)  # type: ignore[assignment]
    depth = s.IntegerField(help_text="the root is 0")
    shares = s.IntegerField(allow_null=True, help_text="Accelerator: the group's weight")
    fairshare_perc = s.FloatField(
        help_text="target share of the whole machine, a fraction (Accelerator: FS_TARGET unscaled)"
    )
    usage = s.FloatField(
        help_text="decayed usage, in the cluster's usage unit (Accelerator: its running jobs)"
    )
    usage_perc = s.FloatField(
        allow_null=True, help_text="PBS usage/perc; null on Slurm and Accelerator"
    )
    fairshare_tree_usage = s.FloatField(
        allow_null=True, help_text="PBS; null on Slurm and Accelerator"
    )
    fairshare_factor = s.FloatField(allow_null=True)
    level_fs = LevelFs(allow_null=True)
    fairshare_rank = RankSerializer(allow_null=True)
    slurm = SlurmColumnsSerializer(required=False, help_text="Slurm: sshare's own columns")
    accelerator = AcceleratorSerializer(
        required=False,
        help_text="Accelerator: the group's FS_* fields; with `at`, those the history keeps"
        " (the others null)",
    )
    children = s.IntegerField(required=False, help_text="how many children it has")
    opens = s.BooleanField(required=False, help_text="whether the person reads it in full")
    as_of = s.DateTimeField(required=False, help_text="with `at`: the cycle it is from")


class TreeSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = ClusterSerializer()
    nodes = NodeSerializer(many=True)
    next = s.URLField(allow_null=True, help_text="the next page's address; null on the last")
    previous = s.URLField(allow_null=True, help_text="the page before's; null on the first")


class RecoverySerializer(s.Serializer):  # type: ignore[type-arg]
    at = s.ListField(child=s.DateTimeField(), help_text="now, then each coming decay")
    fairshare_factor = s.ListField(child=s.FloatField())
    reaches = s.IntegerField(allow_null=True, help_text="decays until the factor is 0.5")
    held_by = s.CharField(allow_null=True, help_text="the ancestor that keeps it under 0.5")
    sentence = s.CharField()


class NodeDetailSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = s.CharField()
    node = NodeSerializer()
    path = NodeSerializer(many=True, help_text="from the root down to the node")
    furthest_over_target = s.IntegerField(allow_null=True, help_text="the id of that level")
    children = NodeSerializer(many=True, help_text="a page of them, the largest target first")
    children_count = s.IntegerField(help_text="its children in all")
    children_next = s.URLField(allow_null=True, help_text="the children's next page; or null")
    children_previous = s.URLField(allow_null=True, help_text="the page before; or null")
    recovery = RecoverySerializer(allow_null=True, help_text="PBS entities and groups")


class HistoryPointSerializer(s.Serializer):  # type: ignore[type-arg]
    at = s.DateTimeField()
    usage = s.FloatField(help_text="Accelerator: its running jobs")
    fairshare_perc = s.FloatField(help_text="Accelerator: FS_TARGET unscaled")
    fairshare_tree_usage = s.FloatField(allow_null=True, help_text="null on Accelerator")
    usage_perc = s.FloatField(allow_null=True, help_text="null on Accelerator")
    fairshare_factor = s.FloatField(allow_null=True, help_text="null on Accelerator")
    level_fs = LevelFs(allow_null=True)
    fairshare_rank = s.IntegerField(allow_null=True)
    accelerator = AcceleratorHistorySerializer(
        allow_null=True, help_text="Accelerator: the FS_* fields kept; null on other schedulers"
    )


class HistoryPageSerializer(PageSerializer):
    results = HistoryPointSerializer(many=True)


class JobSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    job_id = s.CharField()
    run = s.IntegerField()
    state = s.CharField()
    entity = s.CharField()
    node = s.IntegerField(allow_null=True)
    user = s.CharField(allow_blank=True)
    group = s.CharField(allow_blank=True)
    account = s.CharField(allow_blank=True)
    project = s.CharField(allow_blank=True)
    queue = s.CharField(allow_blank=True)
    partition = s.CharField(allow_blank=True)
    ncpus = s.IntegerField()
    ngpus = s.IntegerField()
    nodes = s.IntegerField()
    requested_walltime = s.IntegerField(allow_null=True, help_text="seconds")
    walltime = s.IntegerField(allow_null=True, help_text="seconds")
    cput = s.FloatField(allow_null=True, help_text="seconds")
    submitted = s.DateTimeField(allow_null=True)
    eligible = s.DateTimeField(allow_null=True)
    start = s.DateTimeField(allow_null=True)
    end = s.DateTimeField(allow_null=True)
    exit_status = s.IntegerField(allow_null=True)
    usage = s.FloatField(help_text="what it was charged, in the cluster's usage unit")


class JobPageSerializer(PageSerializer):
    results = JobSerializer(many=True)


class CompareSerializer(s.Serializer):  # type: ignore[type-arg]
    a = s.CharField()
    b = s.CharField()
    winner = s.CharField(allow_null=True, help_text="the more deserving; null: a tie")
    answer = s.IntegerField(required=False, help_text="PBS pbsfs -c: -1 a, 1 b, 0 tie")
    ancestor = s.CharField(allow_null=True, help_text="their first common ancestor")
    child_a = s.CharField(allow_null=True)
    child_b = s.CharField(allow_null=True)
    usage_a = s.FloatField(required=False)
    usage_b = s.FloatField(required=False)
    perc_a = s.FloatField(required=False)
    perc_b = s.FloatField(required=False)
    level_fs_a = LevelFs(required=False)
    level_fs_b = LevelFs(required=False)
    fairshare_a = s.FloatField(required=False, allow_null=True)
    fairshare_b = s.FloatField(required=False, allow_null=True)
    explanation = s.ListField(child=s.CharField())


class TargetSerializer(s.Serializer):  # type: ignore[type-arg]
    words = s.CharField()
    tone = s.ChoiceField(["under", "over", "on", "none"])


class StandingSerializer(s.Serializer):  # type: ignore[type-arg]
    node = s.IntegerField()
    name = s.CharField()
    path = s.CharField()
    fairshare_factor = s.FloatField()
    level_fs = LevelFs(allow_null=True)
    place = s.IntegerField(allow_null=True, help_text="1st: the most deserving entity")
    of = s.IntegerField()
    week_ago = s.FloatField(allow_null=True)
    change = s.FloatField(allow_null=True)
    target = TargetSerializer()
    pulled_by = s.CharField(required=False, allow_null=True)
    recovery = s.CharField(required=False, allow_null=True)
    running = JobSerializer(many=True, required=False)
    queued = JobSerializer(many=True, required=False)


class GroupStandingSerializer(s.Serializer):  # type: ignore[type-arg]
    """An Accelerator group of the person's: a leaf `G.user` of theirs, or a group they are a
    member of (or, in `group_members`, a user's leaf under a group they manage)."""

    node = s.IntegerField()
    name = s.CharField(help_text="the group's path, e.g. /class/vcs.u5")
    said = s.CharField(help_text="where it stands, in a sentence")
    accelerator = AcceleratorSerializer()
    running = JobSerializer(many=True, required=False)
    queued = JobSerializer(many=True, required=False)


class ClusterStandingSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = s.CharField()
    scheduler = s.CharField()
    usage_unit = s.CharField()
    best = s.IntegerField(allow_null=True)
    mine = StandingSerializer(many=True, help_text="PBS and Slurm: the person's entities")
    members = StandingSerializer(many=True)
    groups = GroupStandingSerializer(
        many=True, help_text="Accelerator: the person's groups, dispatched first first"
    )
    groups_best = s.IntegerField(
        allow_null=True, help_text="Accelerator: the group of theirs dispatched first"
    )
    group_members = GroupStandingSerializer(many=True)


class MeSerializer(s.Serializer):  # type: ignore[type-arg]
    scheduler_user = s.CharField()
    clusters = ClusterStandingSerializer(many=True)


class ShareChangeSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    changed_at = s.DateTimeField()
    changed_by = s.CharField(allow_null=True)
    node = s.IntegerField(allow_null=True)
    node_name = s.CharField()
    old_shares = s.IntegerField(allow_null=True)
    new_shares = s.IntegerField(allow_null=True)
    old_name = s.CharField(allow_null=True)
    old_parent = s.CharField(allow_null=True)
    new_parent = s.CharField(allow_null=True)
    reason = s.CharField(allow_blank=True)


class AuditPageSerializer(PageSerializer):
    results = ShareChangeSerializer(many=True)


class SeriesSerializer(s.Serializer):  # type: ignore[type-arg]
    usage = s.ListField(child=s.FloatField(allow_null=True))
    usage_share = s.ListField(child=s.FloatField(allow_null=True))
    target_share = s.ListField(child=s.FloatField(allow_null=True))


class TrendChildSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    name = s.CharField()
    target_share = s.FloatField()
    usage = s.FloatField()
    usage_share = s.FloatField()
    series = SeriesSerializer()


class OverTargetSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    usage_share = s.FloatField()
    target_share = s.FloatField()
    times = s.FloatField()


class UsageRowSerializer(s.Serializer):  # type: ignore[type-arg]
    key = s.CharField()
    jobs = s.IntegerField()
    core_hours = s.FloatField()
    usage = s.FloatField()


class OtherChildrenSerializer(s.Serializer):  # type: ignore[type-arg]
    count = s.IntegerField(help_text="the children left out of `children`, summed here")
    target_share = s.FloatField()
    usage = s.FloatField()
    usage_share = s.FloatField()
    series = SeriesSerializer()


class TrendsSerializer(s.Serializer):  # type: ignore[type-arg]
    node = s.IntegerField()
    range = s.CharField()
    at = s.ListField(child=s.DateTimeField())
    children = TrendChildSerializer(
        many=True, help_text="at most `children` of them, those of the most present usage"
    )
    others = OtherChildrenSerializer(allow_null=True, help_text="null: every child is listed")
    far_over_target = OverTargetSerializer(many=True)
    top = UsageRowSerializer(many=True)


class QueuedJobSerializer(s.Serializer):  # type: ignore[type-arg]
    job_id = s.CharField(allow_null=True, help_text="null: a job of an entity private to you")
    entity = s.CharField(allow_null=True)
    user = s.CharField(allow_null=True, allow_blank=True)
    queue = s.CharField(allow_null=True, allow_blank=True)
    ncpus = s.IntegerField(help_text="requested cores")
    walltime = s.IntegerField(allow_null=True, help_text="requested walltime, seconds")
    priority = s.FloatField(allow_null=True, help_text="null: PBS without job_sort_formula")
    position = s.IntegerField(allow_null=True, help_text="1st: considered first; null: held")
    queue_position = s.IntegerField(allow_null=True, help_text="its place in its queue")
    terms = s.DictField(
        child=s.FloatField(allow_null=True),
        help_text="each term of the priority (PBS: job_sort_formula's top-level terms, or the"
        " sort criteria without one; Slurm: the weighted factors, nice negative)",
    )
    held = s.BooleanField()
    reason = s.CharField(allow_null=True, allow_blank=True, help_text="the scheduler's own")
    submitted = s.DateTimeField(allow_null=True)
    masked = s.BooleanField(help_text="true: only the size and priority are yours to read")


class QueueSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = s.CharField()
    at = s.DateTimeField(
        help_text="the cycle the order is computed at (the scheduler's, on its iteration's grid)"
    )
    formula = s.CharField(allow_blank=True, help_text="PBS job_sort_formula; empty: none")
    problem = s.CharField(allow_blank=True, help_text="why the configured order failed")
    waiting = s.IntegerField(help_text="jobs the scheduler considers (held ones aside)")
    jobs = QueuedJobSerializer(
        many=True, help_text="a page of them, in the scheduler's order, held ones last"
    )
    next = s.URLField(allow_null=True, help_text="the next page's address; null on the last")
    previous = s.URLField(allow_null=True, help_text="the page before's; null on the first")


class AheadSerializer(s.Serializer):  # type: ignore[type-arg]
    jobs = s.IntegerField()
    cores = s.IntegerField()
    core_hours = s.FloatField(help_text="requested cores × requested walltime, summed")


class FairshareTermSerializer(s.Serializer):  # type: ignore[type-arg]
    term = s.CharField(help_text="the terms reading the fairshare values; Slurm: fairshare")
    value = s.FloatField(allow_null=True)
    best = s.FloatField(
        allow_null=True, help_text="its value with no usage (PBS: tree usage 0, factor 1)"
    )


class PathOverTargetSerializer(s.Serializer):  # type: ignore[type-arg]
    node = s.IntegerField()
    name = s.CharField()
    ratio = s.FloatField(
        allow_null=True,
        help_text="its usage over its target (PBS: of the machine; Slurm:"
        " among its siblings, 1 / Level FS)",
    )


class PriorityPointSerializer(s.Serializer):  # type: ignore[type-arg]
    at = s.DateTimeField()
    priority = s.FloatField(allow_null=True)
    position = s.IntegerField()
    queue_position = s.IntegerField()


class JobPrioritySerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = s.CharField()
    job_id = s.CharField()
    entity = s.CharField()
    user = s.CharField(allow_blank=True)
    queue = s.CharField(allow_blank=True)
    ncpus = s.IntegerField()
    walltime = s.IntegerField(allow_null=True, help_text="requested, seconds")
    submitted = s.DateTimeField(allow_null=True)
    held = s.BooleanField()
    priority = s.FloatField(allow_null=True, help_text="null: PBS without job_sort_formula")
    position = s.IntegerField(allow_null=True, help_text="null: held")
    queue_position = s.IntegerField(allow_null=True)
    waiting = s.IntegerField(help_text="jobs the scheduler considers")
    in_queue = s.IntegerField(help_text="of them, in the job's queue")
    ahead = AheadSerializer()
    terms = s.DictField(child=s.FloatField(allow_null=True))
    values = s.DictField(
        child=s.FloatField(allow_null=True), help_text="what the formula was given (PBS)"
    )
    reason = s.CharField(allow_blank=True, help_text="the scheduler's own comment")
    error = s.CharField(allow_null=True, help_text="PBS: why the formula gave 0")
    under_threshold = s.BooleanField()
    fairshare = FairshareTermSerializer(allow_null=True)
    furthest_over_target = PathOverTargetSerializer(allow_null=True)
    explanation = s.ListField(child=s.CharField(), help_text="the page's sentences")
    history = PriorityPointSerializer(many=True, help_text="each cycle's, oldest first")


# The examples: the Accelerator manual's /class/vcs picture (hsim and vcs weigh the same; u2
# runs 12 jobs in hsim, u1 3 and u5 1 in vcs, and u5 has a job queued), as the API answers it.
_GROUPS = {  # id: name, kind, parent, depth, weight, then FS_TARGET, FS_RUNNING,
    # FS_RUNNING_COUNT, FS_EXCESS_RUNNING, FS_EXCESS_RUNNING_LOCAL, FS_HISTORY, FS_RANK, distance
    1: ("/", "organization", None, 0, None, 10000, 10000, 16, 0, 0, 10000, -1, 0.0),
    2: ("/class", "organization", 1, 1, 100, 10000, 10000, 16, 0, 0, 10000, -1, 0.0),
    4: ("/class/vcs", "project", 2, 2, 100, 5000, 2500, 4, -2500, -2500, 2500, -1, -2.75),
    6: ("/class/vcs.u1", "user", 4, 3, 100, 2500, 1875, 3, -625, 2500, 1875, -1, -0.6875),
    7: ("/class/vcs.u5", "user", 4, 3, 100, 2500, 625, 1, -1875, -2500, 625, 0, -2.0625),
}  # fmt: skip


def _group_example(pk: int) -> dict[str, Any]:
    name, kind, parent, depth, weight, *fields, distance = _GROUPS[pk]
    target, running, count, excess, local, history, rank = fields
    return {
        "id": pk, "name": name, "kind": kind, "parent": parent, "depth": depth,
        "shares": weight, "fairshare_perc": target / 10_000, "usage": float(count),
        "usage_perc": None, "fairshare_tree_usage": None, "fairshare_factor": None,
        "level_fs": None, "fairshare_rank": None,
        "accelerator": {
            "FS_TARGET": target, "FS_RUNNING": running, "FS_RUNNING_COUNT": count,
            "FS_EXCESS_RUNNING": excess, "FS_EXCESS_RUNNING_LOCAL": local,
            "FS_HISTORY": history, "FS_EXCESS_HISTORY": history - target, "FS_RANK": rank,
            "FS_RANK9": 9_999_999 if rank == -1 else rank, "active": True, "window": 7200,
            "window_set": None, "distance": distance,
        },
    }  # fmt: skip


ACCELERATOR_TREE_EXAMPLE: dict[str, Any] = {  # ?q=vcs
    "cluster": {
        "name": "vov", "scheduler": "accelerator", "fairshare_usage_res": "ncpus*walltime",
        "fairshare_entity": "euser", "decay_interval": 86400.0, "decay_factor": 0.5,
        "unknown_shares": 0, "last_decay": None,
        "metrics_updated_at": "2026-11-27T12:00:00+00:00", "fairshare_relative": 2,
        "fairshare_relative_alpha": 10.0, "scheduler_iteration": 600.0,
    },
    "nodes": [
        _group_example(pk) | {"children": {1: 1, 2: 2, 4: 2}.get(pk, 0), "opens": True}
        for pk in _GROUPS
    ],
    "next": None,
    "previous": None,
}  # fmt: skip
ACCELERATOR_DETAIL_EXAMPLE = {
    "cluster": "vov",
    "node": _group_example(4),
    "path": [_group_example(pk) for pk in (1, 2, 4)],
    "furthest_over_target": None,
    "children": [_group_example(6), _group_example(7)],
    "children_count": 2,
    "children_next": None,
    "children_previous": None,
    "recovery": None,
}
_HISTORY_NULLS = dict.fromkeys(
    ("fairshare_tree_usage", "usage_perc", "fairshare_factor", "level_fs", "fairshare_rank")
)
ACCELERATOR_HISTORY_EXAMPLE = {  # /class/vcs.u1 before its jobs started, and after
    "next": None,
    "previous": None,
    "results": [
        {
            "at": "2026-11-27T11:50:00+00:00", "usage": 0.0, "fairshare_perc": 0.25,
            **_HISTORY_NULLS,
            "accelerator": {
                "FS_TARGET": 2500, "FS_RUNNING": 0, "FS_RUNNING_COUNT": 0, "FS_HISTORY": 0,
                "FS_RANK": 1, "FS_RANK9": 1,
            },
        },
        {
            "at": "2026-11-27T12:00:00+00:00", "usage": 3.0, "fairshare_perc": 0.25,
            **_HISTORY_NULLS,
            "accelerator": {
                "FS_TARGET": 2500, "FS_RUNNING": 1875, "FS_RUNNING_COUNT": 3,
                "FS_HISTORY": 1875, "FS_RANK": -1, "FS_RANK9": 9_999_999,
            },
        },
    ],
}  # fmt: skip
