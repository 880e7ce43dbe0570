"""The priority settings, partitions and QOS of a Slurm cluster, from what its commands print.

Reads, in one file or several pasted one after another:
* `scontrol show config` (`Key = value`, printed `%-23s = %s`, src/api/config_info.c:2381 at
  slurm-22-05-11-1; also its `grep -i prio` excerpts without the header). Only the Priority*
  keys that shape job priority, FairShareDampeningFactor and AccountingStorageEnforce are read;
  every other key is listed in `ignored`.
* `scontrol show partition` (records from `PartitionName=`, `Key=Value` tokens over indented
  lines, or one line with `-o`: src/api/partition_info.c).
* `sacctmgr show qos -p` / `-P` (a `Name|Priority|...` header, then rows).

Times are what secs2time_str and mins2time_str print (`D-HH:MM:SS`, `HH:MM:SS`, `UNLIMITED`)
and the shorter forms time_str2secs takes (src/common/parse_time.c:712-786). Keys are matched
case-insensitively, as slurm.conf's are. Bad values become `problems` with their line number and
never stop the reading; keys not given keep Slurm's defaults, except PriorityType, which
`scontrol show config` always prints: a file without it is taken as priority/multifactor,
the plugin these settings are for (22.05's own default is priority/basic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from trees.engine.multifactor import (
    INFINITE,
    NO_NORMAL,
    PRIORITY_FLAGS,
    USAGE_RESET_PERIODS,
    MultifactorConfig,
    Partition,
    Qos,
    parse_tres_weights,
)
from trees.formats.sched_config import ConfigProblem
from trees.formats.slurm_conf import SlurmConf, looks_like_slurm_conf, read_slurm_conf

UINT16_MAX = 0xFFFF
UINT32_MAX = 0xFFFFFFFF
NONE_FOUND = (
    "holds no `scontrol show config`, `scontrol show partition` or `sacctmgr show qos -p/-P`"
    " output, and is no slurm.conf"
)
_CONFIG_LINE = re.compile(r"\s*([A-Za-z][^\s=]*)\s+=(?:[ \t](.*))?\s*")
_TIME = re.compile(r"(?:(\d{1,9})-)?(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?", re.ASCII)
_COUNT = re.compile(r"(\d{1,20})(?:\.(\d{0,20}))?([KMGTP]?)", re.ASCII | re.IGNORECASE)
_WEIGHT_KEYS = {
    "PriorityWeightAge": "weight_age",
    "PriorityWeightAssoc": "weight_assoc",
    "PriorityWeightFairShare": "weight_fairshare",
    "PriorityWeightJobSize": "weight_jobsize",
    "PriorityWeightPartition": "weight_partition",
    "PriorityWeightQOS": "weight_qos",
}
_TIME_KEYS = {
    "PriorityMaxAge": "max_age",
    "PriorityDecayHalfLife": "decay_half_life",
    "PriorityCalcPeriod": "calc_period",
}
_OTHER_KEYS = (
    "PriorityType",
    "PriorityWeightTRES",
    "PriorityFavorSmall",
    "PriorityFlags",
    "PriorityUsageResetPeriod",
    "FairShareDampeningFactor",
    "AccountingStorageEnforce",
)
_KEYS = {name.lower(): name for name in (*_WEIGHT_KEYS, *_TIME_KEYS, *_OTHER_KEYS)}
_PARTITION_KEYS = {
    name.lower(): name
    for name in (
        "PartitionName",
        "PriorityJobFactor",
        "PriorityTier",
        "TotalCPUs",
        "TotalNodes",
        "MaxTime",
        "TRES",
        "QoS",
        "State",
    )
}
_BOOLEANS = {"yes": True, "y": True, "true": True, "1": True}
_BOOLEANS |= {"no": False, "n": False, "false": False, "0": False}


@dataclass
class SlurmConfigFile:
    """What was read; `found` maps each interpreted config key to its line. A slurm.conf is
    its own kind ("slurm.conf"): its Priority* keys are read into `config` and `found`, the
    rest of it into `conf`."""

    config: MultifactorConfig = field(default_factory=MultifactorConfig)
    partitions: list[Partition] = field(default_factory=list)
    qos: list[Qos] = field(default_factory=list)
    lines: int = 0
    ignored: list[str] = field(default_factory=list)  # config keys read but not interpreted
    problems: list[ConfigProblem] = field(default_factory=list)
    warnings: list[ConfigProblem] = field(default_factory=list)
    found: dict[str, int] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)  # "config", "partition", "qos", "slurm.conf"
    conf: SlurmConf | None = None

    def kind_add(self, name: str) -> None:
        if name not in self.kinds:
            self.kinds.append(name)


@dataclass
class SlurmConfigs:
    """Several files read together, as one import takes them: `scontrol show config` gives the
    settings (the last one given), slurm.conf its PriorityFlags (`conf_flags` when there is no
    `scontrol show config` to put them in); partitions and QOS of every file, by name.
    `notes` say, as `FILE:LINE: KEY: reason`, where the files disagree."""

    parsed: SlurmConfigFile
    conf_flags: frozenset[str] | None = None
    notes: list[str] = field(default_factory=list)


def slurm_seconds(text: str) -> int | None:
    """time_str2secs (parse_time.c:712-752): `[D-]HH:MM:SS` and shorter forms, INFINITE for
    UNLIMITED; None when it is not a time."""
    if text.upper() in ("UNLIMITED", "INFINITE", "-1"):
        return INFINITE
    match = _TIME.fullmatch(text)
    if not match:
        return None
    days, first, second, third = match.groups()
    if days is not None:  # days-[hours[:minutes[:seconds]]]
        return int(days) * 86400 + int(first) * 3600 + int(second or 0) * 60 + int(third or 0)
    if third is not None:  # hours:minutes:seconds
        return int(first) * 3600 + int(second) * 60 + int(third)
    return int(first) * 60 + int(second or 0)  # minutes[:seconds]


def parse_priority_flags(text: str) -> tuple[frozenset[str], list[str]]:
    """PriorityFlags as priority_flags_string prints them, and the tokens not known.

    FAIR_TREE (the flag that turned Fair Tree on before 19.05 made it the default) is no flag;
    NO_NORMAL_ALL stands for the four NO_NORMAL_* flags (common/read_config.c:4637-4642)."""
    flags: set[str] = set()
    unknown = []
    for token in text.split(","):
        name = token.strip().upper()
        if not name or name == "FAIR_TREE":
            continue
        if name == "NO_NORMAL_ALL":
            flags.update(NO_NORMAL)
        elif name in PRIORITY_FLAGS:
            flags.add(name)
        else:
            unknown.append(token.strip())
    return frozenset(flags), unknown


def _uint(text: str, limit: int) -> int | None:
    """A whole number from 0 to `limit`, or None."""
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > 20:
        return None
    return int(text) if int(text) <= limit else None


def _null(value: str) -> bool:
    return value in ("", "(null)")


class _Reader:
    """One pass over the lines; `state` is the kind of record the last line belonged to."""

    def __init__(self) -> None:
        self.result = SlurmConfigFile()
        self.config = MultifactorConfig()
        self.state = ""
        self.partition: Partition | None = None
        self.qos_columns: tuple[int, int, int] | None = None  # name, priority, field count

    def problem(self, line: int, key: str, reason: str) -> None:
        self.result.problems.append(ConfigProblem(line, key, reason))

    def kind(self, name: str) -> None:
        self.result.kind_add(name)

    def read(self, number: int, line: str) -> None:
        body = line.strip()
        if self.state == "partition" and line[:1].isspace() and "=" in body:
            self.partition_tokens(number, body)
            return
        self.end_partition()
        if self.state == "qos" and "|" in body:
            self.qos_row(number, body)
            return
        self.state = ""
        if not body:
            return
        if body.startswith("Configuration data as of"):
            self.kind("config")
        elif body.lower().startswith("partitionname="):
            self.kind("partition")
            self.state, self.partition = "partition", Partition("")
            self.partition_tokens(number, body)
        elif "|" in body and self.qos_header(body):
            self.kind("qos")
            self.state = "qos"
        elif match := _CONFIG_LINE.fullmatch(line):
            self.kind("config")
            self.config_key(number, match.group(1), (match.group(2) or "").strip())

    def config_key(self, number: int, key: str, value: str) -> None:
        name = _KEYS.get(key.lower())
        if name is None:
            self.result.ignored.append(key)
            return
        reason = self.apply(number, name, value)
        if reason:
            self.problem(number, name, reason)
        else:
            self.result.found[name] = number

    def apply(self, number: int, name: str, value: str) -> str | None:
        """Set one interpreted key; the reason it was refused, or None."""
        changes: dict[str, Any] = {}
        if name in _WEIGHT_KEYS:
            weight = _uint(value, UINT32_MAX)
            if weight is None:
                return f"{value!r} is not a weight (a whole number from 0 to {UINT32_MAX})"
            changes[_WEIGHT_KEYS[name]] = weight
        elif name in _TIME_KEYS:
            seconds = 0 if value.upper() == "NONE" else slurm_seconds(value)
            if seconds is not None and seconds > UINT32_MAX:  # Slurm keeps a uint32
                return f"{value!r} is longer than Slurm can hold ({UINT32_MAX} seconds)"
            if seconds is None or (name == "PriorityCalcPeriod" and seconds < 60):
                return f"{value!r} is not a time (D-HH:MM:SS, HH:MM:SS or UNLIMITED)" + (
                    " of a minute or more" if name == "PriorityCalcPeriod" else ""
                )
            changes[_TIME_KEYS[name]] = seconds
        elif name == "PriorityType":
            changes["priority_type"] = value
        elif name == "PriorityWeightTRES":
            if not _null(value):
                try:
                    parse_tres_weights(value)
                except ValueError as error:
                    return str(error)
            changes["weight_tres"] = None if _null(value) else value
        elif name == "PriorityFavorSmall":
            if value.lower() not in _BOOLEANS:
                return f"{value!r} is neither Yes nor No"
            changes["favor_small"] = _BOOLEANS[value.lower()]
        elif name == "PriorityFlags":
            flags, unknown = parse_priority_flags("" if _null(value) else value)
            if "NO_NORMAL_ALL" in value.upper():
                self.result.warnings.append(ConfigProblem(number, name, NO_NORMAL_ALL_WARNING))
            changes["flags"] = flags
            if unknown:
                self.config = replace(self.config, **changes)
                return f"unknown flag(s) {', '.join(unknown)}: the others are kept"
        elif name == "PriorityUsageResetPeriod":
            if value.upper() not in USAGE_RESET_PERIODS:
                return f"{value!r} is not one of {', '.join(USAGE_RESET_PERIODS)}"
            changes["usage_reset_period"] = value.upper()
        elif name == "FairShareDampeningFactor":
            factor = _uint(value, UINT16_MAX)
            if factor is None:
                return f"{value!r} is not a whole number from 0 to {UINT16_MAX}"
            changes["fs_dampening_factor"] = factor
        elif name == "AccountingStorageEnforce":
            tokens = {token.strip().lower() for token in value.split(",")}
            changes["enforce_limits"] = "limits" in tokens
        self.config = replace(self.config, **changes)
        return None

    def partition_tokens(self, number: int, body: str) -> None:
        for token in body.split():
            key, equals, value = token.partition("=")
            name = _PARTITION_KEYS.get(key.lower())
            if not equals or name is None or self.partition is None:
                continue
            self.partition, reason = _partition_value(self.partition, name, value)
            if reason:
                self.problem(number, name, reason)

    def end_partition(self) -> None:
        record, self.partition = self.partition, None
        if record is None or not record.name:
            return  # without a name the problem was recorded where PartitionName was read
        kept = [p for p in self.result.partitions if p.name != record.name]
        self.result.partitions = [*kept, record]

    def qos_header(self, body: str) -> bool:
        names = [name.strip().lower() for name in body.split("|")]
        if "name" not in names or "priority" not in names:
            return False
        count = len(names) - (1 if names[-1] == "" else 0)
        self.qos_columns = (names.index("name"), names.index("priority"), count)
        return True

    def qos_row(self, number: int, body: str) -> None:
        assert self.qos_columns is not None
        name_at, priority_at, count = self.qos_columns
        cells = body.split("|")
        if len(cells) < count:
            self.problem(number, "qos", f"{len(cells)} fields where the header has {count}")
            return
        name, text = cells[name_at].strip(), cells[priority_at].strip()
        priority = 0 if text == "" else _uint(text, UINT32_MAX)
        if not name:
            self.problem(number, "Name", "a QOS without a name")
        elif priority is None:
            self.problem(number, "Priority", f"{text!r} is not a whole number")
        else:
            kept = [q for q in self.result.qos if q.name != name]
            self.result.qos = [*kept, Qos(name, priority)]


NO_NORMAL_ALL_WARNING = (
    "Slurm 22.05 prints NO_NORMAL_ALL when any one NO_NORMAL_* flag is set"
    " (slurm_protocol_defs.c:3376-3382): all four are assumed; give slurm.conf in the same"
    " import for the flags as configured"
)


def _partition_value(record: Partition, name: str, value: str) -> tuple[Partition, str | None]:
    """One token of a partition record: the record with it, and why it was refused or None."""
    changes: dict[str, Any] = {}
    if name == "PartitionName":
        if not value:
            return record, "a partition without a name"
        changes["name"] = value
    elif name in ("PriorityJobFactor", "PriorityTier"):
        number = _uint(value, UINT16_MAX)
        if number is None:
            return record, f"{value!r} is not a whole number from 0 to {UINT16_MAX}"
        changes["priority_job_factor" if name == "PriorityJobFactor" else "priority_tier"] = number
    elif name in ("TotalCPUs", "TotalNodes"):
        number = _uint(value, UINT32_MAX)
        if number is None:
            return record, f"{value!r} is not a whole number"
        changes["total_cpus" if name == "TotalCPUs" else "total_nodes"] = number
    elif name == "MaxTime":
        seconds = slurm_seconds(value)
        if seconds is None:
            return record, f"{value!r} is not a time (D-HH:MM:SS, HH:MM:SS or UNLIMITED)"
        changes["max_time"] = None if seconds == INFINITE else seconds // 60
    elif name == "TRES":
        tres, reason = parse_partition_tres(value)
        if reason:
            return record, reason
        changes["tres"] = tres
    elif name == "QoS":
        changes["qos"] = None if value in ("N/A", "(null)", "") else value
    elif name == "State":
        changes["state"] = value
    return replace(record, **changes), None


def parse_partition_tres(text: str) -> tuple[dict[str, int], str | None]:
    """A partition's TRES= (assoc_mgr_make_tres_str_from_array, assoc_mgr.c:6481-6550): counts,
    mem and bb in MB, with a K/M/G/T/P unit (1024 a step; `2.50G` for halves: convert_num_unit2,
    slurm_protocol_api.c:2996-3053)."""
    tres: dict[str, int] = {}
    if _null(text):
        return tres, None
    for item in text.split(","):
        name, equals, value = item.partition("=")
        if not equals or not name:
            return tres, f"{item!r} is not name=count"
        if value.upper() == "NONE":
            continue
        match = _COUNT.fullmatch(value)
        if not match:
            return tres, f"{value!r} is not a count for {name}"
        whole, fraction, unit = match.groups()
        count = float(f"{whole}.{fraction or 0}")
        if unit:  # convert_num_unit: from MB for mem and bb, from 1 for fs and ic
            base = 2 if name.split("/")[0].lower() in ("mem", "bb") else 0
            count *= 1024.0 ** ("KMGTP".index(unit.upper()) + 1 - base)
        tres[name.lower()] = round(count)
    return tres, None


def parse_slurm_config(text: str) -> SlurmConfigFile:
    """The priority configuration in `text`, of whichever kind it is; never raises."""
    if looks_like_slurm_conf(text):
        return _slurm_conf_read(text)
    reader = _Reader()
    lines = text.split("\n")  # only newlines end lines, as fgets reads them
    if lines[-1] == "":
        lines.pop()
    number = 0
    for number, line in enumerate(lines, start=1):
        reader.read(number, line.removesuffix("\r"))
    reader.end_partition()
    result = reader.result
    result.config, result.lines = reader.config, number
    if not result.kinds:
        result.problems.append(ConfigProblem(0, "", NONE_FOUND))
    return result


def _slurm_conf_read(text: str) -> SlurmConfigFile:
    """A slurm.conf: its Priority* keys interpreted as `scontrol show config`'s are (Slurm's
    defaults for the others), what it does not hold reported."""
    conf = read_slurm_conf(text)
    reader = _Reader()
    reader.kind("slurm.conf")
    for key, (line, value) in conf.settings.items():
        if key.lower() in _KEYS:
            reader.config_key(line, key, value)
    result = reader.result
    result.config, result.conf = reader.config, conf
    result.lines = text.count("\n")
    result.ignored = [key for key in conf.settings if key.lower() not in _KEYS]
    result.warnings = [w for w in result.warnings if w.reason != NO_NORMAL_ALL_WARNING]
    for item in conf.unknown:
        result.warnings.append(ConfigProblem(
            item.line, item.key, "not a slurm.conf key of Slurm 22.05: kept as written, not read"
        ))  # fmt: skip
    for item in conf.includes:
        result.warnings.append(ConfigProblem(
            item.line, "Include", f"{item.text} is not followed: what it sets is not read"
        ))  # fmt: skip
    for item in conf.repeated:
        result.warnings.append(ConfigProblem(
            item.line, item.key, "set again: this later value holds, as in Slurm"
        ))  # fmt: skip
    return result


def _flags_text(flags: frozenset[str]) -> str:
    return ",".join(sorted(flags)) or "none"


def _flags_agree(shown: frozenset[str], configured: frozenset[str]) -> bool:
    """Whether scontrol's flags can be the print of slurm.conf's: 22.05 prints NO_NORMAL_ALL
    (read as all four) for any NO_NORMAL_* flag."""
    if shown == configured:
        return True
    normal = frozenset(NO_NORMAL)
    return shown - normal == configured - normal and normal <= shown and bool(configured & normal)


def slurm_configs_combined(files: list[tuple[str, SlurmConfigFile]]) -> SlurmConfigs:
    """The files of one import taken together, in any order (see SlurmConfigs): slurm.conf
    changes nothing of what `scontrol show config` gives but PriorityFlags, and every other
    Priority* value where the two differ is noted (scontrol's, the running one, is kept)."""
    shown = [(path, f) for path, f in files if "config" in f.kinds]
    confs = [(path, f) for path, f in files if "slurm.conf" in f.kinds]
    merged = SlurmConfigFile()
    if shown:
        merged.config, merged.found = shown[-1][1].config, dict(shown[-1][1].found)
    partitions: dict[str, Partition] = {}
    qos: dict[str, Qos] = {}
    for _, parsed in files:
        for kind in parsed.kinds:
            merged.kind_add(kind)
        partitions.update((p.name, p) for p in parsed.partitions)
        qos.update((q.name, q) for q in parsed.qos)
    merged.partitions, merged.qos = list(partitions.values()), list(qos.values())
    result = SlurmConfigs(merged)
    if not confs:
        return result
    path, conf = confs[-1]
    flags_line = conf.found.get("PriorityFlags")
    if flags_line is None:
        includes = conf.conf.includes if conf.conf is not None else []
        if includes:
            result.notes.append(
                f"{path}:{includes[0].line}: PriorityFlags: not in this file, and its Include"
                " lines are not followed: scontrol show config's are kept"
            )
    elif shown:
        before = merged.config.flags
        if not _flags_agree(before, conf.config.flags):
            result.notes.append(
                f"{path}:{flags_line}: PriorityFlags: slurm.conf says"
                f" {_flags_text(conf.config.flags)}, {shown[-1][0]} says {_flags_text(before)}:"
                " slurm.conf's are taken"
            )
        merged.config = replace(merged.config, flags=conf.config.flags)
    else:
        result.conf_flags = conf.config.flags
    if shown:
        for key, line in conf.found.items():
            if key == "PriorityFlags" or key not in merged.found:
                continue
            attribute = _ATTRIBUTES.get(key)
            if attribute is None:
                continue
            ours, theirs = getattr(conf.config, attribute), getattr(merged.config, attribute)
            if ours != theirs:
                result.notes.append(
                    f"{path}:{line}: {key}: slurm.conf says {ours!r}, {shown[-1][0]} says"
                    f" {theirs!r}: scontrol show config's (what slurmctld runs with) is kept"
                )
    return result


# The MultifactorConfig attribute each compared key sets.
_ATTRIBUTES = {
    **_WEIGHT_KEYS,
    **_TIME_KEYS,
    "PriorityType": "priority_type",
    "PriorityWeightTRES": "tres_weights",  # the weights read, not the text
    "PriorityFavorSmall": "favor_small",
    "PriorityUsageResetPeriod": "usage_reset_period",
    "FairShareDampeningFactor": "fs_dampening_factor",
    "AccountingStorageEnforce": "enforce_limits",
}


def multifactor_setting(config: MultifactorConfig, key: str, value: str) -> MultifactorConfig:
    """`config` with one of the keys `scontrol show config` prints set to `value`, as this
    reader reads it (a what-if's `--set PriorityWeightAge=1000`); ValueError saying why not."""
    name = _KEYS.get(key.lower())
    if name is None:
        raise ValueError(
            f"{key} is not one of the priority settings read ({', '.join(_KEYS.values())})"
        )
    reader = _Reader()
    reader.config = config
    reason = reader.apply(0, name, value.strip())
    if reason:
        raise ValueError(f"{name}: {reason}")
    return reader.config
