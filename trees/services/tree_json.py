"""tree.json's rows for whole-tree readers (TreeJsonRow), written after each store of a tree."""

from __future__ import annotations

from collections import Counter

import orjson
from django.db import transaction

from trees.bulk import rows_insert
from trees.engine.tree import subtree_ends
from trees.models import Cluster, TreeJsonRow
from trees.selectors.tree import tree_get
from trees.serializers import tree_json_document


def tree_json_write(*, cluster_id: int) -> bool:
    """Write the cluster's tree as stored for whole-tree readers of tree.json (TreeJsonRow):
    every node's document in tree order, with its place, depth and the end of its subtree.
    False when the rows hold the stored tree already (a store's second request)."""
    with transaction.atomic():
        # Locked, as stores lock it: the revision read is the one of the nodes read below.
        cluster = Cluster.objects.select_for_update().get(pk=cluster_id)
        if cluster.tree_json_current:
            return False
        nodes = tree_get(cluster=cluster)
        children = Counter(item.node.parent_id for item in nodes)
        ends = subtree_ends([item.depth for item in nodes])
        rows = [
            (
                item.node.id,
                cluster.pk,
                place,
                ends[place],
                item.depth,
                orjson.dumps(
                    tree_json_document(cluster, item, children=children[item.node.id], opens=True)
                ).decode(),
            )
            for place, item in enumerate(nodes)
        ]
        TreeJsonRow.objects.filter(cluster=cluster).delete()
        columns = ["node_id", "cluster_id", "place", "last", "depth", "document"]
        rows_insert(TreeJsonRow, columns, rows)
        cluster.tree_json_at = cluster.metrics_updated_at
        cluster.save(update_fields=["tree_json_at"])
        return True
