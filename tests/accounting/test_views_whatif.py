"""The What-if pages on the demo's site: the form starts from the policy as it is, a valid one
saves a scenario and queues its replay, a bad one says why and saves nothing; the permalink
follows the replay and shows the result with its units; members get the site's 403."""

import html
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounting import tasks
from accounting.models import Job, Scenario, ScenarioState
from tests.accounting.test_views import table
from tests.accounting.whatif_result import RESULT, SENTENCE, _project, scenario_made
from trees.models import Cluster

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

HPC_FORMULA = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"


@pytest.fixture
def alice(client: Client) -> Client:
    client.force_login(User.objects.get(username="alice"))
    return client


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], str | None]]:
    """What the page queues, instead of running it: each replay's arguments and queue."""
    queued: list[tuple[list[int], str | None]] = []
    monkeypatch.setattr(
        tasks.run_scenario, "apply_async", lambda args, queue: queued.append((args, queue))
    )
    return queued


def form_data(page: Any) -> dict[str, str]:
    """What the page's what-if form posts as rendered: inputs (ticked boxes only), the
    selected option of each select, the textareas."""
    text = page.content.decode()
    form = text[text.index('<form method="post" class="whatif"') :]
    form = form[: form.index("</form>")]
    data = {}
    for tag in re.findall(r"<input[^>]*>", form):
        attributes = dict(re.findall(r'([\w:-]+)="([^"]*)"', tag))
        name = attributes.get("name")
        if name is None or (attributes.get("type") == "checkbox" and " checked" not in tag):
            continue
        value = "on" if attributes.get("type") == "checkbox" else attributes.get("value", "")
        data[name] = html.unescape(value)
    for name, options in re.findall(r'<select name="([^"]+)"[^>]*>(.*?)</select>', form, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        data[name] = html.unescape(chosen.group(1)) if chosen else ""
    for name, value in re.findall(r'<textarea name="([^"]+)"[^>]*>(.*?)</textarea>', form, re.S):
        data[name] = html.unescape(value).strip()
    return data


def words(page: Any) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))


def test_an_admin_gets_the_form_with_the_pbs_policy_as_it_is(alice: Client) -> None:
    page = alice.get("/clusters/hpc/whatif/")
    assert page.status_code == 200
    data = form_data(page)
    assert data["set:fair_share"] == "on"
    assert "set:strict_ordering" not in data  # off: the box is not ticked
    assert data["set:backfill"] == "on"
    assert data["set:backfill_depth"] == "1"
    assert data["set:fairshare_decay_time"] == "604800"
    assert data["set:fairshare_decay_factor"] == "0.5"
    assert data["set:job_sort_formula"] == HPC_FORMULA
    assert (data["set:shares:physics"], data["set:shares:cond-matter"]) == ("30", "500")
    assert "set:shares:unknown" not in data
    # the demo sets its machine's cores
    assert (data["cores"], data["order"], data["backfill"]) == ("6656", "policy", "")
    assert (data["from"], data["until"]) == ("", "")  # two weeks stored: all of them
    knobs = table(page, "knobs")
    assert knobs[1][:2] == ["fair_share", "on"]
    assert knobs[5][:2] == ["fairshare_decay_time (s)", "604800"]
    assert "Usage decays this often. Now 7 days." in knobs[5][3]
    assert table(page, "shares")[1][:3] == ["physics", "root", "30"]
    said = words(page)
    assert "the cluster's own (greedy)" in html.unescape(said)
    assert "The cluster's cores are not set" not in html.unescape(said)
    Cluster.objects.filter(name="hpc").update(cores=None)
    unset = words(alice.get("/clusters/hpc/whatif/"))
    assert "The cluster's cores are not set: give them here." in html.unescape(unset)


def test_the_window_is_the_last_30_days_of_the_stored_jobs(alice: Client) -> None:
    hpc = Cluster.objects.get(name="hpc")
    runs = Job.objects.filter(cluster=hpc, start__isnull=False, end__isnull=False)
    last = max(run.ctime or run.start for run in runs if run.start is not None)
    first = runs.order_by("pk").first()
    assert first is not None
    Job.objects.filter(pk=first.pk).update(ctime=last - timedelta(days=90))
    data = form_data(alice.get("/clusters/hpc/whatif/"))
    assert data["until"] == f"{last.date():%Y-%m-%d}"
    assert data["from"] == f"{last.date() - timedelta(days=29):%Y-%m-%d}"


