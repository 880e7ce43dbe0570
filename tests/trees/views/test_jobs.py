"""Why a job waits: the job page, its projection and the queue page, on a small PBS cluster
whose numbers tests/trees/queue_site.py computes by hand."""

import html
import json
import re
from dataclasses import asdict
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.humanize.templatetags.humanize import ordinal
from django.test import Client
from django.utils import timezone

from accounting.models import Job, JobPriorityHistory
from accounting.parsers.records import JobRequest
from accounting.selectors import CURRENT_JOBS_SHOWN
from tests.cast import login, member_made
from tests.trees.queue_site import queued_job_made
from trees.models import Cluster, Node
from trees.views.standing import MY_JOBS_SHOWN

pytestmark = pytest.mark.django_db


def text_of(answer: object) -> str:
    """A page's words, tags out and spaces folded, entities decoded."""
    content = answer.content.decode()  # type: ignore[attr-defined]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)))


@pytest.fixture
def bea(client: Client, queue_site: Cluster) -> User:
    """A member of bio, whose jobs run as bea."""
    user = login(client, "bea", scheduler_user="bea")
    member_made(user, Node.objects.get(cluster=queue_site, name="bio"))
    return user


def test_the_job_page_gives_its_place_the_jobs_ahead_and_why(client: Client, bea: User) -> None:
    answer = client.get("/clusters/q/jobs/101[1]/")
    assert answer.status_code == 200
    text = text_of(answer)
    assert "2nd of 3 waiting; 2nd in queue workq." in text
    assert (
        "1 job ahead of it, asking for 16 cores and 32.0 core-hours in all (requested cores ×"
        " requested walltime)." in text
    )
    assert (
        "cond's fairshare term 1000*(1-fairshare_tree_usage) is 583.333 of a possible 1,000"
        " (its value with no usage: fairshare_tree_usage 0, fairshare_factor 1): physics has"
        " used 1.3× its target share of the machine (decayed usage against target), the"
        " furthest over target on its path." in text
    )
    assert "64 cores for 1 hour of walltime (64.0 core-hours)" in text
    assert re.search(r"Waiting since \d{4}-\d\d-\d\d \d\d:\d\d UTC \(2 days ago\)", text)


def test_the_priority_is_drawn_as_the_sum_of_its_terms(client: Client, bea: User) -> None:
    """The terms of 101[1]: 640/6656 + 583.333 + 2 = 585.42915 (PBS keeps it as a float,
    585.42914, and prints it with four decimals); the fairshare term is 99.6 % of the sum,
    the size term under 0.1 %, the eligible time 0.3 %."""
    answer = client.get("/clusters/q/jobs/101[1]/")
    text = text_of(answer)
    assert "10*(ncpus/6656) 0.0962 <0.1 %" in text
    assert "1000*(1-fairshare_tree_usage) 583.333 99.6 %" in text
    assert "eligible_time/86400 2 0.3 %" in text
    assert "Priority 585.4291" in text
    assert "fairshare_tree_usage 0.416667" in text
    assert "eligible_time 172,800" in text
    page = answer.content.decode()
    assert 'style="width: 99.64%"' in page
    assert page.count('class="term term-') == 3
    assert "termbar negative" not in page


def test_a_job_without_history_says_when_its_history_starts(client: Client, bea: User) -> None:
    text = text_of(client.get("/clusters/q/jobs/101[1]/"))
    assert (
        "No cycle has recorded this job's priority yet: its history starts with the next"
        " cycle (every 10 minutes)." in text
    )
    assert "job-history-chart" not in client.get("/clusters/q/jobs/101[1]/").content.decode()


