"""Accounting pushed through the API: what a cron job or a PBS server hook sends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounting.api.schemas import IngestAnswerSerializer
from accounting.services.pushes import KeyReused, PushRefused, accounting_push
from trees.access import access_get
from trees.api.base import ApiView
from trees.api.errors import Conflict, TooLarge
from trees.api.schemas import ErrorSerializer
from trees.engine.formula import FormulaError
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
