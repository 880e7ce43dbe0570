"""Slurm `sprio` text: what Slurm 22.05's sprio prints, byte for byte.

Read from the tag `slurm-22-05-11-1` (slurm-multifactor-priority.md §C, §F): the default formats
are built in src/sprio/sprio.c:135-187, a format is parsed as src/sprio/opts.c:249-444 does,
and each cell is printed by src/sprio/print.c. 22.05's `-l` has no ACCOUNT or QOSNAME column
(23.02 added them) and prints `0.0000000` in the `-n` factor cells of a job whose priority was
set directly. Doubles reach sprio through packdouble (value × 1e6, divided back on receipt:
src/common/pack.c:283-381), so rows hold the received values. Rows are sorted by job id,
numerically (src/sprio/sort.c:178-187); jobs with the same id keep the controller's order, as
glibc's merge-sorting qsort keeps it. 22.05 filters -j, -u and -p in slurmctld
(priority_multifactor.c:1405-1530, _filter_job), with the same result as filtering here.
Strings are measured in characters: Slurm counts bytes, the same for ASCII names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from trees.engine.multifactor import (
    Factors,
    MultifactorConfig,
    PriorityJob,
    sprio_priority,
    sprio_priority_value,
)

FLOAT_MULT = 1000000.0
_LONG = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
PRIORITY_SCALE = float(0xFFFFFFFF)  # `-n` PRIORITY: the sum over 2^32 - 1 (print.c:341-342)
UNABLE = "Unable to find jobs matching user/id(s) specified\n"  # sprio.c:192-194
LONG_FORMAT = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
LONG_NORMALIZED_FORMAT = "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
# The factor letters (upper case: weighted, lower case: normalized) and their weights, in the
# order of the optional columns of the short formats, each present when its weight is not 0.
_WEIGHT = {
    "a": "weight_age",
    "b": "weight_assoc",
    "f": "weight_fairshare",
    "j": "weight_jobsize",
    "p": "weight_partition",
    "q": "weight_qos",
}
_FACTOR = {letter: weight.removeprefix("weight_") for letter, weight in _WEIGHT.items()}


class SprioError(ValueError):
    """sprio stops with this message on stderr and exit status 1."""


@dataclass(frozen=True)
class SprioRow:
    """One priority_factors_object_t as sprio receives it."""

    job_id: int
    partition: str
    user: str
    factors: Factors
    cluster: str = ""


@dataclass(frozen=True)
class Field:
    """One `%[.][width]letter` of a format and the text after it; `.` right-justifies."""

    letter: str
    width: int
    right: bool
    suffix: str


def packed(value: float) -> float:
    """A double after packdouble/unpackdouble: (value × 1e6) / 1e6 (pack.c:283-381)."""
    return (value * FLOAT_MULT) / FLOAT_MULT


def received(factors: Factors) -> Factors:
    """The factors as sprio unpacks them (_unpack_priority_factors_object,
    slurm_protocol_pack.c:618-658): every double through packdouble."""
    return replace(
        factors,
        age=packed(factors.age),
        assoc=packed(factors.assoc),
        fairshare=packed(factors.fairshare),
        jobsize=packed(factors.jobsize),
        partition=packed(factors.partition),
        qos=packed(factors.qos),
        tres={name: packed(value) for name, value in factors.tres.items()},
    )  # direct_priority, a uint32, stays exact through × 1e6


def sprio_row(job: PriorityJob, factors: Factors) -> SprioRow:
    """The row slurmctld sends for a job in one partition (_filter_job,
    priority_multifactor.c:1453-1482)."""
    return SprioRow(job.job_id, job.partition, job.user, received(factors))


def default_format(
    config: MultifactorConfig, *, long: bool = False, normalized: bool = False, user: bool = False
) -> str:
    """sprio's format when no -o is given (sprio.c:135-187): `user` is whether -u was given."""
    if long:
        return LONG_NORMALIZED_FORMAT if normalized else LONG_FORMAT
    parts = ["%.15i", "%9r"]
    if user:
        parts.append("%.8u")
    parts += ["%10y"] if normalized else ["%.10Y", "%.10S"]
    for letter, weight in _WEIGHT.items():
        if getattr(config, weight):
            parts.append(f"%10{letter}" if normalized else f"%.10{letter.upper()}")
    if config.weight_tres is not None:
        parts.append("%20t" if normalized else "%.20T")
    return " ".join(parts)


