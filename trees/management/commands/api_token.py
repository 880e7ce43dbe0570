from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import CommandParser
from django.utils import timezone

from trees.management.commands._base import FairshareCommand
from trees.models import TokenScope
from trees.services.tokens import MAX_TOKEN_DAYS, api_token_create

# The values, not the members: the service's messages quote the scope as the person wrote it.
SCOPES = {
    "read": TokenScope.READ.value,
    "write": TokenScope.WRITE.value,
    "metrics": TokenScope.METRICS.value,
}
OPTIONS = {"name": "--name", "expires_days": "--expires-days", "scope": "--scope"}


class Command(FairshareCommand):
    help = (
        "Make an API token for a login, for a program that cannot open the tokens page (a PBS"
        " host pushing accounting, a Prometheus server). The token is the last line of the"
        " output, alone: it is shown this once (only its SHA-256 is kept)."
    )

    def add_arguments(self, parser: CommandParser) -> None:  # no --cluster: a person's token
        parser.add_argument("username", help="the login the token acts for")
        parser.add_argument("--name", default="api_token command", help="what it is for")
        parser.add_argument(
            "--expires-days",
            type=int,
            default=settings.API_TOKEN_DAYS,
            metavar="D",
            help=f"its lifetime, 1 to {MAX_TOKEN_DAYS} days (default: API_TOKEN_DAYS,"
            f" {settings.API_TOKEN_DAYS})",
        )
        parser.add_argument(
            "--scope",
            choices=sorted(SCOPES),
            default="read",
            help="read (default); write: read write, to push accounting and edit shares;"
            " metrics: /metrics only. write and metrics are for admins",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"]
        try:
            user = get_user_model()._default_manager.get_by_natural_key(username)
        except ObjectDoesNotExist:
            self.fail(f"no user {username!r}")
        try:
            token, secret = api_token_create(
                user=user,
                name=options["name"],
                days=options["expires_days"],
                scope=SCOPES[options["scope"]],
                now=timezone.now(),
            )
        except ValidationError as invalid:
            if not hasattr(invalid, "error_dict"):  # about the person, not an option: the cap
                self.fail(" ".join(invalid.messages))
            for field, errors in invalid.message_dict.items():
                for error in errors:
                    self.stderr.write(f"{OPTIONS.get(field, field)}: {error}")
            raise SystemExit(1) from None
        expires = timezone.localtime(token.expires_at).strftime("%Y-%m-%d %H:%M %Z")
        self.stdout.write(
            f"token {token.name!r} of {username} ({token.scope}), expires {expires};"
            " shown once, here:"
        )
        self.stdout.write(secret)
