"""Recorded vs actual usage: the page's numbers are usage_loss_get's and
usage_loss_whatifs_get's, for the window asked for; a window or an order it cannot read is
said on the page (never repeated as sent); admins of PBS clusters only.

Seed 000's figure 2 (as tests/accounting/commands/test_usage_loss.py rebuilds it) gives the
sentences word for word; the demo's hpc, the numbers of a real-sized window."""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounting.models import Job
from accounting.parsers.records import JobState
from accounting.usage_loss import usage_loss_get, usage_loss_whatifs_get
from tests.cast import login
from trees.formats.mom_config import parse_mom_config
from trees.models import Cluster
from trees.quantities import cluster_usage_unit, part_percent, usage_number, usage_text
from trees.services.clusters import cluster_get_or_create, cluster_settings_set
from trees.services.priority_config import mom_config_import

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)  # on the 20-minute grid of cycles
FIGURE_2 = "/clusters/fig2/usage-loss/?from=2026-03-01&until=2026-03-01"


def text_of(answer: Any) -> str:
    """A page's words, tags out and spaces folded, entities decoded."""
    content = answer.content.decode()
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)))


def ended(cluster: Cluster, job_id: str, entity: str, start: int, end: int, ncpus: int) -> Job:
    """A run of `ncpus` from T0 + start to T0 + end seconds (usage ncpus*walltime)."""
    return Job.objects.create(
        cluster=cluster, job_id=job_id, entity=entity, user=entity, ncpus=ncpus,
        state=JobState.ENDED, start=T0 + timedelta(seconds=start),
        end=T0 + timedelta(seconds=end), walltime=end - start,
        usage=float(ncpus * (end - start)), source_file="hand", source_line=1,
    )  # fmt: skip


@pytest.fixture
def alice(client: Client) -> User:
    return login(client, "alice", staff=True)


@pytest.fixture
def figure_2(alice: User) -> Cluster:
    """Seed 000's figure 2: $min_check_poll 120 and $max_check_poll 240 from a MoM's file, a
    17-minute scheduler_iteration set by alice; ann's one-CPU job of 30 minutes from T0+100
    loses 834 s (the timer's cycle at T0+1120 reads its sample at T0+1066), bob's 5 minutes
    between two cycles are unseen."""
    cluster, _ = cluster_get_or_create(name="fig2")
    config = parse_mom_config("$min_check_poll 120\n$max_check_poll 240\n")
    mom_config_import(cluster_name="fig2", config=config, source="mom_priv/config")
    cluster_settings_set(
        cluster=cluster,
        values={"scheduler_iteration": timedelta(minutes=17)},
        reason="as in seed 000",
        user=alice,
    )
    ended(cluster, "1", "ann", 100, 1900, 1)
    ended(cluster, "2", "bob", 2500, 2800, 2)
    return Cluster.objects.get(pk=cluster.pk)


def test_figure_2_reads_in_sentences(client: Client, figure_2: Cluster) -> None:
    answer = client.get(FIGURE_2)
    assert answer.status_code == 200
    text = text_of(answer)
    today = f"{timezone.localdate():%Y-%m-%d}"
    assert (
        "Of 2,400 core-seconds (0.7 core-hours) used by the 2 jobs of fig2 that ended from"
        " 2026-03-01 00:00 UTC to 2026-03-02 00:00 UTC, PBS recorded 40.2 %, 966 core-seconds"
        " (0.3 core-hours): 59.8 % lost, 1,434 core-seconds (0.4 core-hours); 1 of 2 jobs went"
        " unseen." in text
    )
    assert (
        "PBS's recording is modelled with $min_check_poll 120 s and $max_check_poll 240 s (both"
        f" set {today} by a command or an import: “MoM configuration imported from"
        f" mom_priv/config”), scheduler_iteration 17 minutes (set {today} by alice: “as in seed"
        " 000”) and a cycle at every job submission and end." in text
    )
    # bob lost all of his usage, more than the 59.8 % of all: PBS charges him less than his
    # part (a quarter of the usage, nothing of what it recorded); ann pays for it.
    assert (
        "So the one entity that lost more than 59.8 % of its usage is charged less than its part"
        " of it, and its standing gains; the one that lost less pays for it: its share of what"
        " PBS recorded is larger than its share of the usage, so it looks further over target"
        " than it is." in text
    )
    assert "bob 25.00 % 0.00 % +25.00 points 100.0 %" in text
    assert "ann 75.00 % 100.00 % -25.00 points 46.3 %" in text
    assert (
        "1 of the 2 jobs went unseen, 600 core-seconds (0.2 core-hours) in all: each ended"
        " before any cycle read a poll of it, so PBS recorded nothing of them." in text
    )
    # The jobs, the most lost first: ann's with the cycle and the poll it was charged at.
    assert "1 ann 2026-03-01 08:31:40 30 minutes 1,800 966 834 08:18:40 08:17:46" in text
    assert "2 bob 2026-03-01 08:46:40 5 minutes 600 0 600 none: unseen" in text


