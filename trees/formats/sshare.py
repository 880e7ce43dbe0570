"""Slurm `sshare` text: read any of its layouts, print what Slurm 22.05's sshare prints.

Printing follows src/sshare/process.c and src/common/print_fields.c (slurm-fairtree-behaviour.md
§4): rows in association-list order, the Account column indented one space a level, `%f`
doubles that have travelled through packdouble, blanks for NO_VAL, and in the aligned layout
fixed widths with `+` on cut strings and `%e` for numbers too wide. Reading takes `-P`, `-p`,
the aligned layout (widths from the dash line or the header), old headers with spaces and
files without a root row; the hierarchy comes from the leading spaces of Account.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from trees.engine.slurm import (
    INFINITE,
    INFINITE64,
    NO_VAL,
    NO_VAL64,
    USE_PARENT,
    Algorithm,
    SlurmMetrics,
    SlurmTree,
    fs_factor_classic,
)

FLOAT_MULT = 1000000.0
UINT32_MAX = 2**32 - 1

# print_field_t widths (negative: left-aligned) and the type of each column.
WIDTH = {
    "Account": -20,
    "User": 10,
    "RawShares": 10,
    "NormShares": 11,
    "RawUsage": 11,
    "NormUsage": 11,
    "EffectvUsage": 13,
    "FairShare": 10,
    "LevelFS": 10,
    "GrpTRESMins": 30,
    "TRESRunMins": 30,
}
DOUBLES = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")
SHORT = ["Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare"]
LONG_CLASSIC = [*SHORT[:5], "NormUsage", "EffectvUsage", "FairShare", "GrpTRESMins", "TRESRunMins"]
LONG_FAIR_TREE = [*LONG_CLASSIC[:8], "LevelFS", *LONG_CLASSIC[8:]]
DEFAULT_TRES = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")

# Header words as printed by every release: pre-15.08 ones had spaces in them.
_STRINGS = ("Account", "User", "GrpTRESMins", "TRESRunMins")
_BLANK_DOUBLES = {float(NO_VAL64), float(INFINITE64), float(NO_VAL), float(INFINITE)}


def columns_for(algorithm: Algorithm, *, long: bool) -> list[str]:
    """The default column set of `sshare [-l]` (process.c)."""
    if not long:
        return list(SHORT)
    return list(LONG_FAIR_TREE if algorithm == Algorithm.FAIR_TREE else LONG_CLASSIC)


def transported(value: float) -> float:
    """A double after packdouble/unpackdouble: (value × 1e6) / 1e6 in binary64."""
    return (value * FLOAT_MULT) / FLOAT_MULT


@dataclass(frozen=True)
class SshareRow:
    """One row as sshare receives it (assoc_shares_object_t); None prints blank."""

    account: str
    parent: str | None  # the parent account (for a user: its account); None for root
    user: str | None
    raw_shares: int | None  # None for the root (NO_VAL); USE_PARENT prints `parent`
    norm_shares: float
    raw_usage: int
    norm_usage: float
    effectv_usage: float
    fairshare: float | None  # None where sshare prints it blank (Fair Tree accounts)
    level_fs: float | None  # None for `parent` associations
    grp_tres_mins: str = ""
    tres_run_mins: str = ""


def zero_tres(names: Sequence[str]) -> str:
    """TRESRunMins with no job running: every TRES at 0."""
    return ",".join(f"{name}=0" for name in names)


def sshare_row(
    *,
    account: str,
    parent: str | None,
    user: str | None,
    shares: int,
    usage: float,
    norm_shares: float,
    norm_usage: float,
    effectv_usage: float,
    fairshare: float,
    level_fs: float,
    algorithm: Algorithm,
    dampening: int,
    grp_tres_mins: str,
    tres_run_mins: str,
) -> SshareRow:
    """One association as sshare receives it (assoc_mgr_get_shares) from slurmctld's doubles."""
    norm, efctv = transported(norm_shares), transported(effectv_usage)
    shown: float | None
    if algorithm == Algorithm.FAIR_TREE:
        shown = transported(fairshare) if user is not None else None
    else:  # sshare computes it itself from what it received (process.c, PRINT_FSFACTOR)
        shown = fs_factor_classic(efctv, norm, dampening)
    return SshareRow(
        account=account,
        parent=parent,
        user=user,
        raw_shares=None if parent is None else shares,
        norm_shares=norm,
        raw_usage=int(usage),
        norm_usage=transported(norm_usage),
        effectv_usage=efctv,
        fairshare=shown,
        level_fs=None if shares == USE_PARENT else transported(level_fs),
        grp_tres_mins=grp_tres_mins,
        tres_run_mins=tres_run_mins,
    )


