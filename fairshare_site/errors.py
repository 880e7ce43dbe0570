"""How the site answers what went wrong: in its own frame for pages, as JSON for JSON answers,
and never with what the person typed unescaped (a reflected script otherwise runs in the
browser of whoever follows a crafted link)."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

from trees.api.errors import ERRORS as API_ERRORS

GENERIC_400 = "The request could not be read."
DATABASE_GONE = "The database is not answering."
RETRY_AFTER = "30"  # seconds, on every 503: a database restart or failover takes about that

logger = logging.getLogger(__name__)


def answers_json(request: HttpRequest) -> bool:
    """Whether the address is one of the JSON answers (`*.json`, the API) rather than a page."""
    path = request.path_info
    return path.endswith(".json") or path.startswith("/api/")


def error_response(request: HttpRequest, status: int, message: str, **extra: Any) -> HttpResponse:
    """`{"error": message, ...}` for JSON answers; else the site's page for the status, where
    the template escapes the message."""
    if request.path_info.startswith("/api/"):  # the API's own shape: trees.api.errors
        error = API_ERRORS.get(status, "the request failed")
        return JsonResponse({"error": error, "detail": message, **extra}, status=status)
    if answers_json(request):
        return JsonResponse({"error": message, **extra}, status=status)
    context = {"message": message, **extra}
    return render(request, f"{status}.html", context, status=status)


@requires_csrf_token
def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Other 400s (a request Django itself refused: a bad host, a body over the limits); their
    messages may hold what was sent, so only a plain sentence is shown."""
    return error_response(request, 400, GENERIC_400)


NOT_FOUND = "There is no such page, or it is not one you can see."
# What the views' own 404s say, as the page's sentence; anything else (the URL resolver's
# list of patterns) gets the plain one.
NOT_FOUND_SAID = {
    "no such cluster": "There is no such cluster here.",
    "no such node": "There is no such node in this cluster, or it is not one you can see.",
}


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    said = exception.args[0] if type(exception) is Http404 and exception.args else None
    message = NOT_FOUND_SAID.get(said, NOT_FOUND) if isinstance(said, str) else NOT_FOUND
    return error_response(request, 404, message)


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The reason is the view's own sentence (never the request's content)."""
    return error_response(request, 403, str(exception) or "this page is for the site's admins")


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    """The page without the request's context (that may be what failed); JSON for JSON."""
    if answers_json(request):
        failed = "the server failed to answer; see its log"
        return JsonResponse({"error": failed, "detail": failed}, status=500)
    return defaults.server_error(request)


def database_unavailable(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The site's 503 for a database that went away (restarted, failed over, a connection
    killed): a moment later it usually answers again. Its error text, which may name hosts,
    goes to the log only. The request's transaction died with the connection, so nothing of
    it was stored."""
    logger.error("database unavailable: %s", exception, exc_info=exception)
    if answers_json(request):
        return error_response(request, 503, "the database is not answering: try again in a moment")
    return error_response(request, 503, DATABASE_GONE)
