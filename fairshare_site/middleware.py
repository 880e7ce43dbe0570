"""The site's own middleware: what Django and the packages in settings do not already do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import PersistentRemoteUserMiddleware
from django.core.exceptions import BadRequest, PermissionDenied
from django.db.utils import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from fairshare_site.errors import (
    GENERIC_400,
    RETRY_AFTER,
    database_unavailable,
    error_response,
    page_not_found,
    permission_denied,
)

GetResponse = Callable[[HttpRequest], HttpResponse]


class ErrorAnswersMiddleware:
    """What a view raises about the request becomes the site's answer, in DEBUG too (where
    Django would show its technical page, and HTML to a JSON reader): a BadRequest
    (BadParameter among them) a 400 naming what was wrong; a missing cluster or node (Http404)
    the site's 404; a refusal (PermissionDenied) the site's 403 with its reason, logged as one
    line, never with a traceback. Always escaped in the site's page, or as JSON. A database
    gone away (OperationalError: a restart, a killed connection; InterfaceError: a connection
    already closed) is the site's 503, with Retry-After, where it was a 500."""

    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 503 and not response.has_header("Retry-After"):
            response["Retry-After"] = RETRY_AFTER  # a view's own 503 (a save cut off) too
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, (OperationalError, InterfaceError)):
            return database_unavailable(request, exception)
        if isinstance(exception, Http404):
            return page_not_found(request, exception)
        if isinstance(exception, PermissionDenied):
            return permission_denied(request, exception)
        if not isinstance(exception, BadRequest):
            return None
        parameter = getattr(exception, "parameter", None)
        message = str(exception) or GENERIC_400
        if parameter is None:
            return error_response(request, 400, message)
        return error_response(request, 400, message, parameter=parameter)


class PrivateAnswersMiddleware:
    """`Cache-Control: private, no-store` on every answer that needs a login, or is given to a
    logged-in person: standings and usage must not stay in a shared proxy or the browser's
    cache after logging out."""

    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "private" in response.get("Cache-Control", ""):
            return response  # the API's own: private, no-cache, revalidated by its ETags
        user = getattr(request, "user", None)
        if getattr(request, "login_required", True) or (user and user.is_authenticated):
            patch_cache_control(response, private=True, no_store=True)
        return response

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: Any,
        view_kwargs: Any,
    ) -> None:
        # As LoginRequiredMiddleware reads it: views are behind the login unless marked.
        request.login_required = getattr(view_func, "login_required", True)  # type: ignore[attr-defined]


class SsoLoginMiddleware(PersistentRemoteUserMiddleware):
    """REMOTE_USER_LOGIN: the person the web server in front authenticated is logged in (and
    stays so for the session). The name comes from the WSGI REMOTE_USER, as a server running
    the application itself sets it (Apache httpd and mod_wsgi), or from the header
    REMOTE_USER_HEADER names, as a proxy in front of gunicorn sets it; either way whoever can
    set it is that person, so the application must be reachable only through that server."""

    def __init__(self, get_response: GetResponse) -> None:
        super().__init__(get_response)
        self.header = str(settings.REMOTE_USER_META_KEY)  # type: ignore[misc]  # read per process
