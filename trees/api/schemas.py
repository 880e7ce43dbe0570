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
    usage_unit = s.CharField(help_text="what a usage counts, e.g. core-seconds")
    tree_version = s.CharField(required=False, help_text="PBS: the If-Match of a share edit")
    fairshare_algorithm = s.CharField(required=False)
    fairshare_dampening_factor = s.IntegerField(required=False)
    priority_decay_half_life = s.FloatField(required=False, help_text="seconds")
    priority_calc_period = s.FloatField(required=False, help_text="seconds")
    priority_usage_reset_period = s.CharField(required=False)
    charge_job_end = s.BooleanField(required=False)


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


class NodeSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    name = s.CharField()
    kind = s.ChoiceField(["organization", "project", "user"])
    # DRF moves declared fields out of the class: `parent` shadows nothing at run time.
    parent = s.IntegerField(allow_null=True)  # type: ignore[assignment]
    depth = s.IntegerField(help_text="the root is 0")
    shares = s.IntegerField(allow_null=True)
    fairshare_perc = s.FloatField(help_text="target share of the whole machine, a fraction")
    usage = s.FloatField(help_text="decayed usage, in the cluster's usage unit")
    usage_perc = s.FloatField(allow_null=True, help_text="PBS usage/perc; null on Slurm")
    fairshare_tree_usage = s.FloatField(allow_null=True, help_text="PBS; null on Slurm")
    fairshare_factor = s.FloatField(allow_null=True)
    level_fs = LevelFs(allow_null=True)
    fairshare_rank = RankSerializer(allow_null=True)
    slurm = SlurmColumnsSerializer(required=False, help_text="Slurm: sshare's own columns")
    children = s.IntegerField(required=False, help_text="how many children it has")
    opens = s.BooleanField(required=False, help_text="whether the person reads it in full")
    as_of = s.DateTimeField(required=False, help_text="with `at`: the cycle it is from")


class TreeSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = ClusterSerializer()
    nodes = NodeSerializer(many=True)


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
    children = NodeSerializer(many=True)
    recovery = RecoverySerializer(allow_null=True, help_text="PBS entities and groups")


class HistoryPointSerializer(s.Serializer):  # type: ignore[type-arg]
    at = s.DateTimeField()
    usage = s.FloatField()
    fairshare_perc = s.FloatField()
    fairshare_tree_usage = s.FloatField()
    usage_perc = s.FloatField()
    fairshare_factor = s.FloatField()
    level_fs = LevelFs(allow_null=True)
    fairshare_rank = s.IntegerField(allow_null=True)


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


class ClusterStandingSerializer(s.Serializer):  # type: ignore[type-arg]
    cluster = s.CharField()
    scheduler = s.CharField()
    usage_unit = s.CharField()
    best = s.IntegerField(allow_null=True)
    mine = StandingSerializer(many=True)
    members = StandingSerializer(many=True)


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


class TrendsSerializer(s.Serializer):  # type: ignore[type-arg]
    node = s.IntegerField()
    range = s.CharField()
    at = s.ListField(child=s.DateTimeField())
    children = TrendChildSerializer(many=True)
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
    jobs = QueuedJobSerializer(many=True, help_text="in the scheduler's order, held ones last")


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
