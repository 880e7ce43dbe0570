"""Production settings pass Django's deployment checks without a warning."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_with_production_settings() -> None:
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "a-production-secret-of-more-than-fifty-characters-0123456789abcdef",
        "ALLOWED_HOSTS": "fairshare.example.org",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
