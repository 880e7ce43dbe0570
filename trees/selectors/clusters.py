"""Clusters and nodes found by name."""

from __future__ import annotations

from django.conf import settings

from trees.models import Cluster, Node


def cluster_get(*, name: str) -> Cluster:
    return Cluster.objects.get(name=name)


def node_get(*, cluster: Cluster, name: str) -> Node:
    """The node of that name in a PBS cluster (PBS names are unique in a cluster)."""
    return Node.objects.get(cluster=cluster, name=name)


def cluster_queue_get(*, cluster: Cluster) -> str | None:
    """The Celery queue of the cluster's cycles and tree.json listings (settings.CYCLE_QUEUES,
    e.g. `cycles.big`); None: the default queue."""
    queue: str | None = settings.CYCLE_QUEUES.get(cluster.name)
    return queue


def clusters_list() -> list[Cluster]:
    return list(Cluster.objects.all())


def cluster_node_get(*, cluster: Cluster, node_id: int) -> Node:
    """The node of that id in the cluster (Node.DoesNotExist for one of another cluster)."""
    return Node.objects.get(pk=node_id, cluster=cluster)


def root_get(*, cluster: Cluster) -> Node:
    return Node.objects.get(cluster=cluster, parent__isnull=True)
