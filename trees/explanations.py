"""The pages' words: one plain sentence for each number they show (what it means and which way
is good), and the sentences that explain a comparison or a recovery."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from django.utils import timezone

from trees.engine.accelerator import NO_RANK, NO_RANK9, SCALE
from trees.engine.job_sort import float_digits
from trees.engine.pbs import TREEROOT
from trees.engine.ranking import Level, furthest_over_target
from trees.models import NodeKind
from trees.quantities import (
    UsageUnit,
    fs_percent_text,
    fs_points_text,
    part_percent,
    percent_text,
    span_text,
    usage_number,
    usage_text,
)
from trees.selectors.accelerator_standing import GroupStanding
from trees.selectors.compare import PbsComparison, SlurmComparison
from trees.selectors.standing import RecoveryProjection

EXPLANATIONS = {
    "shares": "The node's entitlement among its siblings: more shares, a bigger slice.",
    "fairshare_perc": (
        "Target share: the fraction of the whole machine this node is entitled to"
        " (its shares over its siblings', times its parent's target)."
    ),
    "usage": "Decayed usage charged so far (for a group: 1 plus its leaves'); it halves"
    " with every decay, so old work counts less.",
    "usage_share": "Share of usage: the node's fraction of all usage in the tree.",
    "usage_perc": "usage/perc: usage divided by the target share; among siblings, the lower"
    " one is more deserving.",
    "fairshare_tree_usage": "Effective usage: the node's share of usage blended with its"
    " ancestors'; above the target share means over target.",
    "fairshare_factor": "Fairshare factor: 0.5 is exactly on target, higher is more deserving"
    " (jobs start sooner), lower means over target.",
    "norm_shares": "NormShares: the shares over the siblings' shares.",
    "effectv_usage": "EffectvUsage: the fraction of the parent's usage this association used.",
    "level_fs": "Level FS: NormShares over EffectvUsage; above 1 is under target (good), below"
    " 1 over target; Slurm sorts siblings by it, highest first.",
    "fairshare": "FairShare: the user's rank turned into a factor; 1.0 is the most deserving"
    " user of the cluster, lower is less.",
    "fairshare_place": "Place: the user's place in Fair Tree's ranking of all users, 1st the"
    " most deserving; Slurm counts its rank the other way (the 1st of n users has rank n, and"
    " FairShare is rank over n).",
    "standing": "Place among all the cluster's entities: 1st is the most deserving (pbsfs -c"
    " order on PBS, Fair Tree's ranking on Slurm), so a smaller place is better.",
    "trend": "The factor's change over the last 7 days: ↑ more deserving than a week ago, ↓"
    " less, → steady.",
    "recovery": "Back on target: when the factor would reach 0.5 again if the entity ran"
    " nothing more, decay lowering its usage while the rest of the tree keeps its own.",
    "pulled_by": "Pulled down by: the level of the entity's path from the root furthest over"
    " its target; its usage weighs on every entity below it.",
    "running": "Running jobs: the entity's jobs running now, with the usage the cycles have"
    " charged them so far.",
    "queued": "Queued jobs: the entity's jobs waiting to start (queued in the accounting logs"
    " read so far, not yet started, deleted or aborted), and how long each has waited.",
}

EXPLANATIONS |= {
    "import_entries": "Entries (groups and entities) of the resource_group that now make the"
    " cluster's tree.",
    "import_keys": "Fairshare keys the sched_config set; keys it leaves unset take PBS's"
    " defaults, as the scheduler would.",
    "import_records": "Usage records of the file that are now the entities' usage.",
    "import_read": "Records read from the logs: each is stored, recognised as carrying no job"
    " run, or rejected.",
    "import_ingested": "Job runs that ended and were stored for the first time, each charged to"
    " its entity.",
    "import_running": "Runs started but not ended in these logs; stored as running until a later"
    " log holds their end.",
    "import_queued": "Jobs queued but not started in these logs; stored as waiting until a"
    " later log starts, ends, deletes or aborts them.",
    "import_duplicates": "Records of runs already stored; they add nothing, so uploading the same"
    " log again is harmless.",
    "import_rejected": "Lines (records of a usage file) not taken, each listed below with its"
    " reason; 0 is what you want.",
    "import_nodes_added": "Entries the import added to the tree (each in the audit trail).",
    "import_nodes_updated": "Entries whose shares or parent the import changed (each in the"
    " audit trail).",
    "import_nodes_removed": "Entries no longer in the file, taken out of the tree (each in the"
    " audit trail; an entity's usage stays, under unknown).",
    "import_unknown_entities": "Entities with usage that the tree does not hold; PBS charges"
    " them under `unknown`, so fewer is better.",
}


def tree_columns_explained(*, slurm: bool, unit: str, cluster: bool) -> list[tuple[str, str]]:
    """The tree tables' columns, by the names their heads give them, each with its sentence,
    for that scheduler: the cluster page's (`cluster`) or the node page's path table."""
    shared = [
        ("Shares", EXPLANATIONS["shares"]),
        ("Target %", EXPLANATIONS["fairshare_perc"]),
        (f"Usage ({unit})", EXPLANATIONS["usage"]),
    ]
    if cluster:
        shared.append(("Share of usage %", EXPLANATIONS["usage_share"]))
    if slurm:
        return [
            *shared,
            ("NormShares", EXPLANATIONS["norm_shares"]),
            ("EffectvUsage", EXPLANATIONS["effectv_usage"]),
            ("Level FS", EXPLANATIONS["level_fs"]),
            ("FairShare", EXPLANATIONS["fairshare"]),
            *([("Place", EXPLANATIONS["fairshare_place"])] if cluster else []),
        ]
    return [
        *shared,
        ("usage/perc", EXPLANATIONS["usage_perc"]),
        ("Tree usage", EXPLANATIONS["fairshare_tree_usage"]),
        ("Factor", EXPLANATIONS["fairshare_factor"]),
    ]


def standing_columns_explained(*, slurm: bool, pbs: bool, answers: bool) -> list[tuple[str, str]]:
    """The standing tables' columns (the landing page's with `answers`, /me/'s without), by
    their heads' names, for the schedulers of the clusters shown."""
    factors = [("Factor", EXPLANATIONS["fairshare_factor"])] if pbs else []
    if slurm:
        factors.append(("FairShare", EXPLANATIONS["fairshare"]))
    against = (
        "Against target: whether the entity uses more than its target share of the machine"
        + (" (PBS: its factor below 0.5)" if pbs else "")
        + (" (Slurm: its Level FS below 1)" if slurm else "")
        + "; over target, its jobs wait behind those under target."
    )
    columns = [*factors, ("Against target", against), ("Place", EXPLANATIONS["standing"])]
    recovery = [("Back on target", EXPLANATIONS["recovery"])] if pbs else []
    if answers:
        return [
            *columns,
            ("Pulled down by", EXPLANATIONS["pulled_by"]),
            *recovery,
            ("Running jobs", EXPLANATIONS["running"]),
            ("Queued jobs", EXPLANATIONS["queued"]),
        ]
    return [*columns, ("7 days", EXPLANATIONS["trend"]), *recovery]


