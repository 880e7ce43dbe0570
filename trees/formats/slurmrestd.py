"""slurmrestd's answer to `GET /slurm/v0.0.40/shares`, built from our sshare rows.

Shape: Slurm's src/plugins/data_parser/v0.0.40/parsers.c (23.11 to 25.05), whose parser arrays
SHARES_RESP_MSG, ASSOC_SHARES_OBJ_WRAP and OPENAPI_META and *_NO_VAL dumpers define the JSON.

Values are what src/common/assoc_mgr.c (assoc_mgr_get_shares) puts in each association's
assoc_shares_object_t, as slurmrestd receives it over RPC (the rows' doubles have already been
through packdouble). Where slurmctld holds something the rows do not carry, the nearest honest
value is used and said so below. Infinity and NaN are written as slurmrestd 25.05 writes them
(serializer/json, "Never dump Infinity or NaN"): as the number (double) INFINITE64.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trees.engine.slurm import INFINITE, INFINITE64, NO_VAL, NO_VAL64, Algorithm
from trees.formats.sshare import SshareRow

Json = dict[str, Any]

PROGRAM = "fairshare-dashboard"
DATA_PARSER = "data_parser/v0.0.40"
# slurmctld never fills shares_response_msg_t.tot_shares (proc_req.c memsets the reply to 0).
TOTAL_SHARES = 0
# What serializer/json writes for a plain double that is ±inf or NaN (25.05 and later).
NOT_A_FINITE_NUMBER = float(INFINITE64)
_UINT32_MASK = 0xFFFFFFFF
_CVTT_LIMIT = 2.0**63


def c_uint32(value: float) -> int:
    """`(uint32_t) value` as gcc compiles it on x86-64: a 64-bit truncation, low 32 bits kept.

    Out of the int64 range (and ±inf, NaN) the truncation yields 0x8000000000000000, so 0.
    """
    if not math.isfinite(value) or abs(value) >= _CVTT_LIMIT:
        return 0
    return int(value) & _UINT32_MASK


def uint32_no_val(value: int) -> Json:
    """A UINT32_NO_VAL struct: NO_VAL is unset, INFINITE is infinite."""
    if value == INFINITE:
        return {"set": False, "infinite": True, "number": 0}
    if value == NO_VAL:
        return {"set": False, "infinite": False, "number": 0}
    return {"set": True, "infinite": False, "number": value}


def uint64_no_val(value: int) -> Json:
    """A UINT64_NO_VAL struct: NO_VAL64 is unset, INFINITE64 is infinite."""
    if value == INFINITE64:
        return {"set": False, "infinite": True, "number": 0}
    if value == NO_VAL64:
        return {"set": False, "infinite": False, "number": 0}
    return {"set": True, "infinite": False, "number": value}


def float64_no_val(value: float) -> Json:
    """A FLOAT64_NO_VAL struct; the dumper compares `(uint32_t) value` with INFINITE and NO_VAL."""
    flag = c_uint32(value)
    if flag == INFINITE or math.isinf(value):
        return {"set": False, "infinite": True, "number": 0.0}
    if flag == NO_VAL or math.isnan(value):
        return {"set": False, "infinite": False, "number": 0.0}
    return {"set": True, "infinite": False, "number": value}


def float64(value: float) -> float:
    """A plain FLOAT64 as JSON can hold it: no Infinity or NaN token."""
    return value if math.isfinite(value) else NOT_A_FINITE_NUMBER


def uint64(value: int) -> int | None:
    """A plain UINT64: the dumper writes null for NO_VAL64 and INFINITE64."""
    return None if value in (NO_VAL64, INFINITE64) else value


def tres_counts(text: str, tres_names: Sequence[str], absent: int) -> list[int]:
    """The per-TRES array behind an sshare TRES text such as `cpu=0,mem=0,...`.

    sshare leaves out only INFINITE64 entries, so a TRES missing from the text is `absent`.
    A text cut by the aligned layout (ending in `+`) says nothing of the TRES after the cut:
    those are NO_VAL64, unknown.
    """
    given: dict[str, int] = {}
    for item in text.split(","):
        name, sep, count = item.partition("=")
        if sep and count.isascii() and count.isdigit():
            given[name] = int(count)
    missing = NO_VAL64 if text.endswith("+") else absent
    return [given.get(name, missing) for name in tres_names]


def uint64_tres(tres_names: Sequence[str], counts: Sequence[int]) -> list[Json]:
    """A SHARES_UINT64_TRES list, one entry per TRES of the cluster, in its order."""
    return [
        {"name": name, "value": uint64_no_val(count)}
        for name, count in zip(tres_names, counts, strict=True)
    ]


def share_tres(row: SshareRow, tres_names: Sequence[str]) -> Json:
    """tres.run_seconds, tres.group_minutes and tres.usage of one association."""
    minutes = tres_counts(row.tres_run_mins, tres_names, NO_VAL64)
    # sshare printed grp_used_tres_run_secs / 60: the seconds below a minute are gone.
    seconds = [count if count in (NO_VAL64, INFINITE64) else count * 60 for count in minutes]
    # grp_tres_mins_ctld starts at INFINITE64 for every TRES without a limit (assoc_mgr.c).
    limits = tres_counts(row.grp_tres_mins, tres_names, INFINITE64)
    return {
        "run_seconds": uint64_tres(tres_names, seconds),
        "group_minutes": uint64_tres(tres_names, limits),
        # usage_tres_raw is not in an sshare row; null is what the FLOAT128 dumper writes for
        # a value it does not have (NO_VAL).
        "usage": [{"name": name, "value": None} for name in tres_names],
    }


def fairshare(row: SshareRow, algorithm: Algorithm) -> Json:
    """fairshare.factor and fairshare.level as slurmctld holds them (fs_factor, level_fs)."""
    if algorithm.classic:
        # Only Fair Tree sets them: classic leaves both at slurmdb_create_assoc_usage's 0, and
        # sshare computes its FairShare column itself.
        return {"factor": 0.0, "level": 0.0}
    factor = row.fairshare if row.user is not None and row.fairshare is not None else 0.0
    if row.level_fs is not None:
        level = row.level_fs
    else:  # FairShare=parent: a user ranks first (INFINITY), an account has no Level FS (NO_VAL)
        level = math.inf if row.user is not None else float(NO_VAL)
    return {"factor": float64(factor), "level": float64(level)}


def association_share(
    row: SshareRow, *, assoc_id: int, cluster: str, tres_names: Sequence[str], algorithm: Algorithm
) -> Json:
    """One assoc_shares_object, keys in the parser array's order."""
    is_user = row.user is not None
    return {
        "id": assoc_id,
        "cluster": cluster,
        "name": row.user if row.user is not None else row.account,
        "parent": row.parent or "",
        "partition": "",  # partitions are not modelled; slurmctld sends NULL, dumped as ""
        "shares_normalized": float64_no_val(row.norm_shares),
        # The root association's RawShares is sent as NO_VAL; FairShare=parent as itself.
        "shares": uint32_no_val(NO_VAL if row.raw_shares is None else row.raw_shares),
        "tres": share_tres(row, tres_names),
        "effective_usage": float64(row.effectv_usage),
        "usage_normalized": float64_no_val(row.norm_usage),
        "usage": uint64(row.raw_usage),
        "fairshare": fairshare(row, algorithm),
        "type": ["USER"] if is_user else ["ASSOCIATION"],
    }


