"""Slurm's priority/multifactor job priority, as Slurm 22.05 computes it.

Follows slurm-multifactor-priority.md §A-§B and, where 22.05 differs (§F), the tag
`slurm-22-05-11-1`: `PM:line` is src/plugins/priority/multifactor/priority_multifactor.c there,
other citations are files under src/ at the same tag (slurm/slurm.h for NICE_OFFSET). Factors
are doubles; Python's float is the same IEEE binary64 and every operation is written in Slurm's
order, so sums round as Slurm's do.

Choices, stated once:
* Job size divides by `node_record_count` (the size of 22.05's node table, every node of
  slurm.conf) and has no `N > n` guard: the caller passes that count as `active_nodes`. In the
  favour-small formula 22.05 subtracts in unsigned 32-bit arithmetic, so `min_nodes` above the
  node count (or `cpu_cnt` above `cluster_cpus`) wraps to a huge value that the clamp turns into
  1.0 (later releases give 0). A zero node or CPU count divides by zero as C does (±inf, NaN).
* One partition and one QOS per job; a job submitted to several partitions gets one call per
  partition (PM:603-678 recomputes only the partition and TRES terms, as a second call does).
* `fs_factor` comes from the caller (our Fair Tree or classic numbers); Slurm's own check that
  slurmdbd is running (PM init) is not modelled.
* Site and nice are kept signed (Slurm stores both plus NICE_OFFSET, 2^31).
* TRES are ordered as slurmctld's TRES array: the eight built-in TRES by id, then the others in
  the order PriorityWeightTRES names them (the controller's order past the built-ins is its
  AccountingStorageTRES order, which these inputs do not hold).
* Past the 32-bit cap C's double-to-integer conversion of NaN, inf or values of 2^64 and more is
  undefined; here they all give the cap, 4294967295.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

NICE_OFFSET = 0x80000000  # slurm/slurm.h:339
UINT32_MAX = 0xFFFFFFFF
INFINITE = 0xFFFFFFFF  # a time limit of UNLIMITED
DEFAULT_MAX_AGE = 604800  # common/read_config.h:148 (DEFAULT_PRIORITY_DECAY serves both)
DEFAULT_DECAY_HALF_LIFE = 604800
DEFAULT_CALC_PERIOD = 300  # common/read_config.h:149
DEFAULT_DAMPENING = 1  # common/read_config.c:4064-4066
USAGE_RESET_PERIODS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")
BUILTIN_TRES = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")

NO_NORMAL = ("NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES")
# PriorityFlags 22.05 knows (common/read_config.c:4616-4653), and 25.05's MAX_TRES_GRES (no
# factor uses either MAX_TRES flag: they shape billing).
PRIORITY_FLAGS = frozenset(
    {
        "ACCRUE_ALWAYS",
        "SMALL_RELATIVE_TO_TIME",
        "CALCULATE_RUNNING",
        "DEPTH_OBLIVIOUS",
        "NO_FAIR_TREE",
        "INCR_ONLY",
        "MAX_TRES",
        "MAX_TRES_GRES",
        *NO_NORMAL,
    }
)

# strtod's decimal forms (hexadecimal ones are not taken).
_STRTOD = re.compile(
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE
)
_UNITS = "KMGTP"  # get_unit_type (slurm_protocol_api.c:3100-3118): index 1..5


def _div(numerator: float, denominator: float) -> float:
    """C's double division: x/0 is ±inf and 0/0 NaN, where Python raises."""
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def _tres_base_unit(tres_type: str) -> int:
    """slurmdb_get_tres_base_unit (slurmdb_defs.c:4291-4300): mem and bb count MB, others 1."""
    return 2 if tres_type.lower() in ("mem", "bb") else 0


def _tres_weight_item(item: str) -> tuple[str, float]:
    """_tres_weight_item (slurm_protocol_api.c:297-348): `TYPE[/NAME]=value[unit]`."""
    stripped = item.lstrip("=")
    tres, _, value = stripped.partition("=")
    if not tres or not value:
        raise ValueError(f'"{item}" is an invalid TRES weight entry')
    tres_type, slash, name = tres.partition("/")
    match = _STRTOD.match(value)
    number, unit = (float(match.group()), value[match.end() :]) if match else (0.0, value)
    if match and math.isinf(number) and "inf" not in match.group().lower():
        raise ValueError(f"Unable to convert _tres_weight_item value to double in {value}")
    if unit:
        if unit[0].upper() not in _UNITS:
            raise ValueError(f"Invalid unit type '{unit[0]}'. Possible options are '{_UNITS}'")
        steps = _UNITS.index(unit[0].upper()) + 1 - _tres_base_unit(tres_type)
        if steps > 0:  # get_convert_unit_val: 1024 a step up from the base unit
            number /= 1024.0**steps
    key = f"{tres_type}/{name}" if slash else tres_type
    return key.lower(), number