def test_a_slurm_cluster_s_form_has_its_weights_fair_tree_and_half_life(alice: Client) -> None:
    data = form_data(alice.get("/clusters/fairtree/whatif/"))
    assert data["set:PriorityWeightFairShare"] == "0"
    assert data["set:PriorityFlags"] == "fair_tree"
    assert data["set:PriorityDecayHalfLife"] == "604800"
    assert (data["set:shares:astro"], data["set:shares:bio"], data["set:shares:cs"]) == (
        "50", "30", "20",
    )  # fmt: skip
    assert "set:shares:ana" not in data  # users are typed as settings


def test_an_accelerator_cluster_s_form_has_its_group_weights(alice: Client) -> None:
    data = form_data(alice.get("/clusters/vnc/whatif/"))
    assert (data["set:fairshare.relative"], data["set:fairshare.relative_alpha"]) == ("2", "10.0")
    assert (data["set:shares:/class"], data["set:shares:/class/hsim"]) == ("100", "200")
    assert "set:shares:/class/hsim.dkaya" not in data  # a user's leaf


@pytest.mark.parametrize("person", ["bob", "carol"])
def test_members_and_managers_get_the_site_s_403(client: Client, person: str) -> None:
    client.force_login(User.objects.get(username=person))
    page = client.get("/clusters/hpc/whatif/")
    assert page.status_code == 403
    assert "what-ifs are for admins" in page.content.decode()
    assert client.post("/clusters/hpc/whatif/", {"cores": "64"}).status_code == 403
    done = scenario_made(Cluster.objects.get(name="hpc"))
    assert client.get(f"/clusters/hpc/whatif/{done.pk}/").status_code == 403
    assert client.get(f"/clusters/hpc/whatif/{done.pk}/state.json").status_code == 403
    assert Scenario.objects.count() == 1


