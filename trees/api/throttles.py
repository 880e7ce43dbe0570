"""Requests counted per token (a login's session, or an address, without one)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from trees.api.permissions import request_token


class TokenRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_cache_key(self, request: Request, view: Any) -> str:
        token = request_token(request)
        if token is not None:
            who = f"token-{token.pk}"
        elif request.user and request.user.is_authenticated:
            who = f"user-{request.user.pk}"
        else:
            who = f"address-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": who}