def parse_tres_weights(text: str | None) -> dict[str, float]:
    """PriorityWeightTRES as slurm_get_tres_weight_array reads it (slurm_protocol_api.c:357-386).

    Keys are lower-case TRES names (`cpu`, `gres/gpu`: Slurm matches them case-insensitively);
    a later entry for the same TRES wins. Raises ValueError with Slurm's message for a bad item
    (slurmctld would stop: the weights are read with `fail`)."""
    weights: dict[str, float] = {}
    for item in (text or "").split(","):
        if item:
            key, weight = _tres_weight_item(item)
            weights[key] = weight
    return tres_order(weights)


def tres_order(weights: Mapping[str, float]) -> dict[str, float]:
    """The TRES in slurmctld's array order: built-in TRES by id, then the rest as given."""

    def rank(item: tuple[int, str]) -> tuple[int, int]:
        position, name = item
        if name in BUILTIN_TRES:
            return (0, BUILTIN_TRES.index(name))
        return (1, position)

    names = sorted(enumerate(weights), key=rank)
    return {name: weights[name] for _, name in names}


@dataclass(frozen=True)
class MultifactorConfig:
    """The Priority* settings of slurm.conf; times in seconds, defaults as Slurm's."""

    priority_type: str = "priority/multifactor"
    weight_age: int = 0
    weight_assoc: int = 0
    weight_fairshare: int = 0
    weight_jobsize: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    weight_tres: str | None = None  # PriorityWeightTRES as written (sprio -w prints it)
    max_age: int = DEFAULT_MAX_AGE
    favor_small: bool = False
    flags: frozenset[str] = frozenset()
    decay_half_life: int = DEFAULT_DECAY_HALF_LIFE
    calc_period: int = DEFAULT_CALC_PERIOD
    usage_reset_period: str = "NONE"
    fs_dampening_factor: int = DEFAULT_DAMPENING
    enforce_limits: bool = False  # AccountingStorageEnforce holds `limits`
    tres_weights: dict[str, float] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        flags = set(self.flags)
        if "NO_NORMAL_ALL" in flags:  # common/read_config.c:4637-4642
            flags.discard("NO_NORMAL_ALL")
            flags.update(NO_NORMAL)
        object.__setattr__(self, "flags", frozenset(flags))
        object.__setattr__(self, "tres_weights", parse_tres_weights(self.weight_tres))

    @property
    def fair_tree(self) -> bool:
        """Fair Tree unless NO_FAIR_TREE or DEPTH_OBLIVIOUS (common/read_config.c:4616-4629)."""
        return not self.flags & {"NO_FAIR_TREE", "DEPTH_OBLIVIOUS"}


@dataclass(frozen=True)
class Partition:
    """A partition as `scontrol show partition` shows it; `max_time` in minutes, None: UNLIMITED."""

    name: str
    priority_job_factor: int = 1
    priority_tier: int = 1
    total_cpus: int = 0
    total_nodes: int = 0
    tres: Mapping[str, int] = field(default_factory=dict)  # mem in MB
    max_time: int | None = None
    qos: str | None = None
    state: str = "UP"


@dataclass(frozen=True)
class Qos:
    name: str
    priority: int = 0


@dataclass(frozen=True)
class PriorityJob:
    """What the factors read of a pending job; times are epoch seconds, `time_limit` minutes.

    `tres` holds each TRES count (allocated if allocated, else requested; mem in MB);
    `time_limit` None is NO_VAL (the partition's MaxTime is used); `accrue_time` 0 means the
    job accrues no age; `direct_priority` is a priority set with `scontrol update`."""

    job_id: int
    user: str
    account: str
    partition: str
    qos: str
    min_nodes: int = 1
    cpu_cnt: int = 0
    time_limit: int | None = None
    accrue_time: int = 0
    submit_time: int = 0
    nice: int = 0
    site_factor: int = 0
    tres: Mapping[str, int] = field(default_factory=dict)
    fs_factor: float = 0.0
    assoc_priority_norm: float = 0.0
    assoc_priority: int = 0  # the raw association priority, for NO_NORMAL_ASSOC
    direct_priority: int | None = None
    reported_priority: int | None = None  # what slurmctld said (squeue), in `partition`


@dataclass(frozen=True)
class Factors:
    """A job's factors as slurmctld keeps them after _get_priority_internal: each one weighted.

    `tres` maps every weighted TRES name to its weighted factor, in slurmctld's TRES order.
    `site` and `nice` are signed (Slurm stores them plus NICE_OFFSET) and enter unweighted.
    A job with a directly set priority has every factor 0 and `direct_priority` set."""

    age: float = 0.0
    assoc: float = 0.0
    fairshare: float = 0.0
    jobsize: float = 0.0
    partition: float = 0.0
    qos: float = 0.0
    tres: Mapping[str, float] = field(default_factory=dict)
    site: int = 0
    nice: int = 0
    direct_priority: int | None = None