def pbs_comparison_explained(comparison: PbsComparison, unit: UsageUnit) -> list[str]:
    """The answer in words: where it is decided, on what, and what would turn it round."""
    if comparison.ancestor is None:
        return [
            f"{comparison.a} and {comparison.b} tie: one is on the other's path from the root,"
            " and pbsfs ties a node with its ancestors."
        ]
    where = "the root" if comparison.ancestor == TREEROOT else comparison.ancestor
    sides = [
        (comparison.child_a, comparison.usage_a, comparison.perc_a),
        (comparison.child_b, comparison.usage_b, comparison.perc_b),
    ]
    said = " ".join(
        f"{name}: usage {usage_text(usage, unit)}, target {percent_text(perc)} %, "
        + (f"usage/perc {usage_number(usage / perc)}." if perc > 0 else "no target share.")
        for name, usage, perc in sides
    )
    lines = [
        f"At {where}, their first common ancestor, pbsfs compares {sides[0][0]} with"
        f" {sides[1][0]}. {said}"
    ]
    if comparison.perc_a <= 0 and comparison.perc_b <= 0:
        return [
            *lines,
            "Neither has a target share there, so they tie; shares would change it.",
        ]
    if comparison.answer == 0:
        return [*lines, "Their usage/perc tie at every level, so neither is more deserving."]
    win, lose = (sides[0], sides[1]) if comparison.answer < 0 else (sides[1], sides[0])
    loser = comparison.b if comparison.answer < 0 else comparison.a
    if lose[2] <= 0:
        return [
            *lines,
            f"{lose[0]} has no target share there, so it loses to any node with one:"
            f" {comparison.winner} is more deserving than {loser}, and only shares for {lose[0]}"
            " would change that.",
        ]
    ratio = win[1] / win[2]
    more = lose[1] / lose[2] * win[2] - win[1]
    changes = [
        f"decay bringing {lose[0]}'s usage below {usage_text(ratio * lose[2], unit, digits=1)}"
        " while it does not run",
        f"{win[0]} using {usage_text(more, unit, digits=1)} more",
    ]
    if ratio > 0:  # with no usage at all the winner keeps winning whatever the target
        above = percent_text(lose[1] / ratio)
        changes.append(f"{lose[0]}'s target share rising above {above} %")
    return [
        *lines,
        f"The lower usage/perc is more deserving, so {comparison.winner} is more deserving than"
        f" {loser}.",
        f"What would change it: {', or '.join(changes)}.",
    ]


def slurm_comparison_explained(comparison: SlurmComparison) -> str:
    """Fair Tree's answer in words: where it is decided and on what."""
    where = (
        f"At {comparison.ancestor}, their first common ancestor, Fair Tree compares"
        f" {comparison.child_a} (Level FS {comparison.level_fs_a:f}) with {comparison.child_b}"
        f" (Level FS {comparison.level_fs_b:f})."
    )
    if comparison.winner is None:
        return (
            f"{where} The two tie: Slurm then ranks users before accounts and keeps the"
            f" account list's order, so neither is more deserving by fairshare."
        )
    loser = comparison.b if comparison.winner == comparison.a else comparison.a
    return (
        f"{where} The higher Level FS wins, so {comparison.winner} is more deserving than"
        f" {loser}; Level FS is shares over usage at that level, above 1 means"
        " under-served."
    )


def recovery_sentence(projection: RecoveryProjection) -> str:
    """When the node gets back to its target if its entities stop running."""
    now = projection.factors[0]
    if projection.no_target:
        return (
            "Never: its target share is 0 (a level of its path has 0 shares), so its factor"
            " is 0 whatever its usage; only shares would change that."
        )
    if projection.reaches == 0:
        return f"Already at or above its target: its factor is {now:.6f} (0.5 is on target)."
    if projection.reaches is not None:
        when = projection.at[projection.reaches]
        days = (when - projection.at[0]).total_seconds() / 86400
        return (
            f"With no further usage its factor goes from {now:.6f} to 0.5 (on target) in"
            f" {projection.reaches} decays, on {when:%Y-%m-%d %H:%M} UTC, {days:.1f} days from now."
        )
    last = projection.factors[-1]
    if projection.held_by is not None:
        return (
            f"Never by decay alone: {projection.held_by} stays over its target because of others'"
            f" usage, so its factor stops at {last:.6f}."
        )
    return f"Never by decay alone: with no usage left its factor stops at {last:.6f}."


