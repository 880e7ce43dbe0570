"""The `pbsfs` program: its command line, its steps and its exact output (pbsfs.cpp).

`run_pbsfs` is pure: it takes the resource groups, the usage database and the policy, and
returns what pbsfs would print and exit with, plus the usage database it would write. Where
pbsfs silently accepts a mistake (a non-numeric `-s` value, `-s` on a group), we refuse with a
message and exit 1; on valid input the bytes are the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from trees.engine.pbs import (
    UNKNOWN,
    GroupDef,
    PbsMetrics,
    PbsTree,
    UsageRecord,
    compare,
    compute,
    percent,
)
from trees.engine.tree import ROOT

PROG = "pbsfs"
DEFAULT_SCHEDULER = "default"
USAGE_P = "Usage: pbsfs -[ptdgcs] [-I sched_name]"
USAGE_G = "Usage: pbsfs [-I sched_name] -g <fairshare_entity>"
USAGE_S = "Usage: pbsfs [-I sched_name] -s <fairshare_entity> <usage>"
USAGE_C = "Usage: pbsfs [-I sched_name] -c <entity1> <entity2>"
CREATING = "Creating usage database for fairshare."
NO_BACKUP = "Could not backup usage database.: No such file or directory"

_MODES = {
    "p": "print",
    "t": "tree",
    "g": "get",
    "s": "set",
    "d": "decay",
    "c": "compare",
    "e": "trim",
}
# The operand count each mode checks, and the usage line it prints otherwise (-d, -e check none).
_OPERANDS = {
    "print": (0, USAGE_P),
    "tree": (0, USAGE_P),
    "get": (1, USAGE_G),
    "set": (2, USAGE_S),
    "compare": (2, USAGE_C),
}
_WRITES = frozenset({"set", "decay", "trim"})
# strtod(): optional leading space, sign, then a decimal or hex float, inf or nan; no trailing junk.
_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
    re.IGNORECASE | re.ASCII,  # C's isdigit: ASCII digits only
)


@dataclass(frozen=True)
class PbsfsPolicy:
    """The sched_config values pbsfs uses."""

    fairshare_usage_res: str = "cput"
    decay_factor: float = 0.5
    unknown_shares: int = 0


@dataclass(frozen=True)
class UsageDatabase:
    """sched_priv/usage: whether it exists, its last_decay and its records in file order."""

    exists: bool = False
    last_decay: int = 0
    records: tuple[UsageRecord, ...] = ()


@dataclass(frozen=True)
class PbsfsResult:
    stdout: str
    stderr: str
    status: int
    written: UsageDatabase | None = None  # set when pbsfs writes the usage file


@dataclass
class _Command:
    mode: str = "print"
    scheduler: str = DEFAULT_SCHEDULER
    long_option: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def parse_argv(argv: Sequence[str]) -> _Command:
    """GNU getopt(argc, argv, "sgptdceI:-:"): permuted operands, the last mode flag wins.

    Invalid options are reported and otherwise ignored, as getopt returns '?' and pbsfs's
    switch has no case for it.
    """
    command = _Command()
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            command.operands.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            command.operands.append(arg)
            continue
        pos = 1
        while pos < len(arg):
            opt = arg[pos]
            pos += 1
            if opt in _MODES:
                command.mode = _MODES[opt]
            elif opt in "I-":
                value = arg[pos:]
                if not value:
                    if i >= len(args):
                        command.messages.append(f"{PROG}: option requires an argument -- '{opt}'")
                        break
                    value = args[i]
                    i += 1
                if opt == "I":
                    command.scheduler = value
                else:
                    command.long_option = True
                break
            else:
                command.messages.append(f"{PROG}: invalid option -- '{opt}'")
    return command


def _c_float(spec: str, value: float) -> str:
    """printf of a double as glibc does it; Python agrees except for the sign of NaN."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return re.sub(r"\.\d+|l", "", spec).replace("f", "s") % text
    return spec.replace("l", "") % value


