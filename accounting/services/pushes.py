"""Accounting lines pushed through the API (a cron job or a PBS server hook): ingested as
`ingest_pbs_accounting` ingests a file, exactly once, a retried request answered from its
Idempotency-Key."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounting.models import IngestSource, PushedAccounting
from accounting.services.ingest import ingest
from trees.models import Cluster

BODY_NAME = "request body"  # what the answer calls the lines sent


class PushRefused(Exception):
    """The body is not one to ingest (`reason` says why, `too_large` when over the limit)."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.too_large = too_large


class KeyReused(Exception):
    """The Idempotency-Key answered a push to another cluster."""


@dataclass(frozen=True)
class PushAnswer:
    answer: dict[str, Any]  # the ingest's JSON (`ingest_pbs_accounting --json`)
    replayed: bool  # the first answer to the same key, nothing read this time


def accounting_push(
    *, cluster: Cluster, user: User, key: str | None, chunks: Iterable[bytes]
) -> PushAnswer:
    """The lines of `chunks` (plain, or gzip: the ingest knows it by its magic number)
    ingested into the cluster; with a `key` the person used before, that push's answer, and
    nothing is read. The body is limited as the import page's files are
    (UPLOAD_MAX_FILE_BYTES)."""
    if key is not None:
        pushed = PushedAccounting.objects.filter(user=user, key=key).first()
        if pushed is not None:
            return _replayed(pushed, cluster)
    folder = Path(tempfile.mkdtemp(prefix="push-", dir=_push_dir()))
    try:
        path = _saved(chunks, folder)
        result = ingest(cluster_name=cluster.name, source=IngestSource.PBS_ACCOUNTING, paths=[path])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    answer = result.document(files_named={path: BODY_NAME})
    if key is not None:
        try:
            with transaction.atomic():
                PushedAccounting.objects.create(
                    user=user, key=key, cluster=cluster, answer=answer, received_at=timezone.now()
                )
        except IntegrityError:  # the same key's other request finished first
            return _replayed(PushedAccounting.objects.get(user=user, key=key), cluster)
    return PushAnswer(answer, replayed=False)


def _replayed(pushed: PushedAccounting, cluster: Cluster) -> PushAnswer:
    if pushed.cluster_id != cluster.pk:
        raise KeyReused(
            f"this Idempotency-Key was used for cluster {pushed.cluster.name}: a new request"
            " needs a new key"
        )
    return PushAnswer(pushed.answer, replayed=True)


def _push_dir() -> Path:
    folder = Path(settings.UPLOAD_DIR) / "api"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _saved(chunks: Iterable[bytes], folder: Path) -> str:
    """The body, streamed to a file of `folder`; its path."""
    limit = settings.UPLOAD_MAX_FILE_BYTES
    pieces = iter(chunks)
    first = next(pieces, b"")
    if not first:
        raise PushRefused("the body is empty: send PBS accounting log lines")
    path = folder / "pushed"
    size = 0
    with path.open("wb") as out:
        for piece in chain([first], pieces):
            size += len(piece)
            if size > limit:
                raise PushRefused(
                    f"the body is over {limit:,} bytes (UPLOAD_MAX_FILE_BYTES)", too_large=True
                )
            out.write(piece)
    return str(path)
