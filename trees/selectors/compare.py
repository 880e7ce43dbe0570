"""Who is more deserving of two nodes, and at which level of the tree it is decided."""

from __future__ import annotations

from dataclasses import dataclass

from trees.engine.pbs import compare_at
from trees.engine.pbs import compute as pbs_compute
from trees.engine.slurm import Algorithm, association_find, association_label, compute
from trees.engine.slurm import compare as fair_tree_compare
from trees.models import Cluster, Node, NodeKind, Scheduler
from trees.selectors.pbs import pbs_tree_get
from trees.selectors.slurm import slurm_node_ids_get, slurm_state_get


@dataclass(frozen=True)
class PbsComparison:
    """pbsfs -c's answer to "who is more deserving", with the level that decided it."""

    a: str
    b: str
    answer: int  # -1: a is more deserving, 1: b is, 0: they tie
    ancestor: str | None  # the first common ancestor; None when one is on the other's path
    child_a: str = ""
    child_b: str = ""
    usage_a: float = 0.0
    usage_b: float = 0.0
    perc_a: float = 0.0
    perc_b: float = 0.0

    @property
    def winner(self) -> str | None:
        return None if self.answer == 0 else self.a if self.answer < 0 else self.b


def pbs_compare_get(*, cluster: Cluster, a: str, b: str) -> PbsComparison:
    """Compare two entities or groups as pbsfs -c does (raises LookupError for a name that the
    tree does not hold)."""
    pbs = pbs_tree_get(cluster=cluster)
    metrics = pbs_compute(pbs)
    nodes = []
    for name in (a, b):
        node = pbs.find(name)
        if node is None:
            raise LookupError(f"no entity or group {name}")
        nodes.append(node)
    answer, level = compare_at(pbs, metrics, nodes[0], nodes[1])
    if level is None:
        return PbsComparison(a, b, answer, None)
    path_a, path_b = pbs.gpath(nodes[0]), pbs.gpath(nodes[1])
    child_a, child_b = path_a[level], path_b[level]
    return PbsComparison(
        a, b, answer, pbs.name(path_a[level - 1]),
        pbs.name(child_a), pbs.name(child_b),
        float(metrics.usage[child_a]), float(metrics.usage[child_b]),
        float(metrics.fairshare_perc[child_a]), float(metrics.fairshare_perc[child_b]),
    )  # fmt: skip


@dataclass(frozen=True)
class SlurmComparison:
    """Fair Tree's answer to "who is more deserving", with the values that decide it."""

    a: str
    b: str
    ancestor: str
    child_a: str
    child_b: str
    level_fs_a: float
    level_fs_b: float
    winner: str | None  # a or b (as given); None when their Level FS tie
    fairshare_a: float | None
    fairshare_b: float | None


def slurm_compare_get(*, cluster: Cluster, a: str, b: str) -> SlurmComparison:
    """Compare two associations as Fair Tree ranks them (raises LookupError, ValueError)."""
    tree = slurm_state_get(cluster=cluster).tree
    metrics = compute(tree, Algorithm.FAIR_TREE)
    node_a, node_b = association_find(tree, a), association_find(tree, b)
    result = fair_tree_compare(metrics, node_a, node_b)

    def fairshare(node: int) -> float | None:
        return float(metrics.fairshare[node]) if tree.is_user[node] else None

    winner = None if result.winner is None else (a if result.winner == result.child_a else b)
    return SlurmComparison(
        a=a,
        b=b,
        ancestor=association_label(tree, result.ancestor),
        child_a=association_label(tree, result.child_a),
        child_b=association_label(tree, result.child_b),
        level_fs_a=float(metrics.level_fs[result.child_a]),
        level_fs_b=float(metrics.level_fs[result.child_b]),
        winner=winner,
        fairshare_a=fairshare(node_a),
        fairshare_b=fairshare(node_b),
    )


def labelled_ids_get(*, cluster: Cluster, label: str) -> list[int]:
    """The nodes a comparison's label names: PBS, the node of that name; Slurm, `ACCOUNT`,
    `ACCOUNT:USER`, or `USER` (that user's association in every account)."""
    if cluster.scheduler != Scheduler.SLURM:
        return list(Node.objects.filter(cluster=cluster, name=label).values_list("id", flat=True))
    account, _, user = label.partition(":")
    ids = slurm_node_ids_get(cluster=cluster)
    if user:
        return [ids[(account, user)]] if (account, user) in ids else []
    return [pk for (name, user_name), pk in ids.items() if (user_name or name) == label]


SUGGESTED = 20


def comparable_labels_get(
    *, cluster: Cluster, text: str, among: frozenset[int] | None, limit: int = SUGGESTED
) -> list[str]:
    """The labels a comparison accepts for the nodes whose name contains `text` (case aside),
    the first `limit` by name: PBS, the name; Slurm, `ACCOUNT` or `ACCOUNT:USER`. `among`: the
    only nodes that may be named (None: any)."""
    found = Node.objects.filter(cluster=cluster, name__icontains=text)
    if among is not None:
        found = found.filter(pk__in=among)
    rows = found.order_by("name", "parent__name").values_list("name", "kind", "parent__name")
    slurm = cluster.scheduler == Scheduler.SLURM
    labels = [
        f"{parent}:{name}" if slurm and kind == NodeKind.USER and parent else name
        for name, kind, parent in rows[: limit * 2]
    ]
    return list(dict.fromkeys(labels))[:limit]