def _c_ljust(text: str, width: int) -> str:
    """%-Ns: C pads by bytes, not characters."""
    return text + " " * max(0, width - len(text.encode()))


@dataclass(frozen=True)
class ListingLine:
    """One line of `pbsfs -p`: what PBS knows of a node."""

    name: str
    resgroup: int
    cresgroup: int
    shares: int
    usage: float
    fairshare_perc: float  # the float32 value


def format_listing(lines: Iterable[ListingLine], usage_res: str) -> str:
    """pbsfs / pbsfs -p, from nodes in print_fairshare() order."""
    out = [f"Fairshare usage units are in: {usage_res}\n"]
    out.extend(
        f"{_c_ljust(line.name, 10)}: Grp: {line.resgroup:<5d}  "
        f"cgrp: {line.cresgroup:<5d}Shares: {line.shares:<6d} "
        f"Usage: {_c_float('%-6.0lf', line.usage)} "
        f"Perc: {_c_float('%6.3f', percent(line.fairshare_perc))}%\n"
        for line in lines
    )
    return "".join(out)


def format_print(pbs: PbsTree, metrics: PbsMetrics, usage_res: str) -> str:
    """pbsfs / pbsfs -p, from the engine."""
    lines = (
        ListingLine(
            pbs.name(node),
            pbs.resgroup(node),
            pbs.cresgroup[node],
            pbs.shares(node),
            pbs.usage(node),
            float(metrics.fairshare_perc[node]),
        )
        for node in pbs.preorder()
    )
    return format_listing(lines, usage_res)


def format_tree(pbs: PbsTree) -> str:
    """pbsfs -t: `%*s` of one space, so the indent is max(1, 5 * depth)."""
    depth = pbs.tree.depth
    return "".join(
        f"{' ' * max(1, 5 * depth[node])}{pbs.name(node)}({pbs.cresgroup[node]})\n"
        for node in pbs.preorder()
    )


def format_entity(pbs: PbsTree, metrics: PbsMetrics, node: int, usage_res: str) -> str:
    """pbsfs -g NAME: the entity, then each node on its path with usage / perc."""
    lines = [
        f"fairshare entity: {pbs.name(node)}\n",
        f"Resgroup\t\t: {pbs.resgroup(node)}\n",
        f"cresgroup\t\t: {pbs.cresgroup[node]}\n",
        f"Shares\t\t\t: {pbs.shares(node)}\n",
        f"Percentage\t\t: {_c_float('%f', metrics.percent(node))}%\n",
        f"fairshare_tree_usage\t: {_c_float('%f', float(metrics.fairshare_tree_usage[node]))}\n",
        f"usage\t\t\t: {_c_float('%.0lf', pbs.usage(node))} ({usage_res})\n",
        f"usage/perc\t\t: {_c_float('%.0lf', metrics.usage_perc(node))}\n",
        "Path from root: \n",
    ]
    for step in pbs.gpath(node):
        perc = float(metrics.fairshare_perc[step])
        lines.append(
            f"{_c_ljust(pbs.name(step), 10)}: {pbs.cresgroup[step]:5d} "
            f"{_c_float('%10.0f', pbs.usage(step))} / {_c_float('%5.3f', perc)} = "
            f"{_c_float('%.0f', metrics.usage_perc(step))}\n"
        )
    return "".join(lines)


def format_compare(pbs: PbsTree, metrics: PbsMetrics, a: int, b: int) -> str:
    """pbsfs -c A B: the more deserving name, or `A == B`."""
    result = compare(pbs, metrics, a, b)
    if result == 0:
        return f"{pbs.name(a)} == {pbs.name(b)}\n"
    return f"{pbs.name(a if result < 0 else b)}\n"


def _strtod(text: str) -> float:
    """strtod() of a string `_STRTOD` matches whole (pbsfs -s checks `*endp == '\\0'`)."""
    body = text.lstrip(" \t\n\v\f\r")
    if body.lstrip("+-")[:2].lower() == "0x":
        sign = -1.0 if body.startswith("-") else 1.0
        return sign * float.fromhex(body.lstrip("+-"))
    return float(re.sub(r"\(.*\)$", "", body))