def meta(*, cluster: str, client_source: str = "") -> Json:
    """OPENAPI_META naming this program; blanks where slurmrestd would name Slurm's parts."""
    return {
        "plugin": {
            "type": "",
            "name": PROGRAM,
            "data_parser": DATA_PARSER,
            "accounting_storage": "",
        },
        "client": {"source": client_source, "user": "", "group": ""},
        "command": [],
        "slurm": {
            "version": {"major": "", "micro": "", "minor": ""},
            "release": "",
            "cluster": cluster,
        },
    }


def shares_response(
    rows: Sequence[SshareRow],
    *,
    cluster: str,
    tres_names: Sequence[str],
    algorithm: Algorithm,
    client_source: str = "",
) -> dict[str, Any]:
    """The body of slurmrestd's `GET /slurm/v0.0.40/shares` for these rows (OPENAPI_SHARES_RESP).

    `id` is the row's 1-based position in association-list order: slurmctld sends the
    slurmdbd association id, which the rows do not carry (0 would mean "no association").
    `client_source` is meta.client.source, where slurmrestd names the connection.
    """
    shares = [
        association_share(
            row, assoc_id=number, cluster=cluster, tres_names=tres_names, algorithm=algorithm
        )
        for number, row in enumerate(rows, start=1)
    ]
    return {
        "shares": {"shares": shares, "total_shares": TOTAL_SHARES},
        "meta": meta(cluster=cluster, client_source=client_source),
        "errors": [],
        "warnings": [],
    }
