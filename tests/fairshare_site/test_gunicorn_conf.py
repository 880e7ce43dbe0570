"""gunicorn.conf.py (read by gunicorn from the checkout it runs in): request lines and header
fields up to gunicorn's own maximum, above what nginx lets through (docs/deploy.md), so that
an over-long address is refused in front, with the site's 414 page, not by gunicorn's bare one."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUNICORN_MAXIMUM = 8190  # gunicorn refuses a larger limit_request_line


def printed_config() -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--print-config", "fairshare_site.wsgi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(re.findall(r"(?m)^(\w+)\s+= (.*)$", done.stdout))


def test_gunicorn_reads_the_shipped_limits() -> None:
    config = printed_config()
    assert config["limit_request_line"] == str(GUNICORN_MAXIMUM)
    assert config["limit_request_field_size"] == str(GUNICORN_MAXIMUM)


def test_nginx_refuses_an_over_long_address_before_gunicorn_would() -> None:
    """The deploy guide's nginx: a request line must fit one of its large header buffers, so
    each is smaller than gunicorn's limit (with room for the line nginx writes upstream), and
    its 414 is the site's page."""
    deploy = (ROOT / "docs" / "deploy.md").read_text()
    (size,) = re.findall(r"large_client_header_buffers\s+\d+\s+(\d+)k;", deploy)
    assert int(size) * 1024 + 64 <= GUNICORN_MAXIMUM
    assert "error_page 414 /414.html;" in deploy
    assert "manage.py error_pages /srv/fairshare/errors" in deploy


@pytest.fixture
def gunicorn() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "fairshare_site.wsgi", "--bind",
            f"127.0.0.1:{port}", "--workers", "1", "--no-control-socket",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(10)


def test_an_address_nginx_lets_through_reaches_the_site(gunicorn: str) -> None:
    """5,000 characters: gunicorn's default limit (4,094) answered it with its bare 400."""
    with urllib.request.urlopen(f"{gunicorn}/healthz?{'x' * 5000}", timeout=10) as answer:
        assert answer.status == 200
