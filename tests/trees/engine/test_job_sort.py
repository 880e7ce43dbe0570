"""trees.engine.job_sort: job_sort_formula values and the order PBS considers jobs in.

Expected values are worked out by hand (pbs-job-priority-and-polling.md §A, §B and the worked
example D.1), never by handing a formula's text to Python.
"""

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine import job_sort
from trees.engine.formula import (
    JOB_SORT_NAMES,
    PBS_NUMERIC_RESOURCES,
    FormulaValueError,
    parse_formula,
)
from trees.engine.job_sort import (
    INT_MIN,
    THRESHOLD_COMMENT,
    Entities,
    JobPriority,
    PbsJob,
    SortPolicy,
    Standing,
    error_log_line,
    float_digits,
    formula_log_line,
    formula_values,
    job_priorities,
    pbs_decimal,
    sort_key_value,
    threshold_log_line,
)
from trees.engine.pbs import f32

D1_FORMULA = "ncpus + walltime/3600 + 100*fairshare_factor + eligible_time/600"
SEED_003 = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
# Seed 003's site gives every project the same share; these entities differ in usage only.
EVEN = Standing(f32(0.2), f32(0.1), ((0, 0.5),))


def job(job_id="1.pbs", *, standing=EVEN, queue="workq", rank=0, qrank=0, **fields):
    """A queued job: nothing requested, no priority, eligible (accrue_type 2) unless told."""
    defaults: dict[str, Any] = {
        "entity": "alice",
        "resources": {},
        "eligible_time": 0,
        "queue_priority": 0,
        "job_priority": 0,
        "accrue_type": 2,
    }
    defaults.update(fields)
    return PbsJob(job_id=job_id, queue=queue, qrank=qrank, rank=rank, standing=standing, **defaults)


def policy(formula=None, *, fair_share=False, job_sort_key=(), by_queue=False, queues=None, **kw):
    parsed = None if formula is None else parse_formula(formula, JOB_SORT_NAMES, python=True)
    return SortPolicy(parsed, fair_share, tuple(job_sort_key), by_queue, queues or {}, **kw)


def ids(priorities):
    return [priority.job.job_id for priority in priorities]


def value_of(priority):
    """A formula value, there when the policy has a formula."""
    assert priority.value is not None
    return priority.value


def d1_job(standing=EVEN):
    """Reference D.1: ncpus=4, walltime=01:30:00, mem=2gb, eligible for 00:30:00."""
    return job(
        "d1.pbs",
        resources={"ncpus": 4, "walltime": 5400, "mem": 2097152},
        eligible_time=1800,
        standing=standing,
    )


# --- float_digits and the numbers PBS prints ---------------------------------------------


@pytest.mark.parametrize(
    ("number", "digits", "text"),
    [
        (2.0, 0, "2"),
        (12.5, 1, "12.5"),
        (1 / 3, 4, "0.3333"),
        (f32(812.252), 4, "812.2520"),
        (1e-5, 0, "0"),
        (-12.5, 1, "-12.5"),
        (0.0, 0, "0"),
        (2097152.0, 0, "2097152"),
        (79.21070098876953, 4, "79.2107"),
        (0.25, 2, "0.25"),
        (0.999, 0, "1"),  # 0.999 * 1000 is 999: read as a run of 9s, so PBS prints no decimals
        (1e20, 0, "100000000000000000000"),
        (math.inf, 0, "inf"),
    ],
)
def test_float_digits_and_pbs_decimal(number, digits, text):
    assert float_digits(number) == digits
    assert pbs_decimal(number) == text


def test_float_digits_takes_a_limit():
    assert float_digits(1 / 3, 2) == 2
    assert float_digits(50.0, 2) == 0
    assert float_digits(math.nan) == 0


def test_log_lines():
    assert formula_log_line(79.21070098876953) == "Formula Evaluation = 79.2107"
    assert formula_log_line(0.0) == "Formula Evaluation = 0"
    assert threshold_log_line(50.0, 50.0) == "Job's formula value 50 is under threshold 50"
    assert threshold_log_line(12.25, 12.5) == "Job's formula value 12.25 is under threshold 12.5"
    assert error_log_line("division by zero") == (
        "Formula evaluation for job had an error.  Zero value will be used: division by zero"
    )
    assert THRESHOLD_COMMENT == "Not Running: Job is under job_sort_formula threshold value"


