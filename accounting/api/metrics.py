"""GET /metrics: the Prometheus text format, for a site's Prometheus server and its admins."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from accounting.metrics import metrics_reader_check, metrics_text
from trees.api.errors import ERRORS


@login_not_required  # a scraper has no session: metrics_reader_check says who may read
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """Every metric, to an allowed address, a `metrics` token of an admin's, or an admin."""
    refusal = metrics_reader_check(
        authorization=request.headers.get("Authorization", ""),
        user=request.user,
        address=request.META.get("REMOTE_ADDR", ""),
        allowed=settings.METRICS_ADDRESSES,
        now=timezone.now(),
    )
    if refusal is not None:
        response: HttpResponse = JsonResponse(
            {"error": ERRORS[refusal.status], "detail": refusal.detail}, status=refusal.status
        )
        if refusal.status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    else:
        text = metrics_text(
            max_depth=settings.METRICS_MAX_DEPTH, max_series=settings.METRICS_MAX_SERIES
        )
        response = HttpResponse(text, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
