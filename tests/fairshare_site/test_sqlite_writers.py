"""On SQLite, two admins saving at the same instant: the loser gets the 409 of a sequential
conflict (TreeChanged), never "database is locked" (a 500)."""

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_second_of_two_simultaneous_edits_is_told_the_tree_changed(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'site.sqlite3'}"}
    env.pop("PYTEST_ADDOPTS", None)
    ran = subprocess.run(
        [sys.executable, str(HERE / "sqlite_writers.py")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    rounds = json.loads(ran.stdout.strip().splitlines()[-1])
    assert rounds == [["changed", "saved"]] * len(rounds)
