"""Celery tasks of the tree: thin calls of its services."""

from __future__ import annotations

from celery import shared_task

from fairshare_site.celery import RETRIED
from trees.services.tree_json import tree_json_write


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def write_tree_json(cluster_id: int) -> bool:
    """Write the cluster's tree.json rows, as each store asks once it has committed."""
    return tree_json_write(cluster_id=cluster_id)
