"""My standing: a person's entities on every cluster, their places, the week's trend."""

import html
import re
from datetime import UTC, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from accounting.models import NodeHistory
from tests.cast import demo_job, login, node
from tests.conftest import EXAMPLES
from trees.explanations import ordinal_text
from trees.models import Cluster, Membership, Role
from trees.quantities import cluster_usage_unit, span_text, wait_text
from trees.selectors.standing import entity_ranking_get

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.mark.parametrize(
    ("cluster", "example"), [("whitepaper", "seed_tree"), ("forum", "forum_example")]
)
def test_the_ranking_agrees_with_every_pbsfs_c_answer(cluster: str, example: str) -> None:
    """expected_c.txt is what the real pbsfs -c printed for these trees."""
    expected = EXAMPLES / example / "expected_c.txt"
    if not expected.is_file():
        pytest.skip(f"the shared examples are not at {EXAMPLES}")
    ranking = entity_ranking_get(cluster=Cluster.objects.get(name=cluster))
    places = {ranking.names[pk]: place for pk, place in ranking.ranks.items()}
    for line in expected.read_text().splitlines():
        a, b, answer = line.split("\t")
        if answer == f"{a} == {b}":
            assert places[a] == places[b], line
        else:
            loser = b if answer == a else a
            assert places[answer] < places[loser], line


def test_the_white_papers_entities_in_order() -> None:
    """By hand from pbsfs -p (expected_pbsfs.txt): at the root's children usage/perc is L7 250,
    B4 505, B2 2005, B1 2010; under B2, B3 1340 < L4 3333 < L3 5000; under B3, L5 1000 < L6
    2000; under B1, L1 1000 beats L2, whose perc is 0."""
    ranking = entity_ranking_get(cluster=Cluster.objects.get(name="whitepaper"))
    order = sorted(ranking.ranks, key=ranking.ranks.__getitem__)
    assert [ranking.names[pk] for pk in order] == ["L7", "L8", "L5", "L6", "L4", "L3", "L1", "L2"]
    assert sorted(ranking.ranks.values()) == list(range(1, 9))
    assert ranking.total == 8


def test_slurm_places_count_from_the_top_user() -> None:
    ranking = entity_ranking_get(cluster=Cluster.objects.get(name="fairtree"))
    stored = {
        n.pk: (n.fairshare_rank or 0, n.fairshare_rank_of or 0)
        for n in Cluster.objects.get(name="fairtree").nodes.filter(fairshare_rank__isnull=False)
    }
    assert stored
    for pk, (rank, of) in stored.items():
        assert ranking.ranks[pk] == of - rank + 1
        assert ranking.total == of


def text_of(client: Client) -> str:
    page = client.get("/me/")
    assert page.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))


def test_bob_sees_his_projects_and_his_user_entity_with_places(client: Client) -> None:
    bob = User.objects.get(username="bob")
    client.force_login(bob)
    hpc = entity_ranking_get(cluster=Cluster.objects.get(name="hpc"))
    genomics, cond_matter = node("hpc", "genomics"), node("hpc", "cond-matter")
    text = text_of(client)
    for project in (genomics, cond_matter):
        place = hpc.ranks[project.pk]
        assert f"{hpc.path_name(project.pk)} {project.fairshare_factor:.6f} " in text
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(
            place % 10 if place % 100 not in (11, 12, 13) else 0, "th"
        )
        assert f"{place}{suffix} of {hpc.total}" in text
    best = min((genomics, cond_matter), key=lambda n: hpc.ranks[n.pk])
    assert f"Most deserving of yours right now: {hpc.path_name(best.pk)} ," in text
    assert "physics / cond-matter / dkaya" in text  # gpu charges users: his own entity there


def test_the_trend_is_the_factors_change_over_seven_days(client: Client) -> None:
    genomics = node("hpc", "genomics")
    NodeHistory.objects.filter(node=genomics).delete()
    NodeHistory.objects.create(
        node=genomics,
        at=timezone.now() - timedelta(days=7, hours=3),
        usage=1.0,
        fairshare_perc=0.1,
        fairshare_tree_usage=0.0,
        fairshare_factor=genomics.fairshare_factor - 0.125,
    )
    client.force_login(User.objects.get(username="bob"))
    assert "lifesci / genomics" in text_of(client)
    assert f"{genomics.fairshare_factor:.6f} " in text_of(client)
    assert "↑ 0.125000" in text_of(client)


def test_a_manager_sees_the_standing_of_the_members_of_what_they_manage(client: Client) -> None:
    client.force_login(User.objects.get(username="carol"))
    text = text_of(client)
    assert "Members of what you manage" in text
    assert "physics / cond-matter" in text
    assert "lifesci / genomics" not in text


def test_someone_without_entities_is_told_what_to_ask(client: Client) -> None:
    login(client, "ann", scheduler_user="nobody-runs-as-me")
    assert "ask an admin to link your login" in text_of(client)


def test_memberships_of_groups_bring_their_entities_only_by_name(client: Client) -> None:
    ann = login(client, "ann", scheduler_user="nobody-runs-as-me")
    Membership.objects.create(user=ann, node=node("gpu", "cond-matter"), role=Role.MEMBER)
    text = text_of(client)
    assert "No entity on this cluster carries your user name or a project of yours." in text


