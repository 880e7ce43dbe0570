"""Every API error as `{"error": what went wrong, "detail": the specifics}`: a sentence per
status in `error`, the view's own words (or each field's) in `detail`; never the request's
content in a page."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import BadRequest
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

ERRORS = {
    400: "the request is not one this endpoint reads",
    401: "authentication is needed: a personal token (Authorization: Bearer) or a login",
    403: "not allowed",
    404: "not found",
    405: "method not allowed",
    406: "this endpoint answers JSON only",
    409: "conflict",
    412: "precondition failed",
    413: "the request is too large",
    415: "unsupported media type",
    428: "a precondition is required",
    429: "too many requests",
    503: "the service is unavailable",
}


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "the resource changed"


class PreconditionRequired(exceptions.APIException):
    status_code = status.HTTP_428_PRECONDITION_REQUIRED
    default_detail = "If-Match is required"


class TooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the request body is over the limit"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    extra: dict[str, Any] = {}
    if isinstance(exc, BadRequest):  # BadParameter and the like: a 400 naming the parameter
        parameter = getattr(exc, "parameter", None)
        if parameter is not None:
            extra["parameter"] = parameter
        exc = exceptions.ParseError(str(exc) or ERRORS[400])
    response = exception_handler(exc, context)
    if response is None:
        return None  # a failure of ours: the site's JSON 500, logged with its traceback
    detail = (
        response.data.get("detail", response.data)
        if isinstance(response.data, dict)
        else (response.data)
    )
    response.data = {
        "error": ERRORS.get(response.status_code, "the request failed"),
        "detail": detail,
        **extra,
    }
    return response
