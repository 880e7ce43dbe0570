from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from django.template.loader import render_to_string

from trees.management.commands._base import FairshareCommand

# The answers the server in front gives itself, before the site sees the request: nginx
# refuses a request line longer than its large_client_header_buffers with a 414.
PAGES = ("414.html",)


class Command(FairshareCommand):
    help = (
        "Write the site's pages for the errors the web server in front answers itself (414:"
        " an address too long) as files into DIR, for its error_page (docs/deploy.md). Run it"
        " after collectstatic, at each release: the pages name the static files' hashed names."
    )

    def add_arguments(self, parser: CommandParser) -> None:  # no --cluster: the site's pages
        parser.add_argument("folder", metavar="DIR", help="where the pages go (made if missing)")

    def handle(self, *args: Any, **options: Any) -> None:
        folder = Path(options["folder"])
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name in PAGES:
                # No request: the page is the same for everyone, without a person's menu.
                (folder / name).write_text(render_to_string(name), encoding="utf-8")
                self.stdout.write(str(folder / name))
        except OSError as error:
            self.fail(f"{folder}: {error.strerror or error}")
