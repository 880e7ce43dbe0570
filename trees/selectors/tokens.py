"""A person's API tokens."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from trees.models import ApiToken


def api_tokens_get(*, user: User) -> QuerySet[ApiToken]:
    """Their tokens, newest first (revoked and expired ones too: what they did)."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