def test_a_valid_form_saves_the_changes_as_settings_and_queues_the_replay(
    alice: Client, sent: list[Any], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.CYCLE_QUEUES = {"hpc": "cycles.big"}
    data = form_data(alice.get("/clusters/hpc/whatif/"))
    del data["set:fair_share"]  # unticked
    data |= {
        "title": "physics up", "cores": "512", "from": "2026-11-14", "until": "2026-11-20",
        "backfill": "easy", "set:fairshare_decay_factor": "0.25", "set:shares:physics": "40",
        "set:shares:chemistry": "", "more_settings": "unknown_shares=5\n\n  by_queue=false ",
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        answer = alice.post("/clusters/hpc/whatif/", data)
    scenario = Scenario.objects.get()
    assert answer.status_code == 302
    assert answer["Location"] == f"/clusters/hpc/whatif/{scenario.pk}/"
    assert sent == [([scenario.pk], "cycles.big")]
    assert (scenario.title, scenario.state, scenario.created_by) == (
        "physics up", "queued", User.objects.get(username="alice"),
    )  # fmt: skip
    kept = scenario.parameters
    assert kept["settings"] == [
        "fair_share=false", "fairshare_decay_factor=0.25", "shares:physics=40",
        "unknown_shares=5", "by_queue=false",
    ]  # fmt: skip
    assert (kept["order"], kept["backfill"], kept["cores"]) == ("policy", "easy", 512)
    assert (kept["from"], kept["until"]) == (
        "2026-11-14T00:00:00+00:00", "2026-11-21T00:00:00+00:00",  # the last day included
    )  # fmt: skip


def test_a_form_left_as_it_is_replays_the_baseline_alone(
    alice: Client, sent: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    data = form_data(alice.get("/clusters/hpc/whatif/")) | {"cores": "64"}
    with django_capture_on_commit_callbacks(execute=True):
        assert alice.post("/clusters/hpc/whatif/", data).status_code == 302
    assert Scenario.objects.get().parameters["settings"] == []
    assert len(sent) == 1


@pytest.mark.parametrize(
    ("changed", "field", "message"),
    [
        ({"set:shares:physics": "-1"}, "set:shares:physics",
         "Ensure this value is greater than or equal to 0."),
        ({"set:shares:physics": "1.5"}, "set:shares:physics", "Enter a whole number."),
        ({"more_settings": "shares:gravwaves=-3"}, "more_settings",
         "shares:gravwaves: shares are a whole number, 0 or more."),
        ({"more_settings": "shares:nobody=3"}, "more_settings",
         "shares:nobody=3: resource_group has no entity 'nobody'"),
        ({"more_settings": "fair_share"}, "more_settings", "'fair_share': give KEY=VALUE"),
        ({"more_settings": "PriorityWeightAge=5"}, "more_settings",
         "PriorityWeightAge is not a setting a PBS what-if changes"),
        ({"set:job_sort_formula": "ncpus +"}, "set:job_sort_formula", "job_sort_formula=ncpus +:"),
        ({"set:fairshare_decay_factor": "1"}, "set:fairshare_decay_factor",
         "a decay factor is above 0 and below 1."),
        ({"cores": "0"}, "cores", "Ensure this value is greater than or equal to 1."),
        ({"cores": ""}, "cores", "how many cores the jobs ran on is not known"),
        ({"from": "2026-11-20", "until": "2026-11-14"}, "until",
         "until (2026-11-14) is before from (2026-11-20)."),
        ({"from": "yesterday"}, "from", "from must be a date, such as 2026-11-21."),
        ({"backfill": "sometimes"}, "backfill", "Select a valid choice."),
    ],
)  # fmt: skip
def test_a_bad_value_is_refused_with_why_and_nothing_is_saved(
    alice: Client, sent: list[Any], changed: dict[str, str], field: str, message: str
) -> None:
    Cluster.objects.filter(name="hpc").update(cores=None)  # the form's cores are all there is
    data = form_data(alice.get("/clusters/hpc/whatif/")) | {"cores": "64"} | changed
    page = alice.post("/clusters/hpc/whatif/", data)
    assert page.status_code == 400
    text = html.unescape(page.content.decode())
    assert message in text
    assert Scenario.objects.count() == 0
    assert sent == []
    if field != "backfill":  # a select shows no choice it does not have
        assert form_data(page)[field] == changed[field].strip()  # kept, to be mended


def test_hostile_text_is_shown_escaped(
    alice: Client, sent: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    data = form_data(alice.get("/clusters/hpc/whatif/")) | {"cores": "64"}
    refused = alice.post(
        "/clusters/hpc/whatif/", data | {"more_settings": "<script>alert(1)</script>=1"}
    )
    assert refused.status_code == 400
    assert "<script>alert(1)" not in refused.content.decode()
    script = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert f"{script}=1: {script} is not a setting" in refused.content.decode()
    title = "<img src=x onerror=alert(2)>"
    with django_capture_on_commit_callbacks(execute=True):
        saved = alice.post("/clusters/hpc/whatif/", data | {"title": title})
    for page in (alice.get(saved["Location"]), alice.get("/clusters/hpc/whatif/")):
        assert "<img src=x" not in page.content.decode()
        assert "&lt;img src=x onerror=alert(2)&gt;" in page.content.decode()
    asked = alice.get("/clusters/hpc/whatif/", {"set": ["<script>alert(3)</script>"]})
    assert "<script>alert(3)" not in asked.content.decode()
    assert form_data(asked)["more_settings"] == "<script>alert(3)</script>"


def test_settings_in_the_address_fill_their_fields_and_the_rest_go_below(alice: Client) -> None:
    page = alice.get(
        "/clusters/hpc/whatif/",
        {"set": ["shares:physics=40", "fair_share=false", "shares:gravwaves=x",
                 "shares:nobody=3", "backfill=maybe"]},
    )  # fmt: skip
    data = form_data(page)
    assert data["set:shares:physics"] == "40"
    assert "set:fair_share" not in data
    assert data["set:backfill"] == "on"  # as it is: `maybe` is no switch's value
    assert data["more_settings"] == "shares:gravwaves=x\nshares:nobody=3\nbackfill=maybe"
    assert alice.get("/clusters/hpc/whatif/", {"set": "a\x00b"}).status_code == 400


def test_the_list_shows_each_saved_what_if_with_its_settings(alice: Client) -> None:
    hpc = Cluster.objects.get(name="hpc")
    done = scenario_made(hpc, created_by=User.objects.get(username="alice"))
    scenario_made(Cluster.objects.get(name="gpu"), title="not hpc's")
    rows = table(alice.get("/clusters/hpc/whatif/"), "scenarios")
    assert len(rows) == 2
    assert rows[1][0] == f"physics at 40 #{done.pk}"
    assert rows[1][1] == "alice"
    assert (rows[1][3], rows[1][4]) == ("Done", "shares:physics=40")


def test_the_permalink_shows_the_progress_while_a_worker_replays_it(alice: Client) -> None:
    hpc = Cluster.objects.get(name="hpc")
    queued = scenario_made(hpc, ScenarioState.QUEUED)
    page = alice.get(f"/clusters/hpc/whatif/{queued.pk}/").content.decode()
    assert "js/whatif.js" in page
    assert "plotly" not in page
    assert f'data-url="/clusters/hpc/whatif/{queued.pk}/state.json"' in page
    assert "Queued, 0 % done: this page follows it." in page
    running = scenario_made(hpc, ScenarioState.RUNNING, progress=0.42)
    page = alice.get(f"/clusters/hpc/whatif/{running.pk}/").content.decode()
    assert '<progress id="scenario-progress" max="1" value="0.420000">42 %</progress>' in page
    assert "Running, 42 % done" in page
    state = alice.get(f"/clusters/hpc/whatif/{running.pk}/state.json").json()
    assert state == {"state": "running", "label": "Running", "progress": 0.42, "working": True}
    words_said = words(alice.get(f"/clusters/hpc/whatif/{running.pk}/"))
    assert "from 2026-11-01 00:00 UTC to 2026-11-03 00:00 UTC (excluded)" in words_said
    assert "Pool 512 cores" in words_said


def test_a_failed_replay_says_why_in_the_site_s_frame(alice: Client) -> None:
    failed = scenario_made(
        Cluster.objects.get(name="hpc"),
        ScenarioState.FAILED,
        message="cluster hpc has no ended job run submitted from <b>x</b>",
    )
    page = alice.get(f"/clusters/hpc/whatif/{failed.pk}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert '<section class="alert" role="alert">' in text
    assert "cluster hpc has no ended job run submitted from &lt;b&gt;x&lt;/b&gt;." in text
    assert "Fairshare dashboard</a>" in text  # the site's header
    assert alice.get(f"/clusters/hpc/whatif/{failed.pk}/state.json").json()["working"] is False


def test_a_done_replay_shows_its_figures_with_their_units(alice: Client) -> None:
    done = scenario_made(Cluster.objects.get(name="hpc"))
    page = alice.get(f"/clusters/hpc/whatif/{done.pk}/")
    assert SENTENCE.replace("'", "&#x27;") in page.content.decode()
    said = words(page)
    assert "1,200 jobs replayed on 512 cores, 16 GPUs, submitted from 2026-11-01 00:00 to" \
        " 2026-11-03 00:00 UTC; 3 left out (2 capacity, 1 run_time)." in said  # fmt: skip
    assert table(page, "whatif-summary") == [
        ["Measure", "Baseline", "Variant", "Change"],
        ["Jobs", "1,200 jobs", "1,200 jobs", ""],
        ["Mean wait", "1 hour 15 minutes", "1 hour", "15 minutes shorter"],
        ["Median wait", "under a minute", "under a minute", "no change"],
        ["90th percentile wait", "3 hours 20 minutes", "4 hours 20 minutes", "1 hour longer"],
        ["Bounded slowdown", "2.90×", "2.50×", "-0.40×"],
        ["Utilization", "52.8 %", "52.8 %", "+0.00 points"],
        ["Jain's index", "0.475", "0.610", "+0.135"],
    ]
    projects = table(page, "whatif-projects")[2:]
    assert [row[0] for row in projects] == ["lifesci", "physics", "chemistry"]
    assert projects[1] == [
        "physics", "700", "30.0 % → 40.0 %", "45.5 % → 50.0 %",
        "10 minutes", "1 minute", "9 minutes shorter",
        "2 hours", "30 minutes", "1 hour 30 minutes shorter",
    ]  # fmt: skip
    assert projects[0][7:] == ["1 hour", "3 hours", "2 hours longer"]
    chart = json.loads(
        re.search(r'id="whatif-chart-data" type="application/json">(.*?)</script>',
                  page.content.decode()).group(1)  # type: ignore[union-attr]
    )  # fmt: skip
    assert chart["at"] == ["2026-11-01T12:00:00Z", "2026-11-02T12:00:00Z"]
    assert chart["ends"] == ["2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z"]
    assert [project["name"] for project in chart["projects"]] == ["physics", "lifesci"]
    assert chart["projects"][0]["baseline"] == pytest.approx([40.0, 50.0])
    assert chart["projects"][1]["baseline"][1] is None
    assert chart["projects"][0]["variant_target"] == pytest.approx(40.0)
    assert 'id="whatif-chart" class="chart" role="figure" aria-label=' in page.content.decode()
    assert "plotly/plotly.min.js" in page.content.decode()
    assert "period of 1 day" in said


def test_many_projects_are_capped_with_a_link_to_all_of_them(alice: Client) -> None:
    many = [
        _project(f"p{index:02d}", 0.05, 0.05, (10, 0.0, 60.0 * index, 0.05), (0.0, 60.0, 0.05))
        for index in range(20)
    ]
    done = scenario_made(Cluster.objects.get(name="hpc"), result=RESULT | {"projects": many})
    page = alice.get(f"/clusters/hpc/whatif/{done.pk}/")
    assert len(table(page, "whatif-projects")) == 2 + 15
    assert "Show all 20 projects" in page.content.decode()
    everything = alice.get(f"/clusters/hpc/whatif/{done.pk}/", {"projects": "all"})
    assert len(table(everything, "whatif-projects")) == 2 + 20
    assert alice.get(f"/clusters/hpc/whatif/{done.pk}/", {"projects": "<b>"}).status_code == 400


def test_a_baseline_alone_has_no_variant_columns(alice: Client) -> None:
    alone = RESULT | {"variant": None, "projects": [
        project | {"variant": None, "variant_target_share": None} for project in RESULT["projects"]
    ]}  # fmt: skip
    done = scenario_made(Cluster.objects.get(name="hpc"), result=alone)
    page = alice.get(f"/clusters/hpc/whatif/{done.pk}/")
    assert table(page, "whatif-summary")[3] == ["Median wait", "under a minute"]
    assert "No setting was changed: the baseline alone." in words(page)
    assert [row[0] for row in table(page, "whatif-projects")[2:]] == [
        "physics", "lifesci", "chemistry",  # the longest 90th percentile wait first
    ]  # fmt: skip


def test_another_cluster_s_what_if_is_not_found_here(alice: Client) -> None:
    gpu = scenario_made(Cluster.objects.get(name="gpu"))
    assert alice.get(f"/clusters/hpc/whatif/{gpu.pk}/").status_code == 404
    assert alice.get(f"/clusters/hpc/whatif/{gpu.pk}/state.json").status_code == 404
    assert alice.get("/clusters/hpc/whatif/99999999999999999999/").status_code == 404
    assert alice.get(f"/clusters/gpu/whatif/{gpu.pk}/").status_code == 200


def test_the_cluster_page_links_the_what_if_for_admins_only(alice: Client) -> None:
    assert (
        'href="/clusters/hpc/whatif/">What if</a>' in alice.get("/clusters/hpc/").content.decode()
    )
    member = Client()
    member.force_login(User.objects.get(username="bob"))
    assert "/whatif/" not in member.get("/clusters/hpc/").content.decode()


def test_a_replay_run_by_the_worker_is_done_on_its_permalink(
    alice: Client, django_capture_on_commit_callbacks: Any
) -> None:
    data = form_data(alice.get("/clusters/gpu/whatif/")) | {"cores": "64"}
    data["set:shares:physics"] = "60"
    with django_capture_on_commit_callbacks(execute=True):  # the task, eager: as a worker would
        answer = alice.post("/clusters/gpu/whatif/", data)
    scenario = Scenario.objects.get()
    assert (scenario.state, scenario.message) == ("done", "")
    result = scenario.result
    assert result is not None
    page = alice.get(answer["Location"])
    summary = table(page, "whatif-summary")
    assert summary[1][1] == f"{result['baseline']['summary']['jobs']:,} jobs"
    assert re.fullmatch(r"\d+\.\d %", summary[6][1])
    assert datetime.now(UTC) - scenario.finished_at < timedelta(minutes=5)  # type: ignore[operator]


def test_a_replay_sent_again_says_so_and_one_whose_worker_is_gone_offers_to_start_again(
    alice: Client,
) -> None:
    hpc = Cluster.objects.get(name="hpc")
    again = scenario_made(hpc, ScenarioState.RUNNING, progress=0.1, retries=1)
    said = words(alice.get(f"/clusters/hpc/whatif/{again.pk}/"))
    assert "It was sent to a worker again: the first went silent or never took it." in said
    gone = scenario_made(
        hpc,
        ScenarioState.FAILED,
        message="its worker stopped answering (nothing heard from it since 2026-12-01 08:54:00"
        " UTC), and again when it was sent to a worker once more: start it again",
    )
    page = alice.get(f"/clusters/hpc/whatif/{gone.pk}/").content.decode()
    assert "its worker stopped answering (nothing heard from it since 2026-12-01" in page
    again_link = '<a href="/clusters/hpc/whatif/?set=shares%3Aphysics%3D40">Start it again</a>'
    assert again_link in page
