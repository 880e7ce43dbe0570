"""A person's API tokens: listed, made (the token shown once, in the answer to the POST that
made it: never in a URL or the session) and revoked."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from trees.access import is_admin
from trees.forms import ApiTokenForm
from trees.models import ApiToken
from trees.selectors.tokens import api_tokens_get
from trees.services.tokens import api_token_create, api_token_revoke
from trees.views.parameters import MAX_ID, TOKENS_PAGE, BadParameter, page_or_404

ME_PATH = "/api/me/"  # the example's address: who the token acts for


@dataclass(frozen=True)
class TokenRow:
    token: ApiToken
    state: str  # active, expired or revoked


def api_tokens_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not isinstance(user, User):  # LoginRequiredMiddleware lets only people in
        raise PermissionDenied("API tokens are a logged-in person's")
    admin = is_admin(user)
    form = ApiTokenForm(admin=admin)
    made: tuple[ApiToken, str] | None = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "revoke":
            return _revoke(request, user)
        if action != "create":
            raise BadParameter("action", "must be create or revoke")
        form = ApiTokenForm(request.POST, admin=admin)
        if form.is_valid():
            try:
                made = api_token_create(
                    user=user,
                    name=form.cleaned_data["name"],
                    days=form.cleaned_data["expires_days"],
                    scope=form.cleaned_data["scope"],
                    now=timezone.now(),
                )
            except ValidationError as invalid:
                form.add_error(None, invalid)  # its keys are the form's fields
            else:
                form = ApiTokenForm(admin=admin)  # blank again, for another one
    now = timezone.now()
    page = page_or_404(request, api_tokens_get(user=user), TOKENS_PAGE)
    rows = [TokenRow(token, token.state_at(now)) for token in page]
    return render(
        request,
        "registration/api_tokens.html",
        {
            "form": form,
            "rows": rows,
            "page": page,
            "made": made[0] if made else None,
            "token": made[1] if made else "",
            "me_url": request.build_absolute_uri(ME_PATH),
        },
        status=400 if form.is_bound else 200,
    )


def _revoke(request: HttpRequest, user: User) -> HttpResponse:
    text = request.POST.get("token", "")
    if not text.isascii() or not text.isdigit() or not 1 <= len(text) <= 19 or int(text) < 1:
        raise BadParameter("token", "must be an id, a whole number from 1")
    token_id = int(text)
    # Another's token, one revoked already, or none: the same answer, which tells nothing of
    # others' tokens.
    if token_id <= MAX_ID and api_token_revoke(user=user, token_id=token_id, now=timezone.now()):
        messages.success(request, "Revoked: programs using that token are refused from now on.")
    else:
        messages.error(request, "No such token of yours to revoke (revoked already?).")
    return redirect("api-tokens")