# --- formula_values: the globals_dict ---------------------------------------------------


def test_formula_values_of_reference_d1():
    values = formula_values(d1_job(), PBS_NUMERIC_RESOURCES)
    assert values["ncpus"] == 4
    assert values["walltime"] == 5400
    assert values["mem"] == 2097152
    for name in set(PBS_NUMERIC_RESOURCES) - {"ncpus", "walltime", "mem"}:
        assert values[name] == 0
    assert {name: values[name] for name in list(values)[-8:]} == {
        "eligible_time": 1800,
        "queue_priority": 0,
        "job_priority": 0,
        "fairshare_perc": 0.2,  # %f of float32 0.2 (0.200000003) is 0.200000
        "fair_share_perc": 0.2,
        "fairshare_tree_usage": 0.1,
        "fairshare_factor": 0.707107,  # f32(0.1)/f32(0.2) = 0.5 exactly; 2^-0.5 to 6 decimals
        "accrue_type": 2,
    }


def test_formula_values_keep_pythons_ints():
    values = formula_values(job(resources={"ncpus": 4.0, "walltime": 1.5}), ["ncpus", "walltime"])
    assert type(values["ncpus"]) is int  # printed "4": an int literal to Python
    assert type(values["walltime"]) is float  # printed "1.5"
    assert type(values["eligible_time"]) is int
    assert type(values["fairshare_factor"]) is float


def test_formula_values_round_amounts_as_pbs_prints_them():
    values = formula_values(job(resources={"mem": 1 / 3, "cput": 2.00001}), ["mem", "cput"])
    assert values["mem"] == 0.3333  # 4 decimals at most
    assert values["cput"] == 2  # ...and none once the digits read 000


def test_missing_resources_are_zero():
    values = formula_values(job(resources={"ncpus": 8}), ["ncpus", "ngpus", "mem"])
    assert (values["ngpus"], values["mem"]) == (0, 0)
    (priority,) = job_priorities([job(resources={"ncpus": 8})], policy("ncpus + 100*ngpus"))
    assert priority.value == 8.0
    assert priority.values["ngpus"] == 0


def test_fairshare_factor_with_a_third_of_the_tree():
    # f32(0.1)/f32(1/3) = 0.29999998 in float32; 2^-0.29999998 = 0.8122524...
    third = Standing(f32(1 / 3), f32(0.1), ((0, 0.3),))
    values = formula_values(job(standing=third), [])
    assert values["fairshare_perc"] == 0.333333
    assert values["fairshare_factor"] == 0.812252


def test_fairshare_factor_is_zero_without_a_share():
    values = formula_values(job(standing=Standing(0.0, f32(0.5), ((1, 0.0),))), [])
    assert (values["fairshare_perc"], values["fairshare_factor"]) == (0.0, 0.0)


def test_fairshare_factor_of_a_tiny_share_underflows_to_zero():
    # usage/perc overflows float32 to inf; 2^-inf is 0.
    tiny = Standing(f32(1e-45), f32(0.5), ((0, 1e45),))
    assert formula_values(job(standing=tiny), [])["fairshare_factor"] == 0.0


def test_keyword_wins_over_a_resource_of_its_name():
    values = formula_values(
        job(resources={"eligible_time": 99}, eligible_time=7), ["eligible_time"]
    )
    assert values["eligible_time"] == 7


# --- the formula value --------------------------------------------------------------------


def test_reference_d1_value_and_log():
    (priority,) = job_priorities([d1_job()], policy(D1_FORMULA))
    # 4 + 1.5 + 70.7107 + 3.0 = 79.2107 as a double; the scheduler keeps a float
    assert priority.value == 79.21070098876953
    assert formula_log_line(priority.value) == "Formula Evaluation = 79.2107"
    assert priority.error is None
    assert priority.terms == pytest.approx(
        {
            "ncpus": 4.0,
            "walltime/3600": 1.5,
            "100*fairshare_factor": 70.7107,
            "eligible_time/600": 3.0,
        }
    )
    assert priority.values["fairshare_factor"] == 0.707107
    assert priority.under_threshold is False


