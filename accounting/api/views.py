"""Accounting pushed through the API: what a cron job or a PBS server hook sends."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounting.api.schemas import IngestAnswerSerializer
from accounting.models import IngestSource, PushedAccounting
from accounting.services.ingest import ingest
from trees.access import access_get
from trees.api.base import ApiView
from trees.api.errors import Conflict, TooLarge
from trees.api.schemas import ErrorSerializer
from trees.engine.formula import FormulaError
from trees.views.lookup import cluster_or_404

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
MAX_KEY = 255
BODY_NAME = "request body"  # what the answer calls the lines sent
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
        key = _idempotency_key(request)
        if key is not None:
            pushed = PushedAccounting.objects.filter(user=user, key=key).first()
            if pushed is not None:
                return _replayed(pushed, cluster.pk)
        folder = Path(tempfile.mkdtemp(prefix="push-", dir=_push_dir()))
        try:
            path = _body_saved(request, folder)
            try:
                result = ingest(
                    cluster_name=cluster.name, source=IngestSource.PBS_ACCOUNTING, paths=[path]
                )
            except FormulaError as exc:
                raise exceptions.ValidationError(
                    {"fairshare_usage_res": f"cluster {cluster.name}: {exc}"}
                ) from exc
            except ValidationError as exc:
                raise exceptions.ValidationError({"cluster": exc.messages}) from exc
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        answer = result.document(files_named={path: BODY_NAME})
        if key is not None:
            try:
                with transaction.atomic():
                    PushedAccounting.objects.create(
                        user=user, key=key, cluster=cluster, answer=answer,
                        received_at=timezone.now(),
                    )  # fmt: skip
            except IntegrityError:  # the same key's other request finished first
                pushed = PushedAccounting.objects.get(user=user, key=key)
                return _replayed(pushed, cluster.pk)
        return Response(answer)


def _push_dir() -> Path:
    folder = Path(settings.UPLOAD_DIR) / "api"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _idempotency_key(request: Request) -> str | None:
    key: str | None = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY or not key.isprintable():
        raise exceptions.ValidationError(
            {"Idempotency-Key": f"1 to {MAX_KEY} printable characters"}
        )
    return key


def _replayed(pushed: PushedAccounting, cluster_id: int) -> Response:
    if pushed.cluster_id != cluster_id:
        raise Conflict(
            f"this Idempotency-Key was used for cluster {pushed.cluster.name}: a new request"
            " needs a new key"
        )
    response = Response(pushed.answer)
    response["Idempotent-Replayed"] = "true"
    return response


def _body_saved(request: Request, folder: Path) -> str:
    """The body, streamed to a file of `folder` (refused past the size limit); its path."""
    if not request.content_type.startswith((GzipLines.media_type, AccountingLines.media_type)):
        raise exceptions.UnsupportedMediaType(request.content_type)
    limit = settings.UPLOAD_MAX_FILE_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the body is over {limit:,} bytes (UPLOAD_MAX_FILE_BYTES)")
    stream = request.stream
    first = stream.read(CHUNK) if stream is not None else b""
    if not first:
        raise exceptions.ParseError("the body is empty: send PBS accounting log lines")
    gzip = first.startswith(GZIP_MAGIC) or "gzip" in request.headers.get("Content-Encoding", "")
    path = folder / ("pushed.gz" if gzip else "pushed")
    size = 0
    with path.open("wb") as out:
        chunk = first
        while chunk:
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"the body is over {limit:,} bytes (UPLOAD_MAX_FILE_BYTES)")
            out.write(chunk)
            chunk = stream.read(CHUNK) if stream is not None else b""
    return str(path)