def sshare_rows(
    tree: SlurmTree,
    metrics: SlurmMetrics,
    *,
    grp_tres_mins: dict[tuple[str, str | None], str] | None = None,
    tres_run_mins: dict[tuple[str, str | None], str] | None = None,
    tres_names: Sequence[str] = DEFAULT_TRES,
) -> list[SshareRow]:
    """What assoc_mgr_get_shares sends for every association, in association-list order."""
    grp, run, zeros = grp_tres_mins or {}, tres_run_mins or {}, zero_tres(tres_names)
    rows = []
    for node, association in zip(tree.tree.preorder(), tree.records(), strict=True):
        rows.append(
            sshare_row(
                account=association.account,
                parent=association.parent,
                user=association.user,
                shares=association.shares,
                usage=association.usage,
                norm_shares=float(metrics.norm_shares[node]),
                norm_usage=float(metrics.norm_usage[node]),
                effectv_usage=float(metrics.effectv_usage[node]),
                fairshare=float(metrics.fairshare[node]),
                level_fs=float(metrics.level_fs[node]),
                algorithm=metrics.algorithm,
                dampening=metrics.dampening,
                grp_tres_mins=grp.get(tree.key(node), ""),
                tres_run_mins=run.get(tree.key(node), zeros),
            )
        )
    return rows


def _double(value: float | None, width: int, parsable: bool) -> str | None:
    """print_fields_double's text, or None for a blank."""
    if value is None or value in _BLANK_DOUBLES:
        return None
    if parsable:
        return f"{value:f}"
    text = f"{value:{width}f}"
    if len(text) <= width:
        return text
    wide = len(f"{value:{width}.{width}e}")
    narrower = width - (wide - width) if wide > width else width
    return f"{value:{narrower}.{narrower}e}"


def _string(value: str, width: int) -> str:
    """print_fields_str in the aligned layout: cut to the width with a `+`, then padded."""
    size = abs(width)
    if len(value) > size:
        value = value[: size - 1] + "+"
    return f"{value:<{size}}" if width < 0 else f"{value:>{size}}"


def _cell(row: SshareRow, column: str, account_text: str, parsable: bool) -> str | None:
    width = WIDTH[column]
    if column == "Account":
        return account_text
    if column == "User":
        return row.user
    if column == "RawShares":
        if row.raw_shares is None or row.raw_shares in (NO_VAL, INFINITE):
            return None
        return "parent" if row.raw_shares == USE_PARENT else str(row.raw_shares)
    if column == "RawUsage":
        return None if row.raw_usage in (NO_VAL64, INFINITE64) else str(row.raw_usage)
    if column in ("GrpTRESMins", "TRESRunMins"):
        return row.grp_tres_mins if column == "GrpTRESMins" else row.tres_run_mins
    values = {
        "NormShares": row.norm_shares,
        "NormUsage": row.norm_usage,
        "EffectvUsage": row.effectv_usage,
        "FairShare": row.fairshare,
        "LevelFS": row.level_fs,
    }
    return _double(values[column], width, parsable)


def format_sshare(
    rows: Iterable[SshareRow],
    columns: Sequence[str],
    *,
    parsable: str = "",
    header: bool = True,
    users: Sequence[str] | None = None,
    accounts: Sequence[str] | None = None,
) -> str:
    """sshare's output: `parsable` is "" (aligned), "p" (trailing `|`) or "P" (no trailing `|`).

    `users` keeps only those users' rows (sshare without -a: the caller's); `accounts` keeps
    only associations of those accounts (-A). Both compare names case-insensitively, as Slurm.
    """
    want_users = None if users is None else {name.lower() for name in users}
    want_accounts = None if accounts is None else {name.lower() for name in accounts}
    out: list[str] = []

    def line(cells: Sequence[str | None], aligned: Sequence[str]) -> str:
        if not parsable:
            return "".join(text + " " for text in aligned)
        text = "|".join(cell or "" for cell in cells)
        return text + "|" if parsable == "p" else text

    if header:
        names = [_string(name, WIDTH[name]) for name in columns]
        out.append(line(list(columns), names))
        if not parsable:
            out.append("".join("-" * abs(WIDTH[name]) + " " for name in columns))
    spaces: dict[str, str] = {}  # slurmdb_tree_name_get: printed accounts and their indent
    for row in rows:
        if row.user is not None and want_users is not None and row.user.lower() not in want_users:
            continue
        if want_accounts is not None and row.account.lower() not in want_accounts:
            continue
        indent = ""
        if row.parent is not None and row.parent in spaces:
            indent = " " + spaces[row.parent]
        if row.user is None:
            spaces.setdefault(row.account, indent)
        account_text = indent + (row.account if row.user is None else row.parent or "")
        cells = [_cell(row, column, account_text, bool(parsable)) for column in columns]
        aligned = [_aligned(column, cell) for column, cell in zip(columns, cells, strict=True)]
        out.append(line(cells, aligned))
    return "".join(text + "\n" for text in out)


def _aligned(column: str, cell: str | None) -> str:
    """A cell in the aligned layout: strings cut with `+`, numbers never cut."""
    width = WIDTH[column]
    if cell is None:
        return " " * abs(width)
    if column in _STRINGS:
        return _string(cell, width)
    return cell if column in DOUBLES else f"{cell:>{width}}"
