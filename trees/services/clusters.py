"""Clusters made, set and removed."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from trees.engine.formula import JOB_SORT_NAMES, FormulaError, parse_formula
from trees.formats.pbsfs import UsageDatabase
from trees.models import Cluster, Scheduler
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


def job_sort_formula_set(*, cluster: Cluster, formula: str) -> None:
    """The cluster's `job_sort_formula` (a PBS server attribute, set with qmgr); "" for none.

    A formula that does not parse, or names what PBS does not know, is refused with where.
    """
    if formula:
        try:
            parse_formula(formula, JOB_SORT_NAMES)
        except FormulaError as exc:
            raise ValidationError({"job_sort_formula": f"{formula!r}: {exc}"}) from exc
    with transaction.atomic():
        cluster.job_sort_formula = formula
        cluster.save(update_fields=["job_sort_formula"])


def cluster_delete(*, name: str) -> bool:
    """Remove the cluster with all it holds (tree, usage, jobs, cycles, history, memberships);
    False when there was none."""
    with transaction.atomic():
        deleted, _ = Cluster.objects.filter(name=name).delete()
    return deleted > 0
