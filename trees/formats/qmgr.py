"""OpenPBS `qmgr -c 'print server'` output (and `print sched`): the server's settings as qmgr
commands, read without running them.

What print writes (OpenPBS src/cmds/qmgr.c `display`): `#` comment lines; custom resources,
`create resource NAME` then `set resource NAME type = long` and `set resource NAME flag = nh`
(PBS Pro before 18 wrote `create resource NAME type=long, flag=nh` on one line); each queue,
`create queue NAME` then its `set queue NAME ATTR = VALUE` lines; then `set server ATTR = VALUE`.
Array values are split at commas into `=` and `+=` lines (`set server acl_hosts += rna`);
resources are dotted (`set server resources_default.ncpus = 1`). A value with `"`, `'`, a
blank or a comma is printed in `"…"`, or in `'…'` when it holds a `"` (qmgr.c:1758-1764).
`print sched` writes `create sched NAME` and `set sched ATTR = VALUE`.

Lines are read as qmgr reads its input (qmgr.c `attributes`, Libifl/pbs_quote_parse.c): command
and object words may be abbreviated (`s q`), attribute names are matched without regard to
case, several `attr = value` pairs may share a line, quotes may open anywhere in a value. A
line qmgr would refuse, or whose value the server would refuse, is a problem with its line
number and is not applied (the server refuses a whole request); nothing raises. Attributes PBS
does not define (Torque's `keep_completed`, a site's typo) are kept and reported as unknown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

__all__ = [
    "DEFAULT_SCHED",
    "QUEUE_ATTRIBUTES",
    "RESOURCE_FLAGS",
    "RESOURCE_TYPES",
    "SCHED_ATTRIBUTES",
    "SERVER_ATTRIBUTES",
    "QmgrPrint",
    "QmgrProblem",
    "QmgrQueue",
    "QmgrResource",
    "QmgrUnknown",
    "parse_qmgr_print",
    "parse_value",
    "quote_value",
]

# The attribute names of OpenPBS src/lib/Libattr/master_svr_attr_def.xml,
# master_queue_attr_def.xml and master_sched_attr_def.xml (their ATTR_* names in pbs_ifl.h
# and pbs_internal.h), at openpbs commit cd7ab5ed (2026-04-10).
SERVER_ATTRIBUTES = frozenset(
    {
        "acl_host_enable", "acl_host_moms_enable", "acl_hosts", "acl_krb_realm_enable",
        "acl_krb_realms", "acl_krb_submit_realms", "acl_resv_group_enable", "acl_resv_groups",
        "acl_resv_host_enable", "acl_resv_hosts", "acl_resv_user_enable", "acl_resv_users",
        "acl_roots", "acl_user_enable", "acl_users", "backfill_depth",
        "clear_topjob_estimates_enable", "comment", "cred_renew_cache_period",
        "cred_renew_enable", "cred_renew_period", "cred_renew_tool", "default_chunk",
        "default_node", "default_qdel_arguments", "default_qsub_arguments", "default_queue",
        "eligible_time_enable", "flatuid", "has_runjob_hook", "job_history_duration",
        "job_history_enable", "job_requeue_timeout", "job_sort_formula", "jobscript_max_size",
        "license_count", "log_events", "mail_from", "mailer", "managers", "max_array_size",
        "max_concurrent_provision", "max_group_res", "max_group_res_soft", "max_group_run",
        "max_group_run_soft", "max_job_sequence_id", "max_queued", "max_queued_res", "max_run",
        "max_run_res", "max_run_res_soft", "max_run_soft", "max_running", "max_user_res",
        "max_user_res_soft", "max_user_run", "max_user_run_soft", "node_fail_requeue",
        "node_group_enable", "node_group_key", "node_pack", "operators", "pbs_license_info",
        "pbs_license_linger_time", "pbs_license_max", "pbs_license_min", "pbs_version",
        "pnames", "power_provisioning", "provision_enable", "provision_timeout",
        "python_restart_max_hooks", "python_restart_max_objects", "python_restart_min_interval",
        "query_other_jobs", "queued_jobs_threshold", "queued_jobs_threshold_res",
        "require_cred", "require_cred_enable", "resend_term_delay", "reserve_retry_init",
        "reserve_retry_time", "resources_assigned", "resources_available", "resources_cost",
        "resources_default", "resources_max", "restrict_res_to_release_on_suspend",
        "resv_enable", "resv_post_processing_time", "rpp_highwater", "rpp_max_pkt_check",
        "rpp_retry", "scheduler_iteration", "scheduling", "server_host", "server_state",
        "show_hidden_attribs", "state_count", "sync_mom_hookfiles_timeout", "system_cost",
        "total_jobs",
    }
)  # fmt: skip
QUEUE_ATTRIBUTES = frozenset(
    {
        "acl_group_enable", "acl_groups", "acl_host_enable", "acl_hosts", "acl_user_enable",
        "acl_users", "alt_router", "backfill_depth", "checkpoint_min", "comment",
        "default_chunk", "enabled", "from_route_only", "hasnodes", "kill_delay",
        "max_array_size", "max_group_res", "max_group_res_soft", "max_group_run",
        "max_group_run_soft", "max_queuable", "max_queued", "max_queued_res", "max_run",
        "max_run_res", "max_run_res_soft", "max_run_soft", "max_running", "max_user_res",
        "max_user_res_soft", "max_user_run", "max_user_run_soft", "node_group_key", "partition",
        "Priority", "queue_type", "queued_jobs_threshold", "queued_jobs_threshold_res",
        "rendezvous_retry", "require_cred", "require_cred_enable", "reserved_expedite",
        "reserved_sync", "resources_assigned", "resources_available", "resources_default",
        "resources_max", "resources_min", "route_destinations", "route_held_jobs",
        "route_lifetime", "route_retry_time", "route_waiting_jobs", "started", "state_count",
        "total_jobs",
    }
)  # fmt: skip
SCHED_ATTRIBUTES = frozenset(
    {
        "attr_update_period", "comment", "do_not_span_psets", "job_run_wait",
        "job_sort_formula", "job_sort_formula_threshold", "log_events", "only_explicit_psets",
        "opt_backfill_fuzzy", "partition", "preempt_order", "preempt_prio",
        "preempt_queue_prio", "preempt_sort", "preempt_targets_enable", "sched_cycle_length",
        "sched_host", "sched_log", "sched_preempt_enforce_resumption", "sched_priv",
        "sched_user", "scheduler_iteration", "scheduling", "server_dyn_res_alarm", "state",
        "throughput_mode",
    }
)  # fmt: skip
# Libattr/resc_map.c: the types a custom resource may have, and its flag letters.
RESOURCE_TYPES = frozenset({"boolean", "long", "string", "size", "float", "string_array"})
RESOURCE_FLAGS = "hqnfirm"
DEFAULT_SCHED = "default"  # PBS_DFLT_SCHED_NAME: print writes `set sched` without its name
# qmgr.c entlim_attrs: their values (`[u:PBS_GENERIC=10]`) may hold unquoted blanks.
_ENTLIM = frozenset(
    {
        "max_run", "max_run_res", "max_run_soft", "max_run_res_soft", "max_queued",
        "max_queued_res", "queued_jobs_threshold", "queued_jobs_threshold_res",
    }
)  # fmt: skip
# Libattr/attr_fn_b.c is_true_or_false: exactly these words (so `tRuE` is refused).
_TRUE = frozenset({"True", "TRUE", "true", "t", "T", "1", "y", "Y"})
_FALSE = frozenset({"False", "FALSE", "false", "f", "F", "0", "n", "N"})
_QUEUE_TYPES = ("Execution", "Route")  # req_manager.c set_queue_type: any prefix, any case
# qmgr.c's command and object words, in the order it tries their prefixes.
_COMMANDS = ("create", "delete", "set", "unset", "list", "print", "active", "import", "export")
_OBJECTS = ("server", "queue", "queues", "node", "nodes", "resource", "sched", "hook", "pbshook")
_SKIPPED_OBJECTS = frozenset({"node", "hook", "pbshook"})  # not part of print server
_OPERATORS = ("+=", "-=", "=")
_WORD = re.compile(r"\S+")
_NAME = re.compile(r"[^\s,=]+")
_LONG = re.compile(r"[+-]?\d+", re.ASCII)  # Libattr/attr_fn_l.c decode_l
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)  # decode_f
_C_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class QmgrProblem:
    line: int
    field: str  # `set queue workq Priority`, or `line` for the whole line
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.reason}"


@dataclass(frozen=True)
class QmgrUnknown:
    """An attribute PBS does not define, kept in its object's attributes."""

    line: int
    attribute: str  # as the line names it: `server keep_completed`, `queue batch max_user_queuable`


