"""What orders a cluster's jobs, as stored: Slurm's multifactor settings, partitions and QOS
(PBS's policy is on the Cluster row and its Queue rows)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from trees.engine.multifactor import MultifactorConfig, Partition, Qos
from trees.models import Cluster, Queue
from trees.models import Qos as QosRow

# The MultifactorConfig fields kept in Cluster.slurm_priority (tres_weights is derived).
_CONFIG_FIELDS = tuple(f.name for f in fields(MultifactorConfig) if f.init)
# The Partition fields kept in Queue.attributes (name and priority_job_factor are columns).
PARTITION_ATTRIBUTES = ("priority_tier", "total_cpus", "total_nodes", "tres", "max_time", "qos",
                        "state")  # fmt: skip


def multifactor_document(config: MultifactorConfig) -> dict[str, Any]:
    """The settings as Cluster.slurm_priority keeps them (JSON)."""
    document: dict[str, Any] = {name: getattr(config, name) for name in _CONFIG_FIELDS}
    document["flags"] = sorted(config.flags)
    return document


def multifactor_config_get(cluster: Cluster) -> MultifactorConfig:
    """The cluster's multifactor settings (Slurm's defaults where none were imported)."""
    stored = {k: v for k, v in cluster.slurm_priority.items() if k in _CONFIG_FIELDS}
    if "flags" in stored:
        stored["flags"] = frozenset(stored["flags"])
    return MultifactorConfig(**stored)


def partition_attributes(partition: Partition) -> dict[str, Any]:
    return {name: getattr(partition, name) for name in PARTITION_ATTRIBUTES}


def partitions_get(cluster: Cluster) -> dict[str, Partition]:
    """The cluster's partitions by name, as `scontrol show partition` gave them."""
    partitions = {}
    for queue in Queue.objects.filter(cluster=cluster):
        stored = {k: v for k, v in queue.attributes.items() if k in PARTITION_ATTRIBUTES}
        partitions[queue.name] = Partition(
            name=queue.name, priority_job_factor=queue.priority, **stored
        )
    return partitions


def qos_get(cluster: Cluster) -> dict[str, Qos]:
    return {
        name: Qos(name, priority)
        for name, priority in QosRow.objects.filter(cluster=cluster).values_list("name", "priority")
    }