ON_TARGET = 1e-6  # a factor within this of 0.5 (a Level FS of 1) prints as on target


class _Standing(Protocol):
    @property
    def fairshare_perc(self) -> float: ...
    @property
    def fairshare_factor(self) -> float: ...
    @property
    def level_fs(self) -> float | None: ...


@dataclass(frozen=True)
class TargetStanding:
    """Whether a node uses more or less than its target, in words, and its tone: `under`
    (good: its jobs are favoured), `over`, `on` or `none` (no target to measure against)."""

    words: str
    tone: str


def target_standing(node: _Standing, *, slurm: bool) -> TargetStanding:
    """PBS: the fairshare factor against 0.5 (2^-(tree usage / target)); Slurm: Level FS
    against 1 at the node's own level, as Fair Tree sorts siblings."""
    if node.fairshare_perc <= 0:
        return TargetStanding("no target share (0 shares on its path)", "none")
    if slurm:
        level = node.level_fs
        if level is None:
            return TargetStanding("not ranked by Fair Tree", "none")
        if level == float("inf"):
            return TargetStanding("under target: no usage yet", "under")
        distance = level - 1
    else:
        distance = node.fairshare_factor - 0.5
    if abs(distance) <= ON_TARGET:
        return TargetStanding("on target", "on")
    if distance > 0:
        return TargetStanding("under target: its jobs are favoured", "under")
    return TargetStanding("over target: its jobs wait behind those under target", "over")


def recovery_brief(projection: RecoveryProjection) -> str:
    """When the node is back on target if its entities run nothing more, in a few words."""
    if projection.no_target:
        return "never: its target share is 0; only shares would change that"
    if projection.reaches == 0:
        return "not needed: at or under its target"
    if projection.reaches is not None:
        when = projection.at[projection.reaches]
        decays = "decay" if projection.reaches == 1 else "decays"
        return (
            f"on target by {when:%Y-%m-%d %H:%M} UTC ({projection.reaches} {decays})"
            " if it runs nothing more"
        )
    if projection.held_by is not None:
        return f"never by decay alone: {projection.held_by} is over target"
    return "never by decay alone"


NO_LEVEL_OVER = "no level of its path is over target"


def pulled_down_by(path: Sequence[Level], *, slurm: bool, standing: TargetStanding) -> str:
    """The level that pulls a node down, in words: the one of its path furthest over its
    target; on PBS, with no level over its own target, an over-target node is pulled down by
    its top group's usage, which PBS blends into every tree usage below it."""
    culprit = furthest_over_target(path, slurm)
    if culprit is not None:
        return f"{culprit.name}, over target"
    if standing.tone == "over" and not slurm and len(path) > 2:
        return (
            f"{path[1].name}'s usage, which PBS blends into the tree usage below it"
            " (no level is over its own target)"
        )
    return NO_LEVEL_OVER


EXPLANATIONS |= {
    "job_position": "Place: where the scheduler considers the job among every job waiting,"
    " 1st first; held jobs are not considered until released.",
    "job_queue_position": "In queue: its place among the jobs waiting in the same queue.",
    "job_priority": "Priority: the sum of the terms below (PBS job_sort_formula, Slurm's"
    " weighted factors); a higher priority is considered sooner.",
    "job_term": "A term's part of the priority: its value and its share of the sum of the"
    " positive terms; a negative term (Slurm's nice) is subtracted.",
    "job_ahead": "Ahead of it: the jobs the scheduler considers first, their cores and their"
    " core-hours (requested cores × requested walltime).",
    "job_waiting_since": "Waiting since: when the job was queued, and how long ago.",
    "job_masked": "A job of an entity whose usage is private to its members: only its size"
    " and priority show.",
}


def ordinal_text(number: int) -> str:
    """`1st`, `2nd`, `3rd`, `11th`, `22nd`: a place as the pages print it."""
    if 10 <= number % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number:,}{suffix}"


def priority_text(value: float | None, *, slurm: bool = False) -> str:
    """A priority or one of its terms: PBS's as its scheduler prints them (`%.*f` with
    float_digits' decimals, at most 4: 585.4290, 583.333, 2), Slurm's as sprio does (whole
    numbers); with thousands separators. "" for no value."""
    if value is None:
        return ""
    if not math.isfinite(value):
        return str(value)
    if slurm:
        return f"{value:,.0f}"
    return f"{value:,.{float_digits(value)}f}"


def input_text(value: float) -> str:
    """A formula input as it was given (PBS prints the fairshare numbers `%f`): `0.416667`,
    `172,800`."""
    return f"{value:,}" if math.isfinite(value) else str(value)


