r"""slurm.conf as Slurm 22.05 reads it, for what the priorities need that `scontrol show config`
does not say exactly: PriorityFlags (22.05's scontrol prints NO_NORMAL_ALL for any NO_NORMAL_*
flag, slurm_protocol_defs.c priority_flags_string).

Read as src/common/parse_config.c at slurm-22-05-8-1 reads it: a `#` not escaped as `\#` starts
a comment, a trailing backslash continues the line, `Key=Value` pairs (spaces allowed around
`=`, values quoted with `"` when they hold spaces) with keys matched case-insensitively;
NodeName, PartitionName, FrontendName, NodeSet and DownNodes lines are records whose other
pairs belong to them. An `Include` line names another file, which is not followed here (it is
reported). A key Slurm does not know is reported and the rest read (slurmctld would stop).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The keys of slurm_conf_options[] (src/common/read_config.c at slurm-22-05-8-1).
SLURM_CONF_KEYS = (
    "AccountingStorageTRES",
    "AccountingStorageEnforce",
    "AccountingStorageExternalHost",
    "AccountingStorageHost",
    "AccountingStorageBackupHost",
    "AccountingStorageLoc",
    "AccountingStorageParameters",
    "AccountingStoragePass",
    "AccountingStoragePort",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AccountingStoreFlags",
    "AccountingStoreJobComment",
    "AcctGatherEnergyType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AcctGatherInterconnectType",
    "AcctGatherInfinibandType",
    "AcctGatherFilesystemType",
    "AllowSpecResourcesUsage",
    "AuthAltTypes",
    "AuthAltParameters",
    "AuthInfo",
    "AuthType",
    "BackupAddr",
    "BackupController",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BurstBufferParameters",
    "BurstBufferType",
    "CoreSpecPlugin",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "ControlAddr",
    "ControlMachine",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "CryptoType",
    "DebugFlags",
    "DefCPUPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "ExtSensorsType",
    "ExtSensorsFreq",
    "FairShareDampeningFactor",
    "FastSchedule",
    "FederationParameters",
    "FirstJobId",
    "GetEnvTimeout",
    "GresTypes",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "GpuFreqDef",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "InteractiveStepOptions",
    "InactiveLimit",
    "JobAcctGatherType",
    "JobAcctGatherFrequency",
    "JobAcctGatherParams",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompPass",
    "JobCompPort",
    "JobCompType",
    "JobContainerType",
    "JobCompUser",
    "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KeepAliveTime",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "Licenses",
    "LogTimeFormat",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxNodeCount",
    "MaxJobId",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSParameters",
    "MCSPlugin",
    "MessageTimeout",
    "MinJobAge",
    "MpiDefault",
    "MpiParams",
    "NodeFeaturesPlugins",
    "OverTimeLimit",
    "PluginDir",
    "PlugStackConfig",
    "PowerParameters",
    "PowerPlugin",
    "PreemptMode",
    "PreemptType",
    "PreemptExemptTime",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityDecayHalfLife",
    "PriorityCalcPeriod",
    "PriorityFavorSmall",
    "PriorityMaxAge",
    "PriorityParameters",
    "PriorityUsageResetPeriod",
    "PriorityType",
    "PriorityFlags",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologSlurmctld",
    "PrologEpilogTimeout",
    "PrologFlags",
    "PropagatePrioProcess",
    "PropagateResourceLimitsExcept",
    "PropagateResourceLimits",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SallocDefaultCommand",
    "SbcastParameters",
    "SchedulerAuth",
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmUser",
    "SlurmdUser",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldLogFile",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SlurmctldPort",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug",
    "SlurmctldTimeout",
    "SlurmctldParameters",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SrunEpilog",
    "SrunProlog",
    "SrunPortRange",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskProlog",
    "TaskPlugin",
    "TaskPluginParam",
    "TCPTimeout",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "UsePAM",
    "VSizeFactor",
    "WaitTime",
    "DownNodes",
    "FrontendName",
    "NodeName",
    "NodeSet",
    "PartitionName",
    "SlurmctldHost",
)
_CANONICAL = {key.lower(): key for key in SLURM_CONF_KEYS}
RECORD_KEYS = frozenset({"nodename", "partitionname", "frontendname", "nodeset", "downnodes"})
# parse_config.c keyvalue_pattern: a key, an optional operator, `=`, a quoted or bare value.
_PAIR = re.compile(r'\s*([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(?:"([^"]*)"|(\S+))(?=\s|$)')
_INCLUDE = re.compile(r"\s*include\s+(\S.*?)\s*$", re.IGNORECASE)
_ESCAPE = re.compile(r"\\([#\\])")
# A top-level key at the very start of a line, without the spaces `scontrol show config` puts
# around its `=` (scontrol show partition indents its records' other lines): a slurm.conf.
_TELLING = re.compile(r"([A-Za-z][A-Za-z0-9_.]*)=\S")


@dataclass(frozen=True)
class ConfLine:
    """A line of slurm.conf and what is said of it."""

    line: int
    key: str
    text: str


@dataclass
class SlurmConf:
    """The top-level settings (canonical key -> (line, value)), the records by kind, and what
    was not read: unknown keys, Include lines, keys set twice (the last one holds)."""

    settings: dict[str, tuple[int, str]] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)  # NodeName, PartitionName... counted
    unknown: list[ConfLine] = field(default_factory=list)
    includes: list[ConfLine] = field(default_factory=list)
    repeated: list[ConfLine] = field(default_factory=list)


def looks_like_slurm_conf(text: str) -> bool:
    """Whether the text is a slurm.conf: a known top-level key other than a record's written
    `Key=value` at the start of a line (scontrol show config writes `Key = value`; scontrol
    show partition and show node print records, with their other keys indented or on the
    same line), or an Include line, and no `Configuration data as of` header."""
    if "Configuration data as of" in text:
        return False
    for raw in text.split("\n"):
        line = _strip_comment(raw)
        if _INCLUDE.match(line):
            return True
        match = _TELLING.match(line)
        key = match.group(1).lower() if match else ""
        if key in _CANONICAL and key not in RECORD_KEYS:
            return True
    return False


def _strip_comment(line: str) -> str:
    """_strip_comments: cut at the first `#` not escaped by a backslash."""
    index = 0
    while True:
        index = line.find("#", index)
        if index < 0:
            return line
        if index == 0 or line[index - 1] != "\\":
            return line[:index]
        index += 1


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """_get_next_line: comments cut, lines ending in a backslash joined, escapes undone."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = _strip_comment(raw.removesuffix("\r"))
        if not pending:
            first = number
        stripped = line.rstrip()
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            pending += stripped[:-1]
            continue
        out.append((first, _ESCAPE.sub(r"\1", pending + line)))
        pending = ""
    if pending:
        out.append((first, _ESCAPE.sub(r"\1", pending)))
    return out


def read_slurm_conf(text: str) -> SlurmConf:
    """Every top-level setting with its line; never raises."""
    conf = SlurmConf()
    for number, line in _logical_lines(text):
        if not line.strip():
            continue
        include = _INCLUDE.match(line)
        if include:
            conf.includes.append(ConfLine(number, "Include", include.group(1)))
            continue
        pairs = list(_PAIR.finditer(line))
        if not pairs:
            conf.unknown.append(ConfLine(number, line.strip()[:40], "not Key=Value"))
            continue
        first = pairs[0].group(1).lower()
        if first in RECORD_KEYS:
            name = _CANONICAL[first]
            conf.records[name] = conf.records.get(name, 0) + 1
            continue
        for pair in pairs:
            key, value = (
                pair.group(1),
                pair.group(3) if pair.group(3) is not None else pair.group(4),
            )
            canonical = _CANONICAL.get(key.lower())
            if canonical is None:
                conf.unknown.append(ConfLine(number, key, value))
                continue
            if canonical in conf.settings:
                conf.repeated.append(ConfLine(number, canonical, value))
            conf.settings[canonical] = (number, value)
    return conf
