"""trees.formats.qmgr: `qmgr -c 'print server'` and `print sched` output.

PRINT is written by hand as OpenPBS's qmgr.c `display` prints (resources, then queues, then the
server), with seed 003's formula; TORQUE_PRINT is the start of a real Torque `qmgr -c 'p s'`
quoted in a public README (the RNA server), whose Torque-only attributes PBS does not know.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.formats.qmgr import (
    QUEUE_ATTRIBUTES,
    SCHED_ATTRIBUTES,
    SERVER_ATTRIBUTES,
    QmgrPrint,
    QmgrProblem,
    QmgrResource,
    QmgrUnknown,
    parse_qmgr_print,
    parse_value,
    quote_value,
)

FORMULA = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"

PRINT = f"""#
# Create resources and set their properties.
#
#
# Create and define resource ngpus_type
#
create resource ngpus_type
set resource ngpus_type type = string
set resource ngpus_type flag = h
#
# Create and define resource scratch_gb
#
create resource scratch_gb
set resource scratch_gb type = long
set resource scratch_gb flag = nh
#
# Create queues and set their attributes.
#
#
# Create and define queue workq
#
create queue workq
set queue workq queue_type = Execution
set queue workq Priority = 150
set queue workq max_run = [u:PBS_GENERIC=10]
set queue workq acl_user_enable = False
set queue workq acl_users = alice
set queue workq acl_users += bob
set queue workq resources_max.walltime = 24:00:00
set queue workq resources_default.walltime = 01:00:00
set queue workq enabled = True
set queue workq started = True
#
# Create and define queue prod
#
create queue prod
set queue prod queue_type = Route
set queue prod route_destinations = workq
set queue prod route_destinations += debug
set queue prod enabled = True
set queue prod started = True
#
# Set server attributes.
#
set server scheduling = True
set server acl_hosts = login1
set server acl_hosts += login2
set server default_queue = prod
set server log_events = 511
set server mail_from = adm
set server query_other_jobs = True
set server resources_default.ncpus = 1
set server default_chunk.ncpus = 1
set server scheduler_iteration = 600
set server resv_enable = True
set server node_fail_requeue = 310
set server max_array_size = 10000
set server comment = "Fairshare by account, see the wiki"
set server eligible_time_enable = True
set server job_sort_formula = "{FORMULA}"
#
# Create and define scheduler default
#
create sched default
set sched sched_host = pbs01
set sched scheduling = True
set sched scheduler_iteration = 600
set sched job_sort_formula_threshold = 5.5
"""

TORQUE_PRINT = """#
# Create queues and set their attributes.
#
#
# Create and define queue batch
#
create queue batch
set queue batch queue_type = Execution
set queue batch resources_default.walltime = 01:00:00
set queue batch resources_default.nodes = 1
set queue batch enabled = True
set queue batch started = True
#
# Set server attributes.
#
set server scheduling = True
set server acl_hosts = localhost
set server acl_hosts += rna
set server managers = root@localhost
set server operators = root@localhost
set server default_queue = batch
set server log_events = 2047
set server mail_from = adm
set server node_check_rate = 150
set server tcp_timeout = 300
"""


def parsed(text: str) -> QmgrPrint:
    return parse_qmgr_print(text)


def problems(text: str) -> list[QmgrProblem]:
    return parsed(text).problems


def only_problem(text: str) -> QmgrProblem:
    (problem,) = problems(text)
    return problem


WORKQ = "create queue workq\n"


def test_a_print_server_reads_whole():
    config = parsed(PRINT)
    assert (config.problems, config.unknown, config.ignored) == ([], [], 0)
    assert config.job_sort_formula == FORMULA
    assert (config.eligible_time_enable, config.scheduler_iteration) == (True, 600)
    assert config.job_sort_formula_threshold == 5.5
    assert list(config.server)[:3] == ["scheduling", "acl_hosts", "default_queue"]
    assert config.server["acl_hosts"] == "login1,login2"
    assert config.server["resources_default.ncpus"] == "1"
    assert config.server["comment"] == "Fairshare by account, see the wiki"
    assert config.sched == {
        "sched_host": "pbs01",
        "scheduling": "True",
        "scheduler_iteration": "600",
        "job_sort_formula_threshold": "5.5",
    }
    assert config.resources == {
        "ngpus_type": QmgrResource("ngpus_type", 7, "string", "h"),
        "scratch_gb": QmgrResource("scratch_gb", 13, "long", "nh"),
    }


def test_queues_have_their_typed_settings():
    queues = parsed(PRINT).queues
    workq, prod = queues["workq"], queues["prod"]
    assert (workq.line, workq.priority, workq.queue_type, workq.enabled, workq.started) == (
        22, 150, "Execution", True, True,
    )  # fmt: skip
    assert workq.attributes["acl_users"] == "alice,bob"
    assert workq.attributes["max_run"] == "[u:PBS_GENERIC=10]"
    assert workq.attributes["resources_default.walltime"] == "01:00:00"
    assert (prod.priority, prod.queue_type) == (0, "Route")  # no Priority: 0
    assert prod.attributes["route_destinations"] == "workq,debug"


def test_a_formula_typed_without_quotes_reads_the_same():
    # seed 003 sets it as typed at the qmgr prompt; print has nothing to quote in it either.
    assert parsed(f"set server job_sort_formula = {FORMULA}\n").job_sort_formula == FORMULA


def test_a_formula_with_blanks_is_printed_and_read_in_quotes():
    formula = "ncpus * 2 + fairshare_perc"
    line = f"set server job_sort_formula = {quote_value(formula)}\n"
    assert line == f'set server job_sort_formula = "{formula}"\n'
    assert parsed(line).job_sort_formula == formula


def test_the_server_formula_wins_over_the_schedulers():
    both = "set sched job_sort_formula = ncpus\nset server job_sort_formula = walltime\n"
    assert parsed(both).job_sort_formula == "walltime"
    assert parsed("set sched job_sort_formula = ncpus\n").job_sort_formula == "ncpus"
    assert parsed("").job_sort_formula is None


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        ("adm", "adm"),
        ("a b", '"a b"'),
        ("a,b", '"a,b"'),
        ("it's", '"it\'s"'),
        ('say "hi"', "'say \"hi\"'"),
        ("", ""),
    ],
)
def test_print_quotes_blanks_commas_and_quotes(value, printed):
    assert quote_value(value) == printed


@pytest.mark.parametrize(
    ("text", "value", "end"),
    [
        ("adm", "adm", 3),
        ('"a b", next', "a b", 5),
        ("a,b", "a", 1),
        ('abc"d e"f', "abcd ef", 9),  # quotes may open mid-value
        ("'say \"hi\"'", 'say "hi"', 10),  # the other quote character is literal
        ('"it\'s"', "it's", 6),
        ("  padded  ", "padded", 8),
    ],
)
def test_values_unquote_as_pbs_quote_parse_does(text, value, end):
    assert parse_value(text) == (value, end)


def test_entlim_values_keep_blanks():
    assert parse_value("[u:PBS_GENERIC=10] [g:x=2]", allow_white=True) == (
        "[u:PBS_GENERIC=10] [g:x=2]", 26,
    )  # fmt: skip
    config = parsed(WORKQ + "set queue workq max_run = [u:PBS_GENERIC=10] [g:x=2]\n")
    assert config.queues["workq"].attributes["max_run"] == "[u:PBS_GENERIC=10] [g:x=2]"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('"open', 'the " opened at column 1 is never closed'),
        ("a&b", "& is not allowed in a value"),
        ("a\x01b", "the character '\\x01' is not allowed in a value"),
    ],
)
def test_values_pbs_refuses(text, reason):
    with pytest.raises(ValueError, match=reason.replace("\\", "\\\\")):
        parse_value(text)


PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30)


@given(PRINTABLE)
def test_printed_values_read_back(value):
    line = f"set server comment = {quote_value(value)}"
    config = parsed(line)
    if "&" in value or ('"' in value and "'" in value) or value == "":
        assert config.problems  # qmgr cannot take these back either
        return
    assert config.server == {"comment": value}


def test_a_value_with_both_quotes_does_not_read_back():
    line = f"set server comment = {quote_value(chr(39).join(['it', 's ' + chr(34)]))}\n"
    assert line == "set server comment = 'it's \"'\n"  # qmgr.c prints it so
    problem = only_problem(line)
    assert (problem.line, problem.field) == (1, "set server comment")
    assert problem.reason.startswith("'\"\\'' after the value")


def test_unknown_attributes_are_kept_and_reported():
    config = parsed(TORQUE_PRINT)
    assert config.problems == []
    assert config.unknown == [
        QmgrUnknown(24, "server node_check_rate"),
        QmgrUnknown(25, "server tcp_timeout"),
    ]
    assert config.server["node_check_rate"] == "150"
    assert config.server["acl_hosts"] == "localhost,rna"
    assert config.queues["batch"].attributes["resources_default.nodes"] == "1"  # a known base


def test_unknown_queue_and_sched_attributes():
    config = parsed(WORKQ + "set queue workq keep_completed = 300\nset sched sched_cycle = 5\n")
    assert config.unknown == [
        QmgrUnknown(2, "queue workq keep_completed"),
        QmgrUnknown(3, "sched default sched_cycle"),
    ]
    assert config.queues["workq"].attributes == {"keep_completed": "300"}


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        # A first word without an operator after it is the object's name, as for qmgr.
        ("set server scheduling True", "set server scheduling True", "no '=' after"),
        ("set server scheduling", "set server scheduling", "nothing to set: 'scheduling' has"),
        ("set queue workq Priority", "set queue workq Priority", "no '=' after the attribute"),
        ("set queue other enabled = True", "set queue other", "no `create queue`"),
        ('set server mail_from = "adm', "set server mail_from", 'the " opened at column 24'),
        ("set queue workq Priority = high", "set queue workq Priority", "not an integer: 'high'"),
        ("set queue workq Priority = 2000", "set queue workq Priority", "outside -1024..1023"),
        ("set queue workq enabled = tRuE", "set queue workq enabled", "not a boolean"),
        ("set queue workq queue_type = batch", "set queue workq queue_type", "not a queue type"),
        ("set queue workq Priority += 5", "set queue workq Priority", "holds one value"),
        ("set server comment = two words", "set server comment", "'words' after the value"),
        ("set server scheduling =", "set server scheduling", "no value after '='"),
        ("set server resources_default. = 1", "set server resources_default", "no resource"),
        ("set server a = 1,", "set server", "no attribute after ','"),
        ("set server scheduler_iteration = 10m", "set server scheduler_iteration", "integer"),
        (
            "set sched job_sort_formula_threshold = x",
            "set sched default job_sort_formula_threshold",
            "not a number",
        ),
        ("set sched sc2 scheduling = True", "set sched sc2", "no `create sched`"),
        ("create queue workq", "create queue workq", "created before"),
        ("set resource foo type = long", "set resource foo", "no `create resource`"),
        ("create resource foo type = int", "create resource foo type", "not a resource type"),
        ("create resource foo flag = x", "create resource foo flag", "not resource flags"),
        ("create resource foo size = 1", "create resource foo size", "only a type and a flag"),
        ("Qmgr: p s", "line", "not a qmgr command: 'Qmgr:'"),
        ("Max open servers: 49", "line", "not a qmgr command: 'Max'"),
        ("delete queue workq", "line", "`delete` is not in print output"),
        ("set frobnicator x = 1", "line", "not server, queue, resource or sched"),
        ("set queue", "set queue", "nothing to set"),
        ("set queue enabled = True", "line", "set queue without a queue name"),
    ],
)
def test_bad_lines_are_problems_with_their_line(line, field, reason):
    problem = only_problem(WORKQ + line + "\n")
    assert (problem.line, problem.field) == (2, field)
    assert reason in problem.reason


def test_a_bad_line_changes_nothing():
    config = parsed(WORKQ + "set queue workq Priority = 10, enabled = maybe\n")
    assert len(config.problems) == 1
    assert (config.queues["workq"].priority, config.queues["workq"].attributes) == (0, {})


def test_several_pairs_on_one_line_and_abbreviations():
    config = parsed("c q fast queue_type=e, priority = -5, ENABLED = t\ns s scheduling = 1\n")
    fast = config.queues["fast"]
    assert (fast.queue_type, fast.priority, fast.enabled) == ("Execution", -5, True)
    assert fast.attributes == {"queue_type": "e", "Priority": "-5", "enabled": "t"}
    assert config.server == {"scheduling": "1"}


def test_an_old_one_line_resource_definition():
    config = parsed("create resource fs_scratch type=boolean, flag=h\n")
    assert config.resources["fs_scratch"] == QmgrResource("fs_scratch", 1, "boolean", "h")


def test_minus_equals_removes_an_element():
    text = "set server acl_hosts = a\nset server acl_hosts += b\nset server acl_hosts -= a\n"
    assert parsed(text).server == {"acl_hosts": "b"}
    assert only_problem(text + "set server acl_hosts -= z\n").field == "set server acl_hosts"


def test_other_schedulers_are_kept_apart():
    text = "create sched sc1\nset sched sc1 job_sort_formula_threshold = 3\n"
    config = parsed(text)
    assert config.scheds["sc1"] == {"job_sort_formula_threshold": "3"}
    assert config.job_sort_formula_threshold is None  # only the default scheduler's counts


def test_node_and_hook_lines_are_counted_not_read():
    text = "create node n1\nset node n1 resources_available.ncpus = 8\ncreate hook h1\n"
    config = parsed(text)
    assert (config.ignored, config.problems) == (3, [])


def test_bytes_and_lines_read_alike():
    assert parse_qmgr_print(PRINT.encode()) == parsed(PRINT)
    assert parse_qmgr_print(PRINT.splitlines(keepends=True)) == parsed(PRINT)
    assert parse_qmgr_print(line.encode() for line in PRINT.splitlines()) == parsed(PRINT)


def test_the_attribute_names_are_pbs_own():
    assert {"job_sort_formula", "eligible_time_enable", "scheduler_iteration"} <= SERVER_ATTRIBUTES
    assert {"Priority", "queue_type", "enabled", "started"} <= QUEUE_ATTRIBUTES
    assert {"job_sort_formula", "job_sort_formula_threshold"} <= SCHED_ATTRIBUTES
    assert (len(SERVER_ATTRIBUTES), len(QUEUE_ATTRIBUTES), len(SCHED_ATTRIBUTES)) == (103, 56, 26)


WORDS = st.sampled_from(
    ["set", "create", "s", "c", "server", "queue", "q", "sched", "resource", "workq", "=", "+=",
     "-=", ",", '"', "'", "Priority", "enabled", "job_sort_formula", "type", "flag", "#", ".",
     "resources_default.ncpus", "True", "-5", "&", "\t"]
)  # fmt: skip
LINES = st.lists(WORDS | st.text(max_size=6), max_size=10).map(" ".join)


@settings(max_examples=500)
@given(st.lists(LINES, max_size=8))
def test_any_lines_never_raise(lines):
    config = parse_qmgr_print(["create queue workq", *lines])
    assert isinstance(config, QmgrPrint)
    assert all(1 <= problem.line <= len(lines) + 1 for problem in config.problems)


@given(st.binary(max_size=200))
def test_any_bytes_never_raise(data):
    assert isinstance(parse_qmgr_print(data), QmgrPrint)


def test_array_values_grow_and_shrink_in_order() -> None:
    config = parsed(
        "set server acl_users = a\nset server acl_users += b\nset server acl_users += c\n"
        "set server acl_users -= b\nset server acl_users += d\nset queue q acl_users += x\n"
        "set server acl_hosts += h1\nset server acl_hosts = h2\nset server acl_hosts += h3\n"
    )
    assert (config.server["acl_users"], config.server["acl_hosts"]) == ("a,c,d", "h2,h3")