def job_place_sentence(
    *,
    position: int | None,
    waiting: int,
    queue_position: int | None,
    queue: str,
    left_out: str = "",
) -> str:
    """`12th of 340 waiting; 3rd in queue cpu`, or why a job has no place: held, or the
    scheduler's reason to leave a waiting job out (`left_out`)."""
    others = f"{waiting:,} other job{'s' * (waiting != 1)} waiting"
    if position is None and left_out:
        return f"Not considered: the scheduler leaves it out, as {left_out} ({others})."
    if position is None:
        return f"Held: the scheduler does not consider it until it is released ({others})."
    place = f"{ordinal_text(position)} of {waiting:,} waiting"
    if queue and queue_position is not None:
        place += f"; {ordinal_text(queue_position)} in queue {queue}"
    return place + "."


def jobs_ahead_sentence(*, jobs: int, cores: int, core_hours: float) -> str:
    """How much work the scheduler considers before the job."""
    if jobs == 0:
        return "No job is ahead of it: it is the next the scheduler considers."
    return (
        f"{jobs:,} job{'s' * (jobs != 1)} ahead of it, asking for {cores:,}"
        f" core{'s' * (cores != 1)} and {core_hours:,.1f} core-hours in all (requested"
        " cores × requested walltime)."
    )


def fairshare_term_sentence(
    *,
    entity: str,
    term: str,
    value: float,
    best: float,
    slurm: bool,
    over: str | None,
    ratio: float | None,
    pulled: str = "",
) -> str:
    """The fairshare part of a job's priority against the most it could be, and the level of
    the entity's path that pulls it down: `cond-matter's fairshare term
    1000*(1-fairshare_tree_usage) is 666 of a possible 1,000 (...): physics has used 3.0× its
    target share of the machine (...)`. `pulled`: pulled_down_by's words, for a path with no
    level over its own target."""
    if slurm:
        said = (
            f"{entity}'s fairshare factor adds {priority_text(value, slurm=True)} of a possible"
            f" {priority_text(best, slurm=True)} (PriorityWeightFairShare, a FairShare of 1.0)"
        )
    else:
        said = (
            f"{entity}'s fairshare term {term} is {priority_text(value)} of a possible"
            f" {priority_text(best)} (its value with no usage: fairshare_tree_usage 0,"
            " fairshare_factor 1)"
        )
    if over is None:
        if pulled and pulled != NO_LEVEL_OVER:
            return f"{said}; it is pulled down by {pulled}."
        return f"{said}; no level of its path is over its target."
    if ratio is None:
        return f"{said}: {over} is the level of its path furthest over its target."
    if slurm:
        return (
            f"{said}: {over} has used {ratio:,.1f}× its share among its siblings (decayed"
            " usage against shares), the furthest over target on its path."
        )
    return (
        f"{said}: {over} has used {ratio:,.1f}× its target share of the machine (decayed usage"
        " against target), the furthest over target on its path."
    )


def job_order_sentence(*, formula: str, slurm: bool, problem: str) -> str:
    """How the scheduler orders the queue, in one sentence."""
    if slurm:
        how = (
            "Slurm orders pending jobs by priority, the sum of its weighted factors (age,"
            " association, fairshare, job size, partition, QOS, TRES, site, less nice), then"
            " by submit time."
        )
    elif formula:
        how = f"PBS orders the jobs by job_sort_formula {formula}, highest first."
    else:
        how = (
            "This PBS server has no job_sort_formula: it orders the jobs by its sort keys and"
            " its entities' fairshare standing, so there is no priority number."
        )
    if problem:
        how += f" The configured order could not be computed ({problem}): this is the order"
        how += " without it."
    return how


def whatif_sentence(
    *, entity: str, decay_at: datetime | None, position: int | None, now: int | None, priority: str
) -> str:
    """`If cond-matter ran nothing more, after the next decay on 2026-12-01 00:00 UTC this job
    would be 5th, with priority 806.0983 (up from 12th now).`"""
    if decay_at is None or position is None:
        return f"No projection: {entity}'s standing has no decay to come that would move it."
    when = f"{decay_at:%Y-%m-%d %H:%M} UTC"
    then = ordinal_text(position) + (f", with priority {priority}" if priority else "")
    if now is None:
        return f"If {entity} ran nothing more, after the next decay on {when} it would be {then}."
    if position == now:
        change = "the same place as now: the jobs ahead of it stay ahead"
    elif position < now:
        change = f"up from {ordinal_text(now)} now"
    else:
        change = f"down from {ordinal_text(now)} now: others' jobs gain more by then"
    return (
        f"If {entity} ran nothing more, after the next decay on {when} this job would be"
        f" {then} ({change})."
    )


def history_sentence(
    points: Sequence[tuple[datetime, float | None, int]], cycle: str, *, slurm: bool
) -> str:
    """What stands instead of a job's priority chart while the cycles have recorded fewer
    than two points: (time, priority, place) of each."""
    if not points:
        return (
            "No cycle has recorded this job's priority yet: its history starts with the next"
            f" cycle (every {cycle})."
        )
    at, priority, position = points[0]
    value = "" if priority is None else f"priority {priority_text(priority, slurm=slurm)}, "
    return (
        f"One cycle has recorded it so far ({at:%Y-%m-%d %H:%M} UTC: {value}"
        f"{ordinal_text(position)} in line): the chart starts with the next cycle, every {cycle}."
    )


def queued_job_line(
    *,
    place: str,
    ncpus: int,
    walltime: int | None,
    waited: str,
    fairshare: tuple[float, float] | None,
    reason: str,
    slurm: bool,
) -> str:
    """One line of "my jobs" for a waiting job: its place, size, wait and why, briefly."""
    size = f"{ncpus:,} core{'s' * (ncpus != 1)}"
    if walltime:
        size += f" for {span_text(timedelta(seconds=walltime))}"
    parts = [place.rstrip("."), f"{size}, waiting {waited}"]
    if fairshare is not None:
        value, best = fairshare
        parts.append(
            f"fairshare term {priority_text(value, slurm=slurm)} of a possible"
            f" {priority_text(best, slurm=slurm)}"
        )
    if reason:
        parts.append(f"the scheduler says: {reason}")
    return "; ".join(parts) + "."