def test_my_standing_reads_a_bounded_number_of_queries(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    client.force_login(User.objects.get(username="carol"))
    with django_assert_max_num_queries(30):
        assert client.get("/me/").status_code == 200


def landing_text(client: Client) -> str:
    page = client.get("/")
    assert page.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode())))


def test_bob_lands_on_where_each_of_his_entities_stands(client: Client) -> None:
    client.force_login(User.objects.get(username="bob"))
    text = landing_text(client)
    hpc = entity_ranking_get(cluster=Cluster.objects.get(name="hpc"))
    cond_matter = node("hpc", "cond-matter")
    # cond-matter: factor 0.1996 under physics, which uses 51.5 % of hpc for a 30 % target.
    assert cond_matter.fairshare_factor < 0.5
    assert (
        f"physics / cond-matter {cond_matter.fairshare_factor:.6f}"
        " over target: its jobs wait behind those under target"
        f" {ordinal_text(hpc.ranks[cond_matter.pk])} of {hpc.total} physics, over target"
        " never by decay alone: physics is over target none"
    ) in text
    assert "lifesci's usage, which PBS blends into the tree usage below it" in text
    assert text.index("Your standing") < text.index("Clusters")  # his answer, then the clusters
    assert "What the numbers mean Factor Fairshare factor" in text
    page = client.get("/").content.decode()
    assert f'href="/clusters/hpc/nodes/{cond_matter.pk}/#recovery"' in page


def test_a_running_job_shows_on_its_member_s_landing(client: Client) -> None:
    job = demo_job("running")
    assert job.node is not None
    ann = login(client, "ann", scheduler_user="nobody-runs-as-me")
    Membership.objects.create(user=ann, node=job.node, role=Role.MEMBER)
    text = landing_text(client)
    start = timezone.localtime(job.start, UTC).strftime("%Y-%m-%d %H:%M")
    unit = cluster_usage_unit(job.node.cluster)
    hours = job.accrued / unit.per_human
    assert hours >= 0.1  # the demo's longest running job, in hours with one decimal
    assert (
        f"{job.job_id}: {job.ncpus} CPUs since {start}, {job.accrued:,.0f} {unit.name}"
        f" ({hours:,.1f} {unit.human}) so far"
    ) in text
    assert "Running jobs (usage so far)" in text


def test_someone_without_entities_lands_on_the_clusters(client: Client) -> None:
    client.force_login(User.objects.get(username="alice"))
    text = landing_text(client)
    assert "Your standing" not in text
    assert "Clusters" in text
    assert "fairtree Slurm Fair Tree fairshare, usage half-life 7 days." in text


def test_my_standing_says_over_or_under_and_links_each_recovery(client: Client) -> None:
    client.force_login(User.objects.get(username="bob"))
    text = text_of(client)
    genomics = node("hpc", "genomics")
    assert "lifesci / genomics" in text
    assert "over target: its jobs wait behind those under target" in text
    assert "under target: its jobs are favoured" in text  # dkaya on gpu
    page = client.get("/me/").content.decode()
    assert f'href="/clusters/hpc/nodes/{genomics.pk}/#recovery"' in page
    assert "<dt>7 days</dt>" in page
    assert "<dt>Back on target</dt>" in page


def test_a_queued_job_shows_on_its_member_s_landing_with_its_wait(client: Client) -> None:
    job = demo_job("queued")
    assert job.node is not None
    assert job.qtime is not None
    ann = login(client, "ann", scheduler_user="nobody-runs-as-me")
    Membership.objects.create(user=ann, node=job.node, role=Role.MEMBER)
    before = wait_text(timezone.now() - job.qtime)
    text = landing_text(client)
    after = wait_text(timezone.now() - job.qtime)  # a minute may tick over meanwhile
    # The job id links to the job's page (why it waits): the tag leaves a space before ":".
    prefix = f"{job.job_id} : {job.ncpus} CPU{'' if job.ncpus == 1 else 's'} in {job.queue}, "
    assert f"{prefix}{before}" in text or f"{prefix}{after}" in text, text
    assert "Queued jobs (waiting so far)" in text
    cluster = job.node.cluster.name
    assert f'href="/clusters/{cluster}/jobs/{job.job_id}/"' in client.get("/").content.decode()
    page = client.get(f"/clusters/{job.node.cluster.name}/nodes/{job.node.pk}/").content.decode()
    assert re.search(rf"<td>{re.escape(job.job_id)}</td><td></td><td>queued</td>", page)
    assert re.search(r'<td colspan="3">waiting [^<]*(minute|hour|day)[^<]* so far', page)
    assert job.requested_walltime is not None
    asked = span_text(timedelta(seconds=job.requested_walltime))
    assert f"asks for {asked} of walltime</td>" in page


def test_the_landing_page_reads_a_bounded_number_of_queries(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    """Per cluster of the person's: the ranking, their entities and paths, a week's factors,
    their current jobs, pbsfs's tree for the recoveries (Accelerator: his groups with their
    parents, their siblings' weights, the machine's totals); not a query per entity."""
    client.force_login(User.objects.get(username="bob"))
    with django_assert_max_num_queries(45):  # 39 today, for his entities on 3 clusters
        assert client.get("/").status_code == 200