def parse_format(fmt: str) -> tuple[str, list[Field]]:
    """parse_format, _get_prefix and _parse_token (opts.c:249-444): the text before the first
    `%`, then the fields; empty pieces between `%`s are skipped (strtok)."""
    start = fmt.find("%")
    if start < 0:
        return fmt, []
    fields = []
    for token in fmt[start:].split("%"):
        if not token:
            continue
        right = token.startswith(".")
        pos = 1 if right else 0
        digits = pos
        while digits < len(token) and token[digits] in "0123456789":
            digits += 1
        width = int(token[pos:digits]) if digits > pos else 0
        fields.append(Field(token[digits : digits + 1], width, right, token[digits + 1 :]))
    return fmt[:start], fields


def cell(text: str, width: int, right: bool) -> str:
    """_print_str (print.c:109-138): cut to `width` and padded to it; width 0 prints it all."""
    if not width:
        return text
    return (f"{text:>{width}}" if right else text)[:width].ljust(width)


def _int(value: float) -> str:
    """_print_int: `%.0f` (print.c:140-146)."""
    return f"{value:.0f}"


def _norm(value: float) -> str:
    """_print_norm: `%.7lf` (print.c:148-154)."""
    return f"{value:.7f}"


def _direct(factors: Factors) -> bool:
    return factors.direct_priority is not None and factors.direct_priority > 0


_HEADER = {
    "a": "AGE",
    "b": "ASSOC",
    "c": "CLUSTER",
    "f": "FAIRSHARE",
    "i": "JOBID",
    "j": "JOBSIZE",
    "n": "NICE",
    "p": "PARTITION",
    "q": "QOS",
    "r": "PARTITION",
    "s": "SITE",
    "t": "TRES",
    "u": "USER",
    "y": "PRIORITY",
}


def _weights_text(letter: str, config: MultifactorConfig) -> str:
    """The `-w` row (job pointer −1): each weight by `%.0f`, SITE `1` (print.c)."""
    key = letter.lower()
    if key in _WEIGHT:
        return _int(getattr(config, _WEIGHT[key]))
    if letter == "S":
        return "1"
    if letter == "T":  # the configured string; printf prints a NULL one as `(null)`
        return "(null)" if config.weight_tres is None else config.weight_tres
    if letter == "i":
        return "Weights"
    return ""  # r, u, y, Y, N, t: blank; c: 22.05 reads the name through the −1 pointer


def _tres_text(factors: Factors, config: MultifactorConfig, normalized: bool) -> str:
    """_print_tres_weighted `name=%.0f` / _print_tres_normalized `name=%.2f` of the weighted
    factor over the controller's weight, the non-zero TRES only (print.c:534-588)."""
    items = []
    for name, value in factors.tres.items():
        if not value:
            continue
        if normalized:
            items.append(f"{name}={value / packed(config.tres_weights[name]):.2f}")
        else:
            items.append(f"{name}={value:.0f}")
    return ",".join(items)


def _row_text(letter: str, row: SprioRow, config: MultifactorConfig) -> str:
    """One cell of a job's row (print.c:194-588)."""
    factors = row.factors
    if letter == "i":
        return str(row.job_id)
    if letter == "r":
        return row.partition
    if letter == "u":
        return row.user
    if letter == "c":
        return row.cluster
    if letter == "Y":
        return str(sprio_priority(factors))
    if letter == "y":
        if _direct(factors):
            return f"{float(factors.direct_priority or 0):16.14f}"
        return f"{sprio_priority_value(factors) / PRIORITY_SCALE:16.14f}"
    if letter in "SN":
        if _direct(factors):
            return _int(0)
        return _int(factors.site if letter == "S" else factors.nice)
    if letter in "tT":
        return _tres_text(factors, config, letter == "t")
    value: float = getattr(factors, _FACTOR[letter.lower()])
    if letter.isupper():
        return _int(value)
    weight: int = getattr(config, _WEIGHT[letter])
    return _norm(value / weight if weight else 0.0)


