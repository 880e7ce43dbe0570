"""What every API view shares: strong ETags with 304s, `Cache-Control: private, no-cache`,
`Vary` on who asks; and the Django request the pages' helpers take."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase, HttpResponseNotModified
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import parse_etags, quote_etag
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

CONDITIONAL = ("GET", "HEAD")


def django_request(request: Request) -> HttpRequest:
    """The request under DRF's, with its user set by the API's authentication (a token's
    person): what the pages' helpers (node_view, access_get) read."""
    return request._request


def answer_tag(request: Request, parts: tuple[Any, ...]) -> str:
    """A strong ETag of an answer known by what it depends on (`parts`), without building it:
    the address with its query, who asks, and the parts."""
    who = (request.user.pk, getattr(request.auth, "scope", "session"))
    key = repr((request.get_full_path(), who, parts)).encode()
    return quote_etag(hashlib.sha256(key).hexdigest())


def _content_tag(content: bytes) -> str:
    return quote_etag(hashlib.sha256(content).hexdigest())


def _matches(request: Request, tag: str) -> bool:
    """If-None-Match's weak comparison (RFC 9110 13.1.2): a proxy that compresses the answer
    hands the client our tag as W/"...", which still names the same answer."""
    wanted = {_opaque(held) for held in parse_etags(request.headers.get("If-None-Match", ""))}
    return "*" in wanted or _opaque(tag) in wanted


def _opaque(tag: str) -> str:
    return tag.removeprefix("W/")


class ApiView(APIView):
    """Each GET answer carries a strong ETag (of its content, or `conditional`'s cheaper one);
    a request whose If-None-Match holds it gets 304 and no body."""

    def conditional(
        self, request: Request, parts: tuple[Any, ...], build: Callable[[], HttpResponseBase]
    ) -> HttpResponseBase:
        """`build()`'s answer, unless the client holds it already: the tag comes from `parts`
        (what the answer depends on), so a 304 costs no more than reading them."""
        tag = answer_tag(request, parts)
        if _matches(request, tag):
            return self._not_modified(tag)
        response = build()
        response["ETag"] = tag
        return response

    # Views answer plain HttpResponses too (tree JSON already encoded, texts), and a 304.
    def finalize_response(  # type: ignore[override]
        self, request: Request, response: HttpResponseBase, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[arg-type]
        if request.method in CONDITIONAL and response.status_code == 200:
            if not response.has_header("ETag"):
                if isinstance(response, Response):
                    response.render()
                response["ETag"] = _content_tag(getattr(response, "content", b""))
            if not isinstance(response, HttpResponseNotModified) and _matches(
                request, response["ETag"]
            ):
                response = self._not_modified(response["ETag"])
        patch_cache_control(response, private=True, no_cache=True)
        patch_vary_headers(response, ["Authorization", "Cookie"])
        return response

    def _not_modified(self, tag: str) -> HttpResponseNotModified:
        response = HttpResponseNotModified()
        response["ETag"] = tag
        patch_cache_control(response, private=True, no_cache=True)
        patch_vary_headers(response, ["Authorization", "Cookie"])
        return response
