"""Why a job waits: its page (its priority term by term, its place, the jobs ahead of it, the
reason in words, what would change it, its priority's history), the projection it fetches,
and the cluster's queue; each job as far as the person may read its entity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from accounting.job_priority import (
    FairshareTerm,
    JobPriority,
    QueuedRow,
    entity_paths_get,
    job_priority_get,
    queue_get,
    queued_row_get,
)
from accounting.priorities import QueuedJob
from accounting.priority_whatif import priority_whatif_get
from accounting.selectors import cycle_period
from trees.access import Access, access_get, scheduler_user
from trees.explanations import (
    EXPLANATIONS,
    fairshare_term_sentence,
    history_sentence,
    input_text,
    job_order_sentence,
    job_place_sentence,
    jobs_ahead_sentence,
    priority_text,
    pulled_down_by,
    target_standing,
    whatif_sentence,
)
from trees.models import Cluster, Scheduler
from trees.quantities import span_text, wait_text
from trees.views.documents import document_response
from trees.views.lookup import cluster_or_404
from trees.views.parameters import JOBS_PAGE, page_or_404

NO_JOB = "no such waiting job"
TERM_COLOURS = 8  # static/css/jobs.css: .term-0 to .term-7, Okabe and Ito's palette


def job_readable(access: Access, row: QueuedRow, me: str) -> bool:
    """Whether the person may read a waiting job: theirs (their scheduler user name), or one
    of an entity they read (everyone, where usage is not private)."""
    return (
        access.whole_tree
        or (bool(me) and row.user == me)
        or (bool(row.path) and access.reads(row.path))
    )


@dataclass(frozen=True)
class JobLookup:
    cluster: Cluster
    access: Access
    row: QueuedRow


def job_lookup(request: HttpRequest, name: str, job_id: str) -> JobLookup:
    """The cluster's waiting job of that id, if the person may read it; 404 otherwise, the same
    for a job they may not read as for one that does not exist, after the same queries (their
    access first, then the job with its path)."""
    cluster = cluster_or_404(name)
    if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
        raise Http404(NO_JOB)
    access = access_get(user=request.user, cluster=cluster)
    me = scheduler_user(request.user)
    row = queued_row_get(cluster=cluster, job_id=job_id)
    if row is None or not job_readable(access, row, me):
        raise Http404(NO_JOB)
    return JobLookup(cluster, access, row)


@dataclass(frozen=True)
class TermPart:
    """One term of a priority as the bar draws it."""

    text: str
    value: float
    share: float  # of the positive terms' sum (a negative term: of that sum too, subtracted)
    colour: int
    slurm: bool

    @property
    def width(self) -> str:
        """The segment's width, a CSS percentage written without the locale's decimal mark."""
        return f"{min(100.0, abs(self.share) * 100):.2f}%"

    @property
    def shown(self) -> str:
        return priority_text(self.value, slurm=self.slurm)

    @property
    def percent(self) -> str:
        """Its share in percent to a tenth, a negative term's with a minus sign (`−2.5`); a
        share that is neither none nor all never reads as 0.0 or 100.0."""
        share = abs(self.share) * 100
        if 0 < share < 0.05:
            text = "<0.1"
        elif 99.95 <= share < 100:
            text = ">99.9"
        else:
            text = f"{share:.1f}"
        return f"−{text}" if self.value < 0 else text


def term_parts(terms: dict[str, float], *, slurm: bool) -> tuple[list[TermPart], list[TermPart]]:
    """The positive terms (in the formula's order) and the negative ones, each with its share
    of the positive terms' sum; zero terms count with the positive ones."""
    positive_sum = sum(value for value in terms.values() if value > 0)
    parts = [
        TermPart(
            text, value, value / positive_sum if positive_sum else 0.0, index % TERM_COLOURS, slurm
        )
        for index, (text, value) in enumerate(terms.items())
    ]
    return [p for p in parts if p.value >= 0], [p for p in parts if p.value < 0]


def fairshare_words(
    explained: JobPriority, fairshare: FairshareTerm | None, entity: str
) -> str | None:
    if fairshare is None:
        return None
    over = explained.over
    node, slurm = explained.node, explained.slurm
    pulled = (
        pulled_down_by(explained.path, slurm=slurm, standing=target_standing(node, slurm=slurm))
        if node is not None and over is None
        else ""
    )
    return fairshare_term_sentence(
        entity=entity,
        term=fairshare.term,
        value=fairshare.value,
        best=fairshare.best,
        slurm=explained.slurm,
        over=over.node.name if over else None,
        ratio=over.ratio if over else None,
        pulled=pulled,
    )


def job_reasons(explained: JobPriority) -> list[str]:
    """The page's sentences about the job, in its order: its place, the jobs ahead, why."""
    job = explained.job
    said = [
        job_place_sentence(
            position=job.position,
            waiting=explained.waiting,
            queue_position=job.queue_position,
            queue=job.queue,
            left_out=job.left_out,
        )
    ]
    if not job.held:
        ahead = explained.ahead
        said.append(
            jobs_ahead_sentence(jobs=ahead.jobs, cores=ahead.cores, core_hours=ahead.core_hours)
        )
    fairshare = fairshare_words(explained, explained.fairshare, job.entity)
    if fairshare:
        said.append(fairshare)
    if job.under_threshold:
        said.append(THRESHOLD)
    if job.error:
        said.append(f"The formula failed for this job ({job.error}): PBS counts its priority as 0.")
    if job.reason:
        said.append(f"The scheduler's own comment: {job.reason}")
    said.append(
        job_order_sentence(
            formula=explained.order.formula, slurm=explained.slurm, problem=explained.order.problem
        )
    )
    return said


THRESHOLD = (
    "Its priority is at or under the server's job_sort_formula_threshold: PBS does not run it"
    " until that changes."
)


def _since(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "unknown"
    return f"{moment:%Y-%m-%d %H:%M} UTC ({wait_text(now - moment)} ago)"


def job_page(request: HttpRequest, name: str, job_id: str) -> HttpResponse:
    found = job_lookup(request, name, job_id)
    cluster = found.cluster
    now = timezone.now()
    explained = job_priority_get(cluster=cluster, job_id=job_id, now=now)
    if explained is None:  # it started between the two reads
        raise Http404(NO_JOB)
    job = explained.job
    positive, negative = term_parts(job.terms, slurm=explained.slurm)
    history = explained.history
    return render(
        request,
        "trees/job.html",
        {
            "cluster": cluster,
            "job": job,
            "at": explained.order.at,
            "slurm": explained.slurm,
            "node": explained.node,
            "opens": bool(explained.path) and found.access.opens(explained.path_ids),
            "place": job_place_sentence(
                position=job.position,
                waiting=explained.waiting,
                queue_position=job.queue_position,
                queue=job.queue,
                left_out=job.left_out,
            ),
            "ahead": jobs_ahead_sentence(
                jobs=explained.ahead.jobs,
                cores=explained.ahead.cores,
                core_hours=explained.ahead.core_hours,
            ),
            "since": _since(job.submitted, now),
            "walltime": span_text(timedelta(seconds=job.walltime)) if job.walltime else "",
            "priority": priority_text(job.priority, slurm=explained.slurm),
            "order": job_order_sentence(
                formula=explained.order.formula,
                slurm=explained.slurm,
                problem=explained.order.problem,
            ),
            "fairshare": fairshare_words(explained, explained.fairshare, job.entity),
            "positive": positive,
            "bar": [part for part in positive if part.value > 0],
            "negative": negative,
            "values": [(key, input_text(value)) for key, value in job.values.items()],
            "history": {
                "at": [row.at.isoformat() for row in history],
                "priority": [row.priority for row in history],
                "position": [row.position for row in history],
            },
            "history_sentence": history_sentence(
                [(row.at, row.priority, row.position) for row in history],
                span_text(cycle_period(cluster)),
                slurm=explained.slurm,
            ),
            "explain": EXPLANATIONS,
        },
    )


def job_whatif_json(request: HttpRequest, name: str, job_id: str) -> HttpResponse:
    """Where the job would stand after the next decay if its entity ran nothing more (PBS)."""
    found = job_lookup(request, name, job_id)
    projection = priority_whatif_get(cluster=found.cluster, job_id=job_id, now=timezone.now())
    if projection is None:
        raise Http404(NO_JOB)
    sentence = (
        whatif_sentence(
            entity=projection.entity,
            decay_at=projection.decay_at,
            position=projection.position,
            now=projection.position_now,
            priority=priority_text(projection.priority),
        )
        if projection.supported
        else projection.reason
    )
    return document_response(
        {
            "job_id": projection.job_id,
            "entity": projection.entity,
            "supported": projection.supported,
            "decay_at": projection.decay_at.isoformat() if projection.decay_at else None,
            "position_now": projection.position_now,
            "position": projection.position,
            "queue_position": projection.queue_position,
            "priority": projection.priority,
            "waiting": projection.waiting,
            "sentence": sentence,
        }
    )


@dataclass(frozen=True)
class QueueRow:
    """A job of the queue as the person may see it: `masked`, only its size and priority."""

    job: QueuedJob
    masked: bool
    mine: bool  # the person's own (their scheduler user name's)
    since: str
    walltime: str
    priority: str


def queue_rows(
    cluster: Cluster, jobs: Sequence[QueuedJob], access: Access, me: str, now: datetime
) -> list[QueueRow]:
    """Each job with whether the person may read it (trees.access, as the tree hides nodes)."""
    paths = (
        {}
        if access.whole_tree
        else entity_paths_get(cluster=cluster, node_ids={j.node_id for j in jobs if j.node_id})
    )
    rows = []
    for job in jobs:
        path = paths.get(job.node_id, []) if job.node_id else []
        readable = job_readable(access, QueuedRow(job.job_id, job.user, path), me)
        rows.append(
            QueueRow(
                job,
                not readable,
                bool(me) and job.user == me,
                _since(job.submitted, now) if readable else "",
                span_text(timedelta(seconds=job.walltime)) if job.walltime else "",
                priority_text(job.priority, slurm=cluster.scheduler == Scheduler.SLURM),
            )
        )
    return rows


def queue_page(request: HttpRequest, name: str) -> HttpResponse:
    """The cluster's waiting jobs in the order the scheduler considers them, the held ones
    after, JOBS_PAGE a page (`page`); for anyone who may read the cluster, jobs of private
    entities masked. Each job keeps its place in the whole order, whatever its page."""
    cluster = cluster_or_404(name)
    if cluster.scheduler not in (Scheduler.PBS, Scheduler.SLURM):
        raise Http404("no queue is read for this cluster")
    now = timezone.now()
    order = queue_get(cluster=cluster, now=now)
    page = page_or_404(request, [*order.ordered, *order.held], JOBS_PAGE)
    # The page's jobs before this index are in the order, those from it held.
    first_held = max(0, len(order.ordered) - page.start_index() + 1)
    access = access_get(user=request.user, cluster=cluster)
    me = scheduler_user(request.user)
    jobs: list[QueuedJob] = list(page.object_list)
    ordered = queue_rows(cluster, jobs[:first_held], access, me, now)
    held = queue_rows(cluster, jobs[first_held:], access, me, now)
    return render(
        request,
        "trees/queue.html",
        {
            "cluster": cluster,
            "slurm": cluster.scheduler == Scheduler.SLURM,
            "order": order,
            "now": now,
            "page": page,
            "waiting": len(order.ordered),
            "held_count": len(order.held),
            "ordered": ordered,
            "held": held,
            "masked": any(row.masked for row in (*ordered, *held)),
            "how": job_order_sentence(
                formula=order.formula,
                slurm=cluster.scheduler == Scheduler.SLURM,
                problem=order.problem,
            ),
            "explain": EXPLANATIONS,
        },
    )
