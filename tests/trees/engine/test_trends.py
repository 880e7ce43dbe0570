"""trees.engine.trends: shares of a group's usage over time and who ran far over target."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trees.engine.trends import FAR_OVER, far_over_target, shares_over_time


def test_shares_are_each_child_s_part_of_the_known_total_at_each_moment() -> None:
    shares = shares_over_time({1: [10.0, 20.0, None], 2: [30.0, 20.0, 5.0], 3: [0.0, 0.0, 0.0]})
    assert shares == {1: [0.25, 0.5, None], 2: [0.75, 0.5, 1.0], 3: [0.0, 0.0, 0.0]}
    assert shares_over_time({1: [0.0], 2: [None]}) == {1: [None], 2: [None]}


@given(
    st.dictionaries(
        st.integers(0, 9), st.lists(st.floats(0, 1e12), min_size=3, max_size=3), min_size=1
    )
)
def test_the_shares_at_a_moment_add_up_to_one(values: dict[int, list[float]]) -> None:
    shares = shares_over_time(values)
    for moment in range(3):
        known = [value for series in shares.values() if (value := series[moment]) is not None]
        if known:
            assert sum(known) == pytest.approx(1.0)


def test_a_child_at_half_again_its_target_is_called_out_the_furthest_first() -> None:
    usage = {1: [0.30, 0.34], 2: [0.60, 0.50], 3: [0.10, 0.20]}
    target = {1: [0.20, 0.20], 2: [0.20, 0.20], 3: [0.60, 0.60]}
    found = far_over_target(usage, target)
    assert [over.child for over in found] == [2, 1]  # 2.75x, then 1.6x; 3 is under
    assert found[0].usage_share == pytest.approx(0.55)
    assert found[0].times == pytest.approx(2.75)
    assert found[1].times == pytest.approx(1.6)
    assert far_over_target({1: [0.29]}, {1: [0.2]}) == []  # 1.45x: over, not far over
    assert FAR_OVER == 1.5


def test_moments_without_a_value_are_left_out_of_the_means() -> None:
    found = far_over_target({1: [None, 0.9]}, {1: [0.1, 0.3]})
    assert found[0].usage_share == pytest.approx(0.9)
    assert found[0].target_share == pytest.approx(0.3)
    assert far_over_target({1: [None]}, {1: [0.1]}) == []
    assert far_over_target({1: [0.5]}, {1: [0.0]}) == []  # no target: nothing to be over
