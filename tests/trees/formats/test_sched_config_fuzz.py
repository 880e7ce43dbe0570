"""Fuzzing the sched_config reader: random bytes (refused whole when binary), and the white
paper's sched_config with lines replaced by printable junk."""

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ, PRINTABLE_LINE, Reading, check_random_bytes, lines_of, mutations
from trees.formats.sched_config import FairshareConfig, parse_sched_config

SAMPLE = Path(__file__).resolve().parents[3] / "trees/sample/whitepaper/sched_config"
GOOD = b"# the site's policy\nround_robin: False all\n" + SAMPLE.read_bytes()
VALUE_OF = {
    "fairshare_usage_res": "fairshare_usage_res",
    "fairshare_entity": "fairshare_entity",
    "fairshare_decay_time": "decay_time",
    "half_life": "decay_time",
    "fairshare_decay_factor": "decay_factor",
    "unknown_shares": "unknown_shares",
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


@FUZZ
@given(st.data())
def test_good_lines_around_junk_read_as_before(data: st.DataObject) -> None:
    mutations(reading, GOOD, range(len(lines_of(GOOD)) - 1), PRINTABLE_LINE)(data)