def test_reference_d1_with_a_third_of_the_tree():
    third = Standing(f32(1 / 3), f32(0.1), ((0, 0.3),))
    (priority,) = job_priorities([d1_job(third)], policy("1000*fairshare_factor"))
    assert priority.value == 812.2520141601562  # float32 of 812.252
    assert formula_log_line(priority.value) == "Formula Evaluation = 812.2520"


def test_division_by_zero_counts_zero_with_pythons_message():
    (priority,) = job_priorities([job(job_priority=0)], policy("1/job_priority"))
    assert priority.value == 0.0
    assert priority.error == "division by zero"  # int / int, as globals_dict holds them
    assert priority.terms == {}
    assert error_log_line(priority.error) == (
        "Formula evaluation for job had an error.  Zero value will be used: division by zero"
    )


def test_float_division_by_zero_says_so():
    (priority,) = job_priorities([job()], policy("fairshare_tree_usage/job_priority"))
    assert priority.error == "float division by zero"


def test_math_domain_error_counts_zero():
    (priority,) = job_priorities([job()], policy("ncpus + log(ncpus)"))
    assert (priority.value, priority.error) == (0.0, "math domain error")


def test_seed_003_values_and_order():
    usage = {"a": 0.25, "b": 0.5, "c": 0.125}  # all exact in float32 and in %f
    jobs = [
        job(
            "a.pbs",
            resources={"ncpus": 6656},
            eligible_time=86400,
            rank=0,
            standing=Standing(f32(0.2), usage["a"], ((0, 1.0),)),
        ),
        job(
            "b.pbs",
            resources={"ncpus": 3328},
            eligible_time=43200,
            rank=1,
            standing=Standing(f32(0.2), usage["b"], ((0, 2.0),)),
        ),
        job(
            "c.pbs",
            resources={"ncpus": 128},
            eligible_time=0,
            rank=2,
            standing=Standing(f32(0.2), usage["c"], ((0, 0.5),)),
        ),
    ]
    priorities = job_priorities(jobs, policy(SEED_003))
    # a: 10 + 750 + 1 = 761; b: 5 + 500 + 0.5 = 505.5; c: 10*128/6656 + 875 + 0 = 875.1923...
    assert ids(priorities) == ["c.pbs", "a.pbs", "b.pbs"]
    assert [p.value for p in priorities] == [f32(875 + 1280 / 6656), 761.0, 505.5]
    assert [p.position for p in priorities] == [1, 2, 3]
    assert priorities[0].terms == pytest.approx(
        {
            "10*(ncpus/6656)": 1280 / 6656,
            "1000*(1-fairshare_tree_usage)": 875.0,
            "eligible_time/86400": 0.0,
        }
    )


def test_math_functions_and_fairshare_factor():
    half = Standing(f32(0.5), f32(0.25), ((0, 0.5),))  # 0.25/0.5 = 0.5: factor 2^-0.5
    subject = job(resources={"ncpus": 16}, eligible_time=7 * 3600, queue_priority=20, standing=half)
    text = "sqrt(ncpus)*fairshare_factor + log2(1 + eligible_time/3600) + max(queue_priority, 10)"
    (priority,) = job_priorities([subject], policy(text))
    # 4 * 0.707107 + log2(8) + 20 = 2.828428 + 3 + 20
    assert priority.value == f32(2.828428 + 3.0 + 20)
    assert priority.terms == pytest.approx(
        {
            "sqrt(ncpus)*fairshare_factor": 2.828428,
            "log2(1 + eligible_time/3600)": 3.0,
            "max(queue_priority, 10)": 20.0,
        }
    )


def test_python_dialect_in_a_formula():
    text = "(1000 if queue_priority >= 100 else 0) + ncpus % 4 + ncpus // 4 + pi*(job_priority > 0)"
    jobs = [
        job("express.pbs", resources={"ncpus": 10}, queue_priority=150),
        job("plain.pbs", resources={"ncpus": 10}, job_priority=5, rank=1),
    ]
    by_id = {p.job.job_id: p for p in job_priorities(jobs, policy(text))}
    assert by_id["express.pbs"].value == 1004.0  # 1000 + 2 + 2 + 0
    assert by_id["plain.pbs"].value == f32(4 + math.pi)  # 0 + 2 + 2 + pi


