import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from tests.cast import FAST_HASHER, samples_made

# Speed is the benchmarks' business, not the tests': on a loaded 2-core machine (the suite runs
# in two processes) an example can take longer than hypothesis's 200 ms deadline, which would
# fail a test that holds. No test asks for a deadline.
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")

# The queue site's fixtures (queue_now, queue_site) for every test that asks for them.
pytest_plugins = ["tests.trees.queue_site"]

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
EXAMPLES = SHARED / "examples" / "pbs"


def examples_or_skip() -> Path:
    if not EXAMPLES.is_dir():
        pytest.skip(f"the shared examples are not at {EXAMPLES}")
    return EXAMPLES


def write_file(folder: Path, name: str, text: str | bytes) -> str:
    """A test input file in `folder`; its path as the commands take it."""
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


@dataclass(frozen=True)
class Ran:
    status: int
    out: str
    err: str


Run = Callable[..., Ran]


@pytest.fixture
def run() -> Run:
    """Run a management command; its exit status, stdout and stderr."""

    def _run(*args: str) -> Ran:
        out, err = StringIO(), StringIO()
        try:
            call_command(*args, stdout=out, stderr=err)
            status = 0
        except SystemExit as exc:
            status = int(exc.code or 0)
        return Ran(status, out.getvalue(), err.getvalue())

    return _run


@pytest.fixture(autouse=True)
def upload_dir(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Uploads wait in a folder of the test's own, not the checkout's uploads/."""
    folder = tmp_path_factory.mktemp("uploads")
    (folder / "incoming").mkdir()
    settings.UPLOAD_DIR = folder
    settings.FILE_UPLOAD_TEMP_DIR = str(folder / "incoming")
    return folder


@pytest.fixture
def samples(db: None, settings: Any) -> None:
    """The demo's three sample clusters, made inside the test's own transaction."""
    settings.PASSWORD_HASHERS = FAST_HASHER
    samples_made()


@pytest.fixture(scope="session")
def demo_snapshot(
    django_db_setup: Any, django_db_blocker: Any
) -> Iterator[sqlite3.Connection | None]:
    """The demo's small site (about 2 s to build), built once a test session on SQLite and kept
    as a copy of the whole database; None on other databases, which build it per module."""
    if connection.vendor != "sqlite":
        yield None
        return
    with django_db_blocker.unblock():
        _demo_built()
        snapshot = sqlite3.connect(":memory:")
        connection.ensure_connection()
        connection.connection.backup(snapshot)
        call_command("flush", "--no-input", stdout=StringIO())
    yield snapshot
    snapshot.close()


@pytest.fixture(scope="module")
def demo_site(
    django_db_setup: Any, django_db_blocker: Any, demo_snapshot: sqlite3.Connection | None
) -> Iterator[None]:
    """The demo's small site for a module (copied back from the session's snapshot), removed
    after it; each test still runs in a transaction rolled back after it."""
    with django_db_blocker.unblock():
        if demo_snapshot is None:
            _demo_built()
        else:
            connection.ensure_connection()
            demo_snapshot.backup(connection.connection)
    yield
    with django_db_blocker.unblock():
        call_command("flush", "--no-input", stdout=StringIO())


@pytest.fixture
def demo(demo_site: None, db: None, settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER  # the logins the tests add


def _demo_built() -> None:
    with override_settings(PASSWORD_HASHERS=FAST_HASHER):
        call_command("demo", "--small", "--password", "demo", stdout=StringIO())


@pytest.fixture(autouse=True)
def queue_orders_forgotten() -> Iterator[None]:
    """Each test orders the queues it reads afresh (a web process keeps the last order of
    each cluster; rolled-back tests may give another cluster the same id)."""
    from accounting.priorities import queue_orders_forget

    queue_orders_forget()
    yield
    queue_orders_forget()
