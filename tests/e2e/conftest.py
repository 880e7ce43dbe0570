"""Browser tests: Playwright drives Debian's Chromium against the demo's site on a real server.

The site runs as it does in production (gunicorn, DEBUG off, whitenoise's collected static
files) in a subprocess with its own SQLite database, built once for this package by
`manage.py demo --small`; the tests change nothing that outlives them, so they share it. Each
test opens fresh browser contexts (their own cookies) and logs in through the real login form.
A console error, an uncaught exception or a failed request in any page fails the test, unless
the test said it expects that status for that address.
"""

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    StorageState,
    sync_playwright,
)

from fairshare_site.local_server import healthz_awaited

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; Playwright never downloads a browser
ARTIFACTS = ROOT / "test-artifacts"
PASSWORD = "demo"
TIMEOUT_MS = 10_000
SERVER_START_S = 30


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="package")
def chromium_path() -> Path:
    """Debian's Chromium, or a skip saying why; on CI its absence fails, never skips."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: apt-get install --no-install-recommends chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@dataclass(frozen=True)
class Site:
    url: str
    env: dict[str, str]

    def manage(self, *args: str) -> str:
        """Run a management command against the served site's database; its output."""
        ran = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        return ran.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    problem = healthz_awaited(url, server, SERVER_START_S)
    if problem is not None:
        pytest.fail(f"{problem}:\n{log.read_text()}")


@pytest.fixture(scope="package")
def site(chromium_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The demo's small site in production settings, served by gunicorn on a free port."""
    folder = tmp_path_factory.mktemp("e2e")
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "e2e-tests-only-not-a-secret",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on the loopback; Chromium keeps Secure cookies
        "DATABASE_URL": f"sqlite:///{folder / 'site.sqlite3'}",
        "STATIC_ROOT": str(folder / "static"),
        "UPLOAD_DIR": str(folder / "uploads"),  # not the checkout's
        "CELERY_BROKER_URL": "",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    site = Site(f"http://127.0.0.1:{port}", env)
    collecting = subprocess.Popen(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT, env=env
    )
    site.manage("migrate", "--no-input", "-v0")
    site.manage("demo", "--small", "--password", PASSWORD)
    assert collecting.wait() == 0, "collectstatic failed"

    log = folder / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "fairshare_site.wsgi", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "--threads", "4", "--no-control-socket"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_up(site.url, server, log)
        yield site
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="package")
def browser(chromium_path: Path) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium_path))
        yield launched
        launched.close()


@dataclass
class Watch:
    """What went wrong in a page; `expected` holds (status, path) pairs a test asked for."""

    problems: list[str] = field(default_factory=list)
    expected: set[tuple[int, str]] = field(default_factory=set)

    def wanted(self, url: str, status: int | None = None) -> bool:
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        return any(path == known and status in (None, code) for code, known in self.expected)

    def console(self, message: ConsoleMessage) -> None:
        where = message.location.get("url", "")
        if message.type == "error" and not (
            message.text.startswith("Failed to load resource") and self.wanted(where)
        ):
            self.problems.append(f"console: {message.text} ({where})")

    def request_failed(self, request: Request) -> None:
        # A page left while its favicon or a fetch loads aborts them: the browser's doing.
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"failed: {request.method} {request.url} {request.failure}")

    def response(self, response: Response) -> None:
        if response.status >= 400 and not self.wanted(response.url, response.status):
            self.problems.append(f"{response.status} for {response.request.method} {response.url}")


WATCHES: dict[int, Watch] = {}


def expect_status(page: Page, status: int, path: str) -> None:
    """Tell the page's watch that `path` answering `status` is what the test wants."""
    WATCHES[id(page)].expected.add((status, path))


def assert_no_problem(page: Page) -> None:
    problems = WATCHES[id(page)].problems
    assert not problems, f"{page.url}: " + "; ".join(problems)


def shot(page: Page, name: str) -> Path:
    """The whole page as test-artifacts/NAME.png, once it has settled without a problem."""
    page.wait_for_load_state("networkidle")
    assert_no_problem(page)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def log_in(page: Page, name: str, password: str = PASSWORD) -> None:
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


Browse = Callable[..., Page]


@pytest.fixture(scope="package")
def sessions() -> dict[str, StorageState]:
    """Each person's cookies after a first login through the form, for the package's tests."""
    return {}


@pytest.fixture
def browse(site: Site, browser: Browser, sessions: dict[str, StorageState]) -> Iterator[Browse]:
    """`browse(name)`: a new browser page logged in as NAME through the login form, at the
    index; `browse()`: an anonymous one at the login page; `browse(name, again=True)`: NAME's
    session kept from the first such call, which logged in through the form (a test that logs
    out must not use it). Every page is watched."""
    contexts = []
    pages: list[Page] = []

    def _browse(name: str | None = None, *, again: bool = False) -> Page:
        kept = sessions.get(name or "") if again else None
        context = browser.new_context(
            base_url=site.url, viewport={"width": 1280, "height": 900}, storage_state=kept
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        pages.append(page)
        seen = WATCHES[id(page)] = Watch()
        page.on("console", seen.console)
        page.on("pageerror", lambda error: seen.problems.append(f"uncaught: {error}"))
        page.on("response", seen.response)
        page.on("requestfailed", seen.request_failed)
        page.goto("/")
        if name is not None and kept is None:
            log_in(page, name)
            page.wait_for_url(f"{site.url}/")
            if again:
                sessions[name] = context.storage_state()
        return page

    yield _browse
    try:
        for page in pages:
            page.wait_for_load_state("networkidle")
            assert_no_problem(page)
    finally:
        for page in pages:
            WATCHES.pop(id(page), None)
        for context in contexts:
            context.close()


@pytest.fixture
def alice(browse: Browse) -> Page:
    """The demo's admin, logged in."""
    return browse("alice", again=True)


@pytest.fixture
def bob(browse: Browse) -> Page:
    """The demo's member of cond-matter and genomics, running jobs as dkaya, logged in."""
    return browse("bob", again=True)


@pytest.fixture
def carol(browse: Browse) -> Page:
    """The demo's manager of physics (cond-matter, gravwaves, ...), logged in."""
    return browse("carol", again=True)
