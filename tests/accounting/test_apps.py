import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SENT_BY_NAME = ("accounting.tasks.run_scenario", "accounting.tasks.import_files")


def test_a_web_process_knows_the_tasks_the_services_send_by_name() -> None:
    """A fresh process, as gunicorn's: nothing but Django's setup has imported accounting.tasks
    (pytest's own process has, through the tests)."""
    probe = (
        "import django; django.setup(); from fairshare_site.celery import app;"
        f" print(*[name in app.tasks for name in {SENT_BY_NAME!r}])"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False,
        env={"DJANGO_SETTINGS_MODULE": "fairshare_site.settings", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert (ran.returncode, ran.stdout.split()) == (0, ["True", "True"]), ran.stderr
