"""Altair Accelerator FairShare as a replay's queue order: the jobs of the group with the best
FS_RANK first, then by submit time and job id.

At each pass the FS_* fields are computed by the cycles' own `fs_fields` from the jobs queued,
running and ended within the longest window; a job is in the FairShare group its `group` names
(as the jobs export names it, usually a user leaf such as /class/vcs.u1) and holds one token.
"""

from __future__ import annotations

from collections.abc import Sequence

from trees.engine.accelerator import DEFAULT_WINDOW, FsGroup, FsJob, fs_fields
from trees.engine.simulate import SimJob, job_id_key

__all__ = ["AcceleratorOrder"]


class AcceleratorOrder:
    """The queue by FS_RANK of the jobs' groups, history kept over the groups' windows."""

    def __init__(
        self, groups: Sequence[FsGroup], *, relative: int = 2, alpha: float = 10.0
    ) -> None:
        self.groups = list(groups)
        self.relative = relative
        self.alpha = alpha
        windows = [group.window for group in self.groups if group.window is not None]
        self.longest = max([DEFAULT_WINDOW, *windows])
        self.running: dict[int, FsJob] = {}  # by id(job)
        self.ended: list[FsJob] = []  # those that may still count in a window

    def order(self, now: int, queued: Sequence[SimJob]) -> Sequence[SimJob]:
        self.ended = [
            job for job in self.ended if job.ended is not None and job.ended > now - self.longest
        ]
        jobs = [FsJob(job.job_id, _path(job.group), "queued", job.submit) for job in queued]
        jobs += self.running.values()
        jobs += self.ended
        fields = fs_fields(self.groups, jobs, now, relative=self.relative, alpha=self.alpha)
        rank = {field.group: field.rank9 for field in fields}
        return sorted(
            queued,
            key=lambda job: (rank[_path(job.group)], job.submit, job_id_key(job.job_id)),
        )

    def job_started(self, job: SimJob, now: int) -> None:
        self.running[id(job)] = FsJob(
            job.job_id, _path(job.group), "running", job.submit, started=now
        )

    def job_ended(self, job: SimJob, now: int) -> None:
        started = self.running.pop(id(job))
        self.ended.append(
            FsJob(
                started.job_id,
                started.group,
                "done",
                job.submit,
                started=started.started,
                ended=now,
            )
        )


def _path(group: str) -> str:
    """A group's path as fs_fields names it (the root "/" implied)."""
    return group if group.startswith("/") else f"/{group}"