def running_job_line(*, ncpus: int, since: datetime | None, core_hours: float) -> str:
    """One line of "my jobs" for a running job: its cores, since when, its use so far."""
    cores = f"{ncpus:,} core{'s' * (ncpus != 1)}"
    if since is None:
        return f"{cores}, start time unknown."
    return (
        f"{cores} since {since:%Y-%m-%d %H:%M} UTC: {core_hours:,.1f} core-hours so far"
        " (cores × time running)."
    )


# Altair Accelerator: the FS_* fields (every share an integer ×10,000, shown as a percent).
EXPLANATIONS |= {
    "fs_weight": "Weight: the group's entitlement among its siblings (vovfsgroup -w); only"
    " active siblings, those with a queued, running or suspended job, share their parent's"
    " target.",
    "fs_target": "FS_TARGET: the share of the whole machine the group is entitled to now, in %"
    " (Accelerator's 2500 is 25.00 %): its weight over its active siblings' weights, times its"
    " parent's FS_TARGET; 0 for a group with no job.",
    "fs_running": "FS_RUNNING: the group's share of every job running on the machine, in %;"
    " above FS_TARGET it runs more than its due.",
    "fs_running_count": "Running jobs (FS_RUNNING_COUNT): how many jobs run in the group and"
    " below it.",
    "fs_excess_running": "FS_EXCESS_RUNNING: FS_RUNNING minus FS_TARGET, in percentage points"
    " of the machine; below 0 the group runs less than its due (good for its queued jobs),"
    " above 0 more (preemption rules pick their victims there).",
    "fs_excess_running_local": "FS_EXCESS_RUNNING_LOCAL: the same among its siblings only, in"
    " points: its part of its parent's running jobs minus its weight's part of its active"
    " siblings'; below 0 is under its local target.",
    "fs_history": "FS_HISTORY: the group's share of the job time run on the machine over its"
    " window (2 hours unless configured), in %; compare it with FS_TARGET.",
    "fs_excess_history": "FS_EXCESS_HISTORY: FS_HISTORY minus FS_TARGET, in points; below 0 the"
    " group has run less than its due over its window.",
    "fs_rank": "FS_RANK: the order in which the groups holding queued jobs are dispatched, 0"
    " first (the furthest under its target); -1 without a queued job. Smaller is served"
    " sooner.",
    "fs_rank9": "FS_RANK9: FS_RANK, with 9,999,999 instead of -1, so that `FSRANK9>@FSRANK9@` in"
    " a preemption rule picks the groups served after the preempting one.",
    "fs_said": "The sentence under each group: where it stands, what it runs against its"
    " target and when its queued jobs are dispatched.",
    "fs_jobs_running": "Running jobs: the group's jobs running now, their job class, and since"
    " when.",
    "fs_jobs_queued": "Queued jobs: the group's jobs waiting to start, their job class, and how"
    " long each has waited.",
    "fs_preemption": "Preemption: for each job queued in the group or below it, each of the"
    " cluster's preemption rules (VovPreemptRule), whether it fires for that job, the running"
    " jobs it would let it preempt, and why.",
}


def accelerator_columns_explained(*, cluster: bool) -> list[tuple[str, str]]:
    """The FS_* tables' columns, by the names their heads give them, each with its sentence:
    the cluster page's (`cluster`) or a group page's."""
    columns = [
        ("Weight", EXPLANATIONS["fs_weight"]),
        ("FS_TARGET %", EXPLANATIONS["fs_target"]),
        ("FS_RUNNING %", EXPLANATIONS["fs_running"]),
        ("Running jobs", EXPLANATIONS["fs_running_count"]),
        ("FS_EXCESS_RUNNING", EXPLANATIONS["fs_excess_running"]),
        ("FS_EXCESS_RUNNING_LOCAL", EXPLANATIONS["fs_excess_running_local"]),
        ("FS_HISTORY %", EXPLANATIONS["fs_history"]),
        ("FS_EXCESS_HISTORY", EXPLANATIONS["fs_excess_history"]),
        ("FS_RANK", EXPLANATIONS["fs_rank"]),
    ]
    return columns if cluster else [*columns, ("FS_RANK9", EXPLANATIONS["fs_rank9"])]


def _against_target(excess: int | None, what: str = "its target") -> str:
    """`6.25 points under its target`, `25.00 points over its target`, `exactly on its target`."""
    if not excess:
        return f"exactly on {what}"
    side = "under" if excess < 0 else "over"
    return f"{fs_points_text(abs(excess)).lstrip('+')} {side} {what}"


def _jobs(count: int) -> str:
    return f"{count:,} running job{'s' * (count != 1)}"


def fs_target_sentence(group: GroupStanding) -> str:
    """`Its target is 25.00 % of the machine: its weight 100 of its active siblings' 200, times
    /class/vcs's 50.00 %.`"""
    node, parent = group.node, group.parent
    target = fs_percent_text(node.fs_target)
    if parent is None:
        return f"The root is the whole machine: its target is {target}."
    weight = node.shares or 0
    if not node.fs_active:
        return (
            f"Its target is {target}: it has no queued, running or suspended job, so its weight"
            f" {weight:,} takes no part of {parent.name}'s share until it has one."
        )
    if not group.active_weight:
        return (
            f"Its target is {target}: it and its active siblings all weigh 0, so none of them"
            f" has a part of {parent.name}'s share."
        )
    said = (
        f"Its target is {target} of the machine: its weight {weight:,} of its active siblings'"
        f" {group.active_weight:,}"
    )
    if parent.parent_id is None:  # the root's target is the whole machine: no "times 100 %"
        return f"{said}."
    return f"{said}, times {parent.name}'s {fs_percent_text(parent.fs_target)}."


