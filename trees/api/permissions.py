"""What a request may do by how it authenticated: a token within its scope; the session as
the pages allow. Which nodes a person reads is trees.access's, as for the pages."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from trees.models import ApiToken, TokenScope


def request_token(request: Request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


class TokenScopes(BasePermission):
    """Logged in; a token reads with `read` or `read write` and writes with `read write`
    (`metrics` opens /metrics alone)."""

    message = "this token's scope does not allow it"

    def has_permission(self, request: Request, view: Any) -> bool:
        if not request.user or not request.user.is_authenticated:
            return False
        token = request_token(request)
        if token is None:
            return True
        if token.scope == TokenScope.METRICS:
            self.message = "a token of the `metrics` scope opens /metrics only"
            return False
        if request.method in SAFE_METHODS:
            return True
        self.message = "writing needs a token of the `read write` scope"
        return token.scope == TokenScope.WRITE
