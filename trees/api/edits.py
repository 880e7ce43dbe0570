"""Share edits through the API: the edit page's service, with its what-if preview."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework import serializers as s
from rest_framework.request import Request
from rest_framework.response import Response

from trees.access import access_get
from trees.api.base import ApiView, django_request
from trees.api.errors import ERRORS, Conflict, PreconditionRequired
from trees.api.schemas import ErrorSerializer
from trees.engine.edit import WHOLE_EDIT, ChildEdit, EditProblem
from trees.engine.pbs import resource_group_parent
from trees.models import Cluster, Scheduler
from trees.selectors.edit import tree_edit_preview_get
from trees.selectors.pbs import tree_version_get
from trees.services.tree_edit import EditRefused, TreeChanged, tree_edit
from trees.views.lookup import cluster_or_404
from trees.views.parameters import MAX_NAME, choice_parameter

MAX_EDITS = 10_000


class ChildEditSerializer(s.Serializer):  # type: ignore[type-arg]
    original = s.CharField(
        max_length=MAX_NAME, allow_blank=True, default="",
        help_text="the entry's name now; empty for a new entry",
    )  # fmt: skip
    name = s.CharField(max_length=MAX_NAME, help_text="its name after the edit")
    # DRF moves declared fields out of the class: `parent` and `field` shadow nothing at run time.
    parent = s.CharField(  # type: ignore[assignment]
        max_length=MAX_NAME, help_text="its parent after the edit; root: `root`"
    )
    shares = s.IntegerField(min_value=0, max_value=2**31 - 1)
    remove = s.BooleanField(default=False, help_text="remove it (and its subtree)")


class ShareEditSerializer(s.Serializer):  # type: ignore[type-arg]
    edits = s.ListField(child=ChildEditSerializer(), max_length=MAX_EDITS, allow_empty=False)
    reason = s.CharField(
        max_length=10_000, allow_blank=True, default="",
        help_text="why: kept in the audit trail (required unless dry_run)",
    )  # fmt: skip


class ProblemSerializer(s.Serializer):  # type: ignore[type-arg]
    row = s.IntegerField(allow_null=True, help_text="the edit's index; null: the edit as a whole")
    field = s.CharField()
    message = s.CharField()


class StandingChangeSerializer(s.Serializer):  # type: ignore[type-arg]
    name = s.CharField()
    old_name = s.CharField(allow_blank=True)
    parent = s.CharField()  # type: ignore[assignment]
    leaf = s.BooleanField()
    perc_before = s.FloatField(allow_null=True)
    perc_after = s.FloatField(allow_null=True)
    factor_before = s.FloatField(allow_null=True)
    factor_after = s.FloatField(allow_null=True)


class ShareEditAnswerSerializer(s.Serializer):  # type: ignore[type-arg]
    dry_run = s.BooleanField()
    version = s.CharField(help_text="the tree's version after (or, dry run, before) the edit")
    changes = StandingChangeSerializer(many=True, required=False)
    memberships_removed = s.IntegerField(required=False)
    share_changes = s.IntegerField(required=False, help_text="audit rows written")


class ShareEdits(ApiView):
    """Admins (a `read write` token, or the session), PBS clusters: edit the children of
    nodes, as the edit page does. With `dry_run=1`, what the edit would do: every node whose
    target share or factor would change, nothing saved. Without it the edit is saved, with
    its `reason` in the audit trail; `If-Match` must carry the tree's version it was made on
    (`tree_version` of `GET /api/clusters/{name}/`): a tree changed since answers 409 and
    nothing is saved. An edit with problems answers 400 with each row's."""

    @extend_schema(
        request=ShareEditSerializer,
        parameters=[
            OpenApiParameter("dry_run", str, enum=["0", "1"], description="1: preview only"),
            OpenApiParameter(
                "If-Match", str, OpenApiParameter.HEADER,
                description="the tree_version the edit was made on (required to save)",
            ),
        ],
        responses={
            200: ShareEditAnswerSerializer,
            **{status: ErrorSerializer for status in (400, 401, 403, 404, 409, 428)},
        },
        examples=[
            OpenApiExample(
                "Give physics 30 shares",
                request_only=True,
                value={
                    "edits": [
                        {"original": "physics", "name": "physics", "parent": "root", "shares": 30}
                    ],
                    "reason": "the 2027 allocation",
                },
            )
        ],
    )  # fmt: skip
    def post(self, request: Request, name: str) -> Response:
        cluster = cluster_or_404(name, scheduler=Scheduler.PBS)
        if not access_get(user=request.user, cluster=cluster).admin:
            raise PermissionDenied("editing shares is for admins")
        dry_run = choice_parameter(django_request(request), "dry_run", "0", ["0", "1"]) == "1"
        body = ShareEditSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        edits = [_edit(row) for row in body.validated_data["edits"]]
        version = request.headers.get("If-Match", "").strip().strip('"')
        if dry_run:
            return _preview(cluster, edits, version)
        if not version:
            raise PreconditionRequired("If-Match: the tree_version the edit was made on")
        try:
            summary = tree_edit(
                cluster=cluster, edits=edits, reason=body.validated_data["reason"],
                version=version, opened_at=timezone.now(),
                user=request.user if isinstance(request.user, User) else None,
            )  # fmt: skip
        except TreeChanged as exc:
            raise Conflict(_stale(cluster)) from exc
        except EditRefused as refused:
            return _refused(refused.problems)
        except ValidationError as invalid:
            raise exceptions.ValidationError({"reason": invalid.messages}) from None
        return Response(
            {
                "dry_run": False,
                "version": tree_version_get(cluster=cluster),
                "share_changes": summary.share_changes,
            }
        )


def _edit(row: dict[str, Any]) -> ChildEdit:
    return ChildEdit(
        original=row["original"].strip(),
        name=row["name"].strip(),
        parent=resource_group_parent(row["parent"].strip()),
        shares=row["shares"],
        remove=row["remove"] and bool(row["original"].strip()),
    )


def _preview(cluster: Cluster, edits: list[ChildEdit], version: str) -> Response:
    preview = tree_edit_preview_get(cluster=cluster, edits=edits)
    if version and version != preview.version:
        raise Conflict(_stale(cluster))
    if preview.edited.problems:
        return _refused(preview.edited.problems)
    return Response(
        {
            "dry_run": True,
            "version": preview.version,
            "changes": [dataclasses.asdict(change) for change in preview.changes],
            "memberships_removed": preview.memberships_removed,
        }
    )


def _stale(cluster: Cluster) -> str:
    return (
        "the tree changed since the version in If-Match: nothing was saved; its version is"
        f" now {tree_version_get(cluster=cluster)}"
    )


def _refused(problems: list[EditProblem]) -> Response:
    """400 with each problem's row (an index, or null for the edit as a whole), field and
    message: DRF's ValidationError would turn the row numbers into strings."""
    detail = {"edits": _problems(problems)}
    return Response({"error": ERRORS[400], "detail": detail}, status=400)


def _problems(problems: list[EditProblem]) -> list[dict[str, Any]]:
    return [
        {
            "row": None if problem.row == WHOLE_EDIT else problem.row,
            "field": problem.field,
            "message": problem.message,
        }
        for problem in problems
    ]
