"""Celery tasks of the tree: thin calls of its services."""

from __future__ import annotations

from celery import shared_task

from fairshare_site.celery import RETRIED
from trees.services import tree_listing_write


@shared_task(**RETRIED)  # type: ignore[untyped-decorator]
def tree_listing(cluster_id: int) -> bool:
    """List the cluster's tree for tree.json, as each store asks once it has committed."""
    return tree_listing_write(cluster_id=cluster_id)
