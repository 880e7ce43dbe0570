"""CYCLE_QUEUES: which clusters' cycles go to a queue of their own (docs/scale.md)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from fairshare_site.settings import cycle_queues_parse


def test_each_cluster_named_goes_to_its_queue_under_cycles() -> None:
    assert cycle_queues_parse("big=hpc,gpu; lab = test1 , test2 ;") == {
        "hpc": "cycles.big",
        "gpu": "cycles.big",
        "test1": "cycles.lab",
        "test2": "cycles.lab",
    }


def test_nothing_set_sends_every_cycle_to_the_default_queue() -> None:
    assert cycle_queues_parse("") == {}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("hpc,gpu", "is not QUEUE=CLUSTER"),
        ("big=", "is not QUEUE=CLUSTER"),
        ("big queue=hpc", "is not QUEUE=CLUSTER"),
        ("big=hpc;small=hpc", "cluster 'hpc' is in two queues"),
    ],
)
def test_a_setting_that_does_not_read_is_refused_saying_why(text: str, said: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=said):
        cycle_queues_parse(text)
