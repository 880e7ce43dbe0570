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