def test_terms_written_alike_add_up():
    (priority,) = job_priorities([job(resources={"ncpus": 3})], policy("ncpus + ncpus - 1"))
    assert priority.terms == {"ncpus": 6.0, "1": -1.0}
    assert priority.value == 5.0


def test_formula_value_is_float32():
    (priority,) = job_priorities([job(resources={"ncpus": 1})], policy("ncpus/3"))
    assert priority.value == f32(1 / 3)
    assert priority.value != 1 / 3


def test_values_hold_the_formula_inputs():
    (priority,) = job_priorities([d1_job()], policy("ncpus + mem"))
    assert priority.values == {
        "ncpus": 4,
        "mem": 2097152,
        "eligible_time": 1800,
        "queue_priority": 0,
        "job_priority": 0,
        "fairshare_perc": 0.2,
        "fair_share_perc": 0.2,
        "fairshare_tree_usage": 0.1,
        "fairshare_factor": 0.707107,
        "accrue_type": 2,
    }


def test_infinite_and_nan_values_sort_at_the_ends():
    jobs = [
        job("nan.pbs", resources={"ncpus": 0}, rank=0),
        job("one.pbs", resources={"ncpus": 1}, rank=1),
        job("inf.pbs", resources={"ncpus": 2}, rank=2),
    ]
    text = "inf if ncpus == 2 else (nan if ncpus == 0 else 1)"
    priorities = job_priorities(jobs, policy(text))
    assert ids(priorities) == ["inf.pbs", "one.pbs", "nan.pbs"]
    assert priorities[0].value == math.inf
    assert math.isnan(value_of(priorities[2]))


# --- threshold -----------------------------------------------------------------------------


def test_threshold_is_inclusive():
    jobs = [job("at.pbs", resources={"ncpus": 50}), job("above.pbs", resources={"ncpus": 51})]
    by_id = {p.job.job_id: p for p in job_priorities(jobs, policy("ncpus", threshold=50.0))}
    assert by_id["at.pbs"].under_threshold is True  # 50.0 <= 50
    assert by_id["above.pbs"].under_threshold is False


def test_threshold_applies_to_a_failed_formula_as_zero():
    (priority,) = job_priorities([job()], policy("1/job_priority", threshold=0.0))
    assert priority.under_threshold is True


def test_unset_threshold_is_int_min():
    jobs = [job("low.pbs", job_priority=INT_MIN), job("high.pbs", job_priority=INT_MIN + 1000)]
    by_id = {p.job.job_id: p for p in job_priorities(jobs, policy("job_priority"))}
    assert by_id["low.pbs"].under_threshold is True  # -2147483648.0 <= INT_MIN
    assert by_id["high.pbs"].under_threshold is False


def test_no_formula_no_threshold():
    (priority,) = job_priorities([job()], policy(None, threshold=10.0))
    assert priority.value is None
    assert priority.under_threshold is False


# --- the order without a formula ---------------------------------------------------------


def test_fair_share_orders_by_deserving():
    jobs = [
        job("heavy.pbs", standing=Standing(f32(0.5), f32(0.9), ((0, 4.0),)), rank=0),
        job("light.pbs", standing=Standing(f32(0.5), f32(0.1), ((0, 0.25),)), rank=1),
        job("deep.pbs", standing=Standing(f32(0.25), f32(0.1), ((0, 0.25), (0, 3.0))), rank=2),
        job("none.pbs", standing=Standing(0.0, f32(0.1), ((1, 0.0),)), rank=3),
    ]
    priorities = job_priorities(jobs, policy(fair_share=True))
    assert ids(priorities) == ["light.pbs", "deep.pbs", "heavy.pbs", "none.pbs"]
    assert priorities[0].terms == {"usage/perc (fair_share)": 0.25}
    assert priorities[1].terms == {"usage/perc (fair_share)": 3.0}
    assert priorities[3].terms == {"usage/perc (fair_share)": -1.0}  # pbsfs: -1 for perc 0


