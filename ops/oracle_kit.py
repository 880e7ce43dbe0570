"""What the oracles of ops/ share: the one error they stop on, a log line, apt-get, and a run
that is stopped whatever happens (its time limit, SIGTERM) with one line that says why."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType


class OracleError(RuntimeError):
    """What went wrong, said once; the run stops, everything is stopped."""


def log(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


def folder_left(folder: Path, keep: bool) -> None:
    """The run's folder removed once its daemons are stopped; kept (and said so) with --keep."""
    if keep:
        log(f"kept {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


def apt_installed(packages: Sequence[str]) -> None:
    log(f"installing {' '.join(packages)}")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        check=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def guarded(name: str, limit: int, work: Callable[[], str]) -> int:
    """Run `work` (which says what it did) within `limit` seconds; SIGTERM and the limit stop
    it as an error would: 1 and the reason on stderr, else 0 and what it said."""

    def stopped(signum: int, frame: FrameType | None) -> None:
        reason = f"stopped after {limit} s" if signum == signal.SIGALRM else "interrupted"
        raise OracleError(f"{reason} (signal {signum})")

    signal.signal(signal.SIGALRM, stopped)
    signal.signal(signal.SIGTERM, stopped)
    signal.alarm(limit)
    started = time.monotonic()
    try:
        said = work()
    except (OracleError, subprocess.SubprocessError, OSError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
    log(f"{said} in {time.monotonic() - started:.0f} s")
    return 0
