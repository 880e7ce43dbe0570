"""Which leaf of the fairshare tree a job run is charged to; pure, no Django.

PBS charges the entity its `fairshare_entity` names, Slurm the association (account, user).
SWF traces number their users, groups, queues and partitions; `swf_named` gives them names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accounting.parsers.records import JobRecord

SwfAccountFrom = Literal["group", "queue", "partition"]
SWF_ACCOUNT_FROM: tuple[SwfAccountFrom, ...] = ("group", "queue", "partition")


def pbs_entity(record: JobRecord, fairshare_entity: str) -> str:
    """The job attribute `fairshare_entity` names, else `egroup:euser` (OpenPBS job_info.cpp)."""
    value = {
        "euser": record.user,
        "egroup": record.group,
        "Account_Name": record.account,
        "project": record.project,
        "queue": record.queue,
    }.get(fairshare_entity, "")
    return value or f"{record.group}:{record.user}"


def slurm_entity(record: JobRecord) -> str:
    """A Slurm job is charged to its association, named `account:user` as the commands take it."""
    return f"{record.account}:{record.user}"


@dataclass(frozen=True)
class Placement:
    """Where `--create-nodes` puts a missing entity: under `parent`, or under the root."""

    entity: str
    parent: str | None


def pbs_placement(record: JobRecord, fairshare_entity: str) -> Placement:
    """A user (or `group:user`) goes under its account, else its group; the others under root."""
    entity = pbs_entity(record, fairshare_entity)
    charged_to_user = fairshare_entity == "euser" or entity == f"{record.group}:{record.user}"
    parent = (record.account or record.group) if charged_to_user else ""
    return Placement(entity, parent if parent and parent != entity else None)


def swf_named(record: JobRecord, *, account_from: SwfAccountFrom = "group") -> JobRecord:
    """Names for an SWF job's numbers, in place: user17, group3, queue2 (or the header's name).

    The account and project are the group (or the queue or partition when asked), the only
    grouping of users a trace has. In place because a trace has hundreds of thousands of jobs.
    """
    record.user = _named("user", record.user)
    record.group = _named("group", record.group)
    record.queue = _named("queue", record.queue)
    record.partition = _named("partition", record.partition)
    account = {"group": record.group, "queue": record.queue, "partition": record.partition}
    record.account = record.project = account[account_from]
    return record


def _named(kind: str, value: str) -> str:
    """`kind` + the number for a numbered id; a header's name as it is; "" for unknown."""
    return f"{kind}{value}" if value.isdigit() else value