def age_factor(job: PriorityJob, config: MultifactorConfig, now: int) -> float:
    """Unweighted age: wait since accrue_time over PriorityMaxAge, at most 1.0 (PM:2068-2083)."""
    if not config.weight_age or not job.accrue_time:
        return 0.0
    diff = (now - job.accrue_time) & UINT32_MAX if now > job.accrue_time else 0  # uint32 diff
    return diff / config.max_age if diff < config.max_age else 1.0


def jobsize_factor(
    job: PriorityJob,
    config: MultifactorConfig,
    partition: Partition | None,
    *,
    active_nodes: int,
    cluster_cpus: int,
) -> float:
    """Unweighted job size, clamped to [0, 1], with 22.05's node_record_count (PM:2091-2154)."""
    if not config.weight_jobsize:
        return 0.0
    nodes, cpus, n, c = float(active_nodes), float(cluster_cpus), job.min_nodes, job.cpu_cnt
    if "SMALL_RELATIVE_TO_TIME" in config.flags:
        js = _div(n * cpus, nodes)
        if c > js:
            js = float(c)
        if job.time_limit is not None:
            limit = job.time_limit
        elif partition is not None:
            limit = INFINITE if partition.max_time is None else partition.max_time
        else:
            limit = 1
        js = _div(_div(js, limit), cpus)
        if config.favor_small:
            js = 1.0 - js
    elif config.favor_small:  # unsigned 32-bit differences: no N > n guard in 22.05
        js = _div((active_nodes - n) & UINT32_MAX, nodes)
        if c:
            js += _div((cluster_cpus - c) & UINT32_MAX, cpus)
            js /= 2
    else:
        js = _div(n, nodes)
        if c:
            js += _div(c, cpus)
            js /= 2
    if js < 0.0:
        return 0.0
    return 1.0 if js > 1.0 else js  # NaN passes the clamp, as in C


def partition_factor(
    config: MultifactorConfig, partition: Partition | None, max_partition_factor: int
) -> float:
    """Unweighted partition factor: PriorityJobFactor over the largest one, at least 1
    (PM:2156-2162; slurmctld/read_config.c:900-934; slurmctld/slurmctld.h:429)."""
    if partition is None or not partition.priority_job_factor or not config.weight_partition:
        return 0.0
    if "NO_NORMAL_PART" in config.flags:
        return float(partition.priority_job_factor)
    return partition.priority_job_factor / max(1, max_partition_factor)


def qos_factor(config: MultifactorConfig, qos: Qos | None, max_qos_priority: int) -> float:
    """Unweighted QOS factor: priority over the highest QOS priority (PM:2173-2178;
    assoc_mgr.c:990-999, left 0 while that highest priority is 0)."""
    if qos is None or not qos.priority or not config.weight_qos:
        return 0.0
    if "NO_NORMAL_QOS" in config.flags:
        return float(qos.priority)
    return qos.priority / max_qos_priority if max_qos_priority else 0.0


def assoc_factor(job: PriorityJob, config: MultifactorConfig) -> float:
    """Unweighted association factor: priority_norm, or the raw priority (PM:2167-2171)."""
    if not config.weight_assoc:
        return 0.0
    if "NO_NORMAL_ASSOC" in config.flags:
        return float(job.assoc_priority)
    return job.assoc_priority_norm


def tres_factors(
    job: PriorityJob, config: MultifactorConfig, partition: Partition | None
) -> dict[str, float]:
    """Weighted TRES factors: count over the partition's count, times its weight, unclamped
    (_get_tres_factors PM:472-498, _get_tres_prio_weighted PM:500-516)."""
    counts = {name.lower(): value for name, value in job.tres.items()}
    part = {name.lower(): value for name, value in (partition.tres if partition else {}).items()}
    weighted = {}
    for name, weight in config.tres_weights.items():
        value = counts.get(name, 0)
        factor = 0.0
        if "NO_NORMAL_TRES" in config.flags:
            factor = float(value)
        elif value and part.get(name):
            factor = value / float(part[name])
        weighted[name] = factor * weight
    return weighted


