"""Two admins save share edits at the same instant, on a SQLite file (run by
test_sqlite_writers.py in its own process: the tests' SQLite database is in memory).

Prints one JSON line: each round's outcomes, "saved", "changed" (TreeChanged, the 409) or the
repr of anything else."""

import json
import os
import sys
import threading
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "fairshare_site.settings"
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from tests.trees.engine.conftest import SEED_GROUPS  # noqa: E402
from trees.engine.edit import ChildEdit  # noqa: E402
from trees.selectors.clusters import cluster_get  # noqa: E402
from trees.selectors.pbs import tree_version_get  # noqa: E402
from trees.services.pbs import resource_group_import  # noqa: E402
from trees.services.tree_edit import TreeChanged, tree_edit  # noqa: E402

ROUNDS = 4


def save(shares: int, version: str, barrier: threading.Barrier, outcomes: list[str]) -> None:
    cluster = cluster_get(name="wp")
    group = next(group for group in SEED_GROUPS if group.name == "L1")
    edit = ChildEdit(original="L1", name="L1", parent=group.parent, shares=shares)
    barrier.wait()
    try:
        tree_edit(
            cluster=cluster,
            edits=[edit],
            reason=f"round to {shares}",
            version=version,
            opened_at=timezone.now(),
            user=None,
        )
        outcomes.append("saved")
    except TreeChanged:
        outcomes.append("changed")
    except Exception as exc:  # what the 500 was
        outcomes.append(repr(exc))
    finally:
        connection.close()


def main() -> None:
    call_command("migrate", "--no-input", verbosity=0)
    resource_group_import(cluster_name="wp", groups=SEED_GROUPS, pbs_messages=[], source="t")
    rounds = []
    for number in range(ROUNDS):
        version = tree_version_get(cluster=cluster_get(name="wp"))
        barrier = threading.Barrier(2)
        outcomes: list[str] = []
        writers = [
            threading.Thread(target=save, args=(200 + 10 * number + n, version, barrier, outcomes))
            for n in range(2)
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        rounds.append(sorted(outcomes))
    print(json.dumps(rounds))


if __name__ == "__main__":
    main()
