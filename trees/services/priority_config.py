"""What orders a cluster's jobs, imported from the scheduler's own output and audited as
share changes are: PBS `qmgr -c 'print server'`, Slurm `scontrol show config`, `scontrol show
partition` and `sacctmgr show qos`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from trees.engine.formula import JOB_SORT_NAMES, FormulaError, parse_formula
from trees.engine.multifactor import MultifactorConfig
from trees.engine.slurm import Algorithm
from trees.formats.mom_config import MomConfig
from trees.formats.qmgr import QmgrPrint
from trees.formats.slurm_config import SlurmConfigs
from trees.models import Cluster, Qos, Queue, Scheduler, SettingChange
from trees.selectors.priority_config import (
    multifactor_config_get,
    multifactor_document,
    partition_attributes,
)
from trees.services.clusters import cluster_get_or_create, settings_audited_set
from trees.services.slurm import slurm_tree_held

DEFAULT_SCHEDULER_ITERATION = 600  # seconds (server_limits.h:73)
DEFAULT_PREEMPT_QUEUE_PRIO = 150  # PBS_PREEMPT_QUEUE_PRIO, pbs_sched.h:67
# The types of resource a job_sort_formula can use: PBS hands only these to the formula.
NUMERIC_RESOURCE_TYPES = frozenset({"long", "size", "float", "short", "long long"})


@dataclass
class PriorityImport:
    """What an import changed: the settings (audit rows) and the queues or partitions."""

    cluster: Cluster
    cluster_created: bool
    changes: list[SettingChange] = field(default_factory=list)
    queues: int = 0  # queues or partitions the cluster now has
    qos: int = 0
    refused: list[str] = field(default_factory=list)  # values not taken, and why


def formula_names(custom_resources: Mapping[str, str]) -> tuple[str, ...]:
    """What a job_sort_formula may name: the built-in resources and keywords, and the server's
    own resources of a numeric type (validate_job_formula's globals2)."""
    numeric = [name for name, kind in custom_resources.items() if kind in NUMERIC_RESOURCE_TYPES]
    return (*JOB_SORT_NAMES, *numeric)


def job_sort_formula_problem(formula: str, custom_resources: Mapping[str, str]) -> str | None:
    """Why PBS would refuse this job_sort_formula (with the column), or None."""
    if not formula:
        return None
    try:
        parse_formula(formula, formula_names(custom_resources), python=True)
    except FormulaError as exc:
        return str(exc)
    return None


def qmgr_import(
    *, cluster_name: str, parsed: QmgrPrint, source: str, user: User | None = None
) -> PriorityImport:
    """The server's job order settings and its queues as the print shows them: a print is the
    whole configuration, so what it leaves out takes PBS's default (no formula, eligible_time
    off, a 10-minute iteration) and queues it does not list go. A formula PBS would refuse is
    not taken (the cluster keeps its formula) and is reported."""
    reason = f"qmgr print imported from {source}"
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        resources = {name: resource.type for name, resource in parsed.resources.items()}
        done = PriorityImport(cluster, created)
        values: dict[str, object] = {
            "eligible_time_enable": bool(parsed.eligible_time_enable),
            "scheduler_iteration": timedelta(
                seconds=parsed.scheduler_iteration or DEFAULT_SCHEDULER_ITERATION
            ),
            "job_sort_formula_threshold": parsed.job_sort_formula_threshold,
            "preempt_queue_prio": (
                DEFAULT_PREEMPT_QUEUE_PRIO
                if parsed.preempt_queue_prio is None
                else parsed.preempt_queue_prio
            ),
            "server_attributes": parsed.server,
            "custom_resources": resources,
        }
        formula = (parsed.job_sort_formula or "").strip()
        problem = job_sort_formula_problem(formula, resources)
        if problem is None:
            values["job_sort_formula"] = formula
        else:
            done.refused.append(f"job_sort_formula {formula!r}: {problem}; the formula is kept")
        done.changes = settings_audited_set(
            cluster=cluster, values=values, reason=reason, user=user
        )
        wanted = {
            name: (queue.priority, queue.queue_type, queue.enabled, queue.started, queue.attributes)
            for name, queue in parsed.queues.items()
        }
        done.changes += _queues_replace(cluster, wanted, reason, user)
        done.queues = len(wanted)
    return done


def _queue_text(queue_type: str, priority: int, enabled: bool, started: bool) -> str:
    state = f"{'enabled' if enabled else 'disabled'}, {'started' if started else 'stopped'}"
    return f"{queue_type or 'no type'}, Priority {priority}, {state}"


def _queues_replace(
    cluster: Cluster,
    wanted: Mapping[str, tuple[int, str, bool, bool, Mapping[str, object]]],
    reason: str,
    user: User | None,
) -> list[SettingChange]:
    """The cluster's queues made those wanted, an audit row for each added, changed, removed."""
    now = timezone.now()
    stored = {queue.name: queue for queue in Queue.objects.filter(cluster=cluster)}
    changes = []

    def audit(name: str, old: str, new: str) -> None:
        changes.append(
            SettingChange(
                cluster=cluster, setting=f"queue {name}"[:64], old_value=old[:255],
                new_value=new[:255], changed_by=user, changed_at=now, reason=reason,
            )
        )  # fmt: skip

    for name, queue in stored.items():
        if name not in wanted:
            audit(name, _queue_text(queue.queue_type, queue.priority, queue.enabled,
                                    queue.started), "removed")  # fmt: skip
            queue.delete()
    for name, (priority, queue_type, enabled, started, attributes) in wanted.items():
        new = _queue_text(queue_type, priority, enabled, started)
        found = stored.get(name)
        if found is None:
            audit(name, "none", new)
            queue = Queue(cluster=cluster, name=name)
        else:
            queue = found
            old = _queue_text(queue.queue_type, queue.priority, queue.enabled, queue.started)
            if old != new:
                audit(name, old, new)
        queue.priority, queue.queue_type = priority, queue_type
        queue.enabled, queue.started, queue.attributes = enabled, started, dict(attributes)
        queue.save()
    SettingChange.objects.bulk_create(changes)
    return changes


# The Cluster fields `scontrol show config` also sets, from the multifactor settings.
def _slurm_cluster_values(config: MultifactorConfig) -> dict[str, object]:
    return {
        "fairshare_algorithm": Algorithm.of_flags(config.flags).value,
        "fairshare_dampening_factor": config.fs_dampening_factor,
        "priority_decay_half_life": timedelta(seconds=config.decay_half_life),
        "priority_calc_period": timedelta(seconds=config.calc_period),
        "priority_usage_reset_period": config.usage_reset_period,
        "charge_job_end": config.enforce_limits,
        "slurm_priority": multifactor_document(config),
    }


def slurm_config_import(
    *, cluster_name: str, configs: SlurmConfigs, source: str, user: User | None = None
) -> PriorityImport:
    """What the files hold, each part replacing what was stored of it: the Priority* settings
    (and the fairshare ones the cluster keeps: algorithm, dampening, half-life, calc period,
    reset period, AccountingStorageEnforce's limits), the partitions, the QOS; slurm.conf
    without `scontrol show config` only its PriorityFlags. A new algorithm or dampening factor
    recomputes every association's numbers in the same transaction."""
    reason = f"Slurm configuration imported from {source}"
    parsed = configs.parsed
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name, scheduler=Scheduler.SLURM)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        done = PriorityImport(cluster, created)
        values = None
        if "config" in parsed.kinds:
            values = _slurm_cluster_values(parsed.config)
        elif configs.conf_flags is not None:
            config = replace(multifactor_config_get(cluster), flags=configs.conf_flags)
            values = {
                "fairshare_algorithm": Algorithm.of_flags(config.flags).value,
                "slurm_priority": multifactor_document(config),
            }
        if values is not None:
            before = (cluster.fairshare_algorithm, cluster.fairshare_dampening_factor)
            done.changes = settings_audited_set(
                cluster=cluster, values=values, reason=reason, user=user
            )
            after = (cluster.fairshare_algorithm, cluster.fairshare_dampening_factor)
            if before != after:
                with slurm_tree_held(cluster) as held:
                    held.store(reason=reason, user=user)
        if "partition" in parsed.kinds:
            wanted = {
                p.name: (p.priority_job_factor, "", p.state.upper() == "UP", True,
                         partition_attributes(p))
                for p in parsed.partitions
            }  # fmt: skip
            done.changes += _queues_replace(cluster, wanted, reason, user)
        done.queues = Queue.objects.filter(cluster=cluster).count()
        if "qos" in parsed.kinds:
            done.changes += _qos_replace(cluster, {q.name: q.priority for q in parsed.qos},
                                         reason, user)  # fmt: skip
        done.qos = Qos.objects.filter(cluster=cluster).count()
    return done