def test_the_history_chart_draws_each_cycle_s_priority_and_place(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    for minutes, priority, position in ((20, 580.5, 3), (10, 584.25, 2)):
        JobPriorityHistory.objects.create(
            cluster=queue_site, job_id="101[1]", at=queue_now - timedelta(minutes=minutes),
            priority=priority, position=position, queue_position=position,
        )  # fmt: skip
    page = client.get("/clusters/q/jobs/101[1]/").content.decode()
    data = re.search(r'<script id="job-history" type="application/json">(.*?)</script>', page)
    assert data is not None
    history = json.loads(data.group(1))
    assert history["priority"] == [580.5, 584.25]
    assert history["position"] == [3, 2]
    assert 'id="job-history-chart"' in page


def test_one_cycle_of_history_is_a_sentence_not_a_chart(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    JobPriorityHistory.objects.create(
        cluster=queue_site, job_id="101[1]", at=timezone.now(), priority=584.25, position=2,
        queue_position=2,
    )  # fmt: skip
    page = client.get("/clusters/q/jobs/101[1]/")
    assert "job-history-chart" not in page.content.decode()
    assert "priority 584.25, 2nd in line): the chart starts with the next cycle" in text_of(page)


def test_the_projection_moves_the_job_up_after_the_next_decay(client: Client, bea: User) -> None:
    """cond's 500 decays to 250: physics 1,750, the root 2,750; cond's tree usage 2000/5500
    = 0.363636, bio's 1000/2750 the same. A day on, 101[1] has 0.0962 + 636.364 + 3 =
    639.4602 (639.4601 as a float) and 102.srv 0.024 + 636.364 + 2 = 638.388: 101[1] goes
    first."""
    answer = client.get("/clusters/q/jobs/101[1]/whatif.json")
    assert answer.status_code == 200
    data = answer.json()
    assert (data["position_now"], data["position"], data["queue_position"]) == (2, 1, 1)
    assert data["priority"] == pytest.approx(639.460, abs=1e-3)
    assert data["waiting"] == 3
    assert re.fullmatch(
        r"If cond ran nothing more, after the next decay on \d{4}-\d\d-\d\d \d\d:\d\d UTC this"
        r" job would be 1st, with priority 639\.4601 \(up from 2nd now\)\.",
        data["sentence"],
    )


def test_the_queue_lists_every_waiting_job_in_order_then_the_held(
    client: Client, bea: User
) -> None:
    answer = client.get("/clusters/q/queue/")
    assert answer.status_code == 200
    text = text_of(answer)
    assert "Queue of q 3 waiting, 1 held" in text
    order = [text.index(f" {job} ") for job in ("102.srv", "101[1]", "103", "104")]
    assert order == sorted(order)
    assert "1st 1st 102.srv bio bea yours workq 16 2 hours 667.6910" in text
    assert "3rd 1st 103 grav gus long 8 1 hour 419.8450" in text
    assert 'href="/clusters/q/jobs/101%5B1%5D/"' in answer.content.decode()


def test_private_usage_masks_the_jobs_of_entities_the_person_may_not_read(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    Cluster.objects.filter(pk=queue_site.pk).update(private_usage=True)
    answer = client.get("/clusters/q/queue/")
    page, text = answer.content.decode(), text_of(answer)
    assert "102.srv bio bea" in text  # her own project's job
    for hidden in ("101[1]", "101%5B1%5D", "103", "cond", "grav", "dkaya", "gus"):
        assert hidden not in page, hidden
    assert "2nd private 64 1 hour 585.4291" in text
    assert client.get("/clusters/q/jobs/101[1]/").status_code == 404
    assert client.get("/clusters/q/jobs/101[1]/whatif.json").status_code == 404
    assert client.get("/clusters/q/jobs/102.srv/").status_code == 200


def test_a_person_reads_their_own_job_whatever_its_entity(
    client: Client, queue_site: Cluster
) -> None:
    Cluster.objects.filter(pk=queue_site.pk).update(private_usage=True)
    login(client, "dan", scheduler_user="dkaya")
    assert client.get("/clusters/q/jobs/101[1]/").status_code == 200
    assert client.get("/clusters/q/jobs/102.srv/").status_code == 404


@pytest.mark.parametrize(
    "job_id",
    ["<script>alert(1)</script>", "9" * 500, "..", "%2e%2e", "999", "104x", "a b", "%00"],
)
def test_hostile_and_unknown_job_ids_are_the_site_s_404(
    client: Client, bea: User, job_id: str
) -> None:
    for suffix in ("", "whatif.json"):
        answer = client.get(f"/clusters/q/jobs/{job_id}/{suffix}")
        assert answer.status_code == 404, job_id
        if not suffix:
            page = answer.content.decode()
            assert "<script>alert" not in page
            assert "Fairshare dashboard" in page
            assert "Not found" in page


def test_a_held_job_has_no_place_and_no_projection(client: Client, bea: User) -> None:
    text = text_of(client.get("/clusters/q/jobs/104/"))
    assert "Held: the scheduler does not consider it until it is released" in text
    assert "Nothing of fairshare: a held job waits until it is released." in text


def test_the_scheduler_s_own_comment_is_shown_escaped(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    queued_job_made(
        queue_site, "105", "bio", "bea", 1, 60, timezone.now(), reason="<b>Not Running</b>: ncpus"
    )
    page = client.get("/clusters/q/jobs/105/").content.decode()
    assert "&lt;b&gt;Not Running&lt;/b&gt;: ncpus" in page
    assert "<b>Not Running</b>" not in page


def test_the_cluster_page_links_its_queue(client: Client, bea: User) -> None:
    assert 'href="/clusters/q/queue/"' in client.get("/clusters/q/").content.decode()


def test_my_jobs_on_the_landing_page_and_me(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    Job.objects.create(
        cluster=queue_site, job_id="99", run=1, state="running", entity="bio",
        node=Node.objects.get(cluster=queue_site, name="bio"), user="bea", queue="workq", ncpus=8,
        start=queue_now - timedelta(hours=3), source_file="t", source_line=2,
    )  # fmt: skip
    for address in ("/", "/me/"):
        text = text_of(client.get(address))
        assert "My jobs as bea" in text, address
        assert (
            "102.srv : 1st of 3 waiting; 1st in queue workq; 16 cores for 2 hours, waiting 1 day;"
            " fairshare term 666.667 of a possible 1,000." in text
        ), address
        assert re.search(
            r"99: 8 cores since \d{4}-\d\d-\d\d \d\d:\d\d UTC: 24\.0 core-hours so far", text
        ), address
    assert 'href="/clusters/q/jobs/102.srv/"' in client.get("/").content.decode()


def test_a_slurm_job_shows_its_weighted_factors_and_nice_apart(
    client: Client, samples: None, queue_now: datetime
) -> None:
    """fairtree (the Slurm sample) weighing FairShare 10,000 and age 1,000 (PriorityMaxAge 7
    days): a job of an association with FairShare f, accruing age for 3.5 days, with nice 200,
    has age 500, fairshare 10,000 f and nice -200, and priority their sum, truncated."""
    cluster = Cluster.objects.get(name="fairtree")
    Cluster.objects.filter(pk=cluster.pk).update(
        slurm_priority={"weight_fairshare": 10000, "weight_age": 1000}
    )
    user = Node.objects.filter(cluster=cluster, kind="user", fairshare_rank__isnull=False).first()
    assert user is not None
    assert user.parent is not None
    request = JobRequest(
        accrue_time=int((queue_now - timedelta(days=3.5)).timestamp()), nice=200, reason="Priority"
    )
    Job.objects.create(
        cluster=cluster, job_id="4103947_7", run=1, state="queued",
        entity=f"{user.parent.name}:{user.name}", node=user, user=user.name,
        account=user.parent.name, queue="batch", ncpus=4, requested_walltime=600,
        qtime=queue_now - timedelta(days=3.5), source_file="t", source_line=1,
        request=json.dumps(asdict(request)),
    )  # fmt: skip
    login(client, "root-admin", staff=True)
    answer = client.get("/clusters/fairtree/jobs/4103947_7/")
    assert answer.status_code == 200
    text, page = text_of(answer), answer.content.decode()
    fairshare = 10000 * user.fairshare_factor
    assert f"fairshare {fairshare:,.0f}" in text
    assert "age 500" in text
    assert "nice (subtracted) -200" in text
    assert f"Priority {int(fairshare + 500 - 200):,}" in text
    assert "termbar negative" in page
    assert "1st of 1 waiting; 1st in queue batch." in text
    assert "of a possible 10,000 (PriorityWeightFairShare, a FairShare of 1.0)" in text
    assert "No projection on Slurm" in text
    assert "The scheduler's own comment: Priority" in text
    projection = client.get("/clusters/fairtree/jobs/4103947_7/whatif.json").json()
    assert projection["supported"] is False


def test_without_a_formula_pbs_s_sort_criteria_order_the_job(
    client: Client, bea: User, queue_site: Cluster
) -> None:
    """No job_sort_formula: fair_share orders the jobs by their entities' usage/perc (bio
    1000 / 0.5 = 2000, cond 500 / 0.25 = 2000 under physics's 4000: bio first)."""
    Cluster.objects.filter(pk=queue_site.pk).update(job_sort_formula="")
    answer = client.get("/clusters/q/jobs/101[1]/")
    assert answer.status_code == 200
    text, page = text_of(answer), answer.content.decode()
    assert "2nd of 3 waiting" in text
    assert "What orders it" in text
    assert "usage/perc (fair_share)" in text
    assert "termbar" not in page
    assert "has no job_sort_formula: it orders the jobs by its sort keys" in text


def waiting_jobs_made(cluster: Cluster, how_many: int, now: datetime) -> None:
    """`how_many` one-core jobs of bio's, each a minute younger than the one before: they rank
    after 102.srv (a day eligible) and before 101[1] (cond, far over target), oldest first."""
    request = json.dumps(asdict(JobRequest(resources={"ncpus": 1, "walltime": 60})))
    bio = Node.objects.get(cluster=cluster, name="bio")
    jobs = []
    for number in range(how_many):
        eligible = now - timedelta(minutes=how_many - number)
        job = Job(
            cluster=cluster, job_id=str(2000 + number), run=1, state="queued", entity="bio",
            node=bio, user="bea", queue="workq", ncpus=1, requested_walltime=60, ctime=eligible,
            qtime=eligible, etime=eligible, source_file="test", source_line=2 + number,
            request=request,
        )  # fmt: skip
        jobs.append(job)
    Job.objects.bulk_create(jobs)


def queue_places(page: str) -> list[list[str]]:
    """The Place column of each table of the queue page, table by table."""
    tables = re.findall(r'<table class="queue">(.*?)</table>', page, re.S)
    return [re.findall(r"<tr[^>]*>\s*<td>([^<]*)</td>", table) for table in tables]


def test_the_queue_page_lists_a_page_of_jobs_numbered_in_the_scheduler_s_order(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    waiting_jobs_made(queue_site, 147, queue_now)  # 150 waiting, and 104 held
    first = client.get("/clusters/q/queue/")
    assert first.status_code == 200
    page, text = first.content.decode(), text_of(first)
    (places,) = queue_places(page)
    assert places == [ordinal(place) for place in range(1, 101)]
    assert "Queue of q 150 waiting, 1 held" in text
    assert '<p class="pages">151 jobs; page 1 of 2' in page
    assert '<a href="?page=2">next</a>' in page
    assert "previous</a>" not in page
    assert " 2146 " not in text  # the last of them: on the second page, as 103 is
    assert " 103 " not in text
    second = client.get("/clusters/q/queue/", {"page": "2"})
    page, text = second.content.decode(), text_of(second)
    waiting, held = queue_places(page)
    assert waiting == [ordinal(place) for place in range(101, 151)]
    assert held == ["held"]
    assert "Queue of q 150 waiting, 1 held" in text
    assert "150th 1st 103 grav gus long 8 1 hour 419.8450" in text
    assert "No job is waiting" not in text
    assert '<a href="?page=1">previous</a>' in page
    assert "next</a>" not in page
    assert client.get("/clusters/q/queue/", {"page": "3"}).status_code == 404
    assert client.get("/clusters/q/queue/", {"page": "x"}).status_code == 400


def test_a_page_of_held_jobs_alone_does_not_say_nothing_waits(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    waiting_jobs_made(queue_site, 97, queue_now)  # 100 waiting: page 2 is 104, held, alone
    second = client.get("/clusters/q/queue/", {"page": "2"})
    page, text = second.content.decode(), text_of(second)
    assert queue_places(page) == [["held"]]
    assert "No job is waiting" not in text
    assert '<p class="pages">101 jobs; page 2 of 2' in page


def test_my_jobs_lists_the_first_of_many_and_counts_the_rest(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    waiting_jobs_made(queue_site, 147, queue_now)  # bea's: 102.srv and these 147
    for address in ("/", "/me/"):
        answer = client.get(address)
        page, text = answer.content.decode(), text_of(answer)
        section = page.split('class="standing my-jobs"')[1].split("</section>")[0]
        assert section.count("<li>") == MY_JOBS_SHOWN, address
        assert "102.srv : 1st of 150 waiting" in text, address
        assert f"And {148 - MY_JOBS_SHOWN} more of yours waiting" in text, address
        assert f">{2000 + MY_JOBS_SHOWN - 2}</a>: " in section  # her 50th, the 51st of all
        assert f">{2000 + MY_JOBS_SHOWN - 1}</a>: " not in section


def test_an_entity_s_row_lists_the_first_of_its_many_jobs_and_counts_the_rest(
    client: Client, bea: User, queue_site: Cluster, queue_now: datetime
) -> None:
    waiting_jobs_made(queue_site, 147, queue_now)  # bio's: 102.srv and these 147
    answer = client.get("/")
    table = answer.content.decode().split('<table class="answers">')[1].split("</table>")[0]
    assert table.count("<li>") == CURRENT_JOBS_SHOWN
    assert f"and {148 - CURRENT_JOBS_SHOWN} more" in table
