"""Fuzzing the sched_config reader: random bytes (refused whole when binary), and
sched_configs (the white paper's, an OpenPBS-style full one with the shared examples' keys when
present) with lines replaced by printable junk."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from accounting.services.demo import DEMO_SAMPLES
from tests.fuzzing import (
    FUZZ,
    PRINTABLE_LINE,
    Reading,
    check_random_bytes,
    lines_of,
    mutations,
    shared_seeds,
)
from trees.formats.sched_config import FairshareConfig, parse_sched_config

SAMPLE = DEMO_SAMPLES / "whitepaper/sched_config"
GOOD = b"# the site's policy\nround_robin: False all\n" + SAMPLE.read_bytes()
# The shape of OpenPBS's default file: prime options, quoted values, keys PBS reads and we skip.
FULL = b"""# This is the config file for the scheduling policy
round_robin: False\tall
by_queue: True\t\tprime
by_queue: True\t\tnon_prime
strict_ordering: false\tALL
help_starving_jobs: true\tALL
max_starve: 24:00:00
backfill_prime: false\tALL
prime_exempt_anytime_queues: false
primetime_prefix: p_
nonprimetime_prefix: np_
node_sort_key: "sort_priority HIGH"\tALL
provision_policy: "aggressive_provision"
sort_queues: true\tALL
resources: "ncpus, mem, arch, host, vnode, aoe, eoe"
load_balancing: false\tALL
smp_cluster_dist: pack
fair_share: true\tALL
unknown_shares: 10
fairshare_usage_res: "ncpus*walltime"
fairshare_entity: Account_Name
fairshare_decay_time: 168:00:00
fairshare_decay_factor: 0.5
preemptive_sched: true\tALL
preempt_queue_prio: 150
preempt_prio: "express_queue, normal_jobs"
preempt_order: "SCR"
preempt_sort: min_time_since_start
dedicated_prefix: ded
log_filter: 3328
""" + b"".join(shared_seeds("examples/pbs/*/sched_config"))
VALUE_OF = {
    "fairshare_usage_res": "fairshare_usage_res",
    "fairshare_entity": "fairshare_entity",
    "fairshare_decay_time": "decay_time",
    "half_life": "decay_time",
    "fairshare_decay_factor": "decay_factor",
    "unknown_shares": "unknown_shares",
    "fair_share": "fair_share",
    "by_queue": "by_queue",
    "strict_ordering": "strict_ordering",
    "backfill": "backfill",
    "backfill_depth": "backfill_depth",
    "job_sort_key": "job_sort_key",
    "preemptive_sched": "preemptive_sched",
    "fairshare_enforce_no_shares": "fairshare_enforce_no_shares",
}


def values(config: FairshareConfig) -> dict[int, list[Any]]:
    return {line: [(key, getattr(config, VALUE_OF[key]))] for key, line in config.found.items()}


def reading(data: bytes) -> Reading:
    config = parse_sched_config(data)
    return Reading(dict(values(config)), config.problems, config.refused)


def test_the_seed_reads_every_key() -> None:
    seed = reading(GOOD)
    assert sorted(key for kept in seed.kept.values() for key, _ in kept) == sorted(
        ["fairshare_usage_res", "fairshare_entity", "fairshare_decay_time",
         "fairshare_decay_factor", "unknown_shares"]
    )  # fmt: skip
    assert seed.rejected == []


@FUZZ
@given(st.binary(max_size=4000))
def test_random_bytes_never_escape_and_every_rejection_says_why(data: bytes) -> None:
    check_random_bytes(reading, data)
    read = reading(data)
    if any(0 < byte < 9 or 13 < byte < 32 or byte == 127 for byte in data):  # not NUL
        assert read.refused.endswith("holds control bytes: not a sched_config, which is text")
    if read.refused:
        assert (read.kept, read.rejected) == ({}, [])


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from([GOOD, FULL]))
    mutations(reading, seed, range(len(lines_of(seed)) - 1), PRINTABLE_LINE)(data)


def test_the_full_seed_reads_its_keys_and_skips_the_others() -> None:
    config = parse_sched_config(FULL)
    assert (config.refused, config.problems) == ("", [])
    assert (config.fairshare_entity, config.decay_time) == ("Account_Name", 168 * 3600)
    assert (config.strict_ordering, config.by_queue, config.fair_share) == (False, True, True)
    assert config.preemptive_sched is True
    assert config.ignored >= 19  # preemptive_sched is read, the rest of preemption not
