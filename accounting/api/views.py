"""Accounting pushed through the API (what a cron job or a PBS server hook sends), and policy
what-ifs started and read by programs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework import serializers as s
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounting.api.schemas import (
    IngestAnswerSerializer,
    SimulationSerializer,
    SimulationStartedSerializer,
)
from accounting.models import Scenario, ScenarioState
from accounting.selectors import scenario_get
from accounting.services.pushes import KeyReused, PushRefused, accounting_push
from accounting.services.scenarios import MAX_CORES, MAX_SETTING, MAX_SETTINGS, scenario_start
from accounting.services.whatif import WhatIfError, WhatIfParameters
from trees.access import access_get
from trees.api.base import ApiView
from trees.api.errors import Conflict, TooLarge
from trees.api.schemas import ErrorSerializer
from trees.engine.formula import FormulaError
from trees.engine.whatif import ORDERS
from trees.formats.whatif import parse_backfill
from trees.models import Cluster
from trees.views.lookup import cluster_or_404

CHUNK = 1 << 20
MAX_KEY = 255
SENT_AGAIN = {
    "read": 2, "ingested": 0, "duplicates": 1, "rejected": 0, "running": 0, "queued": 0,
    "rejects": [], "record_types": {"E": 1, "S": 1}, "unknown_entities": [],
    "created_nodes": [], "files": [], "cluster": "hpc", "ingest_run": 7, "seconds": 0.012,
}  # fmt: skip


class AccountingLines(BaseParser):
    """Lines of PBS accounting logs, plain or gzip: the view streams the body itself."""

    media_type = "text/plain"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return stream


class GzipLines(AccountingLines):
    media_type = "application/gzip"


class PushAccounting(ApiView):
    """Admins (a token of the `read write` scope, or the session): PBS accounting log lines
    as `text/plain` (gzip too: `Content-Encoding: gzip` or `application/gzip`), ingested as
    `ingest_pbs_accounting` ingests a file, exactly once: the same lines sent again count as
    `duplicates` and change nothing. With an `Idempotency-Key`, a retried request gets the
    first answer again (`Idempotent-Replayed: true`) and nothing is read. The body is limited
    as the import page's files are (UPLOAD_MAX_FILE_BYTES; gzip: MAX_DECOMPRESSED_BYTES)."""

    parser_classes = [AccountingLines, GzipLines]

    @extend_schema(
        request={"text/plain": OpenApiTypes.STR, "application/gzip": OpenApiTypes.BINARY},
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="a retry with the same key gets the first answer again",
            )
        ],
        responses={
            200: IngestAnswerSerializer,
            **{status: ErrorSerializer for status in (400, 401, 403, 404, 409, 413, 415, 429)},
        },
        examples=[
            OpenApiExample(
                "A day's lines sent a second time",
                response_only=True,
                value=SENT_AGAIN,
            )
        ],
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = cluster_or_404(name)
        user = request.user
        if not isinstance(user, User) or not access_get(user=user, cluster=cluster).admin:
            raise PermissionDenied("pushing accounting is for admins")
        if not request.content_type.startswith((GzipLines.media_type, AccountingLines.media_type)):
            raise exceptions.UnsupportedMediaType(request.content_type)
        limit = settings.UPLOAD_MAX_FILE_BYTES
        declared = request.META.get("CONTENT_LENGTH") or "0"
        if declared.isdigit() and int(declared) > limit:  # refused before it is read
            raise TooLarge(f"the body is over {limit:,} bytes (UPLOAD_MAX_FILE_BYTES)")
        try:
            pushed = accounting_push(
                cluster=cluster,
                user=user,
                key=_idempotency_key(request),
                chunks=_chunks(request),
            )
        except PushRefused as refused:
            if refused.too_large:
                raise TooLarge(str(refused)) from None
            raise exceptions.ParseError(str(refused)) from None
        except KeyReused as reused:
            raise Conflict(str(reused)) from None
        except FormulaError as exc:
            raise exceptions.ValidationError(
                {"fairshare_usage_res": f"cluster {cluster.name}: {exc}"}
            ) from exc
        except ValidationError as exc:
            raise exceptions.ValidationError({"cluster": exc.messages}) from exc
        response = Response(pushed.answer)
        if pushed.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


def _idempotency_key(request: Request) -> str | None:
    key: str | None = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY or not key.isprintable():
        raise exceptions.ValidationError(
            {"Idempotency-Key": f"1 to {MAX_KEY} printable characters"}
        )
    return key


def _chunks(request: Request) -> Iterator[bytes]:
    stream = request.stream
    while stream is not None and (chunk := stream.read(CHUNK)):
        yield chunk


