"""What the schedulers' own tools print for a cluster, from the stored metrics: pbsfs -p for
PBS, sshare -a -l for Slurm (nothing recomputed)."""

from __future__ import annotations

from trees.engine.pbs import UNSPECIFIED
from trees.engine.slurm import NO_VAL, USE_PARENT, Algorithm
from trees.formats.pbsfs import ListingLine, format_listing
from trees.formats.sshare import SshareRow, columns_for, format_sshare, sshare_row, zero_tres
from trees.models import Cluster, NodeKind, Scheduler
from trees.selectors.tree import tree_get


def cluster_listing_get(*, cluster: Cluster) -> str:
    """The scheduler's own listing of the tree: sshare -a -l for Slurm, pbsfs -p for PBS."""
    if cluster.scheduler == Scheduler.SLURM:
        return sshare_listing_get(cluster=cluster)
    return pbsfs_listing_get(cluster=cluster)


def pbsfs_listing_get(*, cluster: Cluster) -> str:
    """What `pbsfs -p` prints for the cluster, from the stored metrics (nothing recomputed)."""
    nodes = tree_get(cluster=cluster)
    cgroup = {item.node.id: item.node.cgroup_id for item in nodes}
    lines = (
        ListingLine(
            name=node.name,
            resgroup=UNSPECIFIED if node.parent_id is None else cgroup[node.parent_id] or 0,
            cresgroup=node.cgroup_id or 0,
            shares=UNSPECIFIED if node.shares is None else node.shares,
            usage=node.usage,
            fairshare_perc=node.fairshare_perc,
        )
        for node in (item.node for item in nodes)
    )
    return format_listing(lines, cluster.fairshare_usage_res)


def sshare_listing_get(*, cluster: Cluster) -> str:
    """What `sshare -a -l` prints, from the stored metrics (nothing recomputed)."""
    rows = [row for _, row in sshare_rows_get(cluster=cluster)]
    return format_sshare(rows, columns_for(Algorithm(cluster.fairshare_algorithm), long=True))


def sshare_rows_get(*, cluster: Cluster) -> list[tuple[int, SshareRow]]:
    """Each association's node id and its sshare row, in sshare's order, from the stored
    metrics (nothing recomputed)."""
    nodes = tree_get(cluster=cluster)
    names = {item.node.id: item.node.name for item in nodes}
    zeros = zero_tres(cluster.slurm_tres.split(","))
    algorithm = Algorithm(cluster.fairshare_algorithm)
    rows = []
    for item in nodes:
        node = item.node
        row = sshare_row(
            account=item.account,
            parent=names.get(node.parent_id) if node.parent_id is not None else None,
            user=node.name if node.kind == NodeKind.USER else None,
            shares=USE_PARENT if node.shares_parent else node.shares or 0,
            usage=node.usage,
            norm_shares=node.norm_shares or 0.0,
            norm_usage=NO_VAL if node.norm_usage is None else node.norm_usage,
            effectv_usage=node.effectv_usage or 0.0,
            fairshare=node.fairshare_factor,
            level_fs=NO_VAL if node.level_fs is None else node.level_fs,
            algorithm=algorithm,
            dampening=cluster.fairshare_dampening_factor,
            grp_tres_mins=node.grp_tres_mins,
            tres_run_mins=node.tres_run_mins or zeros,
        )
        rows.append((node.id, row))
    return rows