def test_without_fair_share_the_usage_does_not_count():
    jobs = [
        job("heavy.pbs", standing=Standing(f32(0.5), f32(0.9), ((0, 4.0),)), rank=0),
        job("light.pbs", standing=Standing(f32(0.5), f32(0.1), ((0, 0.25),)), rank=1),
    ]
    assert ids(job_priorities(jobs, policy())) == ["heavy.pbs", "light.pbs"]


def test_job_sort_key_high_and_low():
    jobs = [
        job("small-long.pbs", resources={"ncpus": 4, "walltime": 7200}, rank=0),
        job("big.pbs", resources={"ncpus": 256, "walltime": 7200}, rank=1),
        job("small-short.pbs", resources={"ncpus": 4, "walltime": 600}, rank=2),
        job("nothing.pbs", rank=3),
    ]
    keys = (("ncpus", True), ("walltime", False))
    priorities = job_priorities(jobs, policy(job_sort_key=keys))
    assert ids(priorities) == ["big.pbs", "small-short.pbs", "small-long.pbs", "nothing.pbs"]
    assert priorities[0].terms == {
        "job_sort_key ncpus HIGH": 256,
        "job_sort_key walltime LOW": 7200,
    }


def test_special_sort_keys():
    third = Standing(f32(1 / 3), 0.0, ((0, 0.0),))
    subject = job(job_priority=7, resources={"ncpus": 2}, standing=third)
    assert sort_key_value(subject, "job_priority") == 7
    assert sort_key_value(subject, "sort_priority") == 7  # read as job_priority
    assert sort_key_value(subject, "fair_share_perc") == f32(1 / 3)
    assert sort_key_value(subject, "fairshare_perc") == 0  # the man page's name, not the code's
    assert sort_key_value(subject, "preempt_priority") == 0  # preemption is off
    assert sort_key_value(subject, "ncpus") == 2
    assert sort_key_value(subject, "mem") == 0
    assert sort_key_value(subject, "no_such_resource") == 0


def test_sort_priority_orders_by_job_priority():
    jobs = [job("low.pbs", job_priority=1, rank=0), job("high.pbs", job_priority=9, rank=1)]
    priorities = job_priorities(jobs, policy(job_sort_key=[("sort_priority", True)]))
    assert ids(priorities) == ["high.pbs", "low.pbs"]


def test_fairshare_perc_sort_key_ties_every_job():
    jobs = [
        job("small.pbs", standing=Standing(f32(0.1), 0.0, ((0, 0.0),)), qrank=1),
        job("large.pbs", standing=Standing(f32(0.9), 0.0, ((0, 0.0),)), qrank=2),
    ]
    priorities = job_priorities(jobs, policy(job_sort_key=[("fairshare_perc", True)]))
    assert ids(priorities) == ["small.pbs", "large.pbs"]  # by qrank
    priorities = job_priorities(jobs, policy(job_sort_key=[("fair_share_perc", True)]))
    assert ids(priorities) == ["large.pbs", "small.pbs"]


def test_ties_go_by_qrank_then_rank():
    jobs = [
        job("3.pbs", qrank=200, rank=2),
        job("1.pbs", qrank=100, rank=1),
        job("2.pbs", qrank=100, rank=0),
    ]
    assert ids(job_priorities(jobs, policy())) == ["2.pbs", "1.pbs", "3.pbs"]


def test_by_queue_orders_queues_by_priority_then_name():
    jobs = [
        job("w1.pbs", queue="workq", rank=0, resources={"ncpus": 1}),
        job("e1.pbs", queue="express", rank=1, resources={"ncpus": 1}),
        job("w2.pbs", queue="workq", rank=2, resources={"ncpus": 64}),
        job("b1.pbs", queue="batch", rank=3, resources={"ncpus": 512}),
        job("a1.pbs", queue="aux", rank=4),
        job("e2.pbs", queue="express", rank=5, resources={"ncpus": 8}),
    ]
    queues = {"express": 200, "workq": 100}  # batch and aux: 0, equal, so by name
    priorities = job_priorities(
        jobs, policy(by_queue=True, queues=queues, job_sort_key=[("ncpus", True)])
    )
    assert ids(priorities) == ["e2.pbs", "e1.pbs", "w2.pbs", "w1.pbs", "a1.pbs", "b1.pbs"]
    assert [p.position for p in priorities] == [1, 2, 3, 4, 5, 6]
    assert [p.queue_position for p in priorities] == [1, 2, 1, 2, 1, 1]
    assert priorities[0].terms == {"queue_priority": 200.0, "job_sort_key ncpus HIGH": 8}