def job_factors(
    job: PriorityJob,
    config: MultifactorConfig,
    partition: Partition | None,
    qos: Qos | None,
    *,
    now: int,
    active_nodes: int,
    cluster_cpus: int,
    max_partition_factor: int,
    max_qos_priority: int,
) -> Factors:
    """set_priority_factors then the weighting of _get_priority_internal (PM:2052-2204,
    PM:566-576); a directly set priority zeroes them all (PM:528-536)."""
    if job.direct_priority is not None and job.direct_priority > 0:
        return Factors(direct_priority=job.direct_priority)
    js = jobsize_factor(
        job, config, partition, active_nodes=active_nodes, cluster_cpus=cluster_cpus
    )
    fairshare = job.fs_factor if config.weight_fairshare else 0.0
    return Factors(
        age=age_factor(job, config, now) * float(config.weight_age),
        assoc=assoc_factor(job, config) * float(config.weight_assoc),
        fairshare=fairshare * float(config.weight_fairshare),
        jobsize=js * float(config.weight_jobsize),
        partition=partition_factor(config, partition, max_partition_factor)
        * float(config.weight_partition),
        qos=qos_factor(config, qos, max_qos_priority) * float(config.weight_qos),
        tres=tres_factors(job, config, partition),
        site=job.site_factor,
        nice=job.nice,
    )


def priority_reachable(
    job: PriorityJob,
    config: MultifactorConfig,
    partition: Partition | None,
    qos: Qos | None,
    *,
    active_nodes: int,
    cluster_cpus: int,
    max_partition_factor: int,
    max_qos_priority: int,
    now: int | None = None,
) -> bool:
    """Whether slurmctld can have computed the job's reported priority (in `partition`, the
    one it holds) from these factors at some moment: age, the one term that moves, from 0 at
    its accrue time to its weight. With INCR_ONLY a higher one may be kept from before
    (PM:2101-2104). A priority it cannot have computed was set otherwise: `scontrol update
    priority=` or `scontrol top` (direct_set_prio), or a site factor, which squeue does not
    show either. `now`, the moment asked about, is tried first (the usual answer)."""
    if job.reported_priority is None or job.direct_priority is not None:
        return True

    def at(moment: int) -> int:
        return job_priority(
            job_factors(
                job, config, partition, qos, now=moment, active_nodes=active_nodes,
                cluster_cpus=cluster_cpus, max_partition_factor=max_partition_factor,
                max_qos_priority=max_qos_priority,
            )
        )  # fmt: skip

    if now is not None and at(now) == job.reported_priority:
        return True
    low, high = at(job.accrue_time), at(job.accrue_time + config.max_age)
    if "INCR_ONLY" in config.flags:
        return job.reported_priority >= low
    return low <= job.reported_priority <= high


def _to_uint32(priority: float) -> int:
    """Truncation toward zero, capped at 2^32 - 1 (PM:595-601, PM:738)."""
    if math.isnan(priority) or priority >= 2.0**64:
        return UINT32_MAX
    return min(int(priority), UINT32_MAX)


def job_priority(factors: Factors) -> int:
    """_get_priority_internal's sum, floor 1, 32-bit cap and truncation (PM:579-601, PM:738)."""
    if factors.direct_priority is not None and factors.direct_priority > 0:
        return factors.direct_priority
    tres = 0.0
    for value in factors.tres.values():
        tres += value
    priority = (
        factors.age
        + factors.assoc
        + factors.fairshare
        + factors.jobsize
        + factors.partition
        + factors.qos
        + tres
        + float(factors.site)
        - float(factors.nice)
    )
    if priority < 1:  # priority 0 is reserved for held jobs
        priority = 1.0
    return _to_uint32(priority)


def sprio_priority_value(factors: Factors) -> float:
    """sprio's own sum (get_priority_from_factors, src/sprio/print.c:81-107): non-zero TRES
    terms last, floor 1, no cap; a directly set priority is returned as it is."""
    if factors.direct_priority is not None and factors.direct_priority > 0:
        return float(factors.direct_priority)
    priority = (
        factors.age
        + factors.assoc
        + factors.fairshare
        + factors.jobsize
        + factors.partition
        + factors.qos
        + float(factors.site)
        - float(factors.nice)
    )
    for value in factors.tres.values():
        if value:
            priority += value
    return 1.0 if priority < 1 else priority


def sprio_priority(factors: Factors) -> int:
    """sprio's PRIORITY column: `%lld` of the (long long) sum (src/sprio/print.c:352-367);
    past what a long long holds x86-64 gives LLONG_MIN (C leaves it undefined)."""
    value = sprio_priority_value(factors)
    if not -(2.0**63) <= value < 2.0**63:  # also NaN
        return -(2**63)
    return int(value)


def partition_factor_max(partitions: Iterable[Partition]) -> int:
    """The largest PriorityJobFactor, at least 1 (slurmctld/read_config.c:900-934)."""
    return max([1, *(p.priority_job_factor for p in partitions)])


def qos_priority_max(qos_list: Iterable[Qos]) -> int:
    """The highest QOS priority (assoc_mgr.c:1168-1169)."""
    return max((q.priority for q in qos_list), default=0)
