"""An Altair Accelerator cluster's pages: the cluster page's FS_* columns and colours, a group's
page (each field in a sentence, its history, the preemption rules for its queued jobs, its
jobs), /me/ and the landing page for a user's leaves, the settings; private usage and hostile
input. The site is the seed's /class/vcs picture (accelerator_seed.py)."""

from __future__ import annotations

import html
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.accounting.accelerator_site import RULES
from tests.cast import login, member_made
from tests.trees.views.accelerator_seed import CLUSTER, CYCLES, seed_site_made
from trees.models import Cluster, Node, Role, SettingChange

pytestmark = pytest.mark.django_db

BASE = f"/clusters/{CLUSTER}"
HOSTILE = "<script>alert(1)</script>"
EVIL_GROUP = "/class/<i>evil</i>.u9"  # a job's group as a jobs export may hold it


@pytest.fixture
def now() -> datetime:
    return timezone.now().replace(microsecond=0)


@pytest.fixture
def site(tmp_path: Path, now: datetime) -> Cluster:
    return seed_site_made(tmp_path, now)


def node_id(name: str) -> int:
    return Node.objects.get(cluster__name=CLUSTER, name=name).pk


def text_of(client: Client, url: str, status: int = 200) -> str:
    """The page's text as a reader reads it (entities decoded), after checking its status."""
    answer = client.get(url)
    assert answer.status_code == status, url
    return html.unescape(answer.content.decode())


def table_of(page: str, opening: str) -> str:
    """The table that opens with `opening`, up to its end."""
    start = page.index(opening)
    return page[start : page.index("</table>", start)]


def node_page(client: Client, name: str) -> str:
    return text_of(client, f"{BASE}/nodes/{node_id(name)}/")


@pytest.mark.usefixtures("site")
def test_the_cluster_page_has_the_fs_columns_the_colour_key_and_no_pbs_link(
    client: Client,
) -> None:
    login(client, "alice", staff=True)
    page = text_of(client, f"{BASE}/")
    assert 'data-accelerator="1"' in page
    for head in ("FS_TARGET %", "FS_RUNNING %", "Running jobs", "FS_HISTORY %", "FS_RANK"):
        assert f">{head}</th>" in page
    assert "FS_EXCESS_<wbr>RUNNING_<wbr>LOCAL (points)</th>" in page
    # Each head says what it means and which way is good.
    assert "below 0 the group runs less than its due (good for its queued jobs)" in page
    assert "red: runs more than its target (FS_EXCESS_RUNNING above 0)" in page
    assert "blue: runs less than its target" in page
    for pbs_only in ("Queue: why jobs wait", "Compare two entities", "Import files",
                     "resource_group", "pbsfs", 'id="tab-listing"', "Trends",
                     "usage-loss"):  # fmt: skip
        assert pbs_only not in page
    assert f'href="{BASE}/settings/"' in page


@pytest.mark.usefixtures("site")
def test_the_tree_json_carries_the_seed_s_fields(client: Client) -> None:
    login(client, "ann")
    answer = client.get(f"{BASE}/tree.json", {"q": "/class/"})
    documents = {doc["name"]: doc["accelerator"] for doc in answer.json()["nodes"]}
    picked = ("FS_TARGET", "FS_RUNNING", "FS_EXCESS_RUNNING", "FS_EXCESS_RUNNING_LOCAL", "FS_RANK")
    fields = {name: tuple(doc[key] for key in picked) for name, doc in documents.items()}
    assert fields["/class/vcs.u1"] == (2500, 1875, -625, 2500, -1)
    assert fields["/class/vcs.u5"] == (2500, 625, -1875, -2500, 0)
    assert fields["/class/hsim"] == (5000, 7500, 2500, 2500, -1)


@pytest.mark.usefixtures("site")
def test_a_user_s_leaf_says_each_field_in_a_sentence(client: Client) -> None:
    login(client, "ann")
    page = node_page(client, "/class/vcs.u1")
    assert "25.00 % (2500)" in page
    assert "-6.25 points (-625)" in page
    assert "+25.00 points (2500)" in page
    assert (
        "Its target is 25.00 % of the machine: its weight 100 of its active siblings' 200,"
        " times /class/vcs's 50.00 %." in page
    )
    assert "It runs 3 of the 16 running jobs (18.75 %): 6.25 points under its target." in page
    assert (
        "Among its siblings it runs 75.00 % of /class/vcs's running jobs (3 of 4) against a"
        " local target of 50.00 %: +25.00 points." in page
    )
    # 3 jobs for an hour and d9's 4,200 s in the window, of 16 hours and 4,200 s in all.
    assert (
        "Over the last 2 hours it ran 24.27 % of the machine's job time against its target of"
        " 25.00 %: 0.73 points under it." in page
    )
    assert "No job queued: FS_RANK -1 (FS_RANK9 9,999,999), so it is not ranked" in page
    # Its jobs: the job class and the group, no job page (none is read for Accelerator).
    assert "<td>13</td><td>u1</td><td>/class/vcs.u1</td><td>running</td><td>vcs</td>" in page
    assert f"{BASE}/jobs/" not in page
    assert "3 running and 0 queued in /class/vcs.u1." in page
    # What the rules would do to its running jobs: q7 may preempt them.
    against = table_of(page, '<table class="preemptions against">')
    assert "<td>q7</td><td>/class/vcs.u5</td><td>RuleThatFires</td>" in against
    assert "<td>13, 14, 15</td>" in against