_LETTERS = frozenset("aAbBcfFijJNpPrSqQuyYtT")  # the fields 22.05 knows (opts.c:275-382)


def _line(prefix: str, fields: Sequence[Field], text: Callable[[str], str]) -> str:
    """One print_job_from_format (print.c:160-177): each field and its text, then a newline."""
    out = [prefix]
    for f in fields:
        out.append(cell(text(f.letter), f.width, f.right) + f.suffix)
    return "".join(out) + "\n"


def parse_job_ids(text: str) -> list[int]:
    """_build_job_list with slurm_xlate_job_id (opts.c:490-518, api/job_info.c:253-300):
    comma-separated ids read by strtol, `id+offset` for a HetJob component; an id that is 0 or
    negative as an int is refused. Array ids (`id_task`) need the controller: refused here."""
    ids = []
    for token in text.split(","):
        if not token:
            continue
        job_id, rest = _strtol(token)
        if rest.startswith("+"):
            offset, rest = _strtol(rest[1:])
            job_id = (job_id & 0xFFFFFFFF) + (offset & 0xFFFF)
        if rest or not 0 < job_id & 0xFFFFFFFF <= 0x7FFFFFFF:
            raise SprioError(f"Invalid job id: {token}")
        ids.append(job_id & 0xFFFFFFFF)
    return ids


def _strtol(text: str) -> tuple[int, str]:
    """strtol(text, &end, 10): the number (0 if none, clamped to a long) and the rest."""
    match = _LONG.match(text)
    if not match:
        return 0, text
    number = match.group().strip(" \t\n\v\f\r")
    negative = number.startswith("-")
    digits = number.lstrip("+-").lstrip("0") or "0"
    value = int(digits) if len(digits) <= 20 else 2**63  # past 20 digits: clamped below
    value = -value if negative else value
    return max(-(2**63), min(value, 2**63 - 1)), text[match.end() :]


def _names(text: str | None) -> set[str] | None:
    """A comma list as strtok splits it; None when the option was not given."""
    return None if text is None else {name for name in text.split(",") if name}


def format_sprio(
    rows: Iterable[SprioRow],
    config: MultifactorConfig,
    *,
    long: bool = False,
    normalized: bool = False,
    weights: bool = False,
    header: bool = True,
    jobs: str | None = None,
    users: str | None = None,
    partitions: str | None = None,
    fmt: str | None = None,
) -> str:
    """sprio's stdout for `-l`, `-n`, `-w`, `-h`, `-j JOBS`, `-u USERS`, `-p PARTS`, `-o FMT`.

    `rows` are what slurmctld sent (see sprio_row); `jobs`, `users`, `partitions` are the
    comma lists as typed, None when the option is absent (`-u` also adds the USER column).
    Raises SprioError where sprio stops with an error."""
    if config.priority_type.lower() == "priority/basic":
        raise SprioError(
            "You are not running a supported priority plugin\n"
            f"({config.priority_type}).\nOnly 'priority/multifactor' is supported.\n"
        )
    if long and fmt is not None:
        raise SprioError(
            "Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry."
        )
    job_ids = None if jobs is None else set(parse_job_ids(jobs))
    user_names, part_names = _names(users), _names(partitions)
    kept = [
        row
        for row in rows
        if (job_ids is None or row.job_id in job_ids)
        and (user_names is None or row.user in user_names)
        and (part_names is None or row.partition in part_names)
    ]
    if jobs is not None and not kept:
        return UNABLE
    text = (
        fmt
        if fmt is not None
        else default_format(config, long=long, normalized=normalized, user=users is not None)
    )
    prefix, fields = parse_format(text)
    fields = [f for f in fields if f.letter in _LETTERS]  # others: "Invalid job format"
    out = []
    if header:
        out.append(_line(prefix, fields, lambda letter: _HEADER[letter.lower()]))
    if weights:
        out.append(_line(prefix, fields, lambda letter: _weights_text(letter, config)))
        return "".join(out)
    for row in sorted(kept, key=lambda row: row.job_id):
        out.append(_line(prefix, fields, partial(_row_text, row=row, config=config)))
    return "".join(out)
