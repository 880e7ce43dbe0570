from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

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
