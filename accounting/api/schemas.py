"""The shapes of the accounting API's answers, for the OpenAPI schema."""

from __future__ import annotations

from rest_framework import serializers as s


class RejectSerializer(s.Serializer):  # type: ignore[type-arg]
    file = s.CharField()
    line = s.IntegerField()
    field = s.CharField()
    reason = s.CharField()


class FileCountsSerializer(s.Serializer):  # type: ignore[type-arg]
    path = s.CharField()
    read = s.IntegerField()
    ingested = s.IntegerField()
    duplicates = s.IntegerField()
    rejected = s.IntegerField()
    running = s.IntegerField()
    queued = s.IntegerField()
    left_queue = s.IntegerField(help_text="queued jobs a snapshot of the queue no longer lists")
    record_types = s.DictField(child=s.IntegerField())


class IngestAnswerSerializer(s.Serializer):  # type: ignore[type-arg]
    read = s.IntegerField(help_text="lines read")
    ingested = s.IntegerField(help_text="job runs stored for the first time")
    duplicates = s.IntegerField(help_text="job runs stored before: nothing changed")
    rejected = s.IntegerField()
    running = s.IntegerField()
    queued = s.IntegerField()
    rejects = RejectSerializer(many=True)
    record_types = s.DictField(child=s.IntegerField(), help_text="lines by record type")
    unknown_entities = s.ListField(child=s.CharField())
    created_nodes = s.ListField(child=s.CharField())
    files = FileCountsSerializer(many=True)
    cluster = s.CharField()
    ingest_run = s.IntegerField()
    seconds = s.FloatField()


class SimulationStartedSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField(help_text="the scenario's id")
    url = s.URLField(help_text="where its result will be: GET it until `state` is done or failed")
    page = s.URLField(help_text="its page on the site (the permalink)")
    state = s.ChoiceField(["queued", "running", "done", "failed"])
    message = s.CharField(allow_blank=True, help_text="why it failed (its queueing, here)")


class SimulationSerializer(s.Serializer):  # type: ignore[type-arg]
    id = s.IntegerField()
    title = s.CharField(allow_blank=True)
    state = s.ChoiceField(["queued", "running", "done", "failed"])
    progress = s.FloatField(help_text="from 0 to 1 while a worker replays it")
    message = s.CharField(allow_blank=True, help_text="why it failed")
    parameters = s.JSONField(
        help_text="order, backfill, from, until, cores and the variant's settings (KEY=VALUE)"
    )
    created_by = s.CharField(allow_null=True, help_text="who saved it (null: since removed)")
    created_at = s.DateTimeField()
    started_at = s.DateTimeField(allow_null=True)
    finished_at = s.DateTimeField(allow_null=True)
    page = s.URLField(help_text="its page on the site")
    result = s.JSONField(
        allow_null=True,
        help_text="once done, what `manage.py simulate --format json` prints (docs/whatif.md):"
        " trace, calibration (with its sentence), baseline, variant, entities, projects,"
        " share_over_time; waits in seconds, shares as fractions",
    )
