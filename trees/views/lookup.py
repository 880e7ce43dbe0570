"""What every node view starts with: the cluster, the node, its path from the root and the
person's access to it; a node they may not see answers 404, as one that does not exist, after
the same queries (the person's access first, then the node's path in one query), so that
neither the answer nor its time tells a hidden node from a missing one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.http import Http404, HttpRequest

from trees.access import Access, access_get, is_admin
from trees.models import Cluster, Node
from trees.selectors.clusters import cluster_get, cluster_node_get, root_get
from trees.selectors.nodes import node_path_by_id_get


@dataclass(frozen=True)
class NodeView:
    cluster: Cluster
    node: Node
    path: list[Node]  # from the root down to the node, both included
    access: Access

    @property
    def ids(self) -> list[int]:
        return [step.pk for step in self.path]


def cluster_or_404(name: str, *, scheduler: str | None = None) -> Cluster:
    """The cluster of that name (of that scheduler, when given)."""
    try:
        cluster = cluster_get(name=name)
    except Cluster.DoesNotExist as exc:
        raise Http404("no such cluster") from exc
    if scheduler is not None and cluster.scheduler != scheduler:
        raise Http404(f"cluster {name} is not a {scheduler} cluster")
    return cluster


def cluster_node_or_404(cluster: Cluster, node_id: int | None) -> Node:
    """The node of that id in the cluster; None: its root."""
    try:
        if node_id is None:
            return root_get(cluster=cluster)
        return cluster_node_get(cluster=cluster, node_id=node_id)
    except Node.DoesNotExist as exc:
        raise Http404("no such node") from exc


def node_view(
    request: HttpRequest,
    cluster: Cluster | str,
    node_id: int | None,
    *,
    scheduler: str | None = None,
    shown: Callable[[Access, Sequence[int]], bool] = Access.opens,
    access: Access | None = None,
) -> NodeView:
    """The node `node_id` of the cluster (or of the cluster of that name; None: its root), if
    `shown` to the person (Access.opens: it has a page for them; Access.reads, Access.sees).
    `access`: theirs, when the view has read it already."""
    if isinstance(cluster, str):
        cluster = cluster_or_404(cluster, scheduler=scheduler)
    if access is None:
        access = access_get(user=request.user, cluster=cluster)
    if node_id is None:
        path = [cluster_node_or_404(cluster, None)]
    else:
        path = node_path_by_id_get(node_id=node_id, cluster=cluster)
    if not path or not shown(access, [step.pk for step in path]):
        raise Http404("no such node")
    return NodeView(cluster, path[-1], path, access)


def node_anywhere_view(
    request: HttpRequest,
    node_id: int,
    *,
    shown: Callable[[Access, Sequence[int]], bool] = Access.opens,
) -> NodeView:
    """The node of that id in whichever cluster holds it (the API's /api/nodes/ID/), if
    `shown` to the person. Only a cluster whose usage is private hides nodes, so the person's
    access to each of those is read before the node is looked up, whether or not it exists: a
    node hidden there and a missing one cost the same queries."""
    private = (
        {}
        if is_admin(request.user)
        else {
            cluster.pk: (cluster, access_get(user=request.user, cluster=cluster))
            for cluster in Cluster.objects.filter(private_usage=True)
        }
    )
    path = node_path_by_id_get(node_id=node_id)
    if not path:
        raise Http404("no such node")
    if path[-1].cluster_id in private:
        cluster, access = private[path[-1].cluster_id]
    else:
        cluster = Cluster.objects.get(pk=path[-1].cluster_id)
        access = access_get(user=request.user, cluster=cluster)
    if not shown(access, [step.pk for step in path]):
        raise Http404("no such node")
    return NodeView(cluster, path[-1], path, access)
