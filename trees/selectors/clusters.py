"""Clusters and nodes found by name."""

from __future__ import annotations

from trees.models import Cluster, Node


def cluster_get(*, name: str) -> Cluster:
    return Cluster.objects.get(name=name)


def node_get(*, cluster: Cluster, name: str) -> Node:
    """The node of that name in a PBS cluster (PBS names are unique in a cluster)."""
    return Node.objects.get(cluster=cluster, name=name)


def clusters_list() -> list[Cluster]:
    return list(Cluster.objects.all())