@pytest.mark.usefixtures("site")
def test_the_leaf_with_the_queued_job_ranks_first_and_shows_both_rules(client: Client) -> None:
    login(client, "ann")
    page = node_page(client, "/class/vcs.u5")
    assert (
        "FS_RANK 0: dispatched first among the 1 group with queued jobs (the furthest under its"
        " target first)." in page
    )
    assert (
        "Among its siblings it runs 25.00 % of /class/vcs's running jobs (1 of 4) against a"
        " local target of 50.00 %: -25.00 points." in page
    )
    rows = table_of(page, '<table class="preemptions">').split("<tr>")[2:]
    assert len(rows) == 2
    assert "RuleThatDoesNotFire" in rows[0]
    assert "does not fire" in rows[0]
    assert "<td>none</td>" in rows[0]
    assert (
        "no running job with JOBCLASS == vcs has FS_EXCESS_RUNNING > 0 (/class/vcs.u1's 3 jobs"
        " have -625, /class/vcs.u5's 1 job has -1875)" in rows[0]
    )
    assert "RuleThatFires" in rows[1]
    assert "<strong>fires</strong>" in rows[1]
    assert "<td>13, 14, 15</td>" in rows[1]
    assert "may preempt 3 running jobs of /class/vcs.u1" in rows[1]
    assert "<td>q7</td><td>u5</td><td>/class/vcs.u5</td><td>queued</td><td>vcs</td>" in page


