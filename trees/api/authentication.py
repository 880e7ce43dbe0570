"""Personal API tokens as `Authorization: Bearer TOKEN` (the session is DRF's own)."""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from trees.services.tokens import TokenRefused, api_token_authenticate, bearer_token

logger = logging.getLogger(__name__)


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = get_authorization_header(request).decode("latin-1")
        try:
            sent = bearer_token(header)
            if sent is None:
                return None  # no token: the session, or anonymous
            token = api_token_authenticate(token=sent, now=timezone.now())
        except TokenRefused as refused:
            logger.info("API token refused: %s", refused)  # the reason, which the answer hides
            raise AuthenticationFailed(refused.answer) from None
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """How the OpenAPI schema describes the tokens."""

    target_class = BearerTokenAuthentication
    name = "personalToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal token from /accounts/tokens/ (or `manage.py api_token`)",
        }
