"""A server this project starts on the loopback (the browser tests', the web benchmark's):
wait until it answers /healthz."""

from __future__ import annotations

import subprocess
import time
import urllib.request


def healthz_awaited(base: str, server: subprocess.Popen[bytes], seconds: float) -> str | None:
    """None once `base`/healthz answers 200; else why not: the server stopped, or the time
    ran out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return f"the server stopped ({server.returncode})"
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return None
        except OSError:
            time.sleep(0.1)
    return f"the server did not answer {base}/healthz in {seconds:g} s"