def fs_running_sentence(group: GroupStanding) -> str:
    """`It runs 3 of the 16 running jobs (18.75 %): 6.25 points under its target.`"""
    node = group.node
    against = _against_target(node.fs_excess_running)
    if not group.machine_running:
        return f"No job runs on the machine now, so it runs {fs_percent_text(0)}: {against}."
    count = node.fs_running_count or 0
    return (
        f"It runs {count:,} of the {_jobs(group.machine_running)}"
        f" ({fs_percent_text(node.fs_running)}): {against}."
    )


def fs_local_sentence(group: GroupStanding) -> str:
    """`Among its siblings it runs 75.00 % of /class/vcs's running jobs (3 of 4) against a local
    target of 50.00 %: +25.00 points.`"""
    node, parent = group.node, group.parent
    excess = node.fs_excess_running_local
    if parent is None:
        return (
            f"The root has no siblings: its local excess is its excess, {fs_points_text(excess)}."
        )
    local = f"a local target of {fs_percent_text(round(group.local_target * SCALE))}"
    if not parent.fs_running_count:
        return (
            f"{parent.name} runs no job, so among its siblings it runs {fs_percent_text(0)}"
            f" against {local}: {fs_points_text(excess)}."
        )
    share = round(group.local_target * SCALE) + (excess or 0)
    return (
        f"Among its siblings it runs {fs_percent_text(share)} of {parent.name}'s running jobs"
        f" ({node.fs_running_count or 0:,} of {parent.fs_running_count:,}) against {local}:"
        f" {fs_points_text(excess)}."
    )


def fs_history_sentence(group: GroupStanding) -> str:
    """`Over the last 2 hours it ran 24.27 % of the machine's job time against its target of
    25.00 %: 0.73 points under it.`"""
    node = group.node
    window = node.fs_window_effective
    if window == 0:
        return (
            "FairShare is off for it (a window of 0 on its path): it keeps no history, and its"
            " queued jobs go first come, first served after every fairshare group's."
        )
    span = span_text(timedelta(seconds=window or 0))
    return (
        f"Over the last {span} it ran {fs_percent_text(node.fs_history)} of the machine's job"
        f" time against its target of {fs_percent_text(node.fs_target)}:"
        f" {_against_target(node.fs_excess_history, 'it')}."
    )


def fs_rank_sentence(group: GroupStanding) -> str:
    """`FS_RANK 0: dispatched first among the 1 group with queued jobs.` or why it has none."""
    node = group.node
    rank = node.fs_rank
    if rank is None:
        return "Not ranked yet: no cycle has computed its fields."
    if rank == NO_RANK:
        if node.kind == NodeKind.USER:
            return (
                f"No job queued: FS_RANK {NO_RANK} (FS_RANK9 {NO_RANK9:,}), so it is not ranked"
                " for dispatch."
            )
        return (
            f"No job is queued in the group itself: FS_RANK {NO_RANK} (FS_RANK9 {NO_RANK9:,});"
            " the groups holding queued jobs, usually its users' leaves, carry the ranks."
        )
    place = "first" if rank == 0 else ordinal_text(rank + 1)
    groups = f"{group.ranked:,} group{'s' * (group.ranked != 1)}"
    how = (
        "its window is 0: after every fairshare group, first come first served"
        if node.fs_window_effective == 0
        else "the furthest under its target first"
    )
    return f"FS_RANK {rank}: dispatched {place} among the {groups} with queued jobs ({how})."


def fs_summary_sentence(group: GroupStanding) -> str:
    """A person's leaf in one sentence: `It runs 1 of the 16 running jobs (6.25 %) against a
    target of 25.00 %: 18.75 points under it; its queued jobs are dispatched first.`"""
    node = group.node
    count = node.fs_running_count or 0
    runs = (
        f"It runs {count:,} of the {_jobs(group.machine_running)}"
        f" ({fs_percent_text(node.fs_running)})"
        if group.machine_running
        else "No job runs on the machine now"
    )
    against = _against_target(node.fs_excess_running, "it")
    rank = node.fs_rank
    if rank is None or rank == NO_RANK:
        queued = "no job of it is queued"
    else:
        place = "first" if rank == 0 else ordinal_text(rank + 1)
        groups = f"{group.ranked:,} group{'s' * (group.ranked != 1)}"
        queued = f"its queued jobs are dispatched {place} of the {groups} with queued jobs"
    return f"{runs} against a target of {fs_percent_text(node.fs_target)}: {against}; {queued}."


def accelerator_standing_explained() -> list[tuple[str, str]]:
    """The Accelerator standing tables' columns (the landing page's and /me/'s), by their
    heads' names."""
    return [
        ("FS_TARGET", EXPLANATIONS["fs_target"]),
        ("FS_RUNNING", EXPLANATIONS["fs_running"]),
        ("FS_EXCESS_RUNNING", EXPLANATIONS["fs_excess_running"]),
        ("FS_EXCESS_RUNNING_LOCAL", EXPLANATIONS["fs_excess_running_local"]),
        ("FS_HISTORY", EXPLANATIONS["fs_history"]),
        ("FS_RANK", EXPLANATIONS["fs_rank"]),
        ("Under each group", EXPLANATIONS["fs_said"]),
        ("Running jobs", EXPLANATIONS["fs_jobs_running"]),
        ("Queued jobs", EXPLANATIONS["fs_jobs_queued"]),
    ]


