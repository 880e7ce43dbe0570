"""Clusters made, set and removed."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trees.formats.pbsfs import UsageDatabase
from trees.models import Cluster, Scheduler, SettingChange
from trees.services.pbs_store import pbs_store

# An import that imports nothing leaves no new cluster behind (raised inside its transaction,
# so that the cluster made for it is rolled back too).
NOTHING_FOR_A_NEW_CLUSTER = "the file holds no {} to import: cluster {} is not created"


def cluster_get_or_create(*, name: str, scheduler: str = Scheduler.PBS) -> tuple[Cluster, bool]:
    """The cluster of that name, locked; a new PBS one starts with TREEROOT and unknown.

    A cluster of another scheduler is refused: its tree cannot take the other's files.
    """
    with transaction.atomic():
        cluster, created = Cluster.objects.select_for_update().get_or_create(
            name=name, defaults={"scheduler": scheduler}
        )
        if created:
            cluster.full_clean(exclude=["nodes"])
            if scheduler == Scheduler.PBS:
                pbs_store(
                    cluster, [], groups=[], database=UsageDatabase(), reason="cluster created"
                )
        elif cluster.scheduler != scheduler:
            raise ValidationError(
                f"cluster {name} is a {cluster.get_scheduler_display()} cluster,"
                f" not {Scheduler(scheduler).label}"
            )
    return cluster, created


# What an admin sets on a cluster's settings page, by scheduler: who reads the usage, how it
# decays, how often the cycle runs (PBS: and what a cycle charges of a job, usage_recording),
# and the cores (GPUs, nodes) a what-if replays the jobs on. The rest of the policy comes from the
# scheduler's files.
CLUSTER_SETTINGS = {
    Scheduler.PBS: (
        "private_usage",
        "decay_interval",
        "decay_factor",
        "scheduler_iteration",
        "usage_recording",
        "cores",
        "gpus",
        "compute_nodes",
    ),
    Scheduler.SLURM: (
        "private_usage",
        "priority_decay_half_life",
        "priority_calc_period",
        "cores",
        "gpus",
        "compute_nodes",
    ),
    Scheduler.ACCELERATOR: (
        "private_usage",
        "scheduler_iteration",
        "fairshare_relative",
        "fairshare_relative_alpha",
        "cores",
        "gpus",
        "compute_nodes",
    ),
}


def cluster_settings_set(
    *, cluster: Cluster, values: Mapping[str, object], reason: str, user: User | None
) -> list[SettingChange]:
    """Set the cluster's settings (those of CLUSTER_SETTINGS for its scheduler) with one audit
    row per setting that changes, each with the reason; nothing else of the cluster moves.

    The metrics stay as stored: decays and cycles to come use the new settings (Accelerator's
    fairshare.relative ranks the groups from the next cycle on); a value the cluster's
    constraints refuse is refused with why.
    """
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": "a reason is required"})
    allowed = CLUSTER_SETTINGS.get(Scheduler(cluster.scheduler), ())
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ValidationError(
            f"{', '.join(unknown)}: not a setting of a {cluster.scheduler} cluster"
        )
    with transaction.atomic():
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        return settings_audited_set(
            cluster=cluster,
            values={name: values[name] for name in allowed if name in values},
            reason=reason,
            user=user,
        )


def settings_audited_set(
    *, cluster: Cluster, values: Mapping[str, object], reason: str, user: User | None
) -> list[SettingChange]:
    """Set these fields of the (locked) cluster, one audit row for each that changes; the
    caller holds the transaction. What an admin's form and the scheduler's files set alike."""
    now = timezone.now()
    changes = []
    for setting, value in values.items():
        old = getattr(cluster, setting)
        if old == value:
            continue
        setattr(cluster, setting, value)
        changes.append(
            SettingChange(
                cluster=cluster,
                setting=setting,
                old_value=_setting_text(old)[:255],
                new_value=_setting_text(value)[:255],
                changed_by=user,
                changed_at=now,
                reason=reason,
            )
        )
    if changes:
        cluster.full_clean(exclude=["nodes"])
        cluster.save(update_fields=[change.setting for change in changes])
        SettingChange.objects.bulk_create(changes)
    return changes


def _setting_text(value: object) -> str:
    """A setting as the audit shows it: times in seconds, switches on or off, none as "not
    set"."""
    if value is None:
        return "not set"
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
        return f"{int(seconds) if seconds.is_integer() else seconds} s"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def cluster_delete(*, name: str) -> bool:
    """Remove the cluster with all it holds (tree, usage, jobs, cycles, history, memberships);
    False when there was none."""
    with transaction.atomic():
        deleted, _ = Cluster.objects.filter(name=name).delete()
    return deleted > 0
