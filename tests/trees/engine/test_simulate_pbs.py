"""PBS fair_share as the replay's order (trees.engine.simulate_pbs): the under-served first,
usage accrued by the cycles' own functions, a start counted until the next cycle."""

from hypothesis import given
from hypothesis import strategies as st

from trees.engine.formula import JOB_SORT_NAMES, USAGE_RESOURCES, parse_formula
from trees.engine.job_sort import SortPolicy
from trees.engine.pbs import GroupDef, PbsTree, UsageRecord, compute, deserving_key
from trees.engine.simulate import Schedule, SimJob, simulate
from trees.engine.simulate_pbs import PbsFairShareOrder, PbsOrder

# Two users of equal shares under the root.
GROUPS = [GroupDef("ann", 10, "root", 50), GroupDef("bob", 11, "root", 50)]
CPUT = parse_formula("cput", USAGE_RESOURCES)


def fair_share(records: dict[str, float], iteration: int = 10) -> PbsFairShareOrder:
    return PbsFairShareOrder(
        GROUPS, records, formula=CPUT, iteration=iteration, decay_interval=86_400,
        decay_factor=0.5,
    )  # fmt: skip


def job(job_id: str, entity: str, submit: int, run: int, asked: int | None = None) -> SimJob:
    return SimJob(job_id, entity, submit, run, 1, asked)


def starts(schedule: Schedule) -> dict[str, int]:
    return {placed.job_id: placed.start for placed in schedule.jobs}


def test_the_under_served_users_later_job_starts_first() -> None:
    # One core. ann's 1000 of usage against bob's 1, equal shares: at 10, when X ends, bob's Z
    # (submitted at 2) goes before ann's Y (submitted at 1); in submit order Y would.
    jobs = [job("X", "ann", 0, 10), job("Y", "ann", 1, 10), job("Z", "bob", 2, 10)]
    order = fair_share({"ann": 1000.0, "bob": 1.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip
    assert starts(simulate(jobs, capacity=1, backfill="none")) == {"X": 0, "Y": 10, "Z": 20}


def test_what_a_job_ran_counts_at_the_next_cycles() -> None:
    # No usage yet. ann's X runs 0-100 on one core: the cycle at 100 has accrued its 100 cpu
    # seconds (ann 101, bob 1), so bob's Z (submitted at 5) passes ann's Y (submitted at 1).
    jobs = [job("X", "ann", 0, 100), job("Y", "ann", 1, 10), job("Z", "bob", 5, 10)]
    order = fair_share({})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 100, "Y": 110,
    }  # fmt: skip
    # The last pass, at 110 (Z's end, Y's start), saw the cycle at 110: X's 100 and Z's 10.
    assert order.records == {"ann": 1 + 100, "bob": 1 + 10}


def test_a_start_counts_its_request_until_the_next_cycle() -> None:
    # One long cycle (1000 s): no usage accrues before it. bob's B1 starts at 0 asking 100 s,
    # which counts against bob at once (temp_usage); at 10 ann's A1 then passes bob's B2,
    # though B2 was submitted first and both users' usage is still 1.
    jobs = [job("B1", "bob", 0, 10, 100), job("B2", "bob", 1, 10), job("A1", "ann", 2, 10)]
    order = fair_share({}, iteration=1000)
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "B1": 0, "A1": 10, "B2": 20,
    }  # fmt: skip


def test_an_entity_outside_the_tree_is_ordered_under_unknown() -> None:
    # zed is in no resource group: it goes under `unknown` (no shares), which sorts after
    # the users with shares, as pbsfs -c puts a perc of 0 last.
    jobs = [job("X", "ann", 0, 10), job("Q", "zed", 1, 10), job("Y", "ann", 2, 10)]
    order = fair_share({"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Y": 10, "Q": 20,
    }  # fmt: skip


NAMES = ["ann", "bob", "zed", "kim"]  # zed and kim are in no resource group: under unknown


@given(
    st.lists(
        st.dictionaries(st.sampled_from(NAMES), st.floats(1.0, 1e6, allow_nan=False), max_size=4),
        min_size=1,
        max_size=6,
    )
)
def test_the_tree_read_back_in_place_gives_what_a_fresh_read_gives(
    sequence: list[dict[str, float]],
) -> None:
    order = fair_share({})
    for records in sequence:  # one cycle's records after another, entities coming and going
        order.records = dict(records)
        order.read_back()
        fresh = PbsTree.build(GROUPS, [UsageRecord(n, u) for n, u in records.items()])
        metrics = compute(fresh)
        for name in NAMES:
            node = fresh.find(name)
            if node is None:
                continue
            expected = deserving_key(
                (float(metrics.fairshare_perc[s]), float(metrics.usage[s]))
                for s in fresh.gpath(node)
            )
            assert order.key_of(name) == expected


def pbs_order(formula: str | None, *, fair_share: bool, records: dict[str, float]) -> PbsOrder:
    sort = SortPolicy(
        None if formula is None else parse_formula(formula, JOB_SORT_NAMES, python=True),
        fair_share, (), False, {},
    )  # fmt: skip
    return PbsOrder(
        GROUPS, records, sort=sort, formula=CPUT, iteration=10, decay_interval=86_400,
        decay_factor=0.5,
    )  # fmt: skip


def wide(job_id: str, entity: str, submit: int, cores: int) -> SimJob:
    return SimJob(job_id, entity, submit, 10, cores, None)


def test_a_job_sort_formula_puts_the_widest_job_first() -> None:
    # Two cores. A (2) runs 0-10. At 10 the formula `ncpus` puts C (2 cores, submitted at 2)
    # before B (1 core, submitted at 1): C at 10, B at its end; in submit order B goes first
    # and C, which does not fit beside it, waits for B.
    jobs = [wide("A", "ann", 0, 2), wide("B", "ann", 1, 1), wide("C", "ann", 2, 2)]
    order = pbs_order("ncpus", fair_share=False, records={})
    assert starts(simulate(jobs, capacity=2, backfill="none", order=order)) == {
        "A": 0, "C": 10, "B": 20,
    }  # fmt: skip
    assert starts(simulate(jobs, capacity=2, backfill="none")) == {"A": 0, "B": 10, "C": 20}


def test_the_formula_comes_before_fair_share_and_fair_share_before_submit_order() -> None:
    # One core; X runs 0-10. Y (ann, 1 core) and Z (bob, 1 core) tie on the formula `ncpus`;
    # fair share then puts bob (usage 1) before ann (usage 1000).
    jobs = [wide("X", "ann", 0, 1), wide("Y", "ann", 1, 1), wide("Z", "bob", 2, 1)]
    order = pbs_order("ncpus", fair_share=True, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip
    # Without fair_share the tie goes to submit order.
    order = pbs_order("ncpus", fair_share=False, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Y": 10, "Z": 20,
    }  # fmt: skip


def test_a_formula_on_the_fairshare_factor_follows_the_usage() -> None:
    # fairshare_factor is 2^-(tree usage / perc): bob, with less usage, scores higher.
    jobs = [wide("X", "ann", 0, 1), wide("Y", "ann", 1, 1), wide("Z", "bob", 2, 1)]
    order = pbs_order("fairshare_factor", fair_share=False, records={"ann": 1000.0})
    assert starts(simulate(jobs, capacity=1, backfill="none", order=order)) == {
        "X": 0, "Z": 10, "Y": 20,
    }  # fmt: skip
