"""A PBS MoM's configuration file (`mom_priv/config`) read as pbs_mom reads it, for the two
settings PBS's usage recording depends on: `$min_check_poll` and `$max_check_poll`.

Follows OpenPBS's src/resmom/mom_main.c (commit cd7ab5ed): parse_config (:3583-3675) skips a
line whose first character is `#` and a blank one; a line whose first non-blank character is `$`
is a command `$name value`, the name the run of letters, digits, `_` and `:` after the `$`
(tokcpy, :1359-1370), the value the rest of the line without its surrounding blanks; any other
line is a static resource, not read here. set_int (:2903-2927) takes a value as C's
strtol(value, &left, 0) reads it (`0x1e` is 30, `010` is 8), cast to an int, and refuses it
unless all of it was read and it is above 0 ("bad value"). A command name pbs_mom does not know
("command name NAME not found") or a refused value makes pbs_mom refuse the whole file at start
(read_config, :7642). After the file, a minimum above the maximum puts both back to their
defaults, 10 and 120 (:4102-4109).

Nothing raises: each fault is a RejectedLine naming its line and the command; the values the
good lines set are kept.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from trees.engine.recording import MAX_CHECK_POLL, MIN_CHECK_POLL
from trees.formats.rejected import RejectedLine

__all__ = ["MomConfig", "c_strtol", "parse_mom_config"]

# The commands of pbs_mom's `special` table (mom_main.c:500-561), ALPS, Windows and NAS builds'
# included: a name outside it makes pbs_mom refuse the file.
KNOWN_COMMANDS = frozenset(
    [
        "action",
        "alien_attach",
        "alien_kill",
        "alps_client",
        "alps_confirm_empty_timeout",
        "alps_release_wait_time",
        "alps_release_jitter",
        "alps_release_timeout",
        "vnode_per_numa_node",
        "alps_confirm_switch_timeout",
        "attach_allow",
        "checkpoint_path",
        "clienthost",
        "configversion",
        "cputmult",
        "enforce",
        "ideal_load",
        "jobdir_root",
        "kbd_idle",
        "logevent",
        "max_check_poll",
        "max_load",
        "max_poll_downtime",
        "min_check_poll",
        "momname",
        "nrun_factor",
        "port",
        "prologalarm",
        "sister_join_job_alarm",
        "job_launch_delay",
        "restart_background",
        "restart_transmogrify",
        "restrict_user",
        "restrict_user_exceptions",
        "restrict_user_maxsysid",
        "restricted",
        "gen_nodefile_on_sister_mom",
        "spool_size",
        "suspendsig",
        "tmpdir",
        "vnodedef_additive",
        "usecp",
        "wallmult",
        "reject_root_scripts",
        "report_hook_checksums",
    ]
)
_POLLS = ("min_check_poll", "max_check_poll")
_NAME = frozenset(string.ascii_letters + string.digits + "_:")
_C_SPACE = " \t\n\v\f\r"  # isspace() in the C locale
_HEX_DIGITS = frozenset(string.hexdigits)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_LONG_DIGITS = 22  # octal digits of a 64-bit long, the most any base needs
_SHOWN = 40


@dataclass(frozen=True)
class MomConfig:
    """The poll settings a MoM runs with after reading the file, and every problem."""

    min_check_poll: int
    max_check_poll: int
    settings: frozenset[str]  # which of the two a line of the file set
    problems: tuple[RejectedLine, ...]


def c_strtol(text: str) -> tuple[int, str]:
    """strtol(text, &left, 0) of C: the long read (saturated at LONG_MIN and LONG_MAX) and what
    is left of the text after it (all of it when no number starts it)."""
    at = 0
    while at < len(text) and text[at] in _C_SPACE:
        at += 1
    sign = 1
    if at < len(text) and text[at] in "+-":
        sign = -1 if text[at] == "-" else 1
        at += 1
    base, digits = 10, string.digits
    if text[at : at + 2].lower() == "0x" and text[at + 2 : at + 3] in _HEX_DIGITS:
        base, digits, at = 16, string.hexdigits, at + 2
    elif text[at : at + 1] == "0":
        base, digits = 8, "01234567"
    end = at
    while end < len(text) and text[end] in digits:
        end += 1
    if end == at:
        return 0, text
    significant = text[at:end].lstrip("0") or "0"
    # strtol saturates: past a long's digits the value is LONG_MAX or LONG_MIN, and int()
    # would refuse 4,300 digits and more.
    magnitude = _LONG_MAX + 1 if len(significant) > _LONG_DIGITS else int(significant, base)
    value = max(_LONG_MIN, min(_LONG_MAX, sign * magnitude))
    return value, text[end:]


def _c_int(value: int) -> int:
    """A long cast to a 32-bit int, as `(int) strtol(...)` does."""
    return (value + 2**31) % 2**32 - 2**31


def parse_mom_config(text: str) -> MomConfig:
    """The poll settings of a MoM's configuration file, and each line pbs_mom would refuse."""
    values = {"min_check_poll": MIN_CHECK_POLL, "max_check_poll": MAX_CHECK_POLL}
    lines: dict[str, int] = {}  # the line that set each
    problems: list[RejectedLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if line.startswith("#"):
            continue
        body = line.lstrip(_C_SPACE)
        if not body.startswith("$"):
            continue  # blank, or a static resource
        end = 1
        while end < len(body) and body[end] in _NAME:
            end += 1
        name, value = body[1:end], body[end:].strip(_C_SPACE)
        if name not in KNOWN_COMMANDS:
            problems.append(
                RejectedLine(
                    number,
                    f"${name}",
                    f"command name {name} not found: pbs_mom refuses the file",
                    line,
                )
            )
            continue
        if name not in _POLLS:
            continue
        if not value:
            problems.append(RejectedLine(number, f"${name}", "no value specified", line))
            continue
        read, left = c_strtol(value)
        read = _c_int(read)
        if left or read <= 0:
            shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
            why = f'bad value "{shown}": a whole number of seconds above 0 is needed'
            problems.append(RejectedLine(number, f"${name}", why, line))
            continue
        values[name] = read
        lines[name] = number
    low, high = values["min_check_poll"], values["max_check_poll"]
    if low > high:
        why = (
            f"min_check_poll({low}) > max_check_poll({high}): pbs_mom runs with its defaults,"
            f" {MIN_CHECK_POLL} and {MAX_CHECK_POLL}"
        )
        at = lines.get("min_check_poll", lines.get("max_check_poll", 0))
        problems.append(RejectedLine(at, "$min_check_poll", why, ""))
        low, high = MIN_CHECK_POLL, MAX_CHECK_POLL
    return MomConfig(low, high, frozenset(lines), tuple(problems))