def _qos_replace(
    cluster: Cluster, wanted: Mapping[str, int], reason: str, user: User | None
) -> list[SettingChange]:
    now = timezone.now()
    stored = dict(Qos.objects.filter(cluster=cluster).values_list("name", "priority"))
    changes = [
        SettingChange(
            cluster=cluster, setting=f"qos {name}"[:64],
            old_value="none" if name not in stored else f"Priority {stored[name]}",
            new_value="removed" if name not in wanted else f"Priority {wanted[name]}",
            changed_by=user, changed_at=now, reason=reason,
        )
        for name in sorted(set(stored) | set(wanted))
        if stored.get(name) != wanted.get(name)
    ]  # fmt: skip
    Qos.objects.filter(cluster=cluster).exclude(name__in=list(wanted)).delete()
    for name, priority in wanted.items():
        Qos.objects.update_or_create(cluster=cluster, name=name, defaults={"priority": priority})
    SettingChange.objects.bulk_create(changes)
    return changes


@dataclass
class MomImport:
    cluster: Cluster
    cluster_created: bool
    changes: list[SettingChange] = field(default_factory=list)


def mom_config_import(
    *, cluster_name: str, config: MomConfig, source: str, user: User | None = None
) -> MomImport:
    """A MoM's poll settings as its configuration file gives them (PBS's defaults where it
    does not set them, as pbs_mom runs), audited like every setting."""
    with transaction.atomic():
        cluster, created = cluster_get_or_create(name=cluster_name)
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        values = {
            "mom_min_check_poll": config.min_check_poll,
            "mom_max_check_poll": config.max_check_poll,
        }
        reason = f"MoM configuration imported from {source}"
        changes = settings_audited_set(cluster=cluster, values=values, reason=reason, user=user)
    return MomImport(cluster, created, changes)