def test_the_what_ifs_are_usage_loss_whatifs_get_s(client: Client, figure_2: Cluster) -> None:
    text = text_of(client.get(FIGURE_2))
    since = datetime(2026, 3, 1, tzinfo=UTC)
    until = since + timedelta(days=1)
    now = usage_loss_get(cluster=figure_2, since=since, until=until).recorded
    whatifs = usage_loss_whatifs_get(cluster=figure_2, since=since, until=until)
    assert [w.setting for w in whatifs] == [
        "scheduler_iteration", "scheduler_iteration", "$max_check_poll", "$min_check_poll",
    ]  # fmt: skip
    unit = cluster_usage_unit(figure_2)
    shown = {"scheduler_iteration": {510: "8 minutes 30 seconds", 2040: "34 minutes"}}
    for whatif in whatifs:
        value = shown.get(whatif.setting, {}).get(whatif.value, f"{whatif.value} s")
        extra = whatif.recorded - now
        if extra == 0:
            said = "would record the same."
        else:
            more = "more" if extra > 0 else "less"
            said = (
                f"would record {part_percent(abs(whatif.more))} {more}:"
                f" {usage_text(abs(extra), unit)}."
            )
        assert f"{whatif.setting} {value} (now " in text
        assert said in text


def test_the_demo_s_numbers_are_usage_loss_get_s(
    client: Client, alice: User, demo: None, django_assert_max_num_queries: Any
) -> None:
    hpc = Cluster.objects.get(name="hpc")
    first = timezone.localdate() - timedelta(days=7)
    with django_assert_max_num_queries(20):
        answer = client.get(f"/clusters/hpc/usage-loss/?from={first:%Y-%m-%d}")
    assert answer.status_code == 200
    since = timezone.make_aware(datetime.combine(first, datetime.min.time()))
    expected = usage_loss_get(cluster=hpc, since=since, until=timezone.now(), jobs=True)
    loss = answer.context["loss"]
    assert (loss.since, loss.entities, loss.jobs) == (since, expected.entities, expected.jobs)
    assert expected.job_count > 100
    assert expected.unseen > 0
    text = text_of(answer)
    unit = cluster_usage_unit(hpc)
    assert (
        f"Of {usage_text(expected.actual, unit)} used by the {expected.job_count:,} jobs of hpc"
        f" that ended from {first:%Y-%m-%d} 00:00 UTC to " in text
    )
    assert (
        f", PBS recorded {part_percent(1 - expected.lost_fraction)},"
        f" {usage_text(expected.recorded, unit)}: {part_percent(expected.lost_fraction)} lost,"
        f" {usage_text(expected.lost, unit)}; {expected.unseen} of {expected.job_count:,} jobs"
        " went unseen." in text
    )
    for row in expected.entities:
        cells = [row.entity, usage_number(row.actual), usage_number(row.recorded),
                 usage_number(row.lost), part_percent(row.lost_fraction), f"{row.jobs:,}",
                 f"{row.jobs_unseen:,}"]  # fmt: skip
        assert " ".join(cells) in text
    rows = re.findall(r"<tr><td>([\w-]+)</td>", answer.content.decode())
    assert rows[: len(expected.entities)] == [row.entity for row in expected.entities]
    for job in expected.jobs[:20]:
        assert f"{job.job_id} {job.entity} {job.end:%Y-%m-%d %H:%M:%S}" in text
    assert f"{expected.jobs[20].job_id} {expected.jobs[20].entity}" not in text