@pytest.mark.usefixtures("site")
def test_a_group_page_sums_its_subtree_in_few_queries(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    login(client, "ann")
    with django_assert_max_num_queries(30):
        page = node_page(client, "/class/vcs")
    assert (
        "Its target is 50.00 % of the machine: its weight 100 of its active siblings' 200," in page
    )
    assert "It runs 4 of the 16 running jobs (25.00 %): 25.00 points under its target." in page
    assert "No job is queued in the group itself: FS_RANK -1 (FS_RANK9 9,999,999)" in page
    assert "4 running and 1 queued in /class/vcs and below it." in page
    assert page.count("<td>RuleThatFires</td>") == 1  # q7 is queued below it
    # Its children, linked, with their fields.
    assert f'<a href="{BASE}/nodes/{node_id("/class/vcs.u5")}/">/class/vcs.u5</a>' in page


@pytest.mark.usefixtures("site")
def test_the_root_and_an_idle_group_read_as_such(client: Client, tmp_path: Path) -> None:
    login(client, "ann")
    root = node_page(client, "/")
    assert "The root is the whole machine: its target is 100.00 %." in root
    assert "The root has no siblings: its local excess is its excess, 0.00 points." in root
    Node.objects.filter(cluster__name=CLUSTER, name="/class/hsim").update(fs_active=False)
    idle = node_page(client, "/class/hsim")
    assert "it has no queued, running or suspended job, so its weight 100 takes no part" in idle


@pytest.mark.usefixtures("site")
def test_the_history_charts_the_fields_of_each_cycle(client: Client) -> None:
    login(client, "ann")
    answer = client.get(f"{BASE}/nodes/{node_id('/class/vcs.u1')}/history.json").json()
    fields = answer["accelerator"]
    assert len(answer["at"]) == CYCLES
    assert fields["FS_TARGET"] == [2500] * CYCLES
    assert fields["FS_RUNNING"] == [1875] * CYCLES
    assert fields["FS_RUNNING_COUNT"] == [3] * CYCLES
    assert fields["FS_HISTORY"][-1] == 2427
    page = node_page(client, "/class/vcs.u1")
    assert 'data-accelerator="1"' in page
    assert "FS_RUNNING, FS_HISTORY and FS_TARGET at each kept cycle, in % of the machine" in page


@pytest.mark.usefixtures("site")
def test_me_shows_u5_its_leaf_with_its_fields_and_a_sentence(client: Client) -> None:
    login(client, "ann", scheduler_user="u5")
    page = text_of(client, "/me/")
    leaf = f'<a href="{BASE}/nodes/{node_id("/class/vcs.u5")}/">/class/vcs.u5</a>'
    assert f"Dispatched first of yours right now: {leaf}, FS_RANK 0" in page
    assert (
        "It runs 1 of the 16 running jobs (6.25 %) against a target of 25.00 %: 18.75 points"
        " under it; its queued jobs are dispatched first of the 1 group with queued jobs." in page
    )
    assert '<span class="tone under">-18.75 points</span>' in page
    assert "/class/vcs.u1" not in page
    assert "q7 (vcs), " in page
    assert f"{BASE}/jobs/" not in page  # no job page, no queue for Accelerator's jobs
    assert f"{BASE}/queue/" not in page
    landing = text_of(client, "/")
    assert "Your standing" in landing
    assert leaf in landing
    assert "16 (vcs) since " in landing
    assert f"{BASE}/jobs/" not in landing


@pytest.mark.usefixtures("site")
def test_a_member_sees_their_group_and_a_manager_the_users_below_theirs(client: Client) -> None:
    member = login(client, "mia")
    member_made(member, Node.objects.get(cluster__name=CLUSTER, name="/class/vcs"))
    landing = text_of(client, "/")
    vcs = node_id("/class/vcs")
    assert f'<a href="{BASE}/nodes/{vcs}/#jobs">its users\' jobs, on its page</a>' in landing
    assert "It runs 4 of the 16 running jobs (25.00 %) against a target of 50.00 %" in landing
    manager = login(client, "max")
    member_made(manager, Node.objects.get(cluster__name=CLUSTER, name="/class"), Role.MANAGER)
    page = text_of(client, "/me/")
    members = page[page.index("Members of what you manage") :]
    # Dispatch order: u5's queued job first, then the leaves without one, by path.
    order = ["/class/vcs.u5", "/class/hsim.u2", "/class/vcs.u1"]
    assert sorted(order, key=members.index) == order


@pytest.mark.usefixtures("site")
def test_a_user_with_a_dotted_name_of_another_owns_no_leaf(client: Client) -> None:
    """u5's leaves end in `.u5`; `vcs.u5` or `5` are not the user of /class/vcs.u5."""
    for name in ("5", "vcs.u5", "class/vcs.u5"):
        login(client, f"someone-{name.replace('/', '-')}", scheduler_user=name)
        assert "/class/vcs.u5" not in text_of(client, "/me/")


@pytest.mark.usefixtures("site")
def test_with_private_usage_u5_reads_its_leaf_and_the_preempted_jobs_are_counted(
    client: Client,
) -> None:
    Cluster.objects.filter(name=CLUSTER).update(private_usage=True)
    login(client, "ann", scheduler_user="u5")
    page = node_page(client, "/class/vcs.u5")
    fires = page[page.index("<td>RuleThatFires</td>") :]
    # u1's jobs are not u5's to name: counted, with why (u1 is a sibling u5 sees).
    assert "3 more (3 in groups private to their members)" in fires
    assert "may preempt 3 running jobs of /class/vcs.u1" in fires
    assert "<td>13" not in page
    text_of(client, f"{BASE}/nodes/{node_id('/class/vcs.u1')}/", status=404)
    text_of(client, f"{BASE}/nodes/{node_id('/class/hsim')}/", status=404)
    group = node_page(client, "/class/vcs")  # on its path: its numbers, none of its jobs
    assert "It runs 4 of the 16 running jobs" in group
    assert "Running and queued jobs" not in group
    assert "Preemption" not in group
    history = f"{BASE}/nodes/{node_id('/class/vcs')}/history.json"
    assert client.get(history).status_code == 404


def test_a_reason_naming_a_group_the_reader_may_not_see_is_not_shown(
    client: Client, tmp_path: Path, now: datetime
) -> None:
    """A third rule stopped by FS_EXCESS_RUNNING > 5000: its reason names /class/hsim.u2's
    jobs, which u5 may not see with private usage on."""
    rule = (
        'VovPreemptRule -rulename RuleOnHsim -preempting "JOBCLASS==vcs"'
        ' -preemptable "FS_EXCESS_RUNNING>5000" -pool fastfairshare\n'
    )
    seed_site_made(tmp_path, now, rules=RULES + rule)
    login(client, "ann", scheduler_user="u5")
    assert "/class/hsim.u2's 12 jobs have 2500" in node_page(client, "/class/vcs.u5")
    Cluster.objects.filter(name=CLUSTER).update(private_usage=True)
    page = node_page(client, "/class/vcs.u5")
    row = page[page.index("<td>RuleOnHsim</td>") :]
    assert "Not shown: it names a job or group whose usage is private" in row
    assert "/class/hsim.u2" not in page


def test_hostile_group_names_and_parameters_never_500_and_are_escaped(
    client: Client, tmp_path: Path, now: datetime
) -> None:
    at = int(now.timestamp())
    seed_site_made(tmp_path, now, extra=[f"x1,{EVIL_GROUP},u9,QUEUED,vcs,5,{at - 30},,"])
    login(client, "alice", staff=True)
    evil = node_id(EVIL_GROUP)
    urls = [
        f"{BASE}/", f"{BASE}/nodes/{evil}/", f"{BASE}/nodes/{node_id('/class')}/", "/",
        f"{BASE}/nodes/{evil}/history.json?range={HOSTILE}", f"{BASE}/tree.json?q={HOSTILE}",
        f"{BASE}/tree.json?node={HOSTILE}", f"{BASE}/nodes/99999999999/", f"{BASE}/settings/",
        f"{BASE}/nodes/{evil}/history.json", f"/clusters/{HOSTILE}/",
    ]  # fmt: skip
    for url in urls:
        answer = client.get(url)
        assert answer.status_code < 500, url
        body = answer.content.decode()
        assert HOSTILE not in body, url
        if answer["Content-Type"].startswith("text/html"):
            assert "<i>evil" not in body, url
    page = client.get(f"{BASE}/nodes/{evil}/").content.decode()
    assert "/class/&lt;i&gt;evil&lt;/i&gt;.u9" in page
    posted = client.post(
        f"{BASE}/settings/",
        {"scheduler_iteration": "600", "fairshare_relative": HOSTILE,
         "fairshare_relative_alpha": HOSTILE, "reason": HOSTILE},
    )  # fmt: skip
    assert posted.status_code == 400
    assert HOSTILE not in posted.content.decode()


@pytest.mark.usefixtures("site")
def test_an_admin_sets_fairshare_relative_and_its_alpha_with_a_reason(client: Client) -> None:
    login(client, "alice", staff=True)
    form = text_of(client, f"{BASE}/settings/")
    for label in ("Private usage", "scheduler_iteration (s)", "fairshare.relative",
                  "fairshare.relative_alpha"):  # fmt: skip
        assert f">{label}:</label>" in form
    assert "decay_time" not in form
    assert "How Accelerator measures a group's distance from its target" in form
    answer = client.post(
        f"{BASE}/settings/",
        {"private_usage": "on", "scheduler_iteration": "300", "fairshare_relative": "1",
         "fairshare_relative_alpha": "2.5", "reason": "policy of 2026-11"},
    )  # fmt: skip
    assert answer.status_code == 302
    cluster = Cluster.objects.get(name=CLUSTER)
    assert (cluster.private_usage, cluster.fairshare_relative) == (True, 1)
    assert cluster.fairshare_relative_alpha == 2.5
    assert cluster.scheduler_iteration.total_seconds() == 300
    changes = SettingChange.objects.filter(cluster=cluster, reason="policy of 2026-11")
    assert set(changes.values_list("setting", flat=True)) == {
        "private_usage",
        "scheduler_iteration",
        "fairshare_relative",
        "fairshare_relative_alpha",
    }


@pytest.mark.usefixtures("site")
@pytest.mark.parametrize(
    ("relative", "alpha", "said"),
    [
        ("3", "10", "Select a valid choice."),
        ("2", "nan", "Enter a number."),
        ("2", "inf", "Enter a number."),
        ("2", "-1", "greater than or equal to 0"),
        ("2", "1e400", "Enter a number."),
    ],
)
def test_a_bad_relative_or_alpha_is_refused_with_why(
    client: Client, relative: str, alpha: str, said: str
) -> None:
    login(client, "alice", staff=True)
    answer = client.post(
        f"{BASE}/settings/",
        {"scheduler_iteration": "600", "fairshare_relative": relative,
         "fairshare_relative_alpha": alpha, "reason": "try"},
    )  # fmt: skip
    assert answer.status_code == 400
    assert said in answer.content.decode()
    assert not SettingChange.objects.filter(reason="try").exists()


@pytest.mark.usefixtures("site")
def test_the_pbs_and_slurm_pages_answer_404_for_an_accelerator_cluster(client: Client) -> None:
    login(client, "alice", staff=True)
    u5 = node_id("/class/vcs.u5")
    for url in (f"{BASE}/listing.txt", f"{BASE}/compare/?a=x&b=y", f"{BASE}/compare/names.json?q=v",
                f"{BASE}/trends/", f"{BASE}/queue/", f"{BASE}/jobs/q7/",
                f"{BASE}/nodes/{u5}/recovery.json", f"{BASE}/nodes/{u5}/edit/",
                f"{BASE}/resource_group"):  # fmt: skip
        assert client.get(url).status_code == 404, url
    assert json.loads(client.get(f"{BASE}/tree.json").content)["cluster"] == CLUSTER
