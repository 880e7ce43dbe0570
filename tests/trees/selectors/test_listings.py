"""Selectors read what the services stored; they must say what a recomputation would say."""

from pathlib import Path

import pytest

from tests.conftest import Run, examples_or_skip
from trees.engine.pbs import UsageRecord
from trees.formats.usage_file import write_usage_file
from trees.selectors.clusters import cluster_get
from trees.selectors.listings import pbsfs_listing_get


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("case", "unknown_perc"), [("seed_tree", " 5.000%"), ("forum_example", " 0.000%")]
)
def test_the_stored_listing_is_what_pbsfs_computes(
    run: Run, case: str, unknown_perc: str, tmp_path: Path
) -> None:
    folder = examples_or_skip() / case
    run("import_sched_config", str(folder / "sched_config"), "--cluster", "c")
    run("import_resource_group", str(folder / "resource_group"), "--cluster", "c")
    # Two entities outside the tree, so that the order under unknown is read back too.
    records = [UsageRecord("zed", 3.0), UsageRecord("amy", 12.5)]
    for line in (folder / "usage.txt").read_text().splitlines():
        name, value = line.split()
        records.append(UsageRecord(name, float(value)))
    usage = tmp_path / "usage"
    usage.write_bytes(write_usage_file(records, last_decay=0))
    assert run("import_pbs_usage", str(usage), "--cluster", "c").status == 0

    listing = pbsfs_listing_get(cluster=cluster_get(name="c"))
    assert listing == run("pbsfs", "--cluster", "c", "-p").out
    # Newest record first under unknown; 12.5 prints as 12 (half to even).
    assert listing.splitlines()[-2:] == [
        f"amy       : Grp: 1      cgrp: -1   Shares: 1      Usage: 12     Perc: {unknown_perc}",
        f"zed       : Grp: 1      cgrp: -1   Shares: 1      Usage: 3      Perc: {unknown_perc}",
    ]