def test_the_default_window_is_the_last_7_days(client: Client, alice: User, demo: None) -> None:
    before = timezone.now()
    answer = client.get("/clusters/hpc/usage-loss/")
    after = timezone.now()
    assert answer.status_code == 200
    loss = answer.context["loss"]
    assert before <= loss.until <= after
    assert loss.since == loss.until - timedelta(days=7)
    assert answer.context["from_day"] == timezone.localtime(loss.since).date()
    # Until a day only: the 7 days up to its end.
    answer = client.get("/clusters/hpc/usage-loss/?until=2026-03-10")
    loss = answer.context["loss"]
    assert (loss.since, loss.until) == (
        datetime(2026, 3, 4, tzinfo=UTC), datetime(2026, 3, 11, tzinfo=UTC),
    )  # fmt: skip
    assert "No job of hpc ended from 2026-03-04 00:00 UTC to 2026-03-11 00:00 UTC" in text_of(
        answer
    )
    assert b"<table" not in answer.content  # no empty table


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"from": "<script>alert(1)</script>"}, "from must be a date, such as 2026-11-21."),
        ({"until": "2026-02-30"}, "until must be a date, such as 2026-11-28."),
        ({"from": "2026-11-21T00:00:00"}, "from must be a date, such as 2026-11-21."),
        ({"from": "2026-11-21\x00"}, "from must be a date, such as 2026-11-21."),
        ({"from": "9" * 10_000}, "from must be a date, such as 2026-11-21."),
        ({"from": "0001-01-01"}, "from must be a day from 1970-01-01 to 9998-12-31."),
        ({"until": "9999-12-31"}, "until must be a day from 1970-01-01 to 9998-12-31."),
        ({"from": "2026-11-20", "until": "2026-11-01"}, "until (2026-11-01) is before from"),
        ({"sort": "<b>lost</b>"}, "sort must be one of lost, lost_fraction, actual,"),
    ],
    ids=[
        "script",
        "no-such-day",
        "a-time",
        "nul",
        "long",
        "too-early",
        "too-late",
        "backwards",
        "sort",
    ],
)
def test_a_window_it_cannot_read_is_said_and_the_last_7_days_shown(
    client: Client, alice: User, demo: None, query: dict[str, str], said: str
) -> None:
    answer = client.get("/clusters/hpc/usage-loss/", query)
    assert answer.status_code == 400
    content = answer.content.decode()
    assert "<script>alert" not in content
    assert "<b>lost" not in content
    assert "\x00" not in content
    text = text_of(answer)
    assert said in text
    assert "The page shows the last 7 days instead." in text
    loss = answer.context["loss"]
    assert loss.since == loss.until - timedelta(days=7)
    assert re.search(r"Of [\d,]+ core-seconds \([\d,.]+ core-hours\) used by the", text)


def test_a_column_s_head_orders_the_entities(client: Client, alice: User, demo: None) -> None:
    since = f"{timezone.localdate() - timedelta(days=7):%Y-%m-%d}"
    answer = client.get("/clusters/hpc/usage-loss/", {"from": since, "sort": "lost_fraction"})
    assert answer.status_code == 200
    shown = [row.lost_fraction for row in answer.context["entities"]]
    assert shown == sorted(shown, reverse=True)
    content = answer.content.decode()
    assert f'href="?from={since}&amp;sort=entity"' in content  # the window kept
    assert 'aria-sort="descending"><a href="?from=' in content
    # The window's form keeps the order.
    assert '<input type="hidden" name="sort" value="lost_fraction">' in content
    answer = client.get("/clusters/hpc/usage-loss/", {"from": since, "sort": "entity"})
    names = [row.entity for row in answer.context["entities"]]
    assert names == sorted(names)


@pytest.mark.parametrize(("name", "kind"), [("fairtree", "Slurm"), ("vnc", "Altair Accelerator")])
def test_other_schedulers_answer_that_it_is_pbs_only(
    client: Client, alice: User, demo: None, name: str, kind: str
) -> None:
    answer = client.get(f"/clusters/{name}/usage-loss/")
    assert answer.status_code == 404
    assert (
        f"Recorded vs actual usage is for PBS clusters only: {name} is a {kind} cluster"
        in text_of(answer)
    )


def test_members_are_refused_and_only_admins_see_the_link(client: Client, demo: None) -> None:
    login(client, "bob-2")
    answer = client.get("/clusters/hpc/usage-loss/")
    assert answer.status_code == 403
    assert "recorded vs actual usage is for admins" in text_of(answer)
    assert b"/usage-loss/" not in client.get("/clusters/hpc/").content
    login(client, "alice-2", staff=True)
    assert b'href="/clusters/hpc/usage-loss/">Recorded vs actual usage</a>' in (
        client.get("/clusters/hpc/").content
    )
    assert b"/usage-loss/" not in client.get("/clusters/fairtree/").content


def test_the_sources_of_pbs_s_defaults_are_said(client: Client, alice: User) -> None:
    """A cluster no file has set: PBS's defaults, and where to set them."""
    cluster_get_or_create(name="fresh")
    text = text_of(client.get("/clusters/fresh/usage-loss/"))
    assert (
        "$min_check_poll 10 s and $max_check_poll 120 s (both PBS's default: no MoM"
        " configuration has been imported; import_mom_config reads one), scheduler_iteration"
        " 10 minutes (PBS's default: no qmgr print imported)" in text
    )
    assert "No job of fresh ended from" in text
    assert f"to {date.today():%Y}" in text
