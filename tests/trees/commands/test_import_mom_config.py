"""manage.py import_mom_config: a MoM's poll settings onto a cluster, audited."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Run, write_file
from trees.models import Cluster, SettingChange

pytestmark = pytest.mark.django_db


def test_the_poll_settings_are_taken_and_audited(tmp_path: Path, run: Run) -> None:
    path = write_file(
        tmp_path, "config", "$clienthost pbs\n$min_check_poll 120\n$max_check_poll 240\n"
    )
    ran = run("import_mom_config", path, "--cluster", "hpc")
    assert (ran.status, ran.err) == (0, "")
    assert ran.out == (
        f"{path}: cluster hpc (new): $min_check_poll 120 s, $max_check_poll 240 s;"
        " 2 changes audited; 0 problems\n"
    )
    cluster = Cluster.objects.get(name="hpc")
    assert (cluster.mom_min_check_poll, cluster.mom_max_check_poll) == (120, 240)
    changes = SettingChange.objects.filter(cluster=cluster).order_by("setting")
    assert [(c.setting, c.old_value, c.new_value) for c in changes] == [
        ("mom_max_check_poll", "120", "240"),
        ("mom_min_check_poll", "10", "120"),
    ]
    assert changes[0].reason == f"MoM configuration imported from {path}"
    again = run("import_mom_config", path, "--cluster", "hpc")
    assert "0 changes audited" in again.out


def test_refused_lines_are_named_and_the_defaults_said(tmp_path: Path, run: Run) -> None:
    path = write_file(tmp_path, "config", "$min_check_poll 30\n$max_check_poll ten\n$foo 1\n")
    ran = run("import_mom_config", path, "--cluster", "hpc")
    assert ran.status == 0
    assert ran.err.splitlines() == [
        f'{path}:2: $max_check_poll: bad value "ten": a whole number of seconds above 0 is needed',
        f"{path}:3: $foo: command name foo not found: pbs_mom refuses the file",
    ]
    assert ran.out.endswith(
        "$min_check_poll 30 s, $max_check_poll 120 s ($max_check_poll: PBS's default);"
        " 1 changes audited; 2 problems\n"
    )
