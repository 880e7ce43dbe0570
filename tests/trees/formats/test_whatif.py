"""The what-if's settings, discipline and result document (trees.formats.whatif)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from trees.engine.accelerator import FsGroup
from trees.engine.pbs import GroupDef
from trees.engine.schedule_metrics import calibration_sentence
from trees.engine.simulate import SimJob
from trees.engine.slurm import AssociationDef
from trees.engine.whatif import AcceleratorPolicy, PbsPolicy, SlurmPolicy, run_whatif
from trees.formats.whatif import (
    SettingError,
    apply_settings,
    bin_width,
    duration_text,
    format_whatif_text,
    iso,
    parse_backfill,
    whatif_document,
)

GROUPS = (
    GroupDef("chem", 10, "root", 60),
    GroupDef("phys", 11, "root", 40),
    GroupDef("ann", 20, "chem", 1),
    GroupDef("bob", 22, "phys", 1),
)
PBS = PbsPolicy(GROUPS, usage_res="ncpus*walltime", iteration=10)
SLURM = SlurmPolicy(
    (
        AssociationDef("a", shares=1),
        AssociationDef("b", shares=3),
        AssociationDef("a", "a", "u", 1),
        AssociationDef("b", "b", "u", 1),
        AssociationDef("b", "b", "w", 1),
    )
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("none", "none"), ("GREEDY", "greedy"), (" easy ", "easy"), ("1", 1), ("16", 16)],
)
def test_the_disciplines_read(text: str, expected: object) -> None:
    assert parse_backfill(text) == expected


@pytest.mark.parametrize("text", ["", "0", "-1", "1.5", "easy2", "1001", "conservative"])
def test_other_disciplines_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="give none, greedy, easy or a reservation depth"):
        parse_backfill(text)


def test_pbs_settings_make_the_variant() -> None:
    variant = apply_settings(
        PBS,
        [
            "shares:phys=120",
            "fair_share=false",
            "fairshare_decay_time=12:00:00",
            "fairshare_decay_factor=0.7",
            "job_sort_formula=ncpus * fairshare_perc",
            "backfill_depth=2",
        ],
    )
    policy = variant.policy
    assert isinstance(policy, PbsPolicy)
    assert policy.groups[1] == GroupDef("phys", 11, "root", 120)
    assert policy.groups[0] == GROUPS[0]
    assert (policy.fair_share, policy.decay_interval, policy.decay_factor) == (False, 43200, 0.7)
    assert policy.job_sort_formula == "ncpus * fairshare_perc"
    assert (policy.strict_ordering, policy.backfill, policy.backfill_depth) == (True, True, 2)
    assert variant.backfill == 2
    assert variant.settings[0] == "shares:phys=120"
    assert PBS.groups[1].shares == 40  # the baseline is left as it was


def test_backfill_depth_0_or_1_are_none_and_easy() -> None:
    assert apply_settings(PBS, ["backfill_depth=0"]).backfill == "none"
    assert apply_settings(PBS, ["backfill_depth=1"]).backfill == "easy"
    # the switches after it give the discipline back to the policy
    assert apply_settings(PBS, ["backfill_depth=3", "strict_ordering=false"]).backfill is None


def test_no_settings_is_the_policy_itself() -> None:
    assert apply_settings(PBS, []).policy is PBS
    assert apply_settings(None, []).policy is None


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("fair_share", "'fair_share': give KEY=VALUE"),
        ("=3", "'=3': give KEY=VALUE"),
        ("shares:nobody=3", "shares:nobody=3: resource_group has no entity 'nobody'"),
        ("shares:ann=-1", "shares:ann=-1: '-1' is not a whole number from 0 to 2147483647"),
        ("shares:ann=2147483648", "is not a whole number from 0 to 2147483647"),
        ("fair_share=maybe", "fair_share=maybe: 'maybe' is neither true nor false"),
        ("fairshare_decay_time=0", "'0' is not a time (HH:MM:SS, MM:SS or seconds, above 0)"),
        ("fairshare_decay_factor=1", "'1' is not a number between 0 and 1"),
        ("fairshare_decay_factor=nan", "'nan' is not a number between 0 and 1"),
        ("job_sort_formula=ncpus +", "job_sort_formula=ncpus +: "),
        ("job_sort_formula=__import__('os')", "job_sort_formula=__import__('os'): "),
        ("PriorityWeightAge=5", "PriorityWeightAge is not a setting a PBS what-if changes"),
        ("backfill_depth=x", "backfill_depth=x: 'x' is not a whole number from 0 to 1000"),
    ],
)
def test_pbs_settings_refused_say_which_and_why(setting: str, message: str) -> None:
    with pytest.raises(SettingError) as refused:
        apply_settings(PBS, ["fair_share=true", setting])
    assert message in str(refused.value)


def test_slurm_settings_are_read_as_scontrol_prints_them() -> None:
    variant = apply_settings(
        SLURM,
        ["PriorityWeightAge=1000", "priorityweightfairshare=5000", "PriorityFlags=NO_FAIR_TREE",
         "PriorityDecayHalfLife=1-00:00:00", "shares:a=5", "shares:b/w=7"],
    )  # fmt: skip
    policy = variant.policy
    assert isinstance(policy, SlurmPolicy)
    config = policy.config
    assert (config.weight_age, config.weight_fairshare, config.fair_tree) == (1000, 5000, False)
    assert config.decay_half_life == 86400
    assert policy.associations[0].shares == 5
    assert policy.associations[4] == AssociationDef("b", "b", "w", 7)
    assert variant.backfill is None


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("shares:u=3", "user 'u' is in several accounts: name it ACCOUNT/u"),
        ("shares:zz=3", "no account or user 'zz' among the associations"),
        ("PriorityWeightAge=-3", "PriorityWeightAge: '-3' is not a weight"),
        ("PriorityFlags=BOGUS", "PriorityFlags: unknown flag(s) BOGUS"),
        ("fair_share=false", "fair_share is not one of the priority settings read"),
    ],
)
def test_slurm_settings_refused(setting: str, message: str) -> None:
    with pytest.raises(SettingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_settings(SLURM, [setting])


def test_accelerator_settings() -> None:
    policy = AcceleratorPolicy((FsGroup("/a", 1), FsGroup("/b", 3)))
    variant = apply_settings(policy, ["shares:/b=9", "fairshare.relative=1"])
    assert variant.policy == AcceleratorPolicy((FsGroup("/a", 1), FsGroup("/b", 9)), relative=1)
    with pytest.raises(SettingError, match="no FairShare group '/c'"):
        apply_settings(policy, ["shares:/c=1"])
    with pytest.raises(SettingError, match="'3' is not 0, 1 or 2"):
        apply_settings(policy, ["fairshare.relative=3"])


def test_a_trace_without_a_cluster_takes_only_the_discipline() -> None:
    assert apply_settings(None, ["backfill_depth=4"]).backfill == 4
    with pytest.raises(SettingError, match="a trace without a cluster has no policy to change"):
        apply_settings(None, ["shares:ann=1"])


def test_bins_are_the_narrowest_width_that_gives_at_most_120() -> None:
    assert bin_width(3600 * 120) == 3600
    assert bin_width(3600 * 121) == 6 * 3600
    assert bin_width(86400 * 365) == 7 * 86400
    assert bin_width(364 * 86400 * 200) == -(-364 * 86400 * 200 // 120)


def test_waits_read_in_their_unit() -> None:
    assert [duration_text(s) for s in (None, 0, 59.4, 90, 3600, 11268, 4 * 86400)] == [
        "-", "0 s", "59 s", "1.5 min", "1.00 h", "3.13 h", "4.00 d",
    ]  # fmt: skip


def whatif_of_two_users() -> tuple[object, dict[str, object]]:
    # On one core: ann's job (chem) 0-30 s; bob's (phys) submitted at 10 s waits to 30 s and
    # runs 10 s; bob's second, submitted at 100 s, has a run time of 0 and is left out. Real
    # starts: ann's at 0, bob's at 40.
    jobs = [
        SimJob("7", "ann", 1_000_000_000, 30, 1, None, 1_000_000_000, "", "chem"),
        SimJob("8", "bob", 1_000_000_010, 10, 1, 60, 1_000_000_040, "", "phys"),
        SimJob("9", "bob", 1_000_000_100, 0, 1, None, None, "", "phys"),
    ]
    whatif = run_whatif(jobs, capacity=1, policy=PBS, variant=PBS, has_variant=True,
                        variant_backfill="none")  # fmt: skip
    document = whatif_document(whatif, since=None, until=None, settings=["backfill_depth=0"],
                               with_jobs=True)  # fmt: skip
    return whatif, document


def test_the_document_holds_the_contract_s_fields() -> None:
    _, document = whatif_of_two_users()
    json.dumps(document, allow_nan=False)  # JSON as it is
    assert document["trace"] == {
        "jobs": 2, "left_out": 1, "left_out_by_reason": {"run_time": 1}, "cores": 1,
        "gpus": None, "nodes": None,
        "from": "2001-09-09T01:46:40Z", "until": "2001-09-09T01:47:20Z",
    }  # fmt: skip
    calibration = document["calibration"]
    assert isinstance(calibration, dict)
    # bob's simulated wait is 20 s against a real 30 s; ann's 0 against 0
    assert calibration["mean_wait_ratio"] == {"ann": None, "bob": 20 / 30}
    assert calibration["within_1h"] == 1.0
    baseline, variant = document["baseline"], document["variant"]
    assert isinstance(baseline, dict)
    assert isinstance(variant, dict)
    assert (baseline["order"], baseline["backfill"], baseline["settings"]) == (
        "policy",
        "greedy",
        [],
    )
    assert (variant["backfill"], variant["settings"]) == ("none", ["backfill_depth=0"])
    # slowdowns 1 and (20 + 10) / 10; ann attains 0.75 / 0.6 = 1.25 of her target, bob 0.25 /
    # 0.4 = 0.625: Jain's index 1.875^2 / (2 * (1.5625 + 0.390625)) = 0.9 (float32 targets)
    assert baseline["summary"] == {
        "jobs": 2, "mean_wait": 10.0, "median_wait": 10.0, "p90_wait": 18.0,
        "bounded_slowdown": 2.0, "utilization": 1.0, "jain_index": pytest.approx(0.9, rel=1e-7),
    }  # fmt: skip
    assert baseline["jobs"] == [
        {"job_id": "7", "entity": "ann", "submit": "2001-09-09T01:46:40Z",
         "start": "2001-09-09T01:46:40Z", "end": "2001-09-09T01:47:10Z", "wait": 0},
        {"job_id": "8", "entity": "bob", "submit": "2001-09-09T01:46:50Z",
         "start": "2001-09-09T01:47:10Z", "end": "2001-09-09T01:47:20Z", "wait": 20},
    ]  # fmt: skip
    entities = document["entities"]
    assert isinstance(entities, list)
    assert [row["entity"] for row in entities] == ["ann", "bob"]
    assert entities[1]["target_share"] == pytest.approx(0.4)
    assert entities[1]["baseline"] == {
        "jobs": 1, "mean_wait": 20.0, "median_wait": 20.0, "p90_wait": 20.0,
        "bounded_slowdown": 3.0, "delivered_share": 0.25,
    }  # fmt: skip
    projects = document["projects"]
    assert isinstance(projects, list)
    assert [(row["project"], row["target_share"]) for row in projects] == [
        ("chem", pytest.approx(0.6)), ("phys", pytest.approx(0.4)),
    ]  # fmt: skip
    series = document["share_over_time"]
    assert isinstance(series, dict)
    assert series["bin_seconds"] == 3600
    assert series["bin_starts"] == ["2001-09-09T01:00:00Z"]
    assert [p["baseline"] for p in series["projects"]] == [[0.75], [0.25]]


def test_the_text_names_the_units() -> None:
    whatif, document = whatif_of_two_users()
    text = format_whatif_text(document, calibration_sentence(whatif.calibration))  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert lines[0] == (
        "Trace: 2 jobs on 1 cores, 2001-09-09T01:46:40Z to 2001-09-09T01:47:20Z;"
        " 1 left out (1 run_time)"
    )
    assert lines[1].startswith("Calibration: Against what really happened")
    assert lines[3].split() == ["baseline", "variant"]
    assert "mean wait" in text
    assert "10 s" in text
    assert "100.0 %" in text
    assert lines[-1].split() == ["bob", "40.00", "%", "1", "20", "s", "20", "s", "25.00", "%",
                                 "20", "s", "20", "s", "25.00", "%"]  # fmt: skip


def test_iso_is_utc_with_a_z() -> None:
    assert iso(0) == "1970-01-01T00:00:00Z"
    assert iso(None) is None


def test_a_variant_differs_only_where_the_settings_do() -> None:
    policy = replace(PBS, strict_ordering=True)
    variant = apply_settings(policy, ["shares:ann=4"])
    assert isinstance(variant.policy, PbsPolicy)
    assert replace(variant.policy, groups=policy.groups) == policy