def test_without_by_queue_queues_mix():
    jobs = [
        job("w.pbs", queue="workq", resources={"ncpus": 64}, rank=0),
        job("e.pbs", queue="express", resources={"ncpus": 1}, rank=1),
    ]
    priorities = job_priorities(
        jobs, policy(queues={"express": 200}, job_sort_key=[("ncpus", True)])
    )
    assert ids(priorities) == ["w.pbs", "e.pbs"]
    assert [p.queue_position for p in priorities] == [1, 1]


def test_no_formula_terms_list_every_criterion():
    subject = job(resources={"ncpus": 256}, standing=Standing(f32(0.5), 0.0, ((0, 2.5),)))
    (priority,) = job_priorities(
        [subject],
        policy(
            fair_share=True, job_sort_key=[("ncpus", True)], by_queue=True, queues={"workq": 100}
        ),
    )
    assert priority.terms == {
        "queue_priority": 100.0,
        "usage/perc (fair_share)": 2.5,
        "job_sort_key ncpus HIGH": 256,
    }
    assert priority.values == {}
    assert priority.error is None


# --- with a formula: what breaks its ties --------------------------------------------------


def test_formula_ties_are_float32_ties():
    jobs = [
        job("later.pbs", resources={"ncpus": 1}, eligible_time=0, qrank=2),
        job("sooner.pbs", resources={"ncpus": 1}, eligible_time=1, qrank=1),
    ]
    # 1 + eligible_time * 1e-12: different doubles, one float32 (1.0): qrank decides.
    priorities = job_priorities(jobs, policy("ncpus + eligible_time*1e-12"))
    assert [p.value for p in priorities] == [1.0, 1.0]
    assert ids(priorities) == ["sooner.pbs", "later.pbs"]


def test_formula_then_fair_share_then_sort_key():
    light = Standing(f32(0.5), f32(0.1), ((0, 0.25),))
    heavy = Standing(f32(0.5), f32(0.9), ((0, 4.0),))
    jobs = [
        job("heavy-big.pbs", resources={"ncpus": 64}, standing=heavy, rank=0),
        job("light-small.pbs", resources={"ncpus": 1}, standing=light, rank=1),
        job("light-big.pbs", resources={"ncpus": 64}, standing=light, rank=2),
        job("top.pbs", resources={"ncpus": 1}, job_priority=1, standing=heavy, rank=3),
    ]
    priorities = job_priorities(
        jobs, policy("job_priority", fair_share=True, job_sort_key=[("ncpus", True)])
    )
    assert ids(priorities) == ["top.pbs", "light-big.pbs", "light-small.pbs", "heavy-big.pbs"]
    assert priorities[0].terms == {"job_priority": 1.0}


def test_a_failed_formula_sorts_as_zero():
    jobs = [
        job("negative.pbs", job_priority=-2, rank=0),
        job("failed.pbs", job_priority=0, rank=1),
        job("positive.pbs", job_priority=2, rank=2),
    ]
    priorities = job_priorities(jobs, policy("1/job_priority"))
    assert ids(priorities) == ["positive.pbs", "failed.pbs", "negative.pbs"]
    assert [p.value for p in priorities] == [0.5, 0.0, -0.5]


def test_no_jobs():
    assert job_priorities([], policy(SEED_003)) == []


