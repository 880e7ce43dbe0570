"""The services' tests share a small PBS site: chem and phys under root, ann and bob under them."""

from typing import Any

import pytest

from tests.accounting.services.test_ingest import TREE
from tests.cast import FAST_HASHER
from trees.formats.resource_group import parse_resource_group
from trees.models import Cluster
from trees.selectors.clusters import cluster_get
from trees.services.pbs import resource_group_import


@pytest.fixture(autouse=True)
def quick_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHER


@pytest.fixture
def site() -> Cluster:
    groups = parse_resource_group(TREE.encode())
    resource_group_import(cluster_name="site", groups=groups.groups, pbs_messages=[], source="t")
    return cluster_get(name="site")