@dataclass
class QmgrQueue:
    name: str
    line: int  # of its `create queue`
    attributes: dict[str, str] = field(default_factory=dict)  # in the order first set
    priority: int = 0  # `Priority`, -1024..1023; job_sort_formula's queue_priority
    queue_type: str = ""  # "Execution" or "Route"; "" while unset
    enabled: bool = False  # accepts jobs
    started: bool = False  # its jobs may be scheduled


@dataclass
class QmgrResource:
    """A custom resource (`create resource`)."""

    name: str
    line: int
    type: str = ""  # one of RESOURCE_TYPES; "" when print gave none
    flags: str = ""  # letters of RESOURCE_FLAGS


@dataclass
class QmgrPrint:
    server: dict[str, str] = field(default_factory=dict)  # unquoted values, in the order read
    scheds: dict[str, dict[str, str]] = field(default_factory=dict)  # by scheduler name
    queues: dict[str, QmgrQueue] = field(default_factory=dict)
    resources: dict[str, QmgrResource] = field(default_factory=dict)
    # What the dashboard uses. The server's job_sort_formula wins over the default
    # scheduler's (server_info.cpp); scheduler_iteration is the last one read of the server's
    # and the default scheduler's, which PBS keeps equal (svr_func.c, sched_func.c).
    job_sort_formula: str | None = None
    job_sort_formula_threshold: float | None = None  # the default scheduler's
    preempt_queue_prio: int | None = None  # the default scheduler's (unset: PBS's 150)
    eligible_time_enable: bool | None = None
    scheduler_iteration: int | None = None  # seconds
    problems: list[QmgrProblem] = field(default_factory=list)
    unknown: list[QmgrUnknown] = field(default_factory=list)
    ignored: int = 0  # node and hook lines: not part of `print server`

    @property
    def sched(self) -> dict[str, str]:
        """The default scheduler's attributes."""
        return self.scheds.get(DEFAULT_SCHED, {})


