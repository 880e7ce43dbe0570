"""accounting.parsers.sched_log: the cycles of a pbs_sched log and what each said of its jobs.
The lines are those OpenPBS 23.06 writes (log_events 2047; tests/captures/pbs/ has whole
days of them)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from accounting.parsers.sched_log import read_sched_log

CYCLE = """\
12/02/2026 03:05:10;0080;pbs_sched;Req;;Starting Scheduling Cycle
12/02/2026 03:05:10;0100;pbs_sched;Svr;;It is primetime.  It will never end
12/02/2026 03:05:10;0100;pbs_sched;Job;3.vm;Formula Evaluation = 481.8802
12/02/2026 03:05:10;0100;pbs_sched;Job;4.vm;Formula Evaluation = 12
12/02/2026 03:05:10;0100;pbs_sched;Job;5.vm;Job's formula value 12 is under threshold 348
12/02/2026 03:05:10;0080;pbs_sched;Job;3.vm;Considering job to run
12/02/2026 03:05:10;0040;pbs_sched;Job;6.vm;Job has zero shares for fairshare
12/02/2026 03:05:10;0100;pbs_sched;Svr;Fairshare;Decaying Fairshare Tree
12/02/2026 03:05:10;0100;pbs_sched;Svr;Fairshare;Usage Sync
12/02/2026 03:05:11;0080;pbs_sched;Req;;Leaving Scheduling Cycle
"""


def test_a_cycle_its_times_and_what_it_said_of_each_job() -> None:
    log = read_sched_log(CYCLE.splitlines())
    (cycle,) = log.cycles
    assert (cycle.line, cycle.start, cycle.end) == (1, 1796180710, 1796180711)
    assert cycle.formula == {"3.vm": "481.8802", "4.vm": "12"}
    assert (cycle.considered, cycle.zero_shares, cycle.under_threshold) == (
        ["3.vm"], ["6.vm"], ["5.vm"],
    )  # fmt: skip
    assert (cycle.decays, cycle.usage_synced) == (1, True)
    assert (log.lines, log.rejected) == (10, [])


def test_the_log_is_in_the_scheduler_hosts_time() -> None:
    (cycle,) = read_sched_log(CYCLE.splitlines(), zone=ZoneInfo("Europe/Oslo")).cycles
    assert cycle.start == 1796180710 - 3600  # 03:05 in Oslo is 02:05 UTC in December


def test_other_daemons_lines_and_a_cut_cycle_are_left_out_a_bad_line_rejected() -> None:
    text = (
        "12/02/2026 03:05:09;0002;pbs_server;Svr;Log;Log opened\n"
        + CYCLE
        + "not a log line\n"
        + CYCLE.splitlines()[0]  # a cycle the file ends in
        + "\n"
    )
    log = read_sched_log(text.encode().splitlines(keepends=True))
    assert [cycle.line for cycle in log.cycles] == [2]
    (bad,) = log.rejected
    assert (bad.line, bad.field, bad.text) == (12, "line", "not a log line")
    assert "MM/DD/YYYY HH:MM:SS" in bad.reason
