"""Query parameters read the one way: a malformed value becomes a 400 that names it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


def int_parameter(
    request: HttpRequest, name: str, default: int, low: int, high: int | None
) -> int | HttpResponse:
    """The whole number `name` of the query string, `default` when absent; else the 400."""
    text = request.GET.get(name)
    if text is None:
        return default
    if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        return HttpResponseBadRequest(f"{name} must be a whole number {bounds}, not {text!r}")
    return int(text)