class SimulationAskedSerializer(s.Serializer):  # type: ignore[type-arg]
    title = s.CharField(max_length=200, allow_blank=True, default="")
    order = s.ChoiceField(
        ORDERS, required=False, allow_null=True,
        help_text="policy (the cluster's order; the default) or fifo (submit order)",
    )  # fmt: skip
    backfill = s.CharField(
        max_length=16, required=False, allow_null=True,
        help_text="none, greedy, easy or a reservation depth N; absent: the cluster's own",
    )  # fmt: skip
    until = s.DateTimeField(
        required=False, allow_null=True,
        help_text="jobs submitted before this time (ISO 8601); absent: up to the last",
    )  # fmt: skip
    cores = s.IntegerField(
        min_value=1, max_value=MAX_CORES, required=False, allow_null=True,
        help_text="the pool; absent: the cluster's cores",
    )  # fmt: skip
    settings = s.ListField(
        child=s.CharField(max_length=MAX_SETTING),
        max_length=MAX_SETTINGS, default=list,
        help_text="the variant, KEY=VALUE each (`shares:NAME=N`, `fair_share=false`,"
        " `PriorityWeightFairShare=5000` ...); none: the baseline alone",
    )  # fmt: skip

    def get_fields(self) -> dict[str, Any]:
        # `from` is Python's keyword: the field is added by name, before `until`.
        fields = super().get_fields()
        since = s.DateTimeField(
            required=False, allow_null=True,
            help_text="jobs submitted from this time (ISO 8601); absent: from the first",
        )  # fmt: skip
        return {name: field for name, field in fields.items() if name != "until"} | {
            "from": since,
            "until": fields["until"],
        }

    def validate_backfill(self, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_backfill(value)
            except ValueError as error:
                raise s.ValidationError(str(error)) from None
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        since, until = attrs.get("from"), attrs.get("until")
        if since is not None and until is not None and since >= until:
            raise s.ValidationError({"until": "the window's end must be after its start"})
        return attrs


class Simulations(ApiView):
    """Admins (a `read write` token, or the session): a what-if of the cluster, as its What-if
    page starts one: its stored jobs replayed under its policy and under a variant made by
    `settings`. It is saved and queued for a worker: the answer (202) gives the address of
    its result, to GET until its `state` is done or failed; 503 with `state` failed when the
    broker did not take it. Settings the policy cannot take,
    an unknown pool or a reversed window answer 400, saying which."""

    @extend_schema(
        request=SimulationAskedSerializer,
        responses={
            202: SimulationStartedSerializer,
            503: OpenApiResponse(
                SimulationStartedSerializer,
                description="saved, but the broker did not take it: failed (`message`)",
            ),
            **{code: ErrorSerializer for code in (400, 401, 403, 404, 429)},
        },
        examples=[
            OpenApiExample(
                "Physics at 40 shares, on 512 cores",
                request_only=True,
                value={"title": "physics 40", "cores": 512, "settings": ["shares:physics=40"]},
            )
        ],
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = _admins_cluster(request, name)
        body = SimulationAskedSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        asked = body.validated_data
        if asked.get("cores") is None and cluster.cores is None:
            raise exceptions.ValidationError(
                {"cores": ["how many cores the jobs ran on is not known: give cores, or set"
                           " the cluster's cores on its settings page"]}
            )  # fmt: skip
        backfill = asked.get("backfill")
        parameters = WhatIfParameters(
            order=asked.get("order"),
            backfill=None if backfill is None else parse_backfill(backfill),
            since=asked.get("from"),
            until=asked.get("until"),
            cores=asked.get("cores"),
            settings=tuple(text.strip() for text in asked["settings"]),
        )
        try:
            scenario = scenario_start(
                cluster=cluster,
                parameters=parameters,
                user=request.user if isinstance(request.user, User) else None,
                title=asked["title"],
            )
        except WhatIfError as refused:
            raise exceptions.ValidationError({"settings": [str(refused)]}) from None
        scenario.refresh_from_db()  # a broker that did not take it has failed it
        url = _result_url(request, cluster, scenario)
        answer = {"id": scenario.pk, "url": url, "page": _page_url(request, cluster, scenario),
                  "state": scenario.state, "message": scenario.message}  # fmt: skip
        queued = scenario.state != ScenarioState.FAILED
        return Response(
            answer,
            status=status.HTTP_202_ACCEPTED if queued else status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Location": url},
        )


class Simulation(ApiView):
    """Admins: a what-if of the cluster, its parameters, its progress while a worker replays
    it, then its result (or why it failed)."""

    @extend_schema(
        responses={
            200: SimulationSerializer,
            **{code: ErrorSerializer for code in (401, 403, 404, 429)},
        }
    )
    def get(self, request: Request, name: str, scenario_id: int) -> Response:
        cluster = _admins_cluster(request, name)
        try:
            scenario = scenario_get(cluster=cluster, scenario_id=scenario_id)
        except Scenario.DoesNotExist:
            raise Http404("no such what-if on this cluster") from None
        return Response(
            {
                "id": scenario.pk,
                "title": scenario.title,
                "state": scenario.state,
                "progress": scenario.progress,
                "message": scenario.message,
                "parameters": scenario.parameters,
                "created_by": None if scenario.created_by is None else scenario.created_by.username,
                "created_at": scenario.created_at,
                "started_at": scenario.started_at,
                "finished_at": scenario.finished_at,
                "page": _page_url(request, cluster, scenario),
                "result": scenario.result,
            }
        )


def _admins_cluster(request: Request, name: str) -> Cluster:
    cluster = cluster_or_404(name)
    if not access_get(user=request.user, cluster=cluster).admin:
        raise PermissionDenied("what-ifs are for admins")
    return cluster


def _result_url(request: Request, cluster: Cluster, scenario: Scenario) -> str:
    path = reverse("api-simulation", args=[cluster.name, scenario.pk])
    return request.build_absolute_uri(path)


def _page_url(request: Request, cluster: Cluster, scenario: Scenario) -> str:
    path = reverse("accounting:scenario", args=[cluster.name, scenario.pk])
    return request.build_absolute_uri(path)