class _Problem(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class _Pair:
    name: str  # as written
    resource: str | None
    operator: str
    value: str

    @property
    def key(self) -> str:
        return self.name if self.resource is None else f"{self.name}.{self.resource}"


def quote_value(value: str) -> str:
    """A value as `qmgr print` writes it: in `"…"` when it holds `"`, `'`, a blank or a comma,
    in `'…'` when it holds a `"`. (A value with both quote characters cannot be read back:
    qmgr's own print has that flaw.)"""
    if not any(character in value for character in "\"' ,"):
        return value
    quote = "'" if '"' in value else '"'
    return f"{quote}{value}{quote}"


def parse_value(text: str, start: int = 0, *, allow_white: bool = False) -> tuple[str, int]:
    """One value as Libifl/pbs_quote_parse.c reads it: up to an unquoted comma (or blank,
    unless `allow_white`), quotes removed, the other quote character literal inside. The value
    and where it ended; raises ValueError for `&`, a control character or an open quote."""
    index = start
    while index < len(text) and text[index].isspace():
        index += 1
    out: list[str] = []
    quote = ""  # the quote character of this value, once one opened
    quoting = False
    opened = 0
    for nth, position in enumerate(range(index, len(text)), 1):
        character = text[position]
        if not character.isspace() and not " " <= character <= "~":
            raise ValueError(f"the character {character!r} is not allowed in a value")
        if quoting:
            if character == quote:
                quoting = False
                continue
            if character == "&":
                raise ValueError("& is not allowed in a value")
            out.append(character)
        elif character in "\"'" and (not allow_white or nth == 1):
            if quote and quote != character:
                out.append(character)  # the other quote character, as a plain one
            else:
                quote, quoting, opened = character, True, position
        elif character == "," or (character.isspace() and not allow_white):
            return "".join(out), position
        elif character == "&":
            raise ValueError("& is not allowed in a value")
        else:
            out.append(character)
    if quoting:
        raise ValueError(f"the {quote} opened at column {opened + 1} is never closed")
    return "".join(out), len(text)


def parse_qmgr_print(source: str | bytes | Iterable[bytes | str]) -> QmgrPrint:
    """The settings in `qmgr -c 'print server'` (or `print sched`) output; see the module."""
    if isinstance(source, str | bytes):
        source = source.splitlines()
    reader = _Reader()
    for number, raw in enumerate(source, 1):
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        text = text.rstrip("\r\n")
        body = text.strip()
        if not body or body.startswith("#"):
            continue
        try:
            reader.line(number, text)
        except _Problem as problem:
            reader.result.problems.append(QmgrProblem(number, problem.field, problem.reason))
    return reader.finished()


def _word(text: str, at: int) -> tuple[str, int]:
    """The blank-separated word at or after `at`, and where it ends."""
    match = _WORD.match(text, _skip(text, at))
    return (match.group(), match.end()) if match else ("", len(text))


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _prefix_of(word: str, words: tuple[str, ...]) -> str | None:
    """The first of `words` that `word` abbreviates, as qmgr's strncmp does."""
    return next((full for full in words if full.startswith(word)), None)


def _object_name(text: str, at: int) -> tuple[str, int]:
    """The object's name at `at` and where it ends, if the line names one there rather than
    starting its attributes (`set queue workq enabled = True`, `set server scheduling = True`)."""
    match = _NAME.match(text, at)
    if match is None:
        return "", at
    word, end = match.group(), match.end()
    if text.startswith("=", end) and word[-1:] in ("+", "-"):
        return "", at  # `acl_hosts+=x`
    if text.startswith(_OPERATORS, _skip(text, end)):
        return "", at
    return word, end


def _pairs(text: str, index: int) -> list[_Pair]:
    """The `name[.resource] OP value` pairs of a line from `index` on, as qmgr.c `attributes`
    reads them."""
    pairs: list[_Pair] = []
    length = len(text)

    def skip(at: int) -> int:
        while at < length and text[at].isspace():
            at += 1
        return at

    def operator(at: int) -> bool:
        return text[at] == "=" or text.startswith(("+=", "-="), at)

    while True:
        index = skip(index)
        if index == length:
            raise _Problem("line", "no attribute after ','" if pairs else "no attribute to set")
        start = index
        while (
            index < length
            and text[index] not in ".,"
            and not text[index].isspace()
            and not operator(index)
        ):
            index += 1
        name = text[start:index]
        if not name:
            raise _Problem("line", f"no attribute name at column {start + 1}")
        resource = None
        if index < length and text[index] == ".":
            index += 1
            begin = index
            while index < length and not text[index].isspace() and not operator(index):
                index += 1
            resource = text[begin:index]
            if not resource:
                raise _Problem(name, f"no resource name after '{name}.'")
        key = name if resource is None else f"{name}.{resource}"
        index = skip(index)
        found = next((op for op in _OPERATORS if text.startswith(op, index)), None)
        if found is None:
            raise _Problem(key, "no '=' after the attribute")
        index = skip(index + len(found))
        if index == length:
            raise _Problem(key, f"no value after '{found}'")
        try:
            value, index = parse_value(text, index, allow_white=name.lower() in _ENTLIM)
        except ValueError as error:
            raise _Problem(key, str(error)) from None
        pairs.append(_Pair(name, resource, found, value))
        index = skip(index)
        if index == length:
            return pairs
        if text[index] != ",":
            extra = text[index : index + 30]
            raise _Problem(key, f"{extra!r} after the value: a value with blanks needs quotes")
        index += 1


def _canonical(names: frozenset[str]) -> dict[str, str]:
    return {name.lower(): name for name in names}


_SERVER_NAMES = _canonical(SERVER_ATTRIBUTES)
_QUEUE_NAMES = _canonical(QUEUE_ATTRIBUTES)
_SCHED_NAMES = _canonical(SCHED_ATTRIBUTES)


def _boolean(field: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise _Problem(field, f"not a boolean: {value!r} (True, False, t, f, y, n, 1 or 0)")


def _long(field: str, value: str) -> int:
    if _LONG.fullmatch(value) is None:
        raise _Problem(field, f"not an integer: {value!r}")
    number = int(value)
    if abs(number) > _C_LONG_MAX:
        raise _Problem(field, f"{value} is beyond a C long")
    return number


def _float(field: str, value: str) -> float:
    number = float(value) if _FLOAT.fullmatch(value) else math.nan
    if not math.isfinite(number):
        raise _Problem(field, f"not a number: {value!r}")
    return number


def _single(field: str, pair: _Pair) -> None:
    if pair.operator != "=":
        raise _Problem(field, f"'{pair.operator}' on an attribute that holds one value")


class _Arrays:
    """The array attributes `+=` is building, as lists: joined once at the end (and before a
    `-=` reads one), so that a million `+=` lines take linear time, not quadratic."""

    def __init__(self) -> None:
        self.building: dict[tuple[int, str], tuple[dict[str, str], list[str]]] = {}

    def add(self, attributes: dict[str, str], key: str, value: str) -> None:
        held = self.building.get((id(attributes), key))
        if held is None:
            earlier = attributes.get(key)
            held = self.building[id(attributes), key] = (attributes, [earlier] if earlier else [])
        held[1].append(value)

    def set(self, attributes: dict[str, str], key: str, value: str) -> None:
        self.building.pop((id(attributes), key), None)
        attributes[key] = value

    def joined(self, attributes: dict[str, str], key: str) -> str:
        """The attribute's value as it stands, its `+=` elements joined."""
        held = self.building.pop((id(attributes), key), None)
        if held is not None:
            attributes[key] = ",".join(held[1])
        return attributes.get(key, "")

    def join_all(self) -> None:
        for (_, key), (attributes, elements) in self.building.items():
            attributes[key] = ",".join(elements)
        self.building.clear()


def _stored(
    arrays: _Arrays, attributes: dict[str, str], field: str, pair: _Pair, key: str
) -> Callable[[], None]:
    """The change `pair` makes to `attributes[key]`: `=` sets, `+=` adds an element to the
    comma-separated array, `-=` removes one."""
    value = pair.value
    if pair.operator == "=":
        return partial(arrays.set, attributes, key, value)
    if pair.operator == "+=":
        return partial(arrays.add, attributes, key, value)
    elements = arrays.joined(attributes, key).split(",")
    if value not in elements:
        raise _Problem(field, f"{value!r} is not in {key} to remove")
    elements.remove(value)
    remaining = ",".join(elements)

    def remove() -> None:
        if remaining:
            attributes[key] = remaining
        else:
            attributes.pop(key, None)

    return remove


class _Reader:
    def __init__(self) -> None:
        self.result = QmgrPrint()
        self.result.scheds[DEFAULT_SCHED] = {}
        self.arrays = _Arrays()
        self._server_formula: str | None = None
        self._sched_formula: str | None = None

    def finished(self) -> QmgrPrint:
        self.arrays.join_all()
        result = self.result
        result.job_sort_formula = (
            self._server_formula if self._server_formula is not None else self._sched_formula
        )
        return result

    def line(self, number: int, text: str) -> None:
        word, at = _word(text, 0)
        command = _prefix_of(word, _COMMANDS)
        if command is None:
            raise _Problem("line", f"not a qmgr command: {word[:40]!r}")
        object_word, at = _word(text, at)
        kind = _prefix_of(object_word, _OBJECTS) if object_word else None
        if kind is None:
            what = f"{object_word[:40]!r}" if object_word else "nothing"
            raise _Problem("line", f"{command} of {what}: not server, queue, resource or sched")
        kind = kind.rstrip("s") if kind in ("queues", "nodes") else kind
        if kind in _SKIPPED_OBJECTS:
            self.result.ignored += 1
            return
        if command not in ("create", "set"):
            raise _Problem("line", f"`{command}` is not in print output: only create and set")
        name, at = _object_name(text, _skip(text, at))
        at = _skip(text, at)
        where = f"{command} {kind} {name}".rstrip()
        if at == len(text) and command == "set":
            said = f"{name!r} has" if name else "it has"
            raise _Problem(where, f"nothing to set: {said} no `attribute = value`")
        try:
            pairs = _pairs(text, at) if at < len(text) else []
        except _Problem as problem:
            field = where if problem.field == "line" else f"{where} {problem.field}"
            raise _Problem(field, problem.reason) from None
        changes: list[Callable[[], None]] = []
        if kind == "server":
            changes = [self._server(number, pair) for pair in pairs]
        elif kind == "queue":
            changes = self._queue(number, command, name, pairs)
        elif kind == "resource":
            changes = self._resource(number, command, name, pairs)
        else:
            changes = self._sched(number, command, name or DEFAULT_SCHED, pairs)
        for change in changes:  # only once every pair of the line was taken
            change()

    def _unknown(self, number: int, where: str, pair: _Pair) -> Callable[[], None]:
        unknown = QmgrUnknown(number, f"{where} {pair.key}")
        return lambda: self.result.unknown.append(unknown)

    def _server(self, number: int, pair: _Pair) -> Callable[[], None]:
        canonical = _SERVER_NAMES.get(pair.name.lower())
        name = canonical or pair.name
        key = name if pair.resource is None else f"{name}.{pair.resource}"
        field = f"set server {key}"
        changes = [_stored(self.arrays, self.result.server, field, pair, key)]
        if canonical is None:
            changes.append(self._unknown(number, "server", pair))
        elif pair.resource is None:
            changes.append(self._typed_server(field, name, pair))
        return _all(changes)

    def _typed_server(self, field: str, name: str, pair: _Pair) -> Callable[[], None]:
        value = pair.value
        if name == "job_sort_formula":
            _single(field, pair)
            return lambda: setattr(self, "_server_formula", value)
        if name == "eligible_time_enable":
            _single(field, pair)
            enabled = _boolean(field, value)
            return lambda: setattr(self.result, "eligible_time_enable", enabled)
        if name == "preempt_queue_prio":
            _single(field, pair)
            number = _float(field, value)
            if number != int(number) or not -(2**31) <= number < 2**31:
                raise _Problem(field, f"{value!r} is not a whole number")
            return lambda: setattr(self.result, "preempt_queue_prio", int(number))
        if name == "scheduler_iteration":
            return self._iteration(field, pair)
        return _nothing

    def _iteration(self, field: str, pair: _Pair) -> Callable[[], None]:
        _single(field, pair)
        seconds = _long(field, pair.value)
        return lambda: setattr(self.result, "scheduler_iteration", seconds)

    def _queue(
        self, number: int, command: str, name: str, pairs: list[_Pair]
    ) -> list[Callable[[], None]]:
        changes: list[Callable[[], None]] = []
        queue = _object_named(
            "queue", command, name, self.result.queues, partial(QmgrQueue, name, number), changes
        )
        for pair in pairs:
            canonical = _QUEUE_NAMES.get(pair.name.lower())
            attribute = canonical or pair.name
            key = attribute if pair.resource is None else f"{attribute}.{pair.resource}"
            field = f"{command} queue {name} {key}"
            changes.append(_stored(self.arrays, queue.attributes, field, pair, key))
            if canonical is None:
                changes.append(self._unknown(number, f"queue {name}", pair))
            elif pair.resource is None:
                changes.append(_typed_queue(queue, field, attribute, pair))
        return changes

    def _resource(
        self, number: int, command: str, name: str, pairs: list[_Pair]
    ) -> list[Callable[[], None]]:
        changes: list[Callable[[], None]] = []
        resource = _object_named(
            "resource", command, name, self.result.resources,
            partial(QmgrResource, name, number), changes,
        )  # fmt: skip
        for pair in pairs:
            field = f"{command} resource {name} {pair.key}"
            _single(field, pair)
            value = pair.value
            if pair.key.lower() == "type":
                if value not in RESOURCE_TYPES:
                    allowed = ", ".join(sorted(RESOURCE_TYPES))
                    raise _Problem(field, f"not a resource type: {value!r} ({allowed})")
                changes.append(partial(setattr, resource, "type", value))
            elif pair.key.lower() == "flag":
                if any(letter not in RESOURCE_FLAGS for letter in value):
                    raise _Problem(field, f"not resource flags: {value!r} (of {RESOURCE_FLAGS})")
                changes.append(partial(setattr, resource, "flags", value))
            else:
                raise _Problem(field, "a resource has only a type and a flag")
        return changes

    def _sched(
        self, number: int, command: str, name: str, pairs: list[_Pair]
    ) -> list[Callable[[], None]]:
        scheds = self.result.scheds
        changes: list[Callable[[], None]] = []
        if command == "create":
            attributes = scheds.get(name, {})
            changes.append(partial(scheds.__setitem__, name, attributes))
        elif name not in scheds:
            raise _Problem(f"set sched {name}", "no `create sched` for this scheduler before")
        else:
            attributes = scheds[name]
        default = name == DEFAULT_SCHED
        for pair in pairs:
            canonical = _SCHED_NAMES.get(pair.name.lower())
            attribute = canonical or pair.name
            key = attribute if pair.resource is None else f"{attribute}.{pair.resource}"
            field = f"{command} sched {name} {key}"
            changes.append(_stored(self.arrays, attributes, field, pair, key))
            if canonical is None:
                changes.append(self._unknown(number, f"sched {name}", pair))
            elif default and pair.resource is None:
                changes.append(self._typed_sched(field, attribute, pair))
        return changes

    def _typed_sched(self, field: str, name: str, pair: _Pair) -> Callable[[], None]:
        value = pair.value
        if name == "job_sort_formula":
            _single(field, pair)
            return lambda: setattr(self, "_sched_formula", value)
        if name == "job_sort_formula_threshold":
            _single(field, pair)
            threshold = _float(field, value)
            return lambda: setattr(self.result, "job_sort_formula_threshold", threshold)
        if name == "scheduler_iteration":
            return self._iteration(field, pair)
        return _nothing


_Named = TypeVar("_Named")


def _object_named(
    kind: str,
    command: str,
    name: str,
    made: dict[str, _Named],
    make: Callable[[], _Named],
    changes: list[Callable[[], None]],
) -> _Named:
    """The queue or resource a `create` or `set` line names: a new one for `create` (added
    when the line is applied), the one created before for `set`; raises _Problem otherwise."""
    if not name:
        raise _Problem("line", f"{command} {kind} without a {kind} name")
    if command == "create":
        if name in made:
            raise _Problem(f"create {kind} {name}", f"the {kind} was created before")
        new = make()
        changes.append(lambda: made.__setitem__(name, new))
        return new
    if name not in made:
        raise _Problem(f"set {kind} {name}", f"no `create {kind}` for this {kind} before")
    return made[name]


def _typed_queue(queue: QmgrQueue, field: str, name: str, pair: _Pair) -> Callable[[], None]:
    """The typed field a queue attribute sets, checked as the server checks it."""
    value = pair.value
    if name == "Priority":
        _single(field, pair)
        priority = _long(field, value)
        if not -1024 <= priority <= 1023:  # Libecl verify_value_priority
            raise _Problem(field, f"{priority} is outside -1024..1023")
        return lambda: setattr(queue, "priority", priority)
    if name == "queue_type":
        _single(field, pair)
        kind = next(
            (full for full in _QUEUE_TYPES if value and full.lower().startswith(value.lower())),
            None,
        )
        if kind is None:
            raise _Problem(field, f"not a queue type: {value!r} (Execution or Route)")
        return lambda: setattr(queue, "queue_type", kind)
    if name in ("enabled", "started"):
        _single(field, pair)
        flag = _boolean(field, value)
        return lambda: setattr(queue, name, flag)
    return _nothing


def _nothing() -> None:
    return None


def _all(changes: list[Callable[[], None]]) -> Callable[[], None]:
    def run() -> None:
        for change in changes:
            change()

    return run
