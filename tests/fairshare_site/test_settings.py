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


def cache_configured(**env: str) -> str:
    """settings.CACHES["default"] as a process started with that environment reads it."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from django.conf import settings; c = settings.CACHES['default'];"
            " print(c['BACKEND'], c['LOCATION'])",
        ],
        cwd=ROOT,
        env={
            **{key: value for key, value in os.environ.items() if key != "CACHE_URL"},
            "DJANGO_SETTINGS_MODULE": "fairshare_site.settings",
            "CELERY_BROKER_URL": "",
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_the_shared_cache_is_the_broker_s_redis_or_else_the_database() -> None:
    """Never each process's memory: the API throttle counts for every web process at once."""
    redis_cache = "django.core.cache.backends.redis.RedisCache"
    assert cache_configured(CELERY_BROKER_URL="redis://127.0.0.1:6379/0") == (
        f"{redis_cache} redis://127.0.0.1:6379/0"
    )
    assert cache_configured() == "django.core.cache.backends.db.DatabaseCache django_cache"
    assert cache_configured(CACHE_URL="redis://cache.example.org:6379/2") == (
        f"{redis_cache} redis://cache.example.org:6379/2"
    )