def test_a_formula_past_the_queue_s_time_budget_is_refused_and_every_job_counts_zero(
    monkeypatch,
):
    """A formula evaluated job by job for longer than FORMULA_SECONDS over a queue held cycles
    for 117 s and pages past gunicorn's timeout; it is refused instead: every job gets 0, as PBS
    gives a job whose formula fails, and the refusal is its error. A budget of 0 is spent at the
    first job, whatever the machine's speed."""
    monkeypatch.setattr(job_sort, "FORMULA_SECONDS", 0.0)
    jobs = [job(f"{n}.pbs", resources={"ncpus": 10 * n}, rank=n) for n in (1, 2, 3)]
    order = job_sort.job_sort(*job_sort.QueuedJobs.of(jobs), policy("round(ncpus, -1) + ncpus"))
    refusal = "formula refused: evaluating it over the queue's 3 jobs took more than 0 s"
    assert order.refused == refusal
    assert order.value is not None
    assert order.value.tolist() == [0.0, 0.0, 0.0]
    assert order.errors == {0: refusal, 1: refusal, 2: refusal}
    priorities = job_priorities(jobs, policy("round(ncpus, -1) + ncpus"))
    assert ids(priorities) == ["1.pbs", "2.pbs", "3.pbs"]  # every value 0: by rank
    # No term is worked out again for a job whose formula was refused or failed.
    assert [(p.value, p.error, p.terms) for p in priorities] == [(0.0, refusal, {})] * 3
    assert error_log_line(refusal) == (
        "Formula evaluation for job had an error.  Zero value will be used: " + refusal
    )


def test_within_the_time_budget_nothing_is_refused():
    jobs = [job(f"{n}.pbs", resources={"ncpus": 10 * n}, rank=n) for n in (1, 2, 3)]
    order = job_sort.job_sort(*job_sort.QueuedJobs.of(jobs), policy("round(ncpus, -1) + ncpus"))
    assert order.refused is None
    assert order.value is not None
    assert order.value.tolist() == [20.0, 40.0, 60.0]


# --- properties ----------------------------------------------------------------------------

