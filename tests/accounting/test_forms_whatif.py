"""The what-if form on policies made by hand (no database): which shares are fields, how the
values changed become settings, and the Slurm switch between Fair Tree and classic."""

from accounting.forms import MAX_SHARE_FIELDS, WhatIfForm
from trees.engine.multifactor import MultifactorConfig
from trees.engine.pbs import GroupDef
from trees.engine.slurm import USE_PARENT, AssociationDef
from trees.engine.whatif import PbsPolicy, SlurmPolicy
from trees.models import Cluster

CLUSTER = Cluster(name="x", cores=64)


def test_the_first_top_levels_shares_are_fields_and_the_rest_are_counted() -> None:
    groups = [GroupDef(f"g{index}", 10 + index, "root", 5) for index in range(70)]
    groups += [GroupDef("deep", 200, "g0", 1), GroupDef("deeper", 201, "deep", 1)]
    form = WhatIfForm(cluster=CLUSTER, policy=PbsPolicy(groups=tuple(groups)))
    assert len(form.shares) == MAX_SHARE_FIELDS
    assert form.shares_left_out == 70 + 1 - MAX_SHARE_FIELDS  # `deep` is on level 2
    assert "set:shares:deeper" not in form.fields


def test_only_the_values_changed_become_settings_in_the_form_s_order() -> None:
    policy = PbsPolicy(groups=(GroupDef("a", 10, "root", 5), GroupDef("b", 11, "root", 7)))
    data = {
        "order": "policy", "set:fair_share": "on", "set:backfill": "on",
        "set:backfill_depth": "1", "set:fairshare_decay_time": "86400",
        "set:fairshare_decay_factor": "0.5", "set:job_sort_formula": "",
        "set:shares:a": "5", "set:shares:b": "9", "more_settings": "shares:a=6",
    }  # fmt: skip
    form = WhatIfForm(data, cluster=CLUSTER, policy=policy)
    assert form.is_valid(), form.errors
    assert form.settings == ["shares:b=9", "shares:a=6"]
    assert form.parameters().cores is None  # the cluster's
    unticked = WhatIfForm(data | {"set:fairshare_decay_factor": "0.25", "set:fair_share": ""},
                          cluster=CLUSTER, policy=policy)  # fmt: skip
    assert unticked.is_valid()
    assert unticked.settings[:2] == ["fair_share=false", "fairshare_decay_factor=0.25"]


def test_classic_fairshare_keeps_the_other_priority_flags() -> None:
    policy = SlurmPolicy(
        associations=(
            AssociationDef("root", None), AssociationDef("a", "root", shares=3),
            AssociationDef("b", "root", shares=USE_PARENT), AssociationDef("a", "a", "ann", 1),
        ),
        config=MultifactorConfig(flags=frozenset({"SMALL_RELATIVE_TO_TIME"})),
    )  # fmt: skip
    form = WhatIfForm(cluster=CLUSTER, policy=policy)
    assert [knob.key for knob in form.shares] == ["shares:a"]  # not FairShare=parent, nor users
    data = {"order": "policy", "set:PriorityFlags": "classic",
            "set:PriorityDecayHalfLife": "1209600", "set:shares:a": "3"}  # fmt: skip
    data |= {f"set:{knob.key}": "0" for knob in form.knobs if knob.key.startswith("PriorityW")}
    changed = WhatIfForm(data, cluster=CLUSTER, policy=policy)
    assert changed.is_valid(), changed.errors
    assert changed.settings == [
        "PriorityFlags=NO_FAIR_TREE,SMALL_RELATIVE_TO_TIME", "PriorityDecayHalfLife=14-00:00:00",
    ]  # fmt: skip