# PBS's recorded usage (the usage-loss page): what PBS's sampling loses of the jobs' usage.
EXPLANATIONS |= {
    "loss_used": "Used: what the jobs used, their fairshare_usage_res over their runs (what the"
    " dashboard's cycles charge with usage_recording exact).",
    "loss_recorded": "Recorded: what PBS wrote of them into its fairshare database, each job's"
    " usage at the last sample that the last cycle before its end read.",
    "loss_lost": "Lost: used minus recorded; PBS charges it to nobody.",
    "loss_lost_percent": "Lost %: the part of the entity's usage lost; above the whole"
    " cluster's, PBS charges the entity less than its part of the usage.",
    "loss_jobs": "Jobs: the entity's jobs that ended in the window.",
    "loss_unseen": "Unseen: jobs of which PBS recorded nothing, because no cycle read a sample"
    " of them while they ran.",
    "loss_share_used": "Share of the usage: the entity's part of what all the jobs used.",
    "loss_share_recorded": "Share of what PBS recorded: its part of all that PBS recorded, the"
    " usage fairshare compares entities on.",
    "loss_gain": "Difference: its share of the usage minus its share of what PBS recorded, in"
    " percentage points; above 0 PBS charges it less than its part and its standing gains.",
    "loss_last_cycle": "Last cycle: the last scheduling cycle after the job's start and before"
    " its end, the one whose reading PBS kept.",
    "loss_last_poll": "Its poll: the MoM's last sample of the job that reached the server before"
    " that cycle; what the job used after it is lost.",
}

# How PBS records usage, in a few lines (docs/pbs.md, "Recorded usage", says it in full).
USAGE_LOSS_MODEL = (
    "A MoM samples the usage of all its running jobs at once: first $min_check_poll after a"
    " job starts on it, then at intervals that grow after each sample up to $max_check_poll;"
    " every job start sets the interval back to the minimum. A sample reaches the server at"
    " the MoM's next wake-up, 2 s later.",
    "The scheduler runs a cycle whenever a job is submitted or ends, and scheduler_iteration"
    " after its previous cycle. At each cycle PBS adds to a job's entity what the job's last"
    " sample said, less what it added before, but only for jobs still running: at the cycle"
    " its own end makes, a job is over and gets nothing.",
    "So a job is charged its usage at the last sample read by the last cycle before its end."
    " What it used after that sample is lost, and a job that no cycle read a sample of goes"
    " unseen: PBS records nothing of it.",
    "The page replays that on the jobs stored (the accounting logs: each job's MoM, start,"
    " walltime and end, each submission), on the cycles of the scheduler's log where one is"
    " imported (import_sched_log); usage grows evenly over a job's walltime. The model follows"
    " OpenPBS's source and what a running OpenPBS 23.06 did (trees/engine/recording.py).",
)


def usage_loss_columns_explained(*, unit: str) -> list[tuple[str, str]]:
    """The usage-loss page's columns, by their heads' names, each with its sentence."""
    return [
        (f"Used ({unit})", EXPLANATIONS["loss_used"]),
        ("Recorded", EXPLANATIONS["loss_recorded"]),
        ("Lost", EXPLANATIONS["loss_lost"]),
        ("Lost %", EXPLANATIONS["loss_lost_percent"]),
        ("Jobs", EXPLANATIONS["loss_jobs"]),
        ("Unseen", EXPLANATIONS["loss_unseen"]),
        ("Share of the usage", EXPLANATIONS["loss_share_used"]),
        ("Share recorded", EXPLANATIONS["loss_share_recorded"]),
        ("Difference", EXPLANATIONS["loss_gain"]),
        ("Last cycle", EXPLANATIONS["loss_last_cycle"]),
        ("Its poll", EXPLANATIONS["loss_last_poll"]),
    ]


def _moment_text(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M %Z}"


def window_text(since: datetime, until: datetime) -> str:
    """`from 2026-11-21 04:01 UTC to 2026-11-28 04:01 UTC`."""
    return f"from {_moment_text(since)} to {_moment_text(until)}"


def usage_loss_sentence(
    *,
    cluster: str,
    window: str,
    actual: float,
    recorded: float,
    lost_fraction: float,
    jobs: int,
    unseen: int,
    unit: UsageUnit,
) -> str:
    """`Of 146,123,092 core-seconds (40,589.7 core-hours) used by the 862 jobs of hpc that
    ended from ... to ..., PBS recorded 95.7 %, ...: 4.3 % lost, ...; 42 of 862 jobs went
    unseen.`"""
    if jobs == 0:
        return (
            f"No job of {cluster} ended {window}: there is nothing to compare. Choose a longer"
            " window, or import the accounting logs of this one."
        )
    ended = f"{jobs:,} job{'s' * (jobs != 1)} of {cluster} that ended {window}"
    if actual <= 0:
        return f"The {ended} used nothing that {cluster}'s usage formula counts."
    return (
        f"Of {usage_text(actual, unit)} used by the {ended}, PBS recorded"
        f" {part_percent(recorded / actual)}, {usage_text(recorded, unit)}:"
        f" {part_percent(lost_fraction)} lost, {usage_text(actual - recorded, unit)};"
        f" {unseen:,} of {jobs:,} job{'s' * (jobs != 1)} went unseen."
    )


