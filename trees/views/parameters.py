"""Query parameters read the one way: a malformed value raises BadParameter, which the site's
error middleware (fairshare_site/errors.py) answers as a 400 naming the parameter, escaped in
the site's 400 page or as JSON; the value itself is never part of the message."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import BadRequest
from django.core.paginator import EmptyPage, Page, Paginator
from django.http import Http404, HttpRequest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

# The largest primary key the databases hold (a signed 64-bit integer): a larger id names
# nothing, as a missing row does.
MAX_ID = 2**63 - 1
MAX_NAME = 255  # characters of a node's name, as the database holds it
MAX_TIME = 64  # characters of an ISO 8601 time with its fraction and zone
MAX_LEVELS = 3  # of a tree.json answer below its top
HISTORY_RANGES = {"7d": timedelta(days=7), "30d": timedelta(days=30), "1y": timedelta(days=365)}
AUDIT_PAGE = 100  # share changes a page of the audit trail lists
CHILDREN_PAGE = 100  # children a node page lists a page
JOBS_PAGE = 100  # waiting jobs the queue page lists a page
TOKENS_PAGE = 50  # of a person's API tokens, revoked and expired ones too, a page
NODE_CHILDREN_PAGE = 1000  # children the API's node answers a page at most (and by default)
MAX_PARENTS_LISTED = 1000  # groups the edit page offers as a child's new parent
MAX_EDIT_CHILDREN = 500  # children the edit page puts in its one form; more: the resource_group
_WHOLE_NUMBER = re.compile(r"[0-9]{1,30}")  # ASCII digits only: str.isdigit() takes `²`


class BadParameter(BadRequest):
    """A query parameter that is not what the view reads; `message` says what it must be."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(f"{parameter} {message}")
        self.parameter = parameter
        self.message = message


def int_parameter(request: HttpRequest, name: str, default: int, low: int, high: int | None) -> int:
    """The whole number `name` of the query string, `default` when absent."""
    text = request.GET.get(name)
    if text is None:
        return default
    bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
    number = _whole_number(text)
    if number is None or number < low or (high is not None and number > high):
        raise BadParameter(name, f"must be a whole number {bounds}")
    return number


def id_parameter(request: HttpRequest, name: str) -> int | None:
    """The row id `name` of the query string (a positive whole number), None when absent; an
    id too large for the database names no row: 404, as a missing one."""
    text = request.GET.get(name)
    if text is None:
        return None
    number = _whole_number(text)
    if number is None or number < 1:
        raise BadParameter(name, "must be an id, a whole number from 1")
    if number > MAX_ID:
        raise Http404(f"no such {name}")
    return number


def choice_parameter(request: HttpRequest, name: str, default: str, choices: Sequence[str]) -> str:
    text = request.GET.get(name)
    if text is None:
        return default
    if text not in choices:
        raise BadParameter(name, f"must be one of {', '.join(choices)}")
    return text


def text_parameter(
    request: HttpRequest, name: str, *, max_length: int, required: bool = False
) -> str | None:
    """The text `name` of the query string, stripped; None when absent. `required`: when
    given it must not be blank."""
    text = request.GET.get(name)
    if text is None:
        return None
    text = text.strip()
    if len(text) > max_length or (required and not text) or "\x00" in text:
        least = 1 if required else 0
        raise BadParameter(name, f"must be {least} to {max_length} characters of a name")
    return text


def time_parameter(request: HttpRequest, name: str) -> datetime | None:
    """The ISO 8601 time `name` of the query string (without a zone: the site's), None when
    absent."""
    text = request.GET.get(name)
    if text is None:
        return None
    try:
        moment = parse_datetime(text.strip()) if len(text) <= MAX_TIME else None
    except ValueError:
        moment = None
    if moment is None:
        raise BadParameter(name, "must be an ISO 8601 time, such as 2026-11-26T12:00:00Z")
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


def _whole_number(text: str) -> int | None:
    return int(text) if _WHOLE_NUMBER.fullmatch(text) else None


def page_or_404(request: HttpRequest, items: Any, per_page: int) -> Page[Any]:
    """The page `?page=` asks for of `items`, `per_page` a page; past the last one, a 404."""
    number = int_parameter(request, "page", 1, 1, None)
    pages = Paginator(items, per_page)
    try:
        return pages.page(number)
    except EmptyPage as exc:
        raise Http404(f"there are {pages.num_pages} pages") from exc