standings = st.builds(
    lambda perc, usage: Standing(f32(perc), f32(usage), ((0, usage / perc),)),
    st.floats(0.01, 1.0),
    st.floats(0.0, 1.0),
)
random_jobs = st.lists(
    st.tuples(
        st.sampled_from(["workq", "express", "batch"]),
        st.integers(0, 64),  # ncpus
        st.integers(-5, 5),  # job_priority
        st.integers(0, 10),  # qrank
        standings,
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    random_jobs,
    st.sampled_from([None, "ncpus", "1/job_priority", "ncpus*fairshare_factor - job_priority"]),
    st.booleans(),
    st.booleans(),
)
def test_positions_are_a_permutation_in_value_order(rows, formula, fair_share, by_queue):
    jobs = [
        job(
            f"{rank}.pbs",
            queue=queue,
            resources={"ncpus": ncpus},
            job_priority=priority,
            qrank=qrank,
            rank=rank,
            standing=standing,
        )
        for rank, (queue, ncpus, priority, qrank, standing) in enumerate(rows)
    ]
    queues = {"express": 200, "workq": 100}
    priorities = job_priorities(
        jobs,
        policy(
            formula,
            fair_share=fair_share,
            by_queue=by_queue,
            queues=queues,
            job_sort_key=[("ncpus", True)],
        ),
    )
    assert [p.position for p in priorities] == list(range(1, len(jobs) + 1))
    assert sorted(ids(priorities)) == sorted(j.job_id for j in jobs)
    by_queue_lists: dict[str, list[JobPriority]] = {}
    for priority in priorities:
        by_queue_lists.setdefault(priority.job.queue, []).append(priority)
    for listed in by_queue_lists.values():
        assert [p.queue_position for p in listed] == list(range(1, len(listed) + 1))
        if formula is not None:
            values = [value_of(p) for p in listed]
            assert values == sorted(values, reverse=True)
    if by_queue:
        ranks = [-queues.get(p.job.queue, 0) for p in priorities]
        assert ranks == sorted(ranks)
    elif formula is not None:
        values = [value_of(p) for p in priorities]
        assert values == sorted(values, reverse=True)


levels = st.tuples(st.just(0), st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
deserving_keys = st.builds(
    lambda head, ended: tuple(head) + (((1, 0.0),) if ended else ()),
    st.lists(levels, max_size=3),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(deserving_keys, st.integers(0, 3)), max_size=30))
def test_fair_share_orders_jobs_by_their_entitys_key_then_submission(rows):
    """cmp_sort() with fair_share and nothing else: the entity's compare_path() key (a shorter
    key before the longer ones it begins, equal keys tied), then qrank, then rank."""
    jobs = [
        job(f"{rank}.pbs", qrank=qrank, rank=rank, standing=Standing(0.5, 0.5, key))
        for rank, (key, qrank) in enumerate(rows)
    ]
    ordered = job_priorities(jobs, policy(fair_share=True))
    expected = sorted(jobs, key=lambda j: (j.standing.deserving, j.qrank, j.rank))
    assert ids(ordered) == [j.job_id for j in expected]


@given(st.floats(width=32, allow_nan=False))
def test_a_fairshare_keyword_is_its_float32_printed_with_6_decimals_and_read_back(value):
    """globals_dict gets `%f` of the float (job_info.cpp:4034-4040): the value rounded to 6
    decimals, the sign of a zero kept."""
    shown = formula_values(job(standing=Standing(0.5, value, ((0, 1.0),))), [])
    printed = float(f"{value:f}")
    assert shown["fairshare_tree_usage"] == printed
    assert math.copysign(1, shown["fairshare_tree_usage"]) == math.copysign(1, printed)


amounts = (
    st.integers(0, 2**62)
    | st.floats(0, 1e300, allow_nan=False)
    | st.sampled_from([0.5, 1 / 3, 2.00001, 4.0, 2**53 + 1.0])
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(["ncpus", "mem", "walltime"]), amounts),
            st.integers(0, 10**7),  # eligible_time
            st.integers(-1024, 1023),  # job_priority
            standings,
        ),
        max_size=20,
    ),
    st.sampled_from(
        [SEED_003, D1_FORMULA, "ncpus*mem*walltime - job_priority", "mem/job_priority",
         "-ncpus*fairshare_perc + walltime/(eligible_time - 5)", "pow(ncpus, 0.5) + mem"]
    ),
)  # fmt: skip
def test_each_value_of_a_queue_is_its_formula_on_its_own_inputs(rows, formula):
    """A queue valued at once (numpy where it gives Python's numbers, job by job where it may
    not) gives each job what its own globals_dict gives, stored as a float32, or its error."""
    jobs = [
        job(f"{rank}.pbs", resources=resources, eligible_time=eligible, job_priority=priority,
            rank=rank, standing=standing)
        for rank, (resources, eligible, priority, standing) in enumerate(rows)
    ]  # fmt: skip
    chosen = policy(formula)
    assert chosen.formula is not None
    for priority in job_priorities(jobs, chosen):
        inputs = formula_values(priority.job, chosen.formula.names)
        assert priority.values == inputs
        expected, error = alone(chosen.formula, inputs)
        assert priority.error == error
        assert priority.value is not None
        assert priority.value == expected or (math.isnan(expected) and math.isnan(priority.value))


def alone(formula, inputs):
    """A formula on one job's inputs, kept as a float32 (past its range: inf), or its error."""
    try:
        value = formula.evaluate(inputs)
    except FormulaValueError as exc:
        return 0.0, exc.reason
    with np.errstate(over="ignore"):
        return float(np.float64(value).astype(np.float32)), None


def test_the_entities_of_a_3000_level_chain_take_memory_linear_in_the_tree():
    """A node's place in compare_path() order is found from its parent's, not from a row of
    its whole root path: a chain of 3,000 groups needs a few kilobytes a node, where rows of
    every path (6,000 numbers each) took 288 MB and a 5,000-level resource_group 1.3 GB."""
    import tracemalloc

    size = 3000
    parent = np.arange(-1, size - 1, dtype=np.int64)
    perc = np.full(size, 0.5) ** np.minimum(np.arange(size), 60)
    usage = np.linspace(size, 1.0, size)
    tracemalloc.start()
    try:
        entities = Entities.of_tree(parent, perc, np.zeros(size), usage)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024
    # Each node's key begins with its parent's: down the chain the ranks count up, and the
    # entity outside the tree (no share) comes after the root's only child and all below it.
    assert entities.deserving.tolist() == [*range(1, size + 1), size + 1]
    assert math.isnan(entities.usage_perc[0])
    assert entities.usage_perc[1] == usage[1] / perc[1]
    assert entities.usage_perc[entities.outsider] == -1.0