def run_pbsfs(
    argv: Sequence[str],
    *,
    groups: Iterable[GroupDef],
    database: UsageDatabase,
    policy: PbsfsPolicy,
    now: int,
    resource_group_messages: Sequence[str] = (),
) -> PbsfsResult:
    """pbsfs main(): options, the tree, the usage, the action, and the write for -s/-d/-e."""
    command = parse_argv(argv)
    err = [f"{m}\n" for m in command.messages]

    def done(status: int, out: str = "", written: UsageDatabase | None = None) -> PbsfsResult:
        return PbsfsResult(stdout=out, stderr="".join(err), status=status, written=written)

    if command.long_option:
        err.append("Usage: pbsfs --version\n")
        return done(1)
    if command.mode in _OPERANDS:
        count, usage_line = _OPERANDS[command.mode]
        if len(command.operands) != count:
            err.append(usage_line + "\n")
            return done(1)
    if command.scheduler != DEFAULT_SCHEDULER:
        err.append(f"Scheduler {command.scheduler} does not exist\n")
        return done(1)

    err.extend(f"{m}\n" for m in resource_group_messages)
    if not database.exists:
        err.append(CREATING + "\n")
    trim = command.mode == "trim"
    pbs = PbsTree.build(
        groups,
        database.records,
        unknown_shares=policy.unknown_shares,
        last_decay=now if trim else database.last_decay,
        trim=trim,
    )
    metrics = compute(pbs)

    out = ""
    if command.mode == "tree":
        out = format_tree(pbs)
    elif command.mode == "print":
        out = format_print(pbs, metrics, policy.fairshare_usage_res)
    elif command.mode == "decay":
        pbs.decay(policy.decay_factor)
        pbs.last_decay = now
    elif command.mode in ("get", "set", "compare"):
        names = command.operands[:2] if command.mode == "compare" else command.operands[:1]
        nodes = []
        for name in names:
            node = pbs.find(name)
            if node is None:
                err.append(f"Fairshare Entity {name} does not exist.\n")
                return done(1)
            nodes.append(node)
        if command.mode == "get":
            out = format_entity(pbs, metrics, nodes[0], policy.fairshare_usage_res)
        elif command.mode == "compare":
            out = format_compare(pbs, metrics, nodes[0], nodes[1])
        else:
            refusal = _refuse_set(pbs, nodes[0], command.operands[1])
            if refusal:
                err.append(f"{PROG}: {refusal}\n")
                return done(1)
            pbs.set_usage(nodes[0], _strtod(command.operands[1]))

    if command.mode not in _WRITES:
        return done(0, out)
    if not database.exists:
        err.append(NO_BACKUP + "\n")
    written = UsageDatabase(exists=True, last_decay=pbs.last_decay, records=tuple(pbs.records()))
    return done(0, out, written)


def _refuse_set(pbs: PbsTree, node: int, text: str) -> str | None:
    """The -s mistakes pbsfs swallows silently; we name them instead."""
    if not _STRTOD.fullmatch(text):
        not_a_number = f"usage value '{text}' for {pbs.name(node)} is not a number"
        return usage_set_refused(pbs, node, 0.0) or not_a_number
    return usage_set_refused(pbs, node, _strtod(text), text)


def usage_set_refused(pbs: PbsTree, node: int, value: float, text: str = "") -> str | None:
    """Why pbsfs -s must not set this usage on the node: a group, or not a usage at all."""
    name = pbs.name(node)
    if not pbs.is_leaf(node) or node == ROOT or name == UNKNOWN:
        return (
            f"{name} is a group: only fairshare entities (leaves) carry usage, "
            "a group's usage is the sum of its entities'"
        )
    if math.isnan(value) or math.isinf(value) or value < 0:
        return f"usage value '{text or value}' for {name} must be a finite number >= 0"
    return None