class _Change(Protocol):
    @property
    def changed_at(self) -> datetime: ...
    @property
    def changed_by(self) -> object: ...
    @property
    def reason(self) -> str: ...


REASON_SHOWN = 120  # characters of a change's reason quoted where a setting comes from


def setting_source_text(change: _Change | None, *, default: str | None) -> str:
    """Where a setting comes from: its last audited change (`set 2026-11-28 by a command or
    an import: “MoM configuration imported from mom_priv/config”`), else `default` (why it is
    PBS's default) when it is PBS's default, else the value the cluster was made with."""
    if change is not None:
        reason = change.reason.strip()
        if len(reason) > REASON_SHOWN:
            reason = reason[: REASON_SHOWN - 1].rstrip() + "…"
        who = change.changed_by or "a command or an import"
        return f"set {timezone.localtime(change.changed_at):%Y-%m-%d} by {who}: “{reason}”"
    return default if default is not None else "the cluster's own since it was made"


def usage_loss_settings_sentence(
    *,
    min_check_poll: int,
    max_check_poll: int,
    iteration: int,
    sources: dict[str, str],
    logged_cycles: int = 0,
) -> str:
    """The settings the model used, each with where it comes from (`sources`, by setting:
    "$min_check_poll", "$max_check_poll", "scheduler_iteration"), and the cycles:
    `PBS's recording is modelled with $min_check_poll 10 s and $max_check_poll 120 s (both
    PBS's default: ...), scheduler_iteration 10 minutes (...) and a cycle at every job
    submission and end.`, or the `logged_cycles` of the scheduler's log it ran on."""
    low, high = sources["$min_check_poll"], sources["$max_check_poll"]
    if low == high:
        polls = (
            f"$min_check_poll {min_check_poll:,} s and $max_check_poll {max_check_poll:,} s"
            f" (both {low})"
        )
    else:
        polls = (
            f"$min_check_poll {min_check_poll:,} s ({low}), $max_check_poll"
            f" {max_check_poll:,} s ({high})"
        )
    every = span_text(timedelta(seconds=iteration))
    cycles = (
        f"the {logged_cycles:,} cycle{'s' * (logged_cycles != 1)} of the scheduler's log"
        " imported for the window, and elsewhere a cycle at every job submission and end."
        if logged_cycles
        else "a cycle at every job submission and end."
    )
    return (
        f"PBS's recording is modelled with {polls}, scheduler_iteration {every}"
        f" ({sources['scheduler_iteration']}) and {cycles}"
    )


def usage_loss_gain_sentence(*, lost_fraction: float, gainers: int, payers: int) -> str:
    """Why lost usage moves the standings: who gains from it, who pays, and why."""
    if lost_fraction <= 0:
        return "PBS recorded all of the usage: nobody gains from the recording, nobody pays."
    lost = part_percent(lost_fraction)
    if gainers == 0 and payers == 0:
        return (
            f"PBS lost {lost} of the usage, the same part of every entity's: the standings do"
            " not move."
        )
    said = [
        f"PBS lost {lost} of all the usage, but not evenly. A job that ends before a cycle has"
        " read a poll of it loses everything it used (short jobs, which cycles often miss"
        " whole); a long job loses only what it used after the last poll read, its last"
        " minutes."
    ]
    if gainers == 1:
        said.append(
            f"So the one entity that lost more than {lost} of its usage is charged less than its"
            " part of it, and its standing gains"
        )
    elif gainers:
        said.append(
            f"So the {gainers:,} entities that lost more than {lost} of their usage are charged"
            " less than their part of it, and their standing gains"
        )
    if payers == 1:
        said.append(
            "the one that lost less pays for it: its share of what PBS recorded is larger than"
            " its share of the usage, so it looks further over target than it is."
        )
    elif payers:
        said.append(
            f"the {payers:,} that lost less pay for it: their share of what PBS recorded is"
            " larger than their share of the usage, so they look further over target than they"
            " are."
        )
    return " ".join(said[:2]) + ("; " + said[2] if len(said) > 2 else ".")


def _setting_value_text(setting: str, seconds: int) -> str:
    if setting == "scheduler_iteration":
        return span_text(timedelta(seconds=seconds))
    return f"{seconds:,} s"


def usage_loss_whatif_sentence(
    *, setting: str, value: int, now: int, more: float, extra: float, unit: UsageUnit
) -> str:
    """`scheduler_iteration 5 minutes (now 10 minutes) would record 1.5 % more: 2,141,324
    core-seconds (594.8 core-hours).`"""
    said = (
        f"{setting} {_setting_value_text(setting, value)} (now {_setting_value_text(setting, now)})"
    )
    if extra == 0:
        return f"{said} would record the same."
    direction = "more" if extra > 0 else "less"
    return (
        f"{said} would record {part_percent(abs(more))} {direction}:"
        f" {usage_text(abs(extra), unit)}."
    )


def usage_loss_unseen_sentence(*, unseen: int, jobs: int, usage: float, unit: UsageUnit) -> str:
    """How many jobs PBS recorded nothing of, and what they used."""
    if unseen == 0:
        return "No job went unseen: a cycle read a poll of every one while it ran."
    return (
        f"{unseen:,} of the {jobs:,} jobs went unseen, {usage_text(usage, unit)} in all: each"
        " ended before any cycle read a poll of it, so PBS recorded nothing of them."
    )
